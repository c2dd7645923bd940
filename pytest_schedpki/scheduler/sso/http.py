"""HTTP routes of Nomad's SSO surface (``command/agent/acl_endpoint.go``), over the scheduler state.

* ``/v1/acl/binding-rules`` (GET: list, management only), ``/v1/acl/binding-rule`` (PUT/POST:
  create), ``/v1/acl/binding-rule/<id>`` (GET read, PUT/POST update, DELETE); an empty ID is
  ``400 missing ACL binding rule ID`` before the method check, another method ``405 Invalid method``.
  On update an empty body ID is filled from the path; a different one is
  ``400 ACL binding rule ID does not match request path``.
* ``/v1/acl/login`` (PUT/POST): :mod:`.login`; ``/v1/acl/oidc/auth-url`` and ``complete-auth``
  (PUT/POST): :mod:`.oidc` (auth-url answers without ``X-Nomad-Index``; complete-auth with ``0``);
* ``/idp/...``: the built-in identity provider (:mod:`.idp`).

Error bodies are plain text; successes JSON with ``X-Nomad-Index`` (reads also LastContact/KnownLeader).
"""

from __future__ import annotations

from dataclasses import replace

from werkzeug.wrappers import Request, Response

from ..aclhttp.tokens import token_json
from ..aclstore.objects import encoding_json
from ..request import ANSWERS, error, meta, parse_query, pretty, request_token
from .body import decode_body, empty_response, json_response
from .idp import PREFIX as IDP_PREFIX
from .idp import dispatch as idp_dispatch
from .login import LOGIN_FIELDS, login
from .oidc import AUTH_URL_FIELDS, COMPLETE_FIELDS, auth_url, complete_auth
from .rules import FIELDS, from_body, msgpack_json, rule_to_dict, stub_to_dict

RULES_PATH = "/v1/acl/binding-rules"
RULE_PATH = "/v1/acl/binding-rule"
RULE_PREFIX = "/v1/acl/binding-rule/"


def _rule_write(state, request: Request, rule_id: str) -> Response:
    values = decode_body(request, "ACLBindingRule", FIELDS)
    if isinstance(values, ANSWERS):
        return values
    rule = from_body(values)
    if rule_id:
        if not rule.ID:
            rule = replace(rule, ID=rule_id)
        if rule.ID != rule_id:
            return error(400, "ACL binding rule ID does not match request path")
    result = state.binding_rules.upsert(rule, request_token(request), check_token=True)
    return json_response(msgpack_json(rule_to_dict(result.method), pretty(request)), result.index)


def _rule_read(state, request: Request, rule_id: str | None) -> Response:
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    region, index, wait_ns, stale = parsed
    token = request_token(request)
    if rule_id is None:
        result = state.binding_rules.query_list(region, token, index, wait_ns, stale)
        return json_response(msgpack_json([stub_to_dict(r) for r in result.value], pretty(request)), None,
                             meta(result))
    result = state.binding_rules.query_get(rule_id, region, token, index, wait_ns, stale)
    if result.value is None:
        return error(404, "ACL binding rule not found", meta(result))
    return json_response(msgpack_json(rule_to_dict(result.value), pretty(request)), None, meta(result))


def _login(state, request: Request) -> Response:
    values = decode_body(request, "ACLLoginRequest", LOGIN_FIELDS)
    if isinstance(values, ANSWERS):
        return values
    _, token = login(state, values.get("AuthMethodName", ""), values.get("LoginToken", ""))
    return json_response(token_json(state, token, request), 0)  # Nomad never fills the login reply index


def _oidc(state, request: Request, path: str) -> Response:
    if path.endswith("/auth-url"):
        values = decode_body(request, "ACLOIDCAuthURLRequest", AUTH_URL_FIELDS)
        if isinstance(values, ANSWERS):
            return values
        url = auth_url(state, values.get("AuthMethodName", ""), values.get("RedirectURI", ""),
                       values.get("ClientNonce", ""))
        return json_response(encoding_json({"AuthURL": url}) + ("\n" if pretty(request) else ""), None)
    values = decode_body(request, "ACLOIDCCompleteAuthRequest", COMPLETE_FIELDS)
    if isinstance(values, ANSWERS):
        return values
    _, token = complete_auth(state, values)
    return json_response(token_json(state, token, request), 0)  # as login: the reply index is never set



def dispatch(state, request: Request, path: str, verb: str) -> Response | None:
    """Answer ``path`` if it is an SSO route, else None (the caller answers 404)."""
    if path == "/v1/acl/login":
        return _login(state, request) if verb in ("PUT", "POST") else error(405, "Invalid method")
    if path in ("/v1/acl/oidc/auth-url", "/v1/acl/oidc/complete-auth"):
        return _oidc(state, request, path) if verb in ("PUT", "POST") else error(405, "Invalid method")
    if path.startswith(IDP_PREFIX + "/"):
        return idp_dispatch(state.idp, request, path, verb)
    if path == RULES_PATH:
        return _rule_read(state, request, None) if verb == "GET" else error(405, "Invalid method")
    if path == RULE_PATH:
        return _rule_write(state, request, "") if verb in ("PUT", "POST") else error(405, "Invalid method")
    if path.startswith(RULE_PREFIX):
        rule_id = path[len(RULE_PREFIX):]
        if not rule_id:
            return error(400, "missing ACL binding rule ID")
        if verb == "GET":
            return _rule_read(state, request, rule_id)
        if verb == "DELETE":
            return empty_response(state.binding_rules.delete(rule_id, request_token(request), check_token=True))
        if verb in ("PUT", "POST"):
            return _rule_write(state, request, rule_id)
        return error(405, "Invalid method")
    return None
