"""Parity: the KV version-1 engine, the 1 -> 2 upgrade through ``sys/mounts/:path/tune`` and the
ACL split of version 2 (``data/`` vs ``metadata/``), against ``bao server -dev``."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

UPGRADING = ("Upgrading mount from version {} to version 0. This mount will be unavailable for a brief period "
             "and will resume service shortly.")


@pytest.fixture
def kv1(pair):
    pair.send("POST", f"/v1/sys/mounts/{pair.mount}", json={"type": "kv"}).same().expect(204)
    return pair


def test_read_write_list_delete(kv1):
    m = kv1.mount
    kv1.send("POST", f"/v1/{m}/foo", json={"a": 1, "b": "x", "c": {"d": [1, 2.5]}}).same().expect(204)
    kv1.send("GET", f"/v1/{m}/foo").same().expect(200, data={"a": 1, "b": "x", "c": {"d": [1, 2.5]}})
    kv1.send("POST", f"/v1/{m}/foo", json={}).same().expect(400, errors=["missing data fields"])
    kv1.send("POST", f"/v1/{m}/a/b", json={"x": 1}).same().expect(204)
    kv1.send("LIST", f"/v1/{m}/").same().expect(200, data={"keys": ["a/", "foo"]})
    kv1.send("LIST", f"/v1/{m}/a").same().expect(200, data={"keys": ["b"]})
    kv1.send("LIST", f"/v1/{m}/zz").same().expect(404, errors=[])
    kv1.send("GET", f"/v1/{m}/nope").same().expect(404, errors=[])
    kv1.send("DELETE", f"/v1/{m}/foo").same().expect(204)
    kv1.send("DELETE", f"/v1/{m}/nope").same().expect(204)
    kv1.send("GET", f"/v1/{m}/foo").same().expect(404, errors=[])
    kv1.send("GET", f"/v1/{m}/").same().expect(404, errors=[])
    kv1.send("POST", f"/v1/{m}/", json={"a": 1}).same().expect(400, errors=["cannot write to a path ending in '/'"])
    kv1.send("PATCH", f"/v1/{m}/a/b", json={"a": 1}, headers={"Content-Type": "application/merge-patch+json"}).same().expect(405)


def test_lease_duration_from_ttl_or_lease(kv1):
    m = kv1.mount
    kv1.send("POST", f"/v1/{m}/t", json={"ttl": "1h", "a": 1}).same().expect(204)
    kv1.send("GET", f"/v1/{m}/t").same().expect(200)
    kv1.send("POST", f"/v1/{m}/l", json={"lease": "30m", "a": 1}).same().expect(204)
    kv1.send("GET", f"/v1/{m}/l").same().expect(200)

    def half_hour(side, resp):
        assert resp.json()["lease_duration"] == 1800

    kv1.send("GET", f"/v1/{m}/l").check(half_hour)
    kv1.send("POST", f"/v1/{m}/x", json={"ttl": "x", "a": 1}).same().expect(204)
    kv1.send("GET", f"/v1/{m}/x").same().expect(200)


def test_upgrade_to_v2_keeps_values_as_version_1(kv1):
    m = kv1.mount
    kv1.send("POST", f"/v1/{m}/a/b", json={"x": 1}).same().expect(204)
    kv1.send("GET", f"/v1/sys/mounts/{m}/tune").same().expect(200)
    kv1.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"version": "2"}}).same().expect(
        200, warnings=[UPGRADING.format(0)])
    kv1.send("GET", f"/v1/sys/mounts/{m}").same(volatile=("uuid",)).expect(200, data={"options": {"version": "2"}})
    kv1.send("GET", f"/v1/{m}/data/a/b").same().expect(200, data={"data": {"x": 1}})
    kv1.send("GET", f"/v1/{m}/metadata/a/b").same().expect(200, data={"oldest_version": 1, "current_version": 1})
    kv1.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"version": "2"}}).same().expect(204)
    kv1.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"version": "1"}}).same().expect(
        400, errors=["cannot downgrade mount from version 2"])
    kv1.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"version": "3"}}).same().expect(
        400, errors=["invalid version provided: 3"])
    kv1.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"version": ""}}).same().expect(
        400, errors=["invalid version provided: 0"])
    kv1.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"x": "y"}}).same().expect(204)
    kv1.send("GET", f"/v1/sys/mounts/{m}/tune").same().expect(200)


def test_upgrade_from_explicit_version_1(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "kv", "options": {"version": "1"}}).same().expect(204)
    pair.send("POST", f"/v1/sys/mounts/{m}/tune", json={"options": {"version": 2}}).same().expect(
        200, warnings=[UPGRADING.format(1)])


def test_acl_data_versus_metadata(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "kv-v2"}).same().expect(204)
    pair.send("POST", f"/v1/{m}/data/app/config", json={"data": {"k": "v"}}).same().expect(200)
    policy = (f'path "{m}/data/app/*" {{ capabilities = ["read", "create"] }}\n'
              f'path "{m}/metadata/*" {{ capabilities = ["list"] }}\n')
    pair.send("PUT", f"/v1/sys/policies/acl/{m}-reader", json={"policy": policy}).same().expect(204)
    ex = pair.send("POST", "/v1/auth/token/create", json={"policies": [f"{m}-reader"]}).same().expect(200)
    ex.capture("reader", lambda j: j["auth"]["client_token"])

    def token(side):
        return side.vars["reader"]

    pair.send("GET", f"/v1/{m}/data/app/config", token=token).same().expect(200, data={"data": {"k": "v"}})
    pair.send("POST", f"/v1/{m}/data/app/new", json={"data": {"a": 1}}, token=token).same().expect(200)
    pair.send("POST", f"/v1/{m}/data/app/config", json={"data": {"a": 1}}, token=token).same().expect(403)
    pair.send("GET", f"/v1/{m}/metadata/app/config", token=token).same().expect(403)
    pair.send("LIST", f"/v1/{m}/metadata/app", token=token).same().expect(200, data={"keys": ["config", "new"]})
    pair.send("DELETE", f"/v1/{m}/data/app/config", token=token).same().expect(403)
    # what `bao kv get` asks first: any token with access somewhere in the mount may read the mount entry
    pair.send("GET", f"/v1/sys/internal/ui/mounts/{m}/app/config", token=token).same(volatile=("uuid",)).expect(
        200, data={"path": f"{m}/", "options": {"version": "2"}})
    pair.send("GET", "/v1/sys/internal/ui/mounts/elsewhere", token=token).same().expect(403, errors=[
        "preflight capability check returned 403, please ensure client's policies grant access to path \"elsewhere/\""])
    pair.send("GET", f"/v1/sys/internal/ui/mounts/{m}", token=None).same().expect(403, errors=["permission denied"])


def test_generic_is_kv_version_1_under_its_old_name(pair):
    """hvac's TestMount::test_secret_backend_manipulation mounts ``generic``."""
    m = pair.mount
    try:
        pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "generic"}).same().expect(204)
        pair.send("GET", f"/v1/sys/mounts/{m}").same(volatile=("uuid",)).expect(200, data={"type": "generic",
                                                                                            "options": {}})
        pair.send("GET", f"/v1/sys/mounts/{m}").check(
            lambda side, resp: assert_no_deprecation_status(resp.json()["data"]))
        pair.send("GET", f"/v1/sys/mounts/{m}/tune").same().expect(200, data={"default_lease_ttl": 2764800,
                                                                               "max_lease_ttl": 2764800})
        pair.send("POST", f"/v1/{m}/foo", json={"a": "b"}).same().expect(204)
        pair.send("GET", f"/v1/{m}/foo").same().expect(200, data={"a": "b"})
        pair.send("LIST", f"/v1/{m}").same().expect(200, data={"keys": ["foo"]})
        for version in ("1", "2"):
            pair.send("POST", f"/v1/sys/mounts/{m}_v", json={"type": "generic", "options": {"version": version}}
                      ).same().expect(400, errors=['secrets engine "generic" does not allow setting a version'])
        pair.send("GET", f"/v1/sys/mounts/{m}_v").same().expect(400, errors=[f"No secret engine mount at {m}_v/"])
    finally:
        pair.real.request("DELETE", f"/v1/sys/mounts/{m}")


def assert_no_deprecation_status(data: dict) -> None:
    assert "deprecation_status" not in data and data["accessor"].startswith("generic_"), data
