"""Parity: ``sys/auth`` for AppRole and the AppRole method (roles, role IDs, secret IDs, accessors,
login with its number-of-uses and CIDR rules, tidy), against ``bao server -dev``."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

SID_LOOKUP_KEYS = ["cidr_list", "creation_time", "expiration_time", "last_updated_time", "metadata",
                   "secret_id_accessor", "secret_id_num_uses", "secret_id_ttl", "token_bound_cidrs"]
AUTH_VOLATILE = ("entity_id",)


@pytest.fixture
def approle(pair):
    pair.send("POST", f"/v1/sys/auth/{pair.mount}", json={"type": "approle"}).same().expect(204)
    yield pair
    pair.real.request("DELETE", f"/v1/sys/auth/{pair.mount}")


def test_sys_auth_enable_read_tune_list_disable(pair):
    m = pair.mount
    try:
        pair.send("POST", f"/v1/sys/auth/{m}", json={"type": "approle"}).same().expect(204)
        pair.send("POST", f"/v1/sys/auth/{m}", json={"type": "approle"}).same().expect(
            400, errors=[f"path is already in use at {m}/"])
        pair.send("POST", f"/v1/sys/auth/{m}_x", json={"type": "nope"}).same().expect(
            400, errors=["plugin not found in the catalog: nope"])
        pair.send("POST", f"/v1/sys/auth/{m}_x", json={}).same().expect(
            400, errors=["backend type must be specified as a string"])
        pair.send("GET", f"/v1/sys/auth/{m}").same(volatile=("uuid",)).expect(200, data={"type": "approle"})
        pair.send("GET", f"/v1/sys/auth/{m}/tune").same().expect(200, data={"token_type": "default-service"})
        pair.send("POST", f"/v1/sys/auth/{m}/tune", json={"default_lease_ttl": "1h"}).same().expect(204)
        pair.send("GET", f"/v1/sys/auth/{m}/tune").same().expect(200, data={"default_lease_ttl": 3600})

        def listing(side, resp):
            body = resp.json()
            assert body["data"]["token/"]["type"] == "token" and body["data"]["token/"]["options"] is None
            mine = body["data"][f"{m}/"]
            assert (mine["type"], mine["config"]["default_lease_ttl"], mine["options"]) == ("approle", 3600, {})
            assert body[f"{m}/"] == mine
            assert sorted(mine) == sorted(["accessor", "config", "deprecation_status", "description",
                                           "external_entropy_access", "local", "options", "plugin_version",
                                           "running_plugin_version", "running_sha256", "seal_wrap", "type", "uuid"])

        pair.send("GET", "/v1/sys/auth").check(listing)
        pair.send("DELETE", f"/v1/sys/auth/{m}").same().expect(204)
        pair.send("DELETE", f"/v1/sys/auth/{m}").same().expect(204)
        pair.send("GET", f"/v1/auth/{m}/role", token="root").same().expect(404)
    finally:
        pair.real.request("DELETE", f"/v1/sys/auth/{m}")


def test_role_defaults_fields_and_list(approle):
    a = f"auth/{approle.mount}"
    approle.send("LIST", f"/v1/{a}/role").same().expect(404, errors=[])
    approle.send("POST", f"/v1/{a}/role/web", json={}).same().expect(204)
    approle.send("GET", f"/v1/{a}/role/web").same().expect(200)
    approle.send("LIST", f"/v1/{a}/role").same().expect(200, data={"keys": ["web"]})
    approle.send("POST", f"/v1/{a}/role/r2", json={
        "policies": "a,b", "period": "1h", "secret_id_ttl": "10m", "secret_id_num_uses": 2,
        "token_bound_cidrs": "127.0.0.1/32", "secret_id_bound_cidrs": ["10.0.0.0/8"]}).same().expect(204)
    approle.send("GET", f"/v1/{a}/role/r2").same().expect(200, data={"policies": ["a", "b"], "period": 3600,
                                                                       "token_bound_cidrs": ["127.0.0.1"]})
    approle.send("POST", f"/v1/{a}/role/r3", json={"token_policies": ["p2", "p1"], "token_ttl": "30m",
                                                   "token_max_ttl": "2h", "token_num_uses": 3,
                                                   "token_type": "service"}).same().expect(204)
    approle.send("GET", f"/v1/{a}/role/r3").same().expect(200)
    approle.send("GET", f"/v1/{a}/role/nope").same().expect(404, errors=[])
    approle.send("DELETE", f"/v1/{a}/role/r3").same().expect(204)
    approle.send("GET", f"/v1/{a}/role/r3").same().expect(404, errors=[])


@pytest.mark.parametrize(("body", "status", "error"), [
    ({"bind_secret_id": False}, 500, "1 error occurred:\n\t* at least one constraint should be enabled on the role\n\n"),
    ({"token_ttl": "2h", "token_max_ttl": "1h"}, 400, "'token_ttl' cannot be greater than 'token_max_ttl'"),
    ({"secret_id_num_uses": -1}, 400, "secret_id_num_uses cannot be negative"),
    ({"token_num_uses": -1}, 400, "'token_num_uses' cannot be negative"),
    ({"token_type": "bogus"}, 400, "invalid 'token_type' value \"bogus\""),
    ({"secret_id_bound_cidrs": "bad"}, 500,
     "1 error occurred:\n\t* failed to validate CIDR blocks: invalid CIDR address: bad\n\n"),
])
def test_role_errors(approle, body, status, error):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/bad", json=body).same().expect(status, errors=[error])
    approle.send("GET", f"/v1/{a}/role/bad").same().expect(404)


def test_role_id_read_write(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/web", json={}).same().expect(204)
    approle.send("GET", f"/v1/{a}/role/web/role-id").same().expect(200, data_keys=["role_id"])
    approle.send("POST", f"/v1/{a}/role/web/role-id", json={"role_id": "my-role-id"}).same().expect(204)
    approle.send("GET", f"/v1/{a}/role/web/role-id").same().expect(200, data={"role_id": "my-role-id"})
    approle.send("GET", f"/v1/{a}/role/nope/role-id").same().expect(404, errors=[])


def test_secret_ids_generate_lookup_accessors_destroy(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/web", json={"secret_id_ttl": "10m", "secret_id_num_uses": 2,
                                                    "secret_id_bound_cidrs": "10.0.0.0/8"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/nope/secret-id", json={}).same().expect(404, errors=['role "nope" does not exist'])
    approle.send("LIST", f"/v1/{a}/role/web/secret-id").same().expect(404, errors=[])
    ex = approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"metadata": '{"team":"x"}'}).same().expect(
        200, data={"secret_id_num_uses": 2, "secret_id_ttl": 600})
    ex.capture("accessor", lambda j: j["data"]["secret_id_accessor"])
    ex.capture("sid", lambda j: j["data"]["secret_id"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"ttl": "20m"}).same().expect(
        400, errors=["ttl cannot be longer than the role's secret_id_ttl"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"num_uses": 5}).same().expect(
        400, errors=["num_uses cannot be higher than the role's secret_id_num_uses"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"cidr_list": "192.168.0.0/16"}).same().expect(
        500, errors=['1 error occurred:\n\t* failed to verify subset relationship between CIDR blocks on the role '
                     '["10.0.0.0/8"] and CIDR blocks on the secret ID ["192.168.0.0/16"]: %!w(<nil>)\n\n'])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"metadata": "notjson"}).same().expect(
        400, errors=["failed to parse metadata: failed to parse the input: invalid <key,value> format"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"metadata": {"a": "b"}}).same().expect(400, errors=[
        "Field validation failed: error converting input for field \"metadata\": '' expected type 'string', got "
        "unconvertible type 'map[string]interface {}'"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"metadata": "a=b,c=d", "cidr_list": "10.1.0.0/16"}
                 ).same().expect(200)
    approle.send("LIST", f"/v1/{a}/role/web/secret-id").same().expect(200)
    approle.send("POST", f"/v1/{a}/role/web/secret-id/lookup", json=lambda s: {"secret_id": s.vars["sid"]}).same(
        ).expect(200, data_keys=SID_LOOKUP_KEYS, data={"metadata": {"team": "x"}, "secret_id_num_uses": 2})
    approle.send("POST", f"/v1/{a}/role/web/secret-id/lookup", json={"secret_id": "nope"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/secret-id-accessor/lookup",
                 json=lambda s: {"secret_id_accessor": s.vars["accessor"]}).same().expect(200, data_keys=SID_LOOKUP_KEYS)
    approle.send("POST", f"/v1/{a}/role/web/secret-id-accessor/lookup", json={"secret_id_accessor": "nope"}).same(
        ).expect(404, data={"error": 'failed to find accessor entry for secret_id_accessor: "nope"'})
    approle.send("POST", f"/v1/{a}/role/web/secret-id-accessor/destroy", json={"secret_id_accessor": "nope"}).same(
        ).expect(500, errors=['1 error occurred:\n\t* failed to find accessor entry for secret_id_accessor: "nope"\n\n'])
    approle.send("POST", f"/v1/{a}/role/web/secret-id-accessor/destroy",
                 json=lambda s: {"secret_id_accessor": s.vars["accessor"]}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/secret-id/lookup", json=lambda s: {"secret_id": s.vars["sid"]}).same(
        ).expect(204)
    approle.send("POST", f"/v1/{a}/role/web/secret-id/destroy", json={"secret_id": "nope"}).same().expect(204)


def test_custom_secret_id_and_login_uses(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/r3", json={"token_policies": ["p1"], "token_ttl": "30m",
                                                   "secret_id_num_uses": 2}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r3/role-id", json={"role_id": "rid3"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r3/custom-secret-id", json={"secret_id": "sid3", "metadata": '{"team":"x"}'}
                 ).same().expect(200, data={"secret_id": "sid3", "secret_id_num_uses": 2})
    approle.send("POST", f"/v1/{a}/role/r3/custom-secret-id", json={"secret_id": "sid3"}).same().expect(
        500, errors=["1 error occurred:\n\t* failed to store secret_id: SecretID is already registered\n\n"])
    login = {"role_id": "rid3", "secret_id": "sid3"}
    approle.send("POST", f"/v1/{a}/login", json=login, token=None).same(volatile=AUTH_VOLATILE).expect(200)
    approle.send("POST", f"/v1/{a}/role/r3/secret-id/lookup", json={"secret_id": "sid3"}).same().expect(
        200, data={"secret_id_num_uses": 1})
    approle.send("POST", f"/v1/{a}/login", json=login, token=None).same(volatile=AUTH_VOLATILE).expect(200)
    approle.send("POST", f"/v1/{a}/login", json=login, token=None).same().expect(400, errors=["invalid role or secret ID"])
    approle.send("POST", f"/v1/{a}/role/r3/secret-id/lookup", json={"secret_id": "sid3"}).same().expect(204)


def test_login_errors(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/web", json={}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/role-id", json={"role_id": "rid"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/custom-secret-id", json={"secret_id": "sid"}).same().expect(200)
    for body, status, error in (({}, 500, "missing role_id"), ({"role_id": "rid"}, 400, "missing secret_id"),
                                ({"role_id": "rid", "secret_id": "bad"}, 400, "invalid role or secret ID"),
                                ({"role_id": "bad", "secret_id": "sid"}, 400, "invalid role or secret ID")):
        approle.send("POST", f"/v1/{a}/login", json=body, token=None).same().expect(status, errors=[error])


def test_login_cidr_rules(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/r4", json={"secret_id_bound_cidrs": "10.0.0.0/8"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r4/role-id", json={"role_id": "rid4"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r4/custom-secret-id", json={"secret_id": "sid4"}).same().expect(200)
    approle.send("POST", f"/v1/{a}/login", json={"role_id": "rid4", "secret_id": "sid4"}, token=None).same().expect(
        400, errors=['source address "127.0.0.1" unauthorized by CIDR restrictions on the role: %!w(<nil>)'])
    approle.send("POST", f"/v1/{a}/role/r5", json={}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r5/role-id", json={"role_id": "rid5"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r5/custom-secret-id", json={"secret_id": "sid5", "cidr_list": "10.0.0.0/8"}
                 ).same().expect(200)
    approle.send("POST", f"/v1/{a}/login", json={"role_id": "rid5", "secret_id": "sid5"}, token=None).same().expect(
        400, errors=['source address "127.0.0.1" unauthorized through CIDR restrictions on the secret ID'])
    approle.send("POST", f"/v1/{a}/role/r6", json={"bind_secret_id": False, "secret_id_bound_cidrs": "127.0.0.0/8"}
                 ).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r6/role-id", json={"role_id": "rid6"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/login", json={"role_id": "rid6"}, token=None).same(volatile=AUTH_VOLATILE).expect(200)


def test_login_token_works_with_the_token_endpoints(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/web", json={"token_policies": "reader", "token_ttl": "20m"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/role-id", json={"role_id": "rid"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/custom-secret-id", json={"secret_id": "sid", "metadata": "env=test"}
                 ).same().expect(200)
    ex = approle.send("POST", f"/v1/{a}/login", json={"role_id": "rid", "secret_id": "sid"}, token=None).same(
        volatile=AUTH_VOLATILE).expect(200)
    ex.capture("tok", lambda j: j["auth"]["client_token"])

    def token(side):
        return side.vars["tok"]

    def lookup(side, resp):
        data = resp.json()["data"]
        assert data["path"] == f"{a}/login" and data["meta"] == {"role_name": "web", "env": "test"}
        assert data["policies"] == ["default", "reader"] and data["display_name"] == approle.mount
        assert data["renewable"] is True and data["orphan"] is True and data["creation_ttl"] == 1200

    approle.send("GET", "/v1/auth/token/lookup-self", token=token).check(lookup)
    approle.send("POST", "/v1/auth/token/renew-self", json={}, token=token).same(volatile=AUTH_VOLATILE).expect(200)


def test_tidy(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/tidy/secret-id", json={}).same().expect(202, warnings=[
        "Tidy operation successfully started. Any information from the operation will be printed to OpenBao's "
        "server logs."])


def test_more_role_and_secret_id_errors(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/Web", json={}).same().expect(204)
    approle.send("LIST", f"/v1/{a}/role").same().expect(200, data={"keys": ["web"]})
    approle.send("GET", f"/v1/{a}/role/WEB").same().expect(200)
    approle.send("POST", f"/v1/{a}/role/nope/role-id", json={"role_id": "x"}).same().expect(
        404, errors=["1 error occurred:\n\t* unsupported path\n\n"])
    approle.send("POST", f"/v1/{a}/role/web/role-id", json={}).same().expect(400, errors=["missing role_id"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id/lookup", json={}).same().expect(400, errors=["missing secret_id"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"num_uses": -1}).same().expect(
        400, errors=["num_uses cannot be negative"])
    approle.send("POST", f"/v1/{a}/role/web/secret-id", json={"token_bound_cidrs": "bad"}).same().expect(
        500, errors=["1 error occurred:\n\t* failed to validate token CIDR blocks: invalid CIDR address: bad\n\n"])
    approle.send("POST", f"/v1/{a}/role/r9", json={"token_bound_cidrs": "bad"}).same().expect(400, errors=[
        'error parsing address "bad": Unable to convert "bad" to an IPv4 or IPv6 address, or a UNIX Socket'])
    approle.send("POST", f"/v1/{a}/role/nb", json={"bind_secret_id": False, "token_bound_cidrs": "127.0.0.1/32"}
                 ).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/nb/secret-id", json={}).same().expect(
        400, errors=["bind_secret_id is not set on the role"])
    approle.send("POST", f"/v1/{a}/role/web", json={"role_id": "dup-check"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/other", json={"role_id": "dup-check"}).same().expect(
        500, errors=["1 error occurred:\n\t* role_id already in use\n\n"])
    approle.send("GET", f"/v1/{a}/role/other").same().expect(404)


def test_disabling_the_method_revokes_login_tokens(approle):
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/{a}/role/web", json={}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/role-id", json={"role_id": "rid"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/web/custom-secret-id", json={"secret_id": "sid"}).same().expect(200)
    ex = approle.send("POST", f"/v1/{a}/login", json={"role_id": "rid", "secret_id": "sid"}, token=None).same(
        volatile=AUTH_VOLATILE).expect(200)
    ex.capture("tok", lambda j: j["auth"]["client_token"])
    approle.send("DELETE", f"/v1/sys/auth/{approle.mount}").same().expect(204)
    approle.send("GET", "/v1/auth/token/lookup-self", token=lambda s: s.vars["tok"]).same().expect(
        403, errors=["permission denied"])


def test_sys_auth_token_method_and_errors(pair):
    m = pair.mount
    pair.send("DELETE", "/v1/sys/auth/token").same().expect(400, errors=["token credential backend cannot be disabled"])
    pair.send("POST", f"/v1/sys/auth/{m}", json={"type": "token"}).same().expect(
        400, errors=["token credential backend cannot be instantiated"])
    pair.send("POST", "/v1/sys/auth/token", json={"type": "approle"}).same().expect(
        400, errors=["path is already in use at token/"])
    pair.send("GET", "/v1/sys/auth/token").same(volatile=("uuid",)).expect(200, data={"type": "token", "options": None})
    pair.send("GET", "/v1/sys/auth/token/tune").same().expect(200)
    pair.send("GET", f"/v1/sys/auth/{m}").same().expect(400, errors=[f"No auth engine at {m}/"])
    pair.send("GET", f"/v1/sys/auth/{m}/tune").same().expect(400, errors=[f'cannot fetch sysview for path "auth/{m}/"'])
    pair.send("POST", f"/v1/sys/auth/{m}/tune", json={"default_lease_ttl": "1h"}).same().expect(
        400, errors=[f'tune of path "auth/{m}/" failed: no mount entry found'])


def test_sys_auth_nested_path_and_tune_limits(pair):
    m = pair.mount
    try:
        pair.send("POST", f"/v1/sys/auth/{m}/b", json={"type": "approle"}).same().expect(204)
        pair.send("GET", f"/v1/sys/auth/{m}/b").same(volatile=("uuid",)).expect(200)
        pair.send("POST", f"/v1/sys/auth/{m}/b/tune", json={"default_lease_ttl": "1000h"}).same().expect(204)
        pair.send("POST", f"/v1/sys/auth/{m}/b/tune", json={"max_lease_ttl": "10m", "default_lease_ttl": "1h"}
                  ).same().expect(400, errors=["backend max lease TTL of 600 would be less than backend default lease "
                                               "TTL of 3600"])
        pair.send("GET", f"/v1/sys/auth/{m}/b/tune").same().expect(200, data={"default_lease_ttl": 3600000})
        pair.send("DELETE", f"/v1/sys/auth/{m}/b").same().expect(204)
    finally:
        pair.real.request("DELETE", f"/v1/sys/auth/{m}/b")


FIELD_PATHS = ("policies", "token-policies", "secret-id-num-uses", "secret-id-ttl", "token-num-uses", "token-ttl",
               "token-max-ttl", "bind-secret-id", "secret-id-bound-cidrs", "token-bound-cidrs", "period",
               "token-period", "local-secret-ids", "token-explicit-max-ttl")


def test_per_field_role_paths(approle):
    a = f"auth/{approle.mount}/role"
    approle.send("POST", f"/v1/{a}/pf", json={}).same().expect(204)
    for field in FIELD_PATHS:
        approle.send("GET", f"/v1/{a}/pf/{field}").same().expect()
    approle.send("POST", f"/v1/{a}/pf/policies", json={"policies": "a,b"}).same().expect(204)
    approle.send("GET", f"/v1/{a}/pf/policies").same().expect(200, data={"policies": ["a", "b"]})
    approle.send("POST", f"/v1/{a}/pf/policies", json={"token_policies": "c"}).same().expect(204)
    approle.send("GET", f"/v1/{a}/pf/policies").same().expect(200, data_keys=["token_policies"])
    approle.send("DELETE", f"/v1/{a}/pf/policies").same().expect(204)
    approle.send("GET", f"/v1/{a}/pf/policies").same().expect(200, data={"token_policies": []})
    approle.send("POST", f"/v1/{a}/pf/token-ttl", json={"token_ttl": "1h"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/pf/token-ttl", json={}).same().expect(400, errors=["missing token_ttl"])
    approle.send("GET", f"/v1/{a}/pf/token-ttl").same().expect(200, data={"token_ttl": 3600})
    approle.send("POST", f"/v1/{a}/pf/token-max-ttl", json={"token_max_ttl": "10m"}).same().expect(
        400, errors=["token_max_ttl should be greater than or equal to token_ttl"])
    approle.send("DELETE", f"/v1/{a}/pf/token-ttl").same().expect(204)
    approle.send("POST", f"/v1/{a}/pf/token-max-ttl", json={"token_max_ttl": "10m"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/pf/token-ttl", json={"token_ttl": "1h"}).same().expect(
        400, errors=["token_ttl should not be greater than token_max_ttl"])
    approle.send("POST", f"/v1/{a}/pf/secret-id-num-uses", json={"secret_id_num_uses": -1}).same().expect(
        400, errors=["secret_id_num_uses cannot be negative"])
    approle.send("POST", f"/v1/{a}/pf/token-num-uses", json={"token_num_uses": -1}).same().expect(204)
    approle.send("GET", f"/v1/{a}/pf/token-num-uses").same().expect(200, data={"token_num_uses": -1})
    approle.send("DELETE", f"/v1/{a}/pf/token-max-ttl").same().expect(204)
    approle.send("POST", f"/v1/{a}/pf/secret-id-ttl", json={"secret_id_ttl": "1h"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/pf/period", json={"period": "1h"}).same().expect(204)
    approle.send("GET", f"/v1/{a}/pf/period").same().expect(200, data={"period": 3600, "token_period": 3600})
    approle.send("POST", f"/v1/{a}/pf/secret-id-bound-cidrs", json={"secret_id_bound_cidrs": "10.0.0.0/8"}).same(
        ).expect(204)
    approle.send("POST", f"/v1/{a}/pf/token-bound-cidrs", json={"token_bound_cidrs": ["127.0.0.1/32"]}).same().expect(204)
    approle.send("GET", f"/v1/{a}/pf").same().expect(200)
    for field in ("secret-id-bound-cidrs", "token-bound-cidrs", "period", "secret-id-ttl"):
        approle.send("DELETE", f"/v1/{a}/pf/{field}").same().expect(204)
    approle.send("GET", f"/v1/{a}/pf").same().expect(200)
    approle.send("GET", f"/v1/{a}/nope/token-ttl").same().expect(404, errors=[])
    approle.send("POST", f"/v1/{a}/nope/token-ttl", json={"token_ttl": "1h"}).same().expect(
        404, errors=["1 error occurred:\n\t* unsupported path\n\n"])


@pytest.mark.parametrize(("role", "leases"), [
    ({"token_ttl": "100", "token_max_ttl": "200"}, [100, 100, 200, 20]),
    ({}, [300, 300, 600, 20]),  # the mount's default, capped by the mount's max
    ({"token_period": "50"}, [50, 50, 50, 50]),
    ({"token_explicit_max_ttl": "150"}, [150, 150, 150, 20]),
    ({"token_period": "2000"}, [600, 600, 600, 600]),  # the period capped by the mount's max
])
def test_login_and_renewal_ttls_follow_the_role_and_the_mount(approle, role, leases):
    """A login token's TTL is CalculateTTL over the role's token_* values and the tuned mount's TTLs,
    with its capping warnings, at login and at each renewal (increments none, 1000 s and 20 s); a
    renewal after the role is deleted fails as upstream's does."""
    a = f"auth/{approle.mount}"
    approle.send("POST", f"/v1/sys/{a}/tune", json={"default_lease_ttl": "300", "max_lease_ttl": "600"}
                 ).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r", json=role).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r/role-id", json={"role_id": "rid"}).same().expect(204)
    approle.send("POST", f"/v1/{a}/role/r/custom-secret-id", json={"secret_id": "sid"}).same().expect(200)
    ex = approle.send("POST", f"/v1/{a}/login", json={"role_id": "rid", "secret_id": "sid"}, token=None).same(
        volatile=AUTH_VOLATILE).expect(200)
    ex.capture("tok", lambda j: j["auth"]["client_token"])
    got = [ex.json(approle.double)["auth"]["lease_duration"]]

    def token(side):
        return side.vars["tok"]

    for increment in (None, "1000", "20"):
        body = {"increment": increment} if increment else {}
        renewal = approle.send("POST", "/v1/auth/token/renew-self", json=body, token=token).same(
            volatile=AUTH_VOLATILE).expect(200)
        got.append(renewal.json(approle.double)["auth"]["lease_duration"])
    # a capped renewal is what is left of the max since login, counted in whole seconds: one second
    # later on the wall clock it is one less (each side is compared with bao's by same() above)
    assert all(want - 2 <= value <= want for value, want in zip(got, leases, strict=True)), (got, leases)
    approle.send("DELETE", f"/v1/{a}/role/r").same().expect(204)
    approle.send("POST", "/v1/auth/token/renew-self", json={}, token=token).same().expect(
        500, errors=['1 error occurred:\n\t* failed to renew entry: role "r" does not exist during renewal\n\n'])
