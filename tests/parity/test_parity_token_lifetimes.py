"""Parity: how long a token lives and how often it may be used (OpenBao's expiration manager and
``UseToken``), compared with bao in the same run - a child token and its PKI lease die with an
expired parent, ``num_uses`` (sequential, what lookups show, which requests count, the last use, and
exactly one success among parallel uses), the ``ttl`` a fresh token reads, a renewal without
``increment`` after one with it, and a used wrapping token sent as the request's token.

The tree test waits 3.5 real seconds: bao's expiry is real time (the robustness suite checks the
double's manual clock and freezegun, ``tests/robustness/test_token_lifetimes.py``)."""

from __future__ import annotations

import threading
import time

import pytest
import requests

pytestmark = pytest.mark.parity

ALL_POLICY = 'path "*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }'
LAST_USE_LEASED = "Secret cannot be returned; token had one use left, so leased credentials were immediately revoked."
_TOKEN_VOLATILE = ("id", "accessor", "ttl", "expire_time", "issue_time", "creation_time", "last_renewal",
                   "last_renewal_time")


def _create(pair, name: str, body: dict, token="root") -> None:
    """``auth/token/create`` on both sides; the token in ``vars[name]``, its accessor in ``vars[name + "_acc"]``."""
    ex = pair.send("POST", "/v1/auth/token/create", json=body, token=token).same().expect(200)
    ex.capture(name, lambda j: j["auth"]["client_token"])
    ex.capture(name + "_acc", lambda j: j["auth"]["accessor"])


def _tok(name: str):
    return lambda side: side.vars[name]


def _all_policy(pair) -> None:
    pair.send("POST", "/v1/sys/policies/acl/lifetimes-all", json={"policy": ALL_POLICY}).same().expect(204)


@pytest.fixture
def leased(pki):
    pki.create_role("leased", {"allow_any_name": True, "generate_lease": True, "ttl": "1h", "key_type": "ec",
                               "key_bits": 256})
    return pki


def _wait_on_bao(pair, check, seconds: float = 15.0) -> None:
    """bao's expiration manager revokes in the background: wait, bounded, until ``check(real side)``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not check(pair.real):
        time.sleep(0.05)


def test_child_and_its_lease_die_with_the_expired_parent(leased):
    pair = leased
    _all_policy(pair)
    _create(pair, "parent", {"ttl": "2s", "policies": ["lifetimes-all"]})
    _create(pair, "child", {"ttl": "1h", "policies": ["lifetimes-all"]}, token=_tok("parent"))
    ex = pair.send("POST", "/v1/{mount}/issue/leased", json={"common_name": "a.example.com"}, token=_tok("child"))
    ex.same(cert_keys=("certificate",), volatile=("lease_duration",)).expect(200)
    ex.capture("lease", lambda j: j["lease_id"]).capture("serial", lambda j: j["data"]["serial_number"])
    time.sleep(3.5)

    def revoked(side) -> bool:
        path = "/v1/{mount}/cert/{serial}".format(**side.vars)
        return side.request("GET", path).json()["data"]["revocation_time"] != 0

    _wait_on_bao(pair, revoked)
    pair.send("GET", "/v1/auth/token/lookup-self", token=_tok("parent")).same().expect(403)
    pair.send("GET", "/v1/auth/token/lookup-self", token=_tok("child")).same().expect(403)
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["child"]}).same().expect(
        403, errors=["bad token"])
    pair.send("POST", "/v1/auth/token/lookup-accessor", json=lambda s: {"accessor": s.vars["child_acc"]}).same(
        ).expect(400, errors=["1 error occurred:\n\t* invalid accessor\n\n"])
    pair.send("POST", "/v1/auth/token/renew", json=lambda s: {"token": s.vars["child"]}).same().expect(
        400, errors=["token not found"])
    pair.send("PUT", "/v1/sys/leases/lookup", json=lambda s: {"lease_id": s.vars["lease"]}).same().expect(
        400, errors=["invalid lease"])
    for side in pair.sides:
        assert revoked(side), side.name
        keys = side.request("LIST", "/v1/auth/token/accessors").json()["data"]["keys"]
        assert side.vars["child_acc"] not in keys, side.name


def test_num_uses_sequence_and_what_counts(pair):
    _all_policy(pair)
    _create(pair, "t", {"num_uses": 3, "policies": ["default"]})
    lookup = {"json": lambda s: {"token": s.vars["t"]}}
    pair.send("POST", "/v1/auth/token/lookup", **lookup).same(volatile=_TOKEN_VOLATILE).expect(200, data={"num_uses": 3})
    pair.send("GET", "/v1/sys/health", token=_tok("t")).same(volatile=("server_time_utc", "cluster_name",
                                                                        "cluster_id", "version")).expect(200)
    pair.send("POST", "/v1/auth/token/lookup", **lookup).same(volatile=_TOKEN_VOLATILE).expect(200, data={"num_uses": 3})
    pair.send("GET", "/v1/auth/token/lookup-self", token=_tok("t")).same(volatile=_TOKEN_VOLATILE).expect(
        200, data={"num_uses": 2})
    pair.send("GET", "/v1/sys/mounts", token=_tok("t")).same().expect(
        403, errors=["1 error occurred:\n\t* permission denied\n\n"])
    pair.send("POST", "/v1/auth/token/lookup", **lookup).same(volatile=_TOKEN_VOLATILE).expect(200, data={"num_uses": 1})
    pair.send("GET", "/v1/auth/token/lookup-self", token=_tok("t")).same(volatile=_TOKEN_VOLATILE).expect(
        200, data={"num_uses": -1})
    pair.send("GET", "/v1/auth/token/lookup-self", token=_tok("t")).same().expect(403, errors=["permission denied"])
    pair.send("POST", "/v1/auth/token/lookup", **lookup).same().expect(403, errors=["bad token"])


def test_one_use_token_three_uses(pair):
    _all_policy(pair)
    _create(pair, "t", {"num_uses": 1, "policies": ["lifetimes-all"]})
    pair.send("GET", "/v1/sys/policies/acl/lifetimes-all", token=_tok("t")).same(volatile=("version",)).expect(200)
    pair.send("GET", "/v1/sys/policies/acl/lifetimes-all", token=_tok("t")).same().expect(403, errors=["permission denied"])
    pair.send("GET", "/v1/sys/policies/acl/lifetimes-all", token=_tok("t")).same().expect(403, errors=["permission denied"])


@pytest.mark.parametrize(("path", "body", "status", "errors"), [
    ("auth/token/create", {}, 400, ["parent token lookup failed: no parent found"]),
    ("auth/token/renew-self", {}, 400, ["token not found"]),
    ("auth/token/revoke-self", {}, 204, None),
    ("sys/capabilities-self", {"path": "x"}, 400, ["1 error occurred:\n\t* invalid token\n\n"]),
])
def test_last_use_answers(pair, path, body, status, errors):
    _all_policy(pair)
    _create(pair, "t", {"num_uses": 1, "policies": ["lifetimes-all"]})
    pair.send("POST", "/v1/" + path, json=body, token=_tok("t")).same().expect(status, errors=errors)
    _await_revocation(pair.real, "t")
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same().expect(403)


def _await_revocation(side, name: str, within: float = 5.0) -> None:
    """OpenBao revokes a token after its last use once the answer is sent (docs/divergences.md): under
    load its lookup can still find the token for a moment, so wait (``within`` seconds at most) until
    the real server's lookup is refused before both sides are compared. The double revokes first."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if side.request("POST", "/v1/auth/token/lookup", json={"token": side.vars[name]}).status_code == 403:
            return
        time.sleep(0.02)


def test_last_use_with_a_leased_secret(leased):
    pair = leased
    _all_policy(pair)
    _create(pair, "t", {"num_uses": 1, "policies": ["lifetimes-all"]})
    pair.send("POST", "/v1/{mount}/issue/leased", json={"common_name": "b.example.com"}, token=_tok("t")).same(
        ).expect(400, errors=[LAST_USE_LEASED])


def test_parallel_uses_of_a_one_use_token_succeed_once(pair):
    _all_policy(pair)
    _create(pair, "t", {"num_uses": 1, "policies": ["lifetimes-all"]})
    for side in pair.sides:
        statuses: list[int] = []
        lock = threading.Lock()
        barrier = threading.Barrier(10)

        def use(side=side, statuses=statuses, lock=lock, barrier=barrier) -> None:
            session = requests.Session()
            barrier.wait()
            resp = session.get(side.url + "/v1/sys/policies/acl/lifetimes-all", headers={"X-Vault-Token": side.vars["t"]}, timeout=30)
            with lock:
                statuses.append(resp.status_code)

        threads = [threading.Thread(target=use) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert statuses.count(200) == 1, (side.name, statuses)
        assert all(status in (403, 500) for status in statuses if status != 200), (side.name, statuses)


def _at_fraction(fraction: float) -> None:
    """Sleep until the wall clock's fraction of a second is ``fraction`` (within the next second)."""
    now = time.time()
    time.sleep((fraction - (now % 1.0)) % 1.0)


@pytest.mark.parametrize(("lookup_at", "ttl"), [(None, 3600), (0.75, 3599)])
def test_fresh_token_reads_its_whole_ttl(pair, lookup_at, ttl):
    """``leaseEntry.ttl()`` rounds now to the second: a ``ttl=1h`` token made early in a second reads
    3600 within that second's first half, 3599 after it (the test times itself to the wall clock's
    fraction, so both sides are read on the same side of the rounding)."""
    _at_fraction(0.02)
    _create(pair, "t", {"ttl": "1h", "policies": ["default"]})
    if lookup_at is not None:
        _at_fraction(lookup_at)
    pair.send("GET", "/v1/auth/token/lookup-self", token=_tok("t")).same(volatile=_TOKEN_VOLATILE[:2] + _TOKEN_VOLATILE[3:]
                                                                         ).expect(200, data={"ttl": ttl})


def test_renewal_without_increment_keeps_the_previous_increment(pair):
    _create(pair, "t", {"ttl": "1h", "policies": ["default"]})
    pair.send("POST", "/v1/auth/token/renew-self", json={"increment": 600}, token=_tok("t")).same(
        volatile=("client_token", "accessor")).expect(200).check(
        lambda side, resp: _lease(resp, 600))
    pair.send("POST", "/v1/auth/token/renew-self", json={}, token=_tok("t")).same(
        volatile=("client_token", "accessor")).expect(200).check(lambda side, resp: _lease(resp, 600))
    pair.send("POST", "/v1/auth/token/renew", json=lambda s: {"token": s.vars["t"], "increment": "2h"}).same(
        volatile=("client_token", "accessor")).check(lambda side, resp: _lease(resp, 7200))
    pair.send("POST", "/v1/auth/token/renew", json=lambda s: {"token": s.vars["t"]}).same(
        volatile=("client_token", "accessor")).check(lambda side, resp: _lease(resp, 7200))


def _lease(resp, seconds: int) -> None:
    assert resp.json()["auth"]["lease_duration"] == seconds


@pytest.mark.parametrize("path", ["unwrap", "lookup", "rewrap"])
def test_used_wrapping_token_sent_as_the_request_token(pair, path):
    ex = pair.send("POST", "/v1/sys/wrapping/wrap", json={"a": "b"}, headers={"X-Vault-Wrap-TTL": "5m"}).same(
        volatile=("wrap_info",))
    ex.capture("w", lambda j: j["wrap_info"]["token"])
    pair.send("POST", "/v1/sys/wrapping/unwrap", token=_tok("w")).same().expect(200, data={"a": "b"})
    pair.send("POST", f"/v1/sys/wrapping/{path}", token=_tok("w")).same().expect(
        400, errors=["wrapping token is not valid or does not exist"])
    pair.send("POST", f"/v1/sys/wrapping/{path}", token=None).same().expect(
        403, errors=["error validating wrapping token: token is empty"])
    pair.send("POST", f"/v1/sys/wrapping/{path}", json={"token": 5}).same().expect(
        403, errors=["error validating wrapping token: could not decode token in request body"])
    pair.send("POST", f"/v1/sys/wrapping/{path}", json={"token": ""}).same().expect(
        403, errors=["error validating wrapping token: empty token in request body"])
    pair.send("POST", f"/v1/sys/wrapping/{path}").same().expect(400, errors=["wrapping token is not valid or does not exist"])


@pytest.mark.parametrize(("requested", "expected"), [(0, 2), (1, 1), (5, 2)])
def test_role_use_limit_caps_the_request(pair, requested, expected):
    role = f"limited-{pair.mount}"
    pair.send("POST", f"/v1/auth/token/roles/{role}", json={"token_num_uses": 2}).same().expect(204)
    pair.send("POST", f"/v1/auth/token/create/{role}", json={"num_uses": requested}).same(
        volatile=("client_token", "accessor")).check(lambda side, resp: _uses(resp, expected))
    pair.send("DELETE", f"/v1/auth/token/roles/{role}").same().expect(204)


def _uses(resp, expected: int) -> None:
    assert resp.json()["auth"]["num_uses"] == expected


def test_renewal_answers_the_use_limit_the_token_was_created_with(pair):
    # ttl 1h: renewing a 768h token warns about the cap only when the renewal crosses a wall-clock second
    # after creation (CalculateTTL truncates both instants), which one server may do and the other not
    _create(pair, "t", {"num_uses": 3, "policies": ["default"], "ttl": "1h"})
    pair.send("POST", "/v1/auth/token/renew-self", json={}, token=_tok("t")).same(
        volatile=("client_token", "accessor")).check(lambda side, resp: _uses(resp, 3))
    pair.send("POST", "/v1/auth/token/lookup", json=lambda s: {"token": s.vars["t"]}).same(
        volatile=_TOKEN_VOLATILE).expect(200, data={"num_uses": 2})
