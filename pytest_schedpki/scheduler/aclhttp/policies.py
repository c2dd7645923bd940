"""HTTP routes for ACL policies and roles (``command/agent/acl_endpoint.go``).

* ``/v1/acl/policies`` (GET), ``/v1/acl/policy/<name>`` (GET, PUT/POST: empty 200, DELETE; empty
  name ``400 Missing Policy Name``; body Name != path ``400 ACL policy name does not match request path``);
* ``/v1/acl/policy/self`` (GET): the caller's policies, as ``ACL.ListPolicies``;
* ``/v1/acl/roles`` (GET), ``/v1/acl/role`` (PUT/POST), ``/v1/acl/role/<id>`` (GET, PUT/POST,
  DELETE), ``/v1/acl/role/name/<name>`` (GET) with the agent's path texts (``missing ACL role ID``,
  ``invalid URI``, ``missing ACL role name``, ``ACL role ID does not match request path``).
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from ..aclstore.objects import POLICY_FIELDS, ROLE_FIELDS, Policy, Role, policy_to_dict, role_to_dict
from ..request import ANSWERS, error, meta, parse_query, pretty, request_token
from ..sso.body import decode_body, empty_response, json_response
from ..sso.rules import msgpack_json
from ..views import Remembered

ROLE_LINK = "[]*structs.ACLRolePolicyLink"
# a stored policy's JSON (``RulesJSON`` parses its rules) per policy object: policies are frozen and
# replaced on write, and the parse depends on the rules text alone
_POLICY_TEXT = Remembered(lambda policy, indent: msgpack_json(policy_to_dict(policy), indent))


def _query(request: Request):
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    return parsed[1], parsed[2]


def _policies(state, request: Request, name: str | None, verb: str) -> Response:
    acl = state.acl
    token = request_token(request)
    if verb == "GET":
        q = _query(request)
        if isinstance(q, ANSWERS):
            return q
        if name is None:
            result = acl.query_policies(token, *q)
            return json_response(msgpack_json([policy_to_dict(p, stub=True) for p in result.value], pretty(request)),
                                 None, meta(result))
        result = acl.query_policy(name, token, *q)
        if result.value is None:
            return error(404, "ACL policy not found", meta(result))
        return json_response(_POLICY_TEXT(result.value, pretty(request)), None, meta(result))
    if verb == "DELETE":
        return empty_response(acl.delete_policy(name, token, check_token=True))
    values = decode_body(request, "ACLPolicy", POLICY_FIELDS)
    if isinstance(values, ANSWERS):
        return values
    if values.get("Name", "") != name:
        return error(400, "ACL policy name does not match request path")
    policy = Policy(values.get("Name", ""), values.get("Description", ""), values.get("Rules", ""))
    return empty_response(acl.upsert_policy(policy, token, check_token=True))


def _role_write(state, request: Request, role_id: str) -> Response:
    values = decode_body(request, "ACLRole", ROLE_FIELDS, ROLE_LINK)
    if isinstance(values, ANSWERS):
        return values
    if role_id and values.get("ID", "") != role_id:
        return error(400, "ACL role ID does not match request path")
    role = Role(values.get("ID", ""), values.get("Name", ""), values.get("Description", ""),
                tuple(link.get("Name", "") for link in values.get("Policies", [])))
    index, stored = state.acl.upsert_role(role, request_token(request), check_token=True)
    return json_response(msgpack_json(role_to_dict(stored), pretty(request)), index)


def _role_read(state, request: Request, key: str | None, by_name: bool) -> Response:
    q = _query(request)
    if isinstance(q, ANSWERS):
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



def dispatch(state, request: Request, path: str, verb: str) -> Response | None:
    """Answer a policy or role route, else None."""
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
    return None
