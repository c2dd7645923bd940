"""Parity: sys/health, sys/seal-status, sys/mounts (enable, duplicate, tune, read, disable) and the
token endpoints real clients call first (auth/token/create, lookup-self)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity


def test_health_unauthenticated(pair):
    pair.send("GET", "/v1/sys/health", token=None).same().expect(200)
    pair.send("GET", "/v1/sys/health", token="not-a-token").same().expect(200)
    ex = pair.send("GET", "/v1/sys/health", token=None)

    def shape(side, resp):
        body = resp.json()
        # no envelope: the health record is the whole body
        assert list(body) == ["initialized", "sealed", "standby", "replication_performance_mode",
                              "replication_dr_mode", "server_time_utc", "version", "cluster_name", "cluster_id"]
        assert body["version"] == "2.7.2" and body["sealed"] is False and body["initialized"] is True
        assert body["cluster_name"].startswith("vault-cluster-")

    ex.check(shape)


def test_health_head(pair):
    pair.send("HEAD", "/v1/sys/health", token=None).same().expect(200, content_type="application/json")


def test_seal_status(pair):
    ex = pair.send("GET", "/v1/sys/seal-status", token=None).same().expect(200)

    def shape(side, resp):
        body = resp.json()
        assert sorted(body) == sorted(["type", "initialized", "sealed", "t", "n", "progress", "nonce",
                                       "recovery_seal", "version", "commit_date", "migration", "cluster_name",
                                       "cluster_id", "storage_type"])
        assert (body["type"], body["sealed"], body["t"], body["n"], body["storage_type"]) == \
            ("shamir", False, 1, 1, "inmem")

    ex.check(shape)


def test_mount_enable_duplicate_nested_and_disable(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "pki"}).same().expect(204)
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "pki"}).same().expect(
        400, errors=[f"path is already in use at {m}/"])
    pair.send("POST", f"/v1/sys/mounts/{m}/sub", json={"type": "pki"}).same().expect(
        400, errors=[f"path is already in use at {m}/"])
    pair.send("DELETE", f"/v1/sys/mounts/{m}").same().expect(204)
    pair.send("DELETE", f"/v1/sys/mounts/{m}").same().expect(204)  # unknown mount: still 204
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "pki"}).same().expect(204)


def test_mount_enable_errors(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "nope"}).same().expect(
        400, errors=["plugin not found in the catalog: nope"])
    pair.send("POST", f"/v1/sys/mounts/{m}", json={}).same().expect(
        400, errors=["backend type must be specified as a string"])
    pair.send("POST", "/v1/sys/mounts/sys", json={"type": "pki"}).same().expect(400, errors=['cannot mount "sys/"'])


def test_mount_read_and_list_entry(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "pki", "config": {"max_lease_ttl": "100h"}}).same().expect(204)
    ex = pair.send("GET", f"/v1/sys/mounts/{m}").same()
    ex.expect(200, data={"type": "pki", "config": {"default_lease_ttl": 0, "force_no_cache": False, "max_lease_ttl": 360000},
                         "description": "", "local": False, "seal_wrap": False, "options": {},
                         "running_plugin_version": "v2.7.2+builtin.bao", "deprecation_status": "supported"})

    def listed(side, resp):
        body = resp.json()
        entry = body["data"][f"{m}/"]
        assert entry == body[f"{m}/"]  # listed both at top level and in data
        assert entry["type"] == "pki" and entry["config"]["max_lease_ttl"] == 360000
        assert entry["accessor"].startswith("pki_")

    pair.send("GET", "/v1/sys/mounts").check(listed)


def test_mount_tune_read_write(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "pki"}).same().expect(204)
    # untuned dev mount: 768h both
    pair.send("GET", f"/v1/sys/mounts/{m}/tune").same().expect(
        200, data={"default_lease_ttl": 2764800, "max_lease_ttl": 2764800, "force_no_cache": False, "description": ""})
    pair.send("POST", f"/v1/sys/mounts/{m}/tune", json={"max_lease_ttl": "87600h"}).same().expect(204)
    ex = pair.send("GET", f"/v1/sys/mounts/{m}/tune").same().expect(
        200, data={"default_lease_ttl": 2764800, "max_lease_ttl": 315360000, "force_no_cache": False, "description": ""})

    def top_level_too(side, resp):
        body = resp.json()
        for k in ("default_lease_ttl", "max_lease_ttl", "force_no_cache", "description"):
            assert body[k] == body["data"][k], k

    ex.check(top_level_too)


def test_mount_tune_errors(pair):
    m = pair.mount
    pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "pki", "config": {"max_lease_ttl": "100h"}}).same().expect(204)
    pair.send("POST", f"/v1/sys/mounts/{m}/tune", json={"default_lease_ttl": "200h"}).same().expect(
        400, errors=["backend max lease TTL of 360000 would be less than backend default lease TTL of 720000"])
    pair.send("POST", f"/v1/sys/mounts/{m}/tune", json={"max_lease_ttl": "soon"}).same().expect(
        400, errors=['time: invalid duration "soon"'])
    pair.send("GET", f"/v1/sys/mounts/{m}_missing/tune").same().expect(
        400, errors=[f'cannot fetch sysview for path "{m}_missing/"'])


def test_sys_mounts_needs_token(pair):
    pair.send("GET", "/v1/sys/mounts", token=None).same().expect(403, errors=["permission denied"])


def test_token_create_and_lookup_self(pair):
    ex = pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h", "policies": ["default"]}).same()
    ex.expect(200, warnings=None)
    ex.capture("child", lambda j: j["auth"]["client_token"])

    def auth_block(side, resp):
        body = resp.json()
        assert body["data"] is None
        auth = body["auth"]
        assert sorted(auth) == sorted(["client_token", "accessor", "policies", "token_policies", "metadata",
                                       "lease_duration", "renewable", "entity_id", "token_type", "orphan",
                                       "mfa_requirement", "num_uses"])
        assert auth["lease_duration"] == 3600 and auth["renewable"] is True and auth["token_type"] == "service"
        assert auth["policies"] == ["default"] and auth["client_token"].startswith("s.")

    ex.check(auth_block)
    pair.send("GET", "/v1/auth/token/lookup-self").same().expect(
        200, data={"id": "root", "policies": ["root"], "ttl": 0, "display_name": "token", "path": "auth/token/create",
                   "orphan": True, "renewable": False, "type": "service", "num_uses": 0, "meta": None,
                   "expire_time": None, "explicit_max_ttl": 0, "creation_ttl": 0, "entity_id": ""})
    child = pair.send("GET", "/v1/auth/token/lookup-self", token=lambda s: s.vars["child"])
    child.same(volatile=("ttl", "id")).expect(
        200, data={"policies": ["default"], "creation_ttl": 3600, "display_name": "token", "path": "auth/token/create",
                   "orphan": False, "renewable": True, "type": "service", "num_uses": 0, "explicit_max_ttl": 0})


def test_token_create_policies_comma_string(pair):
    ex = pair.send("POST", "/v1/auth/token/create", json={"policies": "default", "ttl": 600}).same().expect(200)

    def auth(side, resp):
        assert resp.json()["auth"]["lease_duration"] == 600 and resp.json()["auth"]["policies"] == ["default"]

    ex.check(auth)
