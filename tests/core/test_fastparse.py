"""The fast request parser gives exactly what http.server's own parse_request gives, for plain and
for odd requests (which it hands to the standard parser)."""

from __future__ import annotations

import io
from http.server import BaseHTTPRequestHandler

import pytest

from pytest_schedpki.wire.fastparse import FastParseMixin


class _Standard(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, raw: bytes):  # no socket: feed the bytes directly
        first, _, rest = raw.partition(b"\n")
        self.raw_requestline = first + b"\n" if _ else first
        self.rfile = io.BytesIO(rest)
        self.wfile = io.BytesIO()
        self.client_address = ("127.0.0.1", 1)
        self.request_version = self.default_request_version
        self.command = None

    def log_message(self, format, *args):  # noqa: A002 - stdlib signature
        return None

    def date_time_string(self, timestamp=None):
        return "Thu, 01 Jan 2026 00:00:00 GMT"


class _Fast(FastParseMixin, _Standard):
    pass


def _outcome(cls: type, raw: bytes) -> dict:
    handler = cls(raw)
    ok = handler.parse_request()
    headers = getattr(handler, "headers", None)
    return {
        "ok": ok, "command": handler.command, "path": getattr(handler, "path", None),
        "version": handler.request_version, "close": handler.close_connection,
        "requestline": getattr(handler, "requestline", None),
        "headers": list(headers.items()) if headers is not None else None,
        "payload": headers.get_payload() if headers is not None else None,
        "defects": [type(d).__name__ for d in headers.defects] if headers is not None else None,
        "sent": handler.wfile.getvalue(), "left": handler.rfile.read(),
    }


CASES = [
    b"GET /v1/pki/roles/ec HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\nAccept: */*\r\n\r\n",
    b"POST /v1/pki/issue/ec HTTP/1.1\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"GET / HTTP/1.0\r\n\r\n",
    b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
    b"GET / HTTP/1.1\n\n",
    b"GET //evil.example/x HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nA: b \r\nA: c\r\nempty:\r\n\r\n",
    b"GET / HTTP/1.1\r\nBad Header: x\r\nX: y\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
    b"GET / HTTP/1.1\r\n: novalue\r\n\r\n",
    b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\x85b\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\x0bb\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: caf\xe9\r\n\r\n",
    b"GET / HTTP/1.1\r\nFrom me: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\r\n",  # no blank line: EOF ends the block
    b"GET / HTTP/2.0\r\n\r\n",
    b"GET / HTTP/1.10\r\n\r\n",
    b"GET / FOO/1.1\r\n\r\n",
    b"GET /\r\n",
    b"GET\r\n",
    b"\r\n",
    b"GET / x HTTP/1.1\r\n\r\n",
    b"G@T / HTTP/1.1\r\n\r\n",
    b"GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(101)) + b"\r\n",
    b"GET / HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(99)) + b"\r\n",
]


@pytest.mark.parametrize("raw", CASES, ids=range(len(CASES)))
def test_fast_parser_matches_the_standard_one(raw):
    assert _outcome(_Fast, raw) == _outcome(_Standard, raw)


def test_plain_requests_skip_the_email_parser(monkeypatch):
    import http.client

    def refuse(*args, **kwargs):
        raise AssertionError("the email-based parser was used")

    monkeypatch.setattr(http.client, "parse_headers", refuse)
    outcome = _outcome(_Fast, CASES[1])
    assert outcome["ok"] and outcome["headers"] == [("Content-Length", "2"), ("Content-Type", "application/json")]
    assert outcome["left"] == b"{}"
