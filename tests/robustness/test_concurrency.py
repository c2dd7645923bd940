"""Many client threads at once: no write lost, no index or serial handed out twice, CRLs consistent,
and blocking queries woken by every write that concerns them (and only by those)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography import x509
from robust_helpers import RawClient, seed_scheduler, seed_secrets

from pytest_schedpki.secrets.engines.pki.model import serial_to_hex

THREADS = 16
ROOT_S = {"X-Nomad-Token": "root"}
ROOT_V = {"X-Vault-Token": "root"}


@pytest.fixture(scope="module")
def seeded(double):
    base = seed_secrets(double)
    seed_scheduler(double)  # saves the baseline of both services
    return base


@pytest.fixture
def fresh(double, seeded):
    double.reset()
    yield double
    assert not double.pop_handler_errors()


def _jwt(name: str, audience: str) -> bytes:
    return json.dumps({"Name": name, "Type": "JWT", "TokenLocality": "global", "MaxTokenTTL": "1h",
                       "Config": {"JWKSURL": "https://idp.example.com/jwks", "BoundAudiences": [audience]}}).encode()


def _run(worker, count: int = THREADS) -> list:
    barrier = threading.Barrier(count)

    def start(n):
        barrier.wait(timeout=10)
        return worker(n)

    with ThreadPoolExecutor(count) as pool:
        return [f.result(timeout=120) for f in [pool.submit(start, n) for n in range(count)]]


def test_concurrent_auth_method_writes_lose_nothing_and_share_no_index(fresh):
    start = fresh.scheduler.last_index
    per_thread = 20

    def worker(n):
        client, seen = RawClient(fresh.scheduler_url), []
        try:
            for i in range(per_thread):
                # half the writes create a thread's own method, half race on five shared names
                name = f"t{n}-m{i}" if i % 2 else f"shared-{i % 5}"
                reply = client.request("PUT", "/v1/acl/auth-method", ROOT_S, _jwt(name, f"{n}.{i}"))
                assert reply.status == 200, reply.text()
                seen.append((int(reply.headers["x-nomad-index"]), name, f"{n}.{i}"))
        finally:
            client.close()
        return seen

    writes = [w for batch in _run(worker) for w in batch]
    indexes = sorted(index for index, _, _ in writes)
    assert indexes == list(range(start + 1, start + 1 + THREADS * per_thread))  # one index each, none shared
    assert fresh.scheduler.last_index == start + THREADS * per_thread
    methods = fresh.scheduler.authoritative_view().methods
    for name in {name for _, name, _ in writes}:
        last = max((w for w in writes if w[1] == name), key=lambda w: w[0])  # the last applied write wins
        assert methods[name].ModifyIndex == last[0]
        assert methods[name].Config.BoundAudiences == (last[2],)
    assert fresh.scheduler.replicated_view().methods == methods
    assert len(fresh.journal.entries("scheduler")) == THREADS * per_thread  # every request journaled


def test_concurrent_deletes_of_one_name_apply_once(fresh):
    client = RawClient(fresh.scheduler_url)
    assert client.request("PUT", "/v1/acl/auth-method", ROOT_S, _jwt("doomed", "x")).status == 200
    client.close()
    start = fresh.scheduler.last_index

    def worker(n):
        c = RawClient(fresh.scheduler_url)
        try:
            reply = c.request("DELETE", "/v1/acl/auth-method/doomed", ROOT_S)
            return reply.status, reply.text(), int(reply.headers.get("x-nomad-index", 0))
        finally:
            c.close()

    results = _run(worker)
    assert sorted(r[0] for r in results) == [200] + [500] * (THREADS - 1)
    assert {r[1] for r in results if r[0] == 500} == {"ACL auth method not found"}
    assert fresh.scheduler.last_index == start + THREADS  # every delete consumed an index, as upstream
    assert "doomed" not in fresh.scheduler.authoritative_view().methods


def test_concurrent_issuance_and_revocation_keep_serials_unique_and_crls_exact(fresh, seeded):
    per_thread = 12

    def issue(n):
        client, serials = RawClient(fresh.secrets_url), []
        try:
            for i in range(per_thread):
                issuer = ("root-a", "root-b")[(n + i) % 2]
                reply = client.request("POST", f"/v1/pki/issuer/{issuer}/issue/web", ROOT_V,
                                       json.dumps({"common_name": f"c{n}-{i}.example.com", "ttl": "1h"}).encode())
                assert reply.status == 200, reply.text()
                serials.append((issuer, json.loads(reply.body)["data"]["serial_number"]))
        finally:
            client.close()
        return serials

    issued = [s for batch in _run(issue) for s in batch]
    serials = [s for _, s in issued]
    assert len(set(serials)) == len(serials) == THREADS * per_thread
    backend = fresh.secrets.mount("pki").backend
    root_serials = {seeded.root_a["serial_number"], seeded.root_b["serial_number"]}
    assert set(serials).isdisjoint(root_serials)
    assert set(serials) <= set(backend.state.certs)

    numbers_before = {ref: _crl_number(fresh, ref) for ref in ("root-a", "root-b")}
    to_revoke = issued[::2]

    def revoke(n):
        client = RawClient(fresh.secrets_url)
        try:
            for _issuer, serial in to_revoke[n::THREADS]:
                reply = client.request("POST", "/v1/pki/revoke", ROOT_V, json.dumps({"serial_number": serial}).encode())
                assert reply.status == 200, reply.text()
        finally:
            client.close()

    _run(revoke)
    for ref in ("root-a", "root-b"):
        crl = _crl(fresh, ref)
        expected = {s for i, s in to_revoke if i == ref}
        if ref == "root-a":
            expected.add(seeded.revoked_serial)
        assert {serial_to_hex(e.serial_number) for e in crl} == expected
    # each revocation rebuilt every CRL exactly once (two CRL numbers per rebuild), none was lost
    for ref in ("root-a", "root-b"):
        assert _crl_number(fresh, ref) == numbers_before[ref] + 2 * len(to_revoke)


def test_racing_revocations_of_one_serial_agree_and_rebuild_once(fresh, seeded):
    serial = seeded.leaf["serial_number"]
    before = _crl_number(fresh, "root-a")

    def worker(n):
        c = RawClient(fresh.secrets_url)
        try:
            reply = c.request("POST", "/v1/pki/revoke", ROOT_V, json.dumps({"serial_number": serial}).encode())
            assert reply.status == 200, reply.text()
            return json.loads(reply.body)["data"]["revocation_time_rfc3339"]
        finally:
            c.close()

    assert len(set(_run(worker))) == 1  # the first revocation's time, for everyone
    assert _crl_number(fresh, "root-a") == before + 2


def _crl(double, ref: str) -> x509.CertificateRevocationList:
    client = RawClient(double.secrets_url)
    try:
        return x509.load_der_x509_crl(client.request("GET", f"/v1/pki/issuer/{ref}/crl/der").body)
    finally:
        client.close()


def _crl_number(double, ref: str) -> int:
    return _crl(double, ref).extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


# -- blocking queries ---------------------------------------------------------------------------

def _blocked_readers(double, paths: list[str], index: int, wait: str = "20s"):
    """Start one blocking GET per path at ``index``; returns (threads, results) - results fill in
    as ``(path, status, X-Nomad-Index, seconds)``."""
    results: list = []
    lock = threading.Lock()

    def read(path):
        client = RawClient(double.scheduler_url, timeout=60)
        started = time.monotonic()
        try:
            reply = client.request("GET", f"{path}?index={index}&wait={wait}", ROOT_S)
        finally:
            client.close()
        with lock:
            results.append((path, reply.status, int(reply.headers["x-nomad-index"]), time.monotonic() - started))

    threads = [threading.Thread(target=read, args=(p,), daemon=True) for p in paths]
    for t in threads:
        t.start()
    return threads, results


def _settle():
    time.sleep(0.3)  # let the readers reach their wait


def test_blocking_list_queries_wake_for_every_write(fresh):
    client = RawClient(fresh.scheduler_url)
    try:
        for step in range(8):
            index = int(client.request("GET", "/v1/acl/auth-methods", ROOT_S).headers["x-nomad-index"])
            threads, results = _blocked_readers(fresh, ["/v1/acl/auth-methods"] * 6, index)
            _settle()
            assert results == [], "readers returned before any write"
            name = f"w{step % 3}"
            if step % 4 == 3:
                reply = client.request("DELETE", f"/v1/acl/auth-method/{name}", ROOT_S)
            else:
                reply = client.request("PUT", "/v1/acl/auth-method", ROOT_S, _jwt(name, str(step)))
            assert reply.status == 200, reply.text()
            written = int(reply.headers["x-nomad-index"])
            for t in threads:
                t.join(timeout=5)
            assert len(results) == 6, f"write {step}: only {len(results)} of 6 readers woke"
            assert all(status == 200 and seen == written and took < 5 for _, status, seen, took in results), results
    finally:
        client.close()


def test_blocking_read_of_one_method_wakes_only_for_its_own_writes(fresh):
    client = RawClient(fresh.scheduler_url)
    try:
        assert client.request("PUT", "/v1/acl/auth-method", ROOT_S, _jwt("mine", "1")).status == 200
        index = int(client.request("GET", "/v1/acl/auth-method/mine", ROOT_S).headers["x-nomad-index"])
        threads, results = _blocked_readers(fresh, ["/v1/acl/auth-method/mine"] * 4, index, wait="20s")
        _settle()
        assert client.request("PUT", "/v1/acl/auth-method", ROOT_S, _jwt("other", "1")).status == 200
        _settle()
        assert results == [], "a write to another method woke the readers"
        reply = client.request("PUT", "/v1/acl/auth-method", ROOT_S, _jwt("mine", "2"))
        for t in threads:
            t.join(timeout=5)
        assert [(s, i) for _, s, i, _ in results] == [(200, int(reply.headers["x-nomad-index"]))] * 4
    finally:
        client.close()


def test_blocking_queries_time_out_at_their_wait_without_a_write(fresh):
    index = fresh.scheduler.authoritative_view().table_index
    started = time.monotonic()
    threads, results = _blocked_readers(fresh, ["/v1/acl/auth-methods"] * 4, index, wait="400ms")
    for t in threads:
        t.join(timeout=5)
    took = time.monotonic() - started
    assert len(results) == 4 and all(seen == index and status == 200 for _, status, seen, _ in results)
    # Nomad adds up to wait/16 of jitter
    assert all(0.39 <= t <= 0.4 * (1 + 1 / 16) + 0.5 for *_, t in results), results
    assert took < 2
