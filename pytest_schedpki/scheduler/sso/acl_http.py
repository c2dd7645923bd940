"""HTTP routes for ACL policies, roles, tokens and login (``command/agent/acl_endpoint.go``).

* ``/v1/acl/policies`` (GET), ``/v1/acl/policy/<name>`` (GET, PUT/POST: empty 200, DELETE; empty
  name ``400 Missing Policy Name``; body Name != path ``400 ACL policy name does not match request path``);
* ``/v1/acl/roles`` (GET), ``/v1/acl/role`` (PUT/POST), ``/v1/acl/role/<id>`` (GET, PUT/POST,
  DELETE), ``/v1/acl/role/name/<name>`` (GET) with the agent's path texts (``missing ACL role ID``,
  ``invalid URI``, ``missing ACL role name``, ``ACL role ID does not match request path``);
* ``/v1/acl/policy/self`` (GET): the caller's policies, as ``ACL.ListPolicies``;
* ``/v1/acl/tokens`` (GET, management), ``/v1/acl/token/self`` (GET, ``ACL.WhoAmI``: the anonymous
  token without a token, ``X-Nomad-Index: 0``), ``/v1/acl/token/<accessor>`` (GET: management or the
  token itself; writes are not implemented: 405);
* ``/v1/acl/login`` (PUT/POST): :mod:`.login`; ``/v1/acl/oidc/auth-url`` and ``complete-auth``
  (PUT/POST): :mod:`.oidc` (auth-url answers without ``X-Nomad-Index``; complete-auth with ``0``);
* ``/idp/...``: the built-in identity provider (:mod:`.idp`).
"""

from __future__ import annotations

import json

from werkzeug.wrappers import Request, Response

from ..model import SchedulerError
from ..request import error, meta, parse_query, pretty, request_token
from .body import decode_body, empty_response, json_response
from .idp import PREFIX as IDP_PREFIX
from .idp import dispatch as idp_dispatch
from .login import LOGIN_FIELDS, login
from .objects import POLICY_FIELDS, ROLE_FIELDS, Policy, Role, policy_to_dict, role_to_dict, token_to_dict
from .oidc import AUTH_URL_FIELDS, COMPLETE_FIELDS, auth_url, complete_auth
from .rules import msgpack_json

ROLE_LINK = "[]*structs.ACLRolePolicyLink"


def encoding_json(value: object) -> str:
    """Go ``encoding/json`` (HTML-escaping) as ``ACLToken.MarshalJSON`` writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def token_json(state, token, request: Request) -> str:
    return encoding_json(token_to_dict(token, state.acl.role_names())) + ("\n" if pretty(request) else "")


def _query(request: Request):
    parsed = parse_query(request)
    if isinstance(parsed, Response):
        return parsed
    return parsed[1], parsed[2]


def _policies(state, request: Request, name: str | None, verb: str) -> Response:
    acl = state.acl
    token = request_token(request)
    if verb == "GET":
        q = _query(request)
        if isinstance(q, Response):
            return q
        if name is None:
            result = acl.query_policies(token, *q)
            return json_response(msgpack_json([policy_to_dict(p, stub=True) for p in result.value], pretty(request)),
                                 None, meta(result))
        result = acl.query_policy(name, token, *q)
        if result.value is None:
            return error(404, "ACL policy not found", meta(result))
        return json_response(msgpack_json(policy_to_dict(result.value), pretty(request)), None, meta(result))
    if verb == "DELETE":
        return empty_response(acl.delete_policy(name, token, check_token=True))
    values = decode_body(request, "ACLPolicy", POLICY_FIELDS)
    if isinstance(values, Response):
        return values
    if values.get("Name", "") != name:
        return error(400, "ACL policy name does not match request path")
    policy = Policy(values.get("Name", ""), values.get("Description", ""), values.get("Rules", ""))
    return empty_response(acl.upsert_policy(policy, token, check_token=True))


def _role_write(state, request: Request, role_id: str) -> Response:
    values = decode_body(request, "ACLRole", ROLE_FIELDS, ROLE_LINK)
    if isinstance(values, Response):
        return values
    if role_id and values.get("ID", "") != role_id:
        return error(400, "ACL role ID does not match request path")
    role = Role(values.get("ID", ""), values.get("Name", ""), values.get("Description", ""),
                tuple(link.get("Name", "") for link in values.get("Policies", [])))
    index, stored = state.acl.upsert_role(role, request_token(request), check_token=True)
    return json_response(msgpack_json(role_to_dict(stored), pretty(request)), index)


def _role_read(state, request: Request, key: str | None, by_name: bool) -> Response:
    q = _query(request)
    if isinstance(q, Response):
        return q
    token = request_token(request)
    if key is None:
        result = state.acl.query_roles(token, *q)
        return json_response(msgpack_json([role_to_dict(r) for r in result.value], pretty(request)), None,
                             meta(result))
    result = state.acl.query_role(key, by_name, token, *q)
    if result.value is None:
        return error(404, "ACL role not found", meta(result))
    return json_response(msgpack_json(role_to_dict(result.value), pretty(request)), None, meta(result))


def _roles(state, request: Request, path: str, verb: str) -> Response:
    if path == "/v1/acl/roles":
        return _role_read(state, request, None, False) if verb == "GET" else error(405, "Invalid method")
    if path == "/v1/acl/role":
        return _role_write(state, request, "") if verb in ("PUT", "POST") else error(405, "Invalid method")
    parts = path[len("/v1/acl/role/"):].split("/")
    if len(parts) == 1:
        if not parts[0]:
            return error(400, "missing ACL role ID")
        if verb == "GET":
            return _role_read(state, request, parts[0], False)
        if verb == "DELETE":
            return empty_response(state.acl.delete_role(parts[0], request_token(request), check_token=True))
        if verb in ("PUT", "POST"):
            return _role_write(state, request, parts[0])
        return error(405, "Invalid method")
    if len(parts) == 2:
        if verb != "GET":
            return error(405, "Invalid method")
        if parts[0] != "name":
            return error(400, "invalid URI")
        if not parts[1]:
            return error(400, "missing ACL role name")
        return _role_read(state, request, parts[1], True)
    return error(400, "invalid URI")


ANONYMOUS_TOKEN = {"ExpirationTTL": "", "AccessorID": "anonymous", "SecretID": "", "Name": "Anonymous Token",
                   "Type": "client", "Policies": ["anonymous"], "Roles": None, "Global": False, "Hash": None,
                   "CreateTime": "0001-01-01T00:00:00Z", "ExpirationTime": None, "CreateIndex": 0, "ModifyIndex": 0}
_READ_META = {"X-Nomad-KnownLeader": "true", "X-Nomad-LastContact": "0"}


def _tokens(state, request: Request, path: str, verb: str) -> Response:
    if path == "/v1/acl/tokens" or path == "/v1/acl/token/self":
        if verb != "GET":
            return error(405, "Invalid method")
    elif not path[len("/v1/acl/token/"):]:
        return error(400, "Missing Token Accessor")
    elif verb != "GET":
        return error(405, "Invalid method")  # token writes are not implemented (docs/divergences.md)
    q = _query(request)
    if isinstance(q, Response):
        return q
    secret = request_token(request)
    with state._lock:
        state._check_acl()
        token = state.acl.live_token(secret) if secret else None
        if path == "/v1/acl/token/self":  # ACL.WhoAmI: never sets the reply index
            body = token_json(state, token, request) if token else encoding_json(ANONYMOUS_TOKEN)
            return json_response(body, 0, _READ_META)
        management = token is not None and token.Type == "management"
        if path == "/v1/acl/tokens":
            if not management:
                raise SchedulerError(403, "Permission denied")
            tokens = sorted(state._tokens.values(), key=lambda t: t.AccessorID)
            names = state.acl.role_names()
            body = encoding_json([token_to_dict(t, names, stub=True) for t in tokens])
            return json_response(body, max([1] + [t.ModifyIndex for t in tokens]), _READ_META)
        accessor = path[len("/v1/acl/token/"):]
        found = state.acl.by_accessor(accessor)
        if not management and (token is None or token.AccessorID != accessor):
            raise SchedulerError(403, "Permission denied")
        if found is None:
            return error(404, "ACL token not found")
        return json_response(token_json(state, found, request), found.ModifyIndex, _READ_META)


def _login(state, request: Request) -> Response:
    values = decode_body(request, "ACLLoginRequest", LOGIN_FIELDS)
    if isinstance(values, Response):
        return values
    _, token = login(state, values.get("AuthMethodName", ""), values.get("LoginToken", ""))
    return json_response(token_json(state, token, request), 0)  # Nomad never fills the login reply index


def _oidc(state, request: Request, path: str) -> Response:
    if path.endswith("/auth-url"):
        values = decode_body(request, "ACLOIDCAuthURLRequest", AUTH_URL_FIELDS)
        if isinstance(values, Response):
            return values
        url = auth_url(state, values.get("AuthMethodName", ""), values.get("RedirectURI", ""),
                       values.get("ClientNonce", ""))
        return json_response(encoding_json({"AuthURL": url}) + ("\n" if pretty(request) else ""), None)
    values = decode_body(request, "ACLOIDCCompleteAuthRequest", COMPLETE_FIELDS)
    if isinstance(values, Response):
        return values
    _, token = complete_auth(state, values)
    return json_response(token_json(state, token, request), 0)  # as login: the reply index is never set


def dispatch(state, request: Request, path: str, verb: str) -> Response | None:
    """Answer a policy, role, token, login or OIDC route, or the built-in IdP, else None."""
    if path == "/v1/acl/login":
        return _login(state, request) if verb in ("PUT", "POST") else error(405, "Invalid method")
    if path in ("/v1/acl/oidc/auth-url", "/v1/acl/oidc/complete-auth"):
        return _oidc(state, request, path) if verb in ("PUT", "POST") else error(405, "Invalid method")
    if path.startswith(IDP_PREFIX + "/"):
        return idp_dispatch(state.idp, request, path, verb)
    if path in ("/v1/acl/policies", "/v1/acl/policy/self"):  # self: ACL.ListPolicies for the caller's token
        return _policies(state, request, None, verb) if verb == "GET" else error(405, "Invalid method")
    if path.startswith("/v1/acl/policy/"):
        name = path[len("/v1/acl/policy/"):]
        if not name:
            return error(400, "Missing Policy Name")
        if verb not in ("GET", "PUT", "POST", "DELETE"):
            return error(405, "Invalid method")
        return _policies(state, request, name, verb)
    if path in ("/v1/acl/roles", "/v1/acl/role") or path.startswith("/v1/acl/role/"):
        return _roles(state, request, path, verb)
    if path == "/v1/acl/tokens" or path.startswith("/v1/acl/token/"):
        return _tokens(state, request, path, verb)
    return None
