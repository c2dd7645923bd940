"""Issue 11, state that must stay right: ``schedpki serve``'s reset returns to the seeded state,
a non-root token never chooses its token id, and the request journal stays bounded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tracemalloc
import urllib.request

import pytest

from pytest_schedpki import Double
from pytest_schedpki.journal import Journal


# -- defect 3: reset on `schedpki serve` -----------------------------------------------------------
def _call(url: str, method: str = "GET", token: str | None = None, body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    if token:
        request.add_header("X-Vault-Token", token)
        request.add_header("X-Nomad-Token", token)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture()
def served(request):
    """``schedpki serve`` on free ports of 127.0.0.1 with the default seed (extra arguments from
    ``@pytest.mark.parametrize("served", [[...]], indirect=True)``); yields the two base URLs."""
    extra = getattr(request, "param", [])
    proc = subprocess.Popen([sys.executable, "-m", "pytest_schedpki.cli", "serve", "--scheduler-port", "0",
                             "--secrets-port", "0", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "SCHEDPKI_RSA_KEY_POOL": "0"})
    urls: dict[str, str] = {}
    try:
        for line in proc.stdout:
            if line.startswith("schedpki: scheduler"):
                urls["scheduler"] = line.rsplit(" ", 1)[1].strip()
            elif line.startswith("schedpki: secrets"):
                urls["secrets"] = line.rsplit(" ", 1)[1].strip()
            elif line.startswith("export BAO_TOKEN"):
                break
        assert set(urls) == {"scheduler", "secrets"}, proc.stderr.read()
        yield urls
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _seeded_state(urls: dict[str, str]) -> tuple:
    status_mounts, mounts = _call(urls["secrets"] + "/v1/sys/mounts", token="root")
    status_role, _ = _call(urls["secrets"] + "/v1/pki/roles/example-dot-com", token="root")
    status_method, method = _call(urls["scheduler"] + "/v1/acl/auth-method/example-oidc", token="root")
    return (status_mounts, "pki/" in json.loads(mounts)["data"], status_role, status_method,
            json.loads(method)["Name"] if status_method == 200 else None)


def test_serve_reset_returns_to_the_seeded_state(served):
    seeded = (200, True, 200, 200, "example-oidc")
    assert _seeded_state(served) == seeded
    # change every part of it, then reset
    assert _call(served["secrets"] + "/v1/pki/roles/example-dot-com", "DELETE", token="root")[0] == 204
    assert _call(served["secrets"] + "/v1/sys/mounts/pki", "DELETE", token="root")[0] == 204
    assert _call(served["scheduler"] + "/v1/acl/auth-method/example-oidc", "DELETE", token="root")[0] == 200
    assert _seeded_state(served)[1:4] == (False, 404, 404)
    status, body = _call(served["secrets"] + "/_schedpki/reset", "POST", body=b"{}",
                         headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)) == (200, {"reset": True})
    assert _seeded_state(served) == seeded
    # the CA survived the reset: the role issues at once
    status, body = _call(served["secrets"] + "/v1/pki/issue/example-dot-com", "POST", token="root",
                         body=json.dumps({"common_name": "www.example.com"}).encode(),
                         headers={"Content-Type": "application/json"})
    assert status == 200 and "BEGIN CERTIFICATE" in json.loads(body)["data"]["certificate"]


# -- defect 2: a non-root token never chooses its id; no id is taken twice ---------------------------
def _create(double, token: str, body: dict) -> tuple[int, dict]:
    status, raw = _call(double.secrets_url + "/v1/auth/token/create", "POST", token=token,
                        body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return status, json.loads(raw)


def _creator(double, sudo: bool = False) -> str:
    caps = '["create", "update", "sudo"]' if sudo else '["create", "update"]'
    name = "sudoer" if sudo else "creator"
    double.secrets.put_policy(name, f'path "auth/token/create" {{ capabilities = {caps} }}')
    return double.secrets.create_token(policies=[name], ttl=3600).id


def test_non_root_token_cannot_take_the_root_token_id(double):
    creator = _creator(double)
    assert _create(double, creator, {"id": "root", "policies": ["creator"]}) == (
        400, {"errors": ["root or sudo privileges required to specify token id"]})
    assert _create(double, creator, {"id": "mine"}) == (400, {"errors": ["root or sudo privileges required to specify token id"]})
    assert _call(double.secrets_url + "/v1/sys/mounts", token="root")[0] == 200
    assert double.secrets.tokens.tokens["root"].policies == ("root",)
    assert "mine" not in double.secrets.tokens.tokens


def test_a_token_id_is_never_taken_twice(double):
    status, first = _create(double, "root", {"id": "twice"})
    assert status == 200 and first["auth"]["client_token"] == "twice"
    duplicate = (400, {"errors": ["cannot create a token with a duplicate ID"]})
    assert _create(double, "root", {"id": "twice"}) == duplicate
    assert _create(double, _creator(double, sudo=True), {"id": "root"}) == duplicate
    assert double.secrets.tokens.tokens["twice"].accessor == first["auth"]["accessor"]
    assert double.secrets.tokens.tokens["root"].policies == ("root",)


@pytest.mark.parametrize("body, error", [
    ({"policies": ["other"]}, "child policies must be subset of parent"),
    ({"policies": ["root"]}, "child policies must be subset of parent"),
    ({"no_parent": True}, "root or sudo privileges required to create orphan token"),
    ({"period": "1h"}, "root or sudo privileges required to create periodic token"),
    ({"num_uses": -1}, "number of uses cannot be negative"),
    ({"type": "nope"}, "invalid 'token_type' value"),
    ({"entity_alias": "a"}, "'entity_alias' is only allowed in combination with token role"),
])
def test_non_sudo_token_cannot_widen_its_child(double, body, error):
    creator = _creator(double)
    before = set(double.secrets.tokens.tokens)
    assert _create(double, creator, body) == (400, {"errors": [error]})
    assert set(double.secrets.tokens.tokens) == before



# -- defect 4: the journal is bounded in entries and bytes ---------------------------------------
def _read(journal: Journal, i: int, query: dict | None = None) -> None:
    journal.record("secrets", "GET", "/v1/pki/roles/example-dot-com", query or {}, "root", b"", 200,
                   b'{"data":{"n":%d}}' % i)


def test_journal_keeps_its_newest_entries_within_the_entry_bound():
    journal = Journal(max_entries=100)
    for i in range(1000):
        _read(journal, i)
    entries = journal.entries()
    assert len(entries) == 100 and journal.evicted == 900
    assert [e.response["data"]["n"] for e in entries] == list(range(900, 1000))


def test_journal_counts_metadata_against_the_byte_bound():
    journal = Journal(max_entries=10**9, max_bytes=64 * 1024)
    for i in range(5000):  # empty bodies: only the metadata counts, and it must be bounded too
        journal.record("scheduler", "GET", "/v1/acl/auth-methods", {"index": str(i)}, "management", b"", 200, b"")
    assert journal.size_bytes <= 64 * 1024 and 0 < len(journal.entries()) < 5000
    assert journal.entries()[-1].query == {"index": "4999"}


def test_journal_memory_stays_flat_under_read_only_traffic():
    journal = Journal(max_bytes=1024 * 1024)
    for i in range(2000):  # fill it up to its bound first
        _read(journal, i, {"stale": "", "i": str(i)})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(30_000):
            _read(journal, i, {"stale": "", "i": str(i)})
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 1024 * 1024, f"the journal grew by {grown} bytes over 30,000 requests"


def test_double_journal_bound_and_assertion_helpers():
    double = Double(journal_max_entries=5).start()
    try:
        for _ in range(12):
            assert _call(double.secrets_url + "/v1/sys/health")[0] == 200
        assert len(double.journal.entries()) == 5 and double.journal.evicted == 7
        double.journal.assert_request_made("GET", "/v1/sys/health", count=5)
        with pytest.raises(AssertionError, match="7 older request\\(s\\) were evicted: the journal keeps 5 entries"):
            double.journal.assert_request_made("GET", "/v1/sys/health", count=12)
        double.reset()
        assert double.journal.entries() == [] and double.journal.evicted == 0
    finally:
        double.stop()


def test_journal_bounds_from_the_environment(monkeypatch):
    monkeypatch.setenv("SCHEDPKI_JOURNAL_MAX_ENTRIES", "7")
    monkeypatch.setenv("SCHEDPKI_JOURNAL_MAX_BYTES", "123456")
    journal = Double().journal
    assert (journal.max_entries, journal.max_bytes) == (7, 123456)
    monkeypatch.setenv("SCHEDPKI_JOURNAL_MAX_ENTRIES", "-1")
    with pytest.raises(ValueError, match="SCHEDPKI_JOURNAL_MAX_ENTRIES must not be negative"):
        Double()


@pytest.mark.parametrize("served", [["--journal-max-entries", "3"]], indirect=True)
def test_serve_journal_max_entries(served):
    for _ in range(10):
        assert _call(served["secrets"] + "/v1/sys/health")[0] == 200
    status, body = _call(served["secrets"] + "/_schedpki/journal")
    assert status == 200 and [e["path"] for e in json.loads(body)] == ["/v1/sys/health"] * 3
