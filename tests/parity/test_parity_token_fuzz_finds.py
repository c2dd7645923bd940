"""Parity: what the differential fuzzer's token/sys family found (``scripts/differential.py --family
token``), each pinned against the real server: a ``token`` parameter that is not a string, and
``revoke-orphan``'s own checks."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

NOT_STRINGS = [None, 5, True, [], {}, 1.5, ["a"]]


@pytest.mark.parametrize("path", ["lookup", "renew", "revoke", "revoke-orphan"])
@pytest.mark.parametrize("value", NOT_STRINGS, ids=repr)
@pytest.mark.parametrize("token", ["root", "bogus"])
def test_a_token_parameter_that_is_not_a_string_is_an_invalid_token(pair, path, value, token):
    """request_handling.go reads ``token`` before the request's own token: 403 ``invalid token``,
    whoever asks (a lookup of ``null`` used to look up the caller, a revoke of ``5`` answered 204)."""
    pair.send("POST", f"/v1/auth/token/{path}", json={"token": value}, token=token).same().expect(
        403, errors=["invalid token"])


def test_revoke_orphan_checks_sudo_then_the_token(pair):
    policy = f"{pair.mount}-orphan".replace("_", "-")
    pair.send("PUT", f"/v1/sys/policies/acl/{policy}",
              json={"policy": 'path "auth/token/*" { capabilities = ["update", "read", "list"] }'}).same().expect(204)
    pair.send("POST", "/v1/auth/token/create", json={"policies": [policy]}).same().capture(
        "caller", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["default"]}).same().capture(
        "victim", lambda j: j["auth"]["client_token"])
    # update on the path is enough to reach the handler (only revoke-orphan/* is root-protected)
    for body in (lambda s: {"token": s.vars["victim"]}, {"token": "nope"}):
        pair.send("POST", "/v1/auth/token/revoke-orphan", json=body, token=lambda s: s.vars["caller"]).same().expect(
            400, errors=["root or sudo privileges required to revoke and orphan"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json={"token": ""}).same().expect(400, errors=["missing token ID"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json={"token": "nope"}).same().expect(
        400, errors=["token to revoke not found"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json=lambda s: {"token": s.vars["victim"]}).same().expect(204)
    pair.send("POST", "/v1/auth/token/revoke-orphan", json=lambda s: {"token": s.vars["victim"]}).same().expect(
        400, errors=["token to revoke not found"])
    pair.send("DELETE", f"/v1/sys/policies/acl/{policy}").same().expect(204)


@pytest.mark.parametrize("query", ["activecode=299", "activecode=201&activecode=x", "activecode=abc", "activecode=+201",
                                   "activecode=", "activecode=1.5", "activecode=599", "activecode=204",
                                   "activecode=304", "activecode=100", "standbyok=maybe", "standbyok=true",
                                   "standbyok=", "perfstandbyok=x", "sealedcode=x", "uninitcode=x&activecode=201",
                                   "standbycode=abc", "activecode=-5", "activecode=007", "activecode=1000"])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_health_query_parameters(pair, method, query):
    """sys_health.go: the status codes asked for (Atoi of the first value), 400 with an empty error list
    for a bad one, and a code WriteHeader refuses drops the connection."""
    outcome = {}
    for side in pair.sides:
        try:
            resp = side.session.request(method, f"{side.url}/v1/sys/health?{query}", timeout=10)
        except Exception as exc:  # noqa: BLE001 - a dropped connection is the answer to compare
            outcome[side.name] = ("dropped", type(exc).__name__)
            continue
        outcome[side.name] = (resp.status_code, resp.headers.get("Content-Type"),
                              resp.json() == {"errors": []} if resp.status_code == 400 and method == "GET" else None,
                              resp.content == b"" if method == "HEAD" or resp.status_code in (204, 304) else
                              sorted(resp.json()))
    assert outcome["bao"] == outcome["double"]


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "LIST", "PATCH"])
def test_health_other_methods(pair, method):
    pair.send(method, "/v1/sys/health", token=None).same().expect(405, errors=[])


def _token_without_rights(pair, suffix: str) -> None:
    policy = f"{pair.mount}-{suffix}".replace("_", "-")
    pair.send("PUT", f"/v1/sys/policies/acl/{policy}",
              json={"policy": 'path "auth/token/lookup-self" { capabilities = ["read"] }'}).same().expect(204)
    pair.send("POST", "/v1/auth/token/create", json={"policies": [policy]}).same().capture(
        "weak", lambda j: j["auth"]["client_token"])


@pytest.mark.parametrize("method", ["PUT", "POST", "PATCH"])
@pytest.mark.parametrize("path", ["sys/policy/", "sys/mounts/x/", "auth/token/create/", "auth/token/lookup/"])
def test_a_write_to_a_path_ending_in_a_slash_is_refused_before_the_token_is_checked(pair, method, path):
    """handleCancelableRequest refuses it first: the same 400 for a token without rights, none, or a bogus one."""
    _token_without_rights(pair, "slash")
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else None
    for token in (lambda s: s.vars["weak"], None, "bogus"):
        pair.send(method, f"/v1/{path}", data=b'{"token": 5}', headers=headers, token=token).same().expect(
            400, errors=["cannot write to a path ending in '/'"])


def test_help_needs_a_token_but_no_capability(pair):
    """policy/acl.go: the help operation is always allowed (the texts are the double's own, see
    docs/divergences.md, so only the status is compared)."""
    _token_without_rights(pair, "help")
    for path in ("sys/policy", "sys/mounts/x", "auth/token/accessors"):
        for token, status in ((lambda s: s.vars["weak"], 200), (None, 403), ("bogus", 403)):
            codes = {side.name: side.request("GET", f"/v1/{path}?help=1", token=token(side) if callable(token) else token
                                             ).status_code for side in pair.sides}
            assert codes == {"bao": status, "double": status}, (path, codes)


CREATE_BODIES = [
    {"meta": "a=b"}, {"meta": ["a=b", "c=d"]}, {"meta": 1.5}, {"meta": ["a=b", "bad"]}, {"meta": {"a": 1}},
    {"meta": []}, {"meta": {}}, {"meta": None}, {"meta": "a=b=c"}, {"meta": "=x"}, {"meta": True},
    {"lease": "1h"}, {"lease": "-1h"}, {"lease": "1h", "ttl": "2h"}, {"ttl": "-1h"}, {"explicit_max_ttl": "-1h"},
    {"period": -5}, {"period": -5, "type": 0}, {"ttl": 1.5, "entity_alias": "x"}, {"period": "87600h"},
    {"period": "87600h", "explicit_max_ttl": "1h"}, {"ttl": "87600h"}, {"ttl": [1]}, {"ttl": True}, {"ttl": "1x"},
    {"period": "1x", "explicit_max_ttl": "1y"}, {"id": "s.abc"}, {"id": "a.b", "ttl": "-1h"},
    {"num_uses": -1, "type": "x"}, {"type": "batch", "num_uses": 2}, {"type": "batch", "period": "1h"},
    {"type": "batch", "explicit_max_ttl": "x"}, {"type": "batch", "explicit_max_ttl": "0", "num_uses": 3},
    {"policies": ["root"], "ttl": "-1h"}, {"no_parent": True, "ttl": "-5"}, {"display_name": "My App!!"},
    {"display_name": "!"}, {"policies": ["nope"], "ttl": "87600h"},
]


@pytest.mark.parametrize("body", CREATE_BODIES, ids=repr)
def test_token_create_fields_in_upstream_order(pair, body):
    """handleCreateCommon: meta as key=value pairs, the deprecated lease, '<name> must be positive',
    the type before the TTLs, the period capped by the system max with its warning, the display name's
    trailing dash, batch's forbidden fields; a created token's lookup agrees too."""
    ex = pair.send("POST", "/v1/auth/token/create", json=body).same()
    if ex.real.status_code == 200:
        ex.capture("t", lambda j: j["auth"]["client_token"])
        pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same(
            volatile=("id", "ttl", "expire_time", "issue_time", "creation_time")).expect(200)


ROLE_BODIES = [
    {"token_period": {}}, {"orphan": "x"}, {"allowed_policies": {"a": 1}}, {"token_num_uses": "x"},
    {"path_suffix": []}, {"token_type": "bogus"}, {"token_type": None}, {"period": "x"}, {"explicit_max_ttl": -5},
    {"token_period": -5}, {"renewable": "maybe"}, {"token_bound_cidrs": "x"}, {"allowed_entity_aliases": 5},
    {"allowed_entity_aliases": "B,a,b"}, {"token_explicit_max_ttl": "2h", "explicit_max_ttl": "1h"},
    {"path_suffix": "a/../b"}, {"path_suffix": "ab..cd"}, {"path_suffix": "v1"}, {"bogus": 1},
    {"allowed_policies": "dev,default", "renewable": True, "token_explicit_max_ttl": "2h"},
    {"explicit_max_ttl": "3h"}, {"period": "1h"}, {"token_period": "2h", "period": "1h"},
    {"allowed_policies": ["B", "a"]}, {"token_type": "batch"}, {"token_type": "default"},
    {"token_type": "batch", "orphan": True, "renewable": False}, {"token_num_uses": 3}, {"token_num_uses": -1},
    {"token_bound_cidrs": ["10.0.0.1", "10.1.0.0/8", "::1"]}, {"bound_cidrs": "10.0.0.0/8"},
    {"token_bound_cidrs": "\ufeff"}, {"token_bound_cidrs": "a\tb"},
    {"token_bound_cidrs": "10.0.0.1", "bound_cidrs": "10.0.0.0/8"}, {"token_explicit_max_ttl": "900h"},
]


@pytest.mark.parametrize("body", ROLE_BODIES, ids=repr)
def test_token_role_write_and_read(pair, body):
    """tokenStoreRoleCreateUpdate: field errors without the framework's prefix, the legacy names
    (shown apart from the token_ ones), CIDRs, use counts, batch rules; nothing stored when refused."""
    name = f"{pair.mount}-role".replace("_", "-")
    pair.send("POST", f"/v1/auth/token/roles/{name}", json=body).same()
    pair.send("GET", f"/v1/auth/token/roles/{name}").same()
    pair.send("DELETE", f"/v1/auth/token/roles/{name}").same()


@pytest.mark.parametrize("name", ["bad name", "-a", "a-", "a.b", "a_b"])
def test_token_role_names_follow_the_generic_name_pattern(pair, name):
    """A name outside framework.GenericNameRegex is an unsupported path (404), on every operation."""
    pair.send("POST", f"/v1/auth/token/roles/{name}", json={}).same()
    pair.send("GET", f"/v1/auth/token/roles/{name}").same()
    pair.send("POST", f"/v1/auth/token/create/{name}", json={}).same()
    pair.send("DELETE", f"/v1/auth/token/roles/{name}").same()


CAPABILITIES_CASES = [
    ("sys/capabilities", {"token": {}, "paths": "a"}), ("sys/capabilities", {"token": 5, "paths": "a"}),
    ("sys/capabilities", {"token": "", "paths": "a"}), ("sys/capabilities", {"paths": "a"}),
    ("sys/capabilities", {"token": "nope"}), ("sys/capabilities", {"token": "nope", "paths": ["", "x"]}),
    ("sys/capabilities", {"token": "nope", "paths": ["x", ""]}), ("sys/capabilities", {"token": "root", "paths": ["a", ""]}),
    ("sys/capabilities", {"token": "root", "path": "a", "paths": "b"}),
    ("sys/capabilities", {"token": "root", "paths": "a", "path": {}}), ("sys/capabilities", {"token": "root", "path": "a,b"}),
    ("sys/capabilities", {"token": "root", "paths": ["a", "a"]}), ("sys/capabilities", {"token": "root", "paths": " a , b "}),
    ("sys/capabilities-self", {"path": "a", "paths": "b"}), ("sys/capabilities-self", {"paths": ""}),
    ("sys/capabilities-self", {"paths": ["x", ""]}), ("sys/capabilities-accessor", {"accessor": "", "paths": "a"}),
    ("sys/capabilities-accessor", {"accessor": "nope", "paths": "a"}), ("sys/capabilities-accessor", {"accessor": "nope"}),
    ("sys/capabilities-accessor", {"accessor": 5, "paths": "a"}),
]


@pytest.mark.parametrize(("path", "body"), CAPABILITIES_CASES, ids=repr)
def test_capabilities_checks_in_upstream_order(pair, path, body):
    """handleCapabilities: a token that is not a string is none (500 no token found), paths before the
    deprecated path (never merged), then each path in turn (missing path, invalid token)."""
    pair.send("POST", f"/v1/{path}", json=body).same()


def test_tune_errors_as_upstream_words_them(pair):
    kv = f"{pair.mount}-kv"
    pair.send("POST", f"/v1/sys/mounts/{kv}", json={"type": "kv", "options": {"version": "1"}}).same().expect(204)
    pair.send("POST", "/v1/sys/mounts/nope-at-all/tune", json={"description": "x"}).same().expect(
        400, errors=['tune of path "nope-at-all/" failed: no mount entry found'])
    pair.send("POST", "/v1/sys/mounts/nope-at-all/tune", json={"default_lease_ttl": "x"}).same().expect(400)
    pair.send("GET", "/v1/sys/mounts/nope-at-all/tune").same().expect(400, errors=['cannot fetch sysview for path "nope-at-all/"'])
    for value in ("batch", "bogus"):
        pair.send("POST", f"/v1/sys/mounts/{kv}/tune", json={"token_type": value}).same().expect(
            400, errors=["'token_type' can only be modified on auth mounts"])
    pair.send("DELETE", f"/v1/sys/mounts/{kv}").same().expect(204)


def test_ui_mounts_list_what_the_token_may_use(pair):
    """pathInternalUIMountsRead: no token lists nothing, a bogus one is refused, a token sees the mounts
    it may use something in (the built-in cubbyhole/, identity/ and sys/ are left out of the comparison:
    the double has none, see docs/divergences.md)."""
    kv = f"{pair.mount}-ui"
    policy = f"{pair.mount}-ui".replace("_", "-")
    pair.send("POST", f"/v1/sys/mounts/{kv}", json={"type": "kv"}).same().expect(204)
    pair.send("PUT", f"/v1/sys/policies/acl/{policy}", json={"policy": f'path "{kv}/*" {{ capabilities = ["read"] }}'}
              ).same().expect(204)
    pair.send("POST", "/v1/auth/token/create", json={"policies": [policy]}).same().capture(
        "reader", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["default"]}).same().capture(
        "plain", lambda j: j["auth"]["client_token"])
    for token in (None, "bogus", lambda s: s.vars["reader"], lambda s: s.vars["plain"], "root"):
        seen = {}
        for side in pair.sides:  # only this test's mount and token/ (other tests share the real server)
            resp = side.request("GET", "/v1/sys/internal/ui/mounts", token=token(side) if callable(token) else token)
            data = resp.json().get("data") if resp.status_code == 200 else None
            seen[side.name] = (resp.status_code, resp.json() if data is None else
                               (f"{kv}/" in data["secret"], "token/" in data["auth"], sorted(data)))
        assert seen["bao"] == seen["double"], seen
    pair.send("DELETE", f"/v1/sys/mounts/{kv}").same().expect(204)
    pair.send("DELETE", f"/v1/sys/policies/acl/{policy}").same().expect(204)


def test_listing_visibility_is_checked_stored_and_shown(pair):
    """handleTuneWriteCommon: only "", hidden and unauth; the value shows in the tune read and the mount's
    config, and an unauth mount is listed to callers without a token (type, description, options)."""
    kv = f"{pair.mount}-lv"
    pair.send("POST", f"/v1/sys/mounts/{kv}", json={"type": "kv", "description": "d", "options": {"version": "1"}}
              ).same().expect(204)
    for value in ("bogus", "hidden", "unauth", 5, "HIDDEN", ""):
        pair.send("POST", f"/v1/sys/mounts/{kv}/tune", json={"listing_visibility": value}).same()
        pair.send("GET", f"/v1/sys/mounts/{kv}/tune").same().expect(200)
        seen = {}
        for side in pair.sides:
            mounts = side.request("GET", "/v1/sys/mounts").json()["data"]
            listed = side.request("GET", "/v1/sys/internal/ui/mounts", token=None).json()["data"]["secret"]
            seen[side.name] = (mounts[f"{kv}/"]["config"], listed.get(f"{kv}/"))
        assert seen["bao"] == seen["double"], (value, seen)
    pair.send("DELETE", f"/v1/sys/mounts/{kv}").same().expect(204)


@pytest.mark.parametrize("name", ["root", "response-wrapping"])
@pytest.mark.parametrize("text", ['path "a" { capabilities = ["read"] }', '{"path": 5}', ""])
def test_built_in_policy_names_after_the_text_is_parsed(pair, name, text):
    """handlePoliciesSet parses the policy before the store refuses the built-in names."""
    pair.send("PUT", f"/v1/sys/policies/acl/{name}", json={"policy": text}).same().expect(400)


PARAMETER_POLICIES = {
    "allowed": 'path "auth/token/*" { capabilities = ["update", "read", "create"] allowed_parameters = { "ttl" = [] } }',
    "values": 'path "auth/token/create" { capabilities = ["update"] allowed_parameters = { "ttl" = ["1h", "2*"] "policies" = [] } }',
    "denied": 'path "auth/token/create" { capabilities = ["update"] denied_parameters = { "ttl" = ["*h"] } }',
    "denied-all": 'path "auth/token/create" { capabilities = ["update"] denied_parameters = { "*" = [] } }',
    "required": 'path "auth/token/create" { capabilities = ["update"] required_parameters = ["display_name"] }',
    "star": 'path "auth/token/create" { capabilities = ["update"] allowed_parameters = { "*" = [] "ttl" = ["1h"] } }',
    "numbers": 'path "auth/token/create" { capabilities = ["update"] allowed_parameters = { "num_uses" = [1, 2] "ttl" = [] } }',
    "case": 'path "auth/token/create" { capabilities = ["update"] allowed_parameters = { "TTL" = [] } }',
    "json": '{"path": {"auth/token/create": {"capabilities": ["update"], "allowed_parameters": {"ttl": ["1h"]}}}}',
}
PARAMETER_BODIES = [{}, {"ttl": "1h"}, {"ttl": "3h"}, {"ttl": "2h"}, {"ttl": "30m"}, {"TTL": "1h"},
                    {"ttl": "1h", "policies": ["default"]}, {"display_name": "x"}, {"num_uses": 1}, {"num_uses": "1"},
                    {"ttl": "1h", "display_name": "x"}, {"token": " "}, {"bogus": 1}]


@pytest.mark.parametrize("kind", sorted(PARAMETER_POLICIES))
def test_policy_parameter_constraints(pair, kind):
    """acl.go AllowOperation: required, denied and allowed parameters (globbed strings, typed values,
    lower-cased names) refuse a request the capability alone would let through (403)."""
    policy = f"{pair.mount}-params-{kind}".replace("_", "-")
    pair.send("PUT", f"/v1/sys/policies/acl/{policy}", json={"policy": PARAMETER_POLICIES[kind]}).same().expect(204)
    policies = [policy] if kind == "allowed" else [policy, "default"]
    pair.send("POST", "/v1/auth/token/create", json={"policies": policies}).same().capture(
        "limited", lambda j: j["auth"]["client_token"])
    for body in PARAMETER_BODIES:
        statuses = {side.name: side.request("POST", "/v1/auth/token/create", json=body,
                                            token=side.vars["limited"]).status_code for side in pair.sides}
        assert statuses["bao"] == statuses["double"], (kind, body, statuses)
    if kind == "allowed":  # the renewal the fuzzer found: a parameter outside the list is refused
        pair.send("POST", "/v1/auth/token/renew", json={"token": " "}, token=lambda s: s.vars["limited"]).same().expect(403)
    pair.send("DELETE", f"/v1/sys/policies/acl/{policy}").same().expect(204)


@pytest.mark.parametrize("text", [
    'path "x" { capabilities = ["read"] min_wrapping_ttl = "2h" max_wrapping_ttl = "1h" }',
    'path "x" { capabilities = ["read"] min_wrapping_ttl = "1h" max_wrapping_ttl = "2h" }',
    'path "x" { capabilities = ["read"] min_wrapping_ttl = 100 max_wrapping_ttl = 50 }',
    'path "x" { capabilities = ["read"] min_wrapping_ttl = "100" max_wrapping_ttl = "50s" }',
])
def test_wrapping_ttl_bounds(pair, text):
    name = f"{pair.mount}-wrap".replace("_", "-")
    ex = pair.send("PUT", f"/v1/sys/policies/acl/{name}", json={"policy": text}).same()
    if ex.real.status_code == 204:
        pair.send("DELETE", f"/v1/sys/policies/acl/{name}").same().expect(204)


def test_tune_lists_and_option_versions(pair):
    kv = f"{pair.mount}-tl"
    pair.send("POST", f"/v1/sys/mounts/{kv}", json={"type": "kv", "options": {"version": "1"}}).same().expect(204)
    for body in ({"options": {"version": "x"}}, {"options": {"version": ""}},
                 {"audit_non_hmac_request_keys": ",a,b", "audit_non_hmac_response_keys": ["c"],
                  "passthrough_request_headers": "X-A", "allowed_response_headers": "X-B"}):
        pair.send("POST", f"/v1/sys/mounts/{kv}/tune", json=body).same()
        pair.send("GET", f"/v1/sys/mounts/{kv}/tune").same().expect(200)
        configs = {side.name: side.request("GET", "/v1/sys/mounts").json()["data"][f"{kv}/"]["config"]
                   for side in pair.sides}
        assert configs["bao"] == configs["double"]
    pair.send("DELETE", f"/v1/sys/mounts/{kv}").same().expect(204)


def test_the_default_policy_cannot_be_deleted(pair):
    for path in ("sys/policy/default", "sys/policies/acl/default", "sys/policy/root"):
        pair.send("DELETE", f"/v1/{path}").same().expect(400)


@pytest.mark.parametrize("body", [{"type": "bogus"}, {"num_uses": -1}, {"type": "bogus", "num_uses": -1}])
def test_creation_through_a_role_checks_the_type_and_use_count(pair, body):
    role = f"{pair.mount}-rt".replace("_", "-")
    pair.send("POST", f"/v1/auth/token/roles/{role}", json={"allowed_policies": "default"}).same().expect(204)
    pair.send("POST", f"/v1/auth/token/create/{role}", json=body).same().expect(400)
    pair.send("DELETE", f"/v1/auth/token/roles/{role}").same().expect(204)


def test_more_token_store_details(pair):
    """create's policies are a string slice (a comma stays in the name), a role ignores no_parent,
    renewing a token that cannot be renewed by accessor is a bare invalid request, and the root
    policy reads back without a modification time."""
    pair.send("POST", "/v1/auth/token/create", json={"policies": "nope,root", "ttl": "1h"}).same().expect(200)
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["a,b"], "ttl": "1h"}).same().expect(200)
    role = f"{pair.mount}-np".replace("_", "-")
    pair.send("POST", f"/v1/auth/token/roles/{role}", json={"allowed_policies": "default"}).same().expect(204)
    pair.send("POST", f"/v1/auth/token/create/{role}", json={"no_parent": True}).same().expect(200)
    pair.send("DELETE", f"/v1/auth/token/roles/{role}").same().expect(204)
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["default"], "renewable": False}).same().capture(
        "fixed", lambda j: j["auth"]["accessor"])
    pair.send("POST", "/v1/auth/token/renew-accessor", json=lambda s: {"accessor": s.vars["fixed"]}).same().expect(
        400, errors=["1 error occurred:\n\t* invalid request\n\n"])
    pair.send("GET", "/v1/sys/policies/acl/root").same().expect(200)
    pair.send("GET", "/v1/sys/policy/root").same().expect(200)


@pytest.mark.parametrize("options", [{"version": "x"}, "\ufeff", "a=b", None, {}, ["version=1"]], ids=repr)
def test_tune_options_are_key_value_pairs(pair, options):
    kv = f"{pair.mount}-opt"
    pair.send("POST", f"/v1/sys/mounts/{kv}", json={"type": "kv", "options": {"version": "1"}}).same().expect(204)
    pair.send("POST", f"/v1/sys/mounts/{kv}/tune", json={"options": options}).same()
    pair.send("POST", "/v1/sys/mounts/nope-at-all/tune", json={"options": options}).same()
    pair.send("DELETE", f"/v1/sys/mounts/{kv}").same().expect(204)
