"""Parity: sealing and unsealing as on a dev server (one unseal key), and what a sealed server
still answers (seal-status and health without cluster identity, leader, init) or refuses (503)."""

from __future__ import annotations

import base64
import os
import time

import pytest

pytestmark = pytest.mark.parity
SELFCHECK = os.environ.get("SCHEDPKI_PARITY_SELFCHECK", "") not in ("", "0")


def _bao_unseal_key(server) -> str:
    """The key from the dev server's banner (printed just after it starts answering)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(server.log_path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip().startswith("Unseal Key:"):
                    return line.split(":", 1)[1].strip()
        time.sleep(0.05)
    raise AssertionError("the dev server did not print its unseal key")


@pytest.fixture
def keys(pair, bao_server):
    if SELFCHECK:
        pytest.skip("needs the double's own unseal key")
    key = {"bao": _bao_unseal_key(bao_server),
           "double": base64.b64encode(pair.double_obj.secrets.unseal_key).decode()}
    for side in pair.sides:
        side.vars["key"] = key[side.name]
        side.vars["hex"] = base64.b64decode(key[side.name]).hex()
    yield pair
    for side in pair.sides:  # never leave the shared server sealed
        side.request("PUT", "/v1/sys/unseal", json={"key": side.vars["key"]}, token=None)


def test_seal_then_unseal(keys):
    pair = keys
    pair.send("PUT", "/v1/sys/seal", token=None).same().expect(403, errors=["permission denied"])
    pair.send("GET", "/v1/sys/seal").same().expect(405, errors=[])
    pair.send("PUT", "/v1/sys/seal").same().expect(204)
    ex = pair.send("GET", "/v1/sys/seal-status", token=None).same().expect(200)
    ex.check(lambda side, resp: _sealed_status(resp.json()))
    pair.send("GET", "/v1/sys/health", token=None).same(volatile=("server_time_utc",)).expect(503)
    pair.send("GET", "/v1/sys/leader", token=None).same().expect(200)
    pair.send("GET", "/v1/sys/init", token=None).same().expect(200)
    pair.send("GET", "/v1/sys/mounts").same().expect(503, errors=["Vault is sealed"])
    pair.send("GET", "/v1/auth/token/lookup-self").same().expect(503, errors=["Vault is sealed"])
    bad = [
        ({}, "'key' must be specified in request body as JSON, or 'reset' set to true"),
        ({"key": "bad"}, "'key' must be a valid hex or base64 string"),
        ({"key": "QUJD"}, "invalid key: key is shorter than minimum 16 bytes"),
        ({"key": base64.b64encode(b"x" * 40).decode()}, "invalid key: key is longer than maximum 33 bytes"),
        ({"key": base64.b64encode(b"x" * 32).decode()}, "unable to retrieve stored keys: invalid key: failed to "
                                                        "decrypt keys from storage: cipher: message authentication failed"),
    ]
    for body, error in bad:
        pair.send("PUT", "/v1/sys/unseal", json=body, token=None).same().expect(400, errors=[error])
    pair.send("PUT", "/v1/sys/unseal", json={"reset": True}, token=None).same().expect(200)
    pair.send("PUT", "/v1/sys/unseal", json=lambda s: {"key": s.vars["hex"]}, token=None).same().expect(200)
    pair.send("LIST", "/v1/sys/policies/acl").same(volatile=("keys",)).expect(200)
    ex = pair.send("PUT", "/v1/sys/unseal", json=lambda s: {"key": s.vars["key"]}, token=None).same().expect(200)
    ex.check(lambda side, resp: _unsealed_status(resp.json()))


def _sealed_status(body):
    assert body["sealed"] is True and "cluster_name" not in body and "cluster_id" not in body


def _unsealed_status(body):
    assert body["sealed"] is False and body["cluster_name"].startswith("vault-cluster-")
