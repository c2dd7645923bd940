"""Parked blocking queries and the scheduler listener's connection bounds, over real sockets.

Before: every blocking query held one of the listener's 128 connection threads, so 130 anonymous
``GET /v1/acl/auth-methods?index=<current>&wait=...`` starved the listener (a plain request waited
until a query's wait ended; renewed ``wait=300s`` queries made the outage last). Now a parked query
gives its thread's slot back (``pytest_schedpki/wire/connections.py``), and one client address may
hold at most 100 connections, one more getting Nomad's 429 (``command/agent/http.go`` ``connLimiter``,
``hashicorp/go-connlimit``). Nothing here is timed: a request "answered promptly" is answered while
every parked query is still waiting (their wait is 60 s, the sockets give up after 20 s).

Client addresses other than 127.0.0.1 are loopback addresses (127.0.0.0/8 is all local on Linux).
"""

from __future__ import annotations

import re
import select
import socket
import sys
import time

import pytest

from pytest_schedpki import Double
from pytest_schedpki.wire.connections import ListenerLimits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="binds client sockets to 127.0.0.x")

SOCKET_TIMEOUT = 20  # seconds; far below the parked queries' 60 s wait
NOMAD_429 = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nContent-Length: 81\r\nConnection: close\r\n"
             b"\r\nYour IP is issuing too many concurrent connections, please rate limit your calls\n")


def _method(name: str) -> dict:
    return {"Name": name, "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
            "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "c",
                       "BoundAudiences": ["c"], "AllowedRedirectURIs": ["http://localhost/cb"]}}


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.settimeout(SOCKET_TIMEOUT)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _answer(sock: socket.socket) -> bytes:
    """One answer with a Content-Length body (``b""``: closed without one)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _get(port: int, target: str, source: str = "127.0.0.1") -> bytes:
    with _connect(port, source) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        return _answer(sock)


def _index(answer: bytes) -> int:
    return int(re.search(rb"X-Nomad-Index: (\d+)", answer).group(1))


def _park(port: int, index: int, sources: list[str], count: int) -> list[socket.socket]:
    """Send ``count`` blocking list queries at ``index`` (wait 60 s), spread over ``sources``."""
    socks = []
    for i in range(count):
        sock = _connect(port, sources[i % len(sources)])
        sock.sendall(f"GET /v1/acl/auth-methods?index={index}&wait=60s HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        socks.append(sock)
    return socks


def _wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def served():
    """A double of its own, with the default limits; handler errors fail the test."""
    double = Double().start()
    yield double
    double.scheduler.upsert_auth_method(_method("release-the-parked"))  # wakes what a failed test left parked
    double.stop()
    errors = double.pop_handler_errors()
    assert not errors, "\n".join(map(str, errors))


def test_a_plain_request_is_answered_while_130_blocking_queries_are_parked(served):
    double = served
    port = _port(served.scheduler_url)
    index = _index(_get(port, "/v1/acl/auth-methods"))
    parked = _park(port, index, ["127.0.0.2", "127.0.0.3"], 130)
    try:
        # every query has a connection thread (before: 128 had, the rest waited to be accepted)
        _wait_for(lambda: len(double.scheduler_server.connections) >= 130)
        answer = _get(port, "/v1/acl/auth-methods")  # before: no answer until a parked query's wait ended
        assert answer.startswith(b"HTTP/1.1 200 ") and _index(answer) == index
        assert select.select(parked, [], [], 0)[0] == []  # ... and every query is still parked
        # blocking semantics unchanged: a write wakes every parked query with the new index
        double.scheduler.upsert_auth_method(_method("changed"))
        for sock in parked:
            woken = _answer(sock)
            assert woken.startswith(b"HTTP/1.1 200 ") and _index(woken) > index
            assert b'"Name":"changed"' in woken
    finally:
        for sock in parked:
            sock.close()


def test_one_client_address_holds_at_most_100_connections_and_gets_nomad_s_429(served):
    double = served
    port = _port(served.scheduler_url)
    index = _index(_get(port, "/v1/acl/auth-methods"))
    parked = _park(port, index, ["127.0.0.4"], 100)
    try:
        assert _wait_for(lambda: double.scheduler_server.connections.client_connections("127.0.0.4") == 100)
        with _connect(port, "127.0.0.4") as extra:  # written at once, without reading a request
            data = b""
            while chunk := extra.recv(65536):
                data += chunk
        assert data == NOMAD_429
        # another address is served, and the 100 stay parked
        assert _get(port, "/v1/acl/auth-methods", "127.0.0.5").startswith(b"HTTP/1.1 200 ")
        assert select.select(parked, [], [], 0)[0] == []
        double.scheduler.upsert_auth_method(_method("changed"))
        for sock in parked:
            assert _answer(sock).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in parked:
            sock.close()
    # the closed connections no longer count
    assert _wait_for(lambda: double.scheduler_server.connections.client_connections("127.0.0.4") == 0)
    assert _get(port, "/v1/acl/auth-methods", "127.0.0.4").startswith(b"HTTP/1.1 200 ")


def test_the_secrets_listener_has_no_per_client_bound_as_openbao(served):
    port = _port(served.secrets_url)
    socks = [_connect(port, "127.0.0.6") for _ in range(101)]
    try:
        for sock in socks:
            sock.sendall(b"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n")
        for sock in socks:
            assert _answer(sock).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in socks:
            sock.close()


def test_parked_queries_take_at_most_max_parked_places_and_the_threads_stay_bounded():
    double = Double().start(limits=ListenerLimits(max_connections=4, max_parked=2))
    port = _port(double.scheduler_url)
    parked: list[socket.socket] = []
    try:
        index = _index(_get(port, "/v1/acl/auth-methods"))
        registry = double.scheduler_server.connections
        parked = _park(port, index, ["127.0.0.7"], 7)
        # 2 parked in places, 4 keeping their slots: 6 connection threads; the seventh is not accepted
        assert _wait_for(lambda: registry.parked() == 2 and registry.client_connections("127.0.0.7") == 6)
        time.sleep(0.2)
        assert (registry.parked(), registry.client_connections("127.0.0.7")) == (2, 6)
        double.scheduler.upsert_auth_method(_method("changed"))
        for sock in parked:  # the seventh too, once a slot is free
            answer = _answer(sock)
            assert answer.startswith(b"HTTP/1.1 200 ") and _index(answer) > index, answer
    finally:
        for sock in parked:
            sock.close()
    try:  # closed: the places and the slots are free again
        assert _wait_for(lambda: registry.parked() == 0 and registry.client_connections("127.0.0.7") == 0)
    finally:
        double.stop()
    assert not double.pop_handler_errors()


def test_limits_refuse_a_negative_per_client_bound_and_zero_parking_places():
    with pytest.raises(ValueError, match=r"max_connections_per_client must be >= 0, got -1"):
        ListenerLimits(max_connections_per_client=-1)
    with pytest.raises(ValueError, match="max_parked must be positive, got 0"):
        ListenerLimits(max_parked=0)
    assert ListenerLimits().max_connections_per_client == 100  # Nomad's default
