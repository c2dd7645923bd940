"""Parity: the token store's lifecycle - TTL, period and explicit max at creation (with the capping
warning), renewals (increment, capping, last_renewal), orphans, lookup/renew/revoke by token and by
accessor, LIST accessors, and response-wrapped creation (wrap_info.wrapped_accessor)."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.parity

CAPPED = 'TTL of "{}" exceeded the effective max_ttl of "{}"; TTL value is capped accordingly'
_TOKEN_VOLATILE = ("id", "ttl", "expire_time", "issue_time", "creation_time", "last_renewal",
                   "last_renewal_time")


def _go_duration(seconds: int) -> str:
    """What vault's humanDuration prints for whole ``seconds`` (Go's Duration.String without zero parts)."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h{minutes}m{secs}s" if hours else f"{minutes}m{secs}s" if minutes else f"{secs}s"
    if text.endswith("m0s"):
        text = text[:-2]
    return text.replace("h0m", "h") if "h0m" in text else text


def _auth(expected: dict):
    def check(side, resp):
        auth = resp.json()["auth"]
        assert {k: auth[k] for k in expected} == expected

    return check


@pytest.mark.parametrize(("body", "lease", "renewable", "warnings"), [
    ({}, 0, False, None),
    ({"policies": ["default"]}, 2764800, True, None),
    ({"ttl": "5m"}, 300, True, None),
    ({"period": "30m"}, 1800, True, None),
    ({"explicit_max_ttl": "1h"}, 3600, True, None),
    ({"ttl": "30m", "explicit_max_ttl": "5m"}, 300, True, [CAPPED.format("30m", "5m")]),
    ({"ttl": "1h", "period": "30m"}, 1800, True, None),
    ({"period": "30m", "explicit_max_ttl": "1h"}, 1800, True, None),
    ({"ttl": "1h", "renewable": False}, 3600, False, None),
])
def test_create_ttl_period_explicit_max(pair, body, lease, renewable, warnings):
    ex = pair.send("POST", "/v1/auth/token/create", json=body).same().expect(200, warnings=warnings)
    ex.check(_auth({"lease_duration": lease, "renewable": renewable, "orphan": False}))


def test_periodic_token_lookup_shows_period(pair):
    ex = pair.send("POST", "/v1/auth/token/create", json={"period": "30m", "explicit_max_ttl": "1h"}).same()
    ex.capture("t", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same(
        volatile=_TOKEN_VOLATILE).expect(200, data={"period": 1800, "explicit_max_ttl": 3600, "creation_ttl": 1800,
                                                    "renewable": True})
    # a periodic token renews to its period whatever the increment
    pair.send("POST", "/v1/auth/token/renew-self", json={"increment": "2h"}, token=lambda s: s.vars["t"]).same(
        ).expect(200, warnings=None).check(_auth({"lease_duration": 1800}))


def test_renew_self_increment_and_explicit_max_capping(pair):
    ex = pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h", "explicit_max_ttl": "2h"}).same()
    ex.capture("t", lambda j: j["auth"]["client_token"])
    tok = {"token": lambda s: s.vars["t"]}
    pair.send("POST", "/v1/auth/token/renew-self", json={"increment": "10m"}, **tok).same().expect(
        200, warnings=None).check(_auth({"lease_duration": 600, "renewable": True}))

    def renewed(side, resp):
        data = resp.json()["data"]
        assert data["ttl"] in (599, 600) and data["creation_ttl"] == 3600
        assert isinstance(data["last_renewal"], str) and isinstance(data["last_renewal_time"], int)

    pair.send("GET", "/v1/auth/token/lookup-self", **tok).same(volatile=_TOKEN_VOLATILE).expect(200).check(
        renewed).capture("created", lambda j: j["data"]["creation_time"])
    time.sleep(1.01 - time.time() % 1)  # the capped renewal leaves in a later wall-clock second than the creation

    def sent(side):
        side.vars["sent"] = int(time.time())
        return {"increment": "3h"}

    def capped_to_what_is_left(side, resp):
        # CalculateTTL truncates the creation and now to the second: 2h minus the whole seconds between
        lease = resp.json()["auth"]["lease_duration"]
        assert side.vars["sent"] - side.vars["created"] <= 7200 - lease <= int(time.time()) - side.vars["created"]
        assert resp.json()["warnings"] == [CAPPED.format("3h", _go_duration(lease))]

    pair.send("POST", "/v1/auth/token/renew-self", json=sent, **tok).same(
        volatile=("lease_duration", "warnings")).expect(200).check(capped_to_what_is_left)
    pair.send("POST", "/v1/auth/token/renew", json=lambda s: {"token": s.vars["t"], "increment": "20m"}).same(
        ).expect(200, warnings=None).check(_auth({"lease_duration": 1200}))


def test_renew_errors(pair):
    pair.send("POST", "/v1/auth/token/renew-self").same().expect(400, errors=["lease is not renewable"])
    pair.send("POST", "/v1/auth/token/renew", json={"token": "root"}).same().expect(
        400, errors=["lease is not renewable"])
    pair.send("POST", "/v1/auth/token/renew", json={"token": "nope"}).same().expect(400, errors=["token not found"])
    pair.send("POST", "/v1/auth/token/renew", json={}).same().expect(400, errors=["missing token ID"])


def test_create_orphan(pair):
    ex = pair.send("POST", "/v1/auth/token/create-orphan", json={"ttl": "1h"}).same().expect(200)
    ex.check(_auth({"orphan": True, "lease_duration": 3600}))
    ex.capture("t", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same(
        volatile=_TOKEN_VOLATILE).expect(200, data={"orphan": True, "path": "auth/token/create-orphan"})


def test_accessor_lookup_renew_revoke(pair):
    ex = pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h"}).same()
    ex.capture("t", lambda j: j["auth"]["client_token"])
    ex.capture("a", lambda j: j["auth"]["accessor"])
    acc = {"json": lambda s: {"accessor": s.vars["a"]}}
    pair.send("POST", "/v1/auth/token/lookup-accessor", **acc).same(volatile=_TOKEN_VOLATILE).expect(
        200, data={"id": "", "creation_ttl": 3600, "path": "auth/token/create"})

    def listed(side, resp):
        assert side.vars["a"] in resp.json()["data"]["keys"]

    pair.send("LIST", "/v1/auth/token/accessors").same(volatile=("keys",)).expect(200).check(listed)
    pair.send("POST", "/v1/auth/token/renew-accessor", json=lambda s: {"accessor": s.vars["a"], "increment": "30m"}
              ).same().expect(200).check(_auth({"client_token": "", "lease_duration": 1800}))
    pair.send("POST", "/v1/auth/token/lookup-accessor", json={"accessor": "nope"}).same().expect(
        400, errors=["1 error occurred:\n\t* invalid accessor\n\n"])
    pair.send("POST", "/v1/auth/token/lookup-accessor", json={}).same().expect(
        400, errors=["1 error occurred:\n\t* missing accessor\n\n"])
    pair.send("GET", "/v1/auth/token/lookup-accessor").same().expect(
        405, errors=["1 error occurred:\n\t* unsupported operation\n\n"])
    pair.send("POST", "/v1/auth/token/revoke-accessor", **acc).same().expect(204)
    pair.send("POST", "/v1/auth/token/revoke-accessor", json={"accessor": "nope"}).same().expect(
        200, warnings=["No token found with this accessor"])
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same().expect(
        403, errors=["bad token"])


def test_revoke_self_revoke_and_revoke_orphan(pair):
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h"}).same().capture(
        "parent", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h"}, token=lambda s: s.vars["parent"]).same(
        ).capture("child", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json=lambda s: {"token": s.vars["parent"]}).same().expect(204)
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["child"]}).same(
        volatile=_TOKEN_VOLATILE).expect(200, data={"orphan": True})
    pair.send("POST", "/v1/auth/token/revoke-self", token=lambda s: s.vars["child"]).same().expect(204)
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["child"]}).same().expect(
        403, errors=["bad token"])
    # revoke takes the descendants with it
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h"}).same().capture(
        "p2", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h"}, token=lambda s: s.vars["p2"]).same(
        ).capture("c2", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/revoke", json=lambda s: {"token": s.vars["p2"]}).same().expect(204)
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["c2"]}).same().expect(
        403, errors=["bad token"])
    pair.send("POST", "/v1/auth/token/revoke", json={"token": "nope"}).same().expect(204)


def test_wrapped_create_has_wrapped_accessor(pair):
    ex = pair.send("POST", "/v1/auth/token/create", json={"period": "30m"},
                   headers={"X-Vault-Wrap-TTL": "15m"}).same().expect(200)

    def wrapped(side, resp):
        info = resp.json()["wrap_info"]
        assert info["ttl"] == 900 and info["creation_path"] == "auth/token/create"
        assert isinstance(info["wrapped_accessor"], str) and len(info["wrapped_accessor"]) == 24
        side.vars["w"], side.vars["wa"] = info["token"], info["wrapped_accessor"]

    ex.check(wrapped)

    def unwrapped(side, resp):
        auth = resp.json()["auth"]
        assert auth["accessor"] == side.vars["wa"] and auth["lease_duration"] == 1800

    pair.send("POST", "/v1/sys/wrapping/unwrap", json=lambda s: {"token": s.vars["w"]}).same().expect(
        200).check(unwrapped)


def test_token_roles_and_creation_through_a_role(pair):
    role = pair.mount.replace("_", "-")
    base = f"/v1/auth/token/roles/{role}"
    pair.send("GET", base).same().expect(404, errors=[])
    pair.send("POST", base, json={"allowed_policies": "p1,p2", "disallowed_policies": ["x"]}).same().expect(204)
    pair.send("GET", base).same().expect(200, data={
        "allowed_policies": ["p1", "p2"], "disallowed_policies": ["x"], "allowed_policies_glob": [],
        "disallowed_policies_glob": [], "name": role, "orphan": False, "renewable": True, "path_suffix": "",
        "period": 0, "token_period": 0, "explicit_max_ttl": 0, "token_explicit_max_ttl": 0,
        "token_no_default_policy": False, "token_type": "default-service", "allowed_entity_aliases": None})

    def listed(side, resp):
        assert role in resp.json()["data"]["keys"]

    pair.send("LIST", "/v1/auth/token/roles").same(volatile=("keys",)).expect(200).check(listed)
    pair.send("POST", f"/v1/auth/token/create/{role}", json={}).same().expect(200).check(
        _auth({"policies": ["default", "p1", "p2"], "lease_duration": 2764800}))
    pair.send("POST", f"/v1/auth/token/create/{role}", json={"policies": ["x"]}).same().expect(400, errors=[
        'token policies (["default" "x"]) must be subset of the role\'s allowed policies (["default" "p1" "p2"]) '
        'or glob policies ([])'])
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h", "role_name": role}).same().expect(
        200, warnings=["Endpoint ignored these unrecognized parameters: [role_name]"])
    pair.send("POST", f"/v1/auth/token/create/{role}-nope", json={}).same().expect(
        400, errors=[f"unknown role {role}-nope"])
    pair.send("POST", base, json={"orphan": True, "period": "1h", "renewable": False,
                                  "token_explicit_max_ttl": "2h", "path_suffix": "sfx"}).same().expect(204)
    ex = pair.send("POST", f"/v1/auth/token/create/{role}", json={"policies": ["p1"]}).same().expect(200)
    ex.check(_auth({"orphan": True, "renewable": False, "lease_duration": 3600}))
    ex.capture("t", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same(
        volatile=_TOKEN_VOLATILE).expect(200, data={"path": f"auth/token/create/{role}/sfx", "role": role,
                                                    "explicit_max_ttl": 0})
    pair.send("POST", f"/v1/auth/token/roles/{role.upper()}", json={}).same().expect(204)
    pair.send("GET", f"/v1/auth/token/roles/{role.upper()}").same().expect(200, data={"name": role.upper()})
    for name in (role, role.upper()):
        pair.send("DELETE", f"/v1/auth/token/roles/{name}").same().expect(204)


def test_missing_policies_warn_and_root_stands_alone(pair):
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "30m", "explicit_max_ttl": "5m",
                                                     "policies": ["zz-missing", "nope-missing", "default"]}
              ).same().expect(200, warnings=[CAPPED.format("30m", "5m"), 'Policy "nope-missing" does not exist',
                                             'Policy "zz-missing" does not exist'])
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["root", "nope-missing"]}).same().expect(
        200, warnings=None).check(_auth({"policies": ["root"]}))


@pytest.mark.parametrize(("role_body", "increment", "lease", "warnings"), [
    # a role's period fixes every renewal to the period, whatever the increment (and lookup shows no period)
    ({"period": "1h", "token_explicit_max_ttl": "90m"}, "2h", 3600, None),
    ({"period": "1h"}, "10m", 3600, None),
    # a role's explicit_max_ttl caps renewals, with the capping warning
    ({"explicit_max_ttl": "30m"}, "1h", 1800, [CAPPED.format("1h", "30m")]),
    # increment 0: the token's own TTL again
    ({"explicit_max_ttl": "30m"}, "0", 1200, None),
])
def test_renewal_of_a_token_made_through_a_role(pair, role_body, increment, lease, warnings):
    role = pair.mount.replace("_", "-") + "-renew"
    pair.send("POST", f"/v1/auth/token/roles/{role}", json=role_body).same().expect(204)
    ex = pair.send("POST", f"/v1/auth/token/create/{role}", json={"ttl": "20m"}).same().expect(200)
    ex.capture("t", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/renew", json=lambda s: {"token": s.vars["t"], "increment": increment}).same(
        ).expect(200, warnings=warnings).check(_auth({"lease_duration": lease, "renewable": True}))
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same(
        volatile=_TOKEN_VOLATILE).expect(200, data={"role": role, "explicit_max_ttl": 0})
    pair.send("DELETE", f"/v1/auth/token/roles/{role}").same().expect(204)
