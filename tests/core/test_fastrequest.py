"""A request whose head is whole in the read buffer takes the one-step path of ``wire/fastrequest.py``;
what the application sees (the environ: keys, values, order), what the handler holds (method, path,
version, headers, whether the connection closes) and the bytes on the wire are those of the standard
path (line-by-line parsing, Go's framing checks, werkzeug's ``make_environ``), which the same bytes
take when the one-step path is switched off."""

from __future__ import annotations

import re
import socket
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.wrappers import Response

from pytest_schedpki.wire import keepalive
from pytest_schedpki.wire.server import ServiceServer

SEEN: list = []


def _plain(value):
    return value if isinstance(value, (str, int, bool, tuple, type(None))) else type(value).__name__


def _app(environ, start_response):
    try:
        body = environ["wsgi.input"].read()
    except Exception as exc:  # noqa: BLE001 - a cut-short body: the same on both paths
        body = type(exc).__name__.encode()
    SEEN.append([(k, _plain(v)) for k, v in environ.items() if k != "REMOTE_PORT"] + [("body", body)])
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def _error(exc):
    return Response("error", status=500)


@pytest.fixture(scope="module")
def server():
    served = ServiceServer("secrets", _app, _error).start()
    yield served
    served.stop()


def _handler_state(monkeypatch):
    """Record the handler's request attributes as run_wsgi starts."""
    original = keepalive.KeepAliveHandler.run_wsgi

    def run_wsgi(self):
        headers = self.headers
        SEEN.append({"command": self.command, "path": self.path, "version": self.request_version,
                     "requestline": self.requestline, "raw_requestline": self.raw_requestline,
                     "close": self.close_connection, "headers": list(headers.items()),
                     "payload": headers.get_payload(), "defects": [type(d).__name__ for d in headers.defects]})
        return original(self)

    monkeypatch.setattr(keepalive.KeepAliveHandler, "run_wsgi", run_wsgi)


def _exchange(server: ServiceServer, raw: bytes) -> tuple[bytes, list]:
    """Send ``raw`` on a new connection, half-close, read to the end; what the server saw."""
    SEEN.clear()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return re.sub(rb"Date: [^\r]*", b"Date: -", answer), list(SEEN)


def _both(server, monkeypatch, raw: bytes):
    """The exchange of ``raw`` with the one-step path on, then off; and whether each request took it."""
    _handler_state(monkeypatch)
    taken: list = []
    real = keepalive.KeepAliveHandler._fast_request

    def spy(self, head):
        taken.append(real(self, head))
        return taken[-1]

    monkeypatch.setattr(keepalive.KeepAliveHandler, "_fast_request", spy)
    fast = _exchange(server, raw)
    monkeypatch.setattr(keepalive, "parse_head", lambda buffered: None)
    standard = _exchange(server, raw)
    return fast, standard, taken


CASES = [
    b"GET /v1/pki/crl HTTP/1.1\r\nHost: 127.0.0.1:8200\r\nUser-Agent: python-requests/2.32.3\r\n"
    b"Accept-Encoding: gzip, deflate\r\nAccept: */*\r\nConnection: keep-alive\r\nX-Vault-Token: root\r\n\r\n",
    b"POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}",
    b"POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length:  7 \r\n\r\nabc",
    b"GET /a%20b/caf%C3%A9?x=%20&y HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET //double//slash?q HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /p?q#frag HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.0\r\n\r\n",
    b"GET / HTTP/1.0\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nA: b \r\na: c\r\nA_B: d\r\nContent-Type: x\r\ncontent-type: y\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX: caf\xe9\tau lait \r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: bad host\r\n\r\n",
    b"GET / HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nz",
    b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x85b\r\n\r\n",
    b"GET / HTTP/1.1\nHost: x\n\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
    b"GET http://example/x HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: y\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(70)) + b"\r\n",
]


@pytest.mark.parametrize("raw", CASES)
def test_the_one_step_path_answers_as_the_standard_path(server, monkeypatch, raw):
    fast, standard, _ = _both(server, monkeypatch, raw)
    assert fast == standard


def test_the_common_requests_take_the_one_step_path(server, monkeypatch):
    fast, standard, taken = _both(server, monkeypatch, CASES[0] + CASES[1] + CASES[3])
    assert fast == standard and taken == [True, True, True]


@pytest.mark.parametrize("raw", [CASES[5], CASES[12], CASES[17], CASES[18]],
                         ids=["fragment", "two-hosts", "chunked", "expect"])
def test_what_the_one_step_path_does_not_vouch_for_takes_the_standard_path(server, monkeypatch, raw):
    fast, standard, taken = _both(server, monkeypatch, raw)
    assert fast == standard and taken == [False]


_NAMES = st.sampled_from(["Host", "host", "HOST", "Content-Length", "content-length", "Connection",
                          "Transfer-Encoding", "Expect", "X-Vault-Token", "X_Under", "Accept", "Content-Type",
                          "Bad Name", "", "Üml"])
_VALUES = st.text(alphabet=string.ascii_letters[:4] + "0123456789 \t:,é\x85\x01\x7f%", max_size=12) | st.sampled_from(
    ["close", "keep-alive", "chunked", "100-continue", "5", " 5 ", "x", "127.0.0.1:8200", "a b"])
_TARGETS = st.sampled_from(["/v1/sys/health", "//x//y", "/a%20b", "/caf%C3%A9", "/p?q=1&r", "/p?x#f", "*",
                            "http://h/x", "/", "/%zz"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "LIST", "HEAD", "G@T"]), target=_TARGETS,
       version=st.sampled_from(["HTTP/1.1", "HTTP/1.0"]),
       headers=st.lists(st.tuples(_NAMES, _VALUES), max_size=6),
       eol=st.sampled_from(["\r\n", "\r\n", "\r\n", "\n"]), body=st.sampled_from(["", "abcde"]))
def test_generated_requests_answer_as_on_the_standard_path(server, monkeypatch, method, target, version, headers,
                                                             eol, body):
    head = f"{method} {target} {version}{eol}" + "".join(f"{n}:{v}{eol}" for n, v in headers) + eol
    fast, standard, _ = _both(server, monkeypatch, (head + body).encode("latin-1"))
    assert fast == standard
