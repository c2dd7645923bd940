"""Parity: sys/wrapping/wrap and rewrap, and the legacy sys/policy shapes (``rules``, ``keys`` and
``policies`` at the top level and in ``data``; ``root`` listed last)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

_WRAP = {"X-Vault-Wrap-TTL": "60"}


def test_wrap_rewrap_unwrap(pair):
    ex = pair.send("POST", "/v1/sys/wrapping/wrap", json={"test": "x"}, headers=_WRAP).same().expect(200)

    def info(side, resp):
        wrap_info = resp.json()["wrap_info"]
        assert wrap_info["ttl"] == 60 and wrap_info["creation_path"] == "sys/wrapping/wrap"
        assert "wrapped_accessor" not in wrap_info
        side.vars["w"] = wrap_info["token"]

    ex.check(info)
    pair.send("POST", "/v1/sys/wrapping/wrap", json={"test": "x"}).same().expect(
        400, errors=["endpoint requires response wrapping to be used"])
    ex = pair.send("POST", "/v1/sys/wrapping/rewrap", json=lambda s: {"token": s.vars["w"]}).same().expect(200)

    def rewrapped(side, resp):
        wrap_info = resp.json()["wrap_info"]
        assert wrap_info["ttl"] == 60 and wrap_info["creation_path"] == "sys/wrapping/wrap"
        assert wrap_info["token"] != side.vars["w"]
        side.vars["w2"] = wrap_info["token"]

    ex.check(rewrapped)
    pair.send("POST", "/v1/sys/wrapping/unwrap", json=lambda s: {"token": s.vars["w"]}).same().expect(
        400, errors=["wrapping token is not valid or does not exist"])
    pair.send("POST", "/v1/sys/wrapping/rewrap", json={"token": "nope"}).same().expect(
        400, errors=["wrapping token is not valid or does not exist"])
    pair.send("POST", "/v1/sys/wrapping/unwrap", json=lambda s: {"token": s.vars["w2"]}).same().expect(
        200, data={"test": "x"})


def test_legacy_policy_shapes_and_root_last(pair):
    name = pair.mount.replace("_", "-")
    text = 'path "a" { capabilities = ["read"] }'
    pair.send("PUT", f"/v1/sys/policy/{name}", json={"policy": text}).same().expect(204)
    ex = pair.send("GET", f"/v1/sys/policy/{name}").same().expect(200, data={"name": name, "rules": text,
                                                                             "version": 1})

    def top_level(side, resp):
        body = resp.json()
        for key in ("name", "rules", "version", "cas_required", "modified"):
            assert body[key] == body["data"][key], key
        assert "policy" not in body["data"]

    ex.check(top_level)

    def listing(side, resp):
        body = resp.json()
        keys = body["data"]["keys"]
        assert keys[-1] == "root" and keys[:-1] == sorted(keys[:-1]) and name in keys
        assert body["data"]["policies"] == keys and body["keys"] == keys and body["policies"] == keys

    pair.send("GET", "/v1/sys/policy").same(volatile=("keys", "policies")).expect(200).check(listing)

    def acl_listing(side, resp):
        keys = resp.json()["data"]["keys"]
        assert keys[-1] == "root" and keys[:-1] == sorted(keys[:-1])

    pair.send("LIST", "/v1/sys/policies/acl").same(volatile=("keys",)).expect(200).check(acl_listing)
    pair.send("DELETE", f"/v1/sys/policy/{name}").same().expect(204)
    pair.send("GET", f"/v1/sys/policy/{name}").same().expect(404, errors=[])
