"""Broken HTTP on the wire (Hypothesis): request lines, versions, header lines, Content-Length and
Transfer-Encoding values and bodies that no client library would send, over raw sockets to both
listeners. Every answer comes within a bounded time, is an HTTP/1.x status line (or a closed
connection), never an HTML page or a traceback; no exception escapes a handler; the listener keeps
serving afterwards."""

from __future__ import annotations

import socket

from hypothesis import given
from hypothesis import strategies as st
from robust_helpers import RawClient, robust

SAFE = st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
TOKEN = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_", min_size=1, max_size=12).map(str.encode)
STATUSES = {200, 204, 400, 403, 404, 405, 411, 413, 414, 415, 431, 500, 501, 503, 505}


@st.composite
def request_heads(draw, paths: list[bytes]) -> bytes:
    method = draw(st.sampled_from([b"GET", b"PUT", b"POST", b"DELETE", b"LIST", b"get", b""]) | TOKEN)
    target = draw(st.sampled_from(paths) | st.sampled_from([b"*", b"", b"http://x/v1/sys/health", b"/%zz", b"/a b"])
                  | SAFE.map(lambda b: b"/" + b))
    version = draw(st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/0.9", b"HTTP/1.1x", b"", b"http/1.1",
                                    b"HTTP/1", b"HTTP/1.1 extra"]))
    line = b" ".join(p for p in (method, target, version) if p or draw(st.booleans()))
    headers = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["pair", "pair", "token", "no-colon", "folded", "long", "length", "chunked"]))
        if kind == "pair":
            headers.append(draw(TOKEN) + b": " + draw(SAFE))
        elif kind == "token":
            headers.append(draw(st.sampled_from([b"X-Vault-Token", b"X-Nomad-Token", b"Authorization"])) + b": "
                           + draw(st.sampled_from([b"root", b"Bearer root", b"", b"bogus"]) | SAFE))
        elif kind == "no-colon":
            headers.append(draw(TOKEN))
        elif kind == "folded":
            headers.append(b" " + draw(SAFE))
        elif kind == "long":
            headers.append(b"X-Long: " + b"a" * draw(st.sampled_from([100, 8_000, 70_000])))
        elif kind == "length":
            headers.append(b"Content-Length: " + draw(st.sampled_from([b"0", b"5", b"100", b"-1", b"abc", b"", b" 7",
                                                                      b"99999999999999999999", b"5, 5"])))
        else:
            headers.append(b"Transfer-Encoding: " + draw(st.sampled_from([b"chunked", b"gzip, chunked", b"identity",
                                                                         b"bogus", b"chunked, chunked"])))
    body = draw(st.sampled_from([b"", b"{}", b'{"Name":"x"}', b"5\r\nhello\r\n0\r\n\r\n", b"zz\r\n\r\n", b"3\r\nab"])
                | st.binary(max_size=64))
    return line + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


def _exchange(url: str, raw: bytes) -> bytes:
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    data = b""
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)  # nothing more is coming: the server must answer or close
        except (BrokenPipeError, ConnectionResetError, OSError):  # it already answered and closed
            pass
        try:
            while len(data) < 1_000_000:
                chunk = sock.recv(65536)  # socket.timeout (10 s) fails the example: a hang
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:  # closed with our unread bytes pending: what came before stands
            pass
    return data


def _check(double, url: str, raw: bytes) -> None:
    data = _exchange(url, raw)
    context = f"{raw[:300]!r} -> {data[:300]!r}"
    lowered = data.lower()
    assert b"<html" not in lowered and b"<!doctype" not in lowered and b"traceback" not in lowered, context
    if data:
        assert data.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")), context
        assert int(data.split(b" ", 2)[1]) in STATUSES, context
    errors = double.pop_handler_errors()
    assert not errors, "\n".join(map(str, errors))


@robust(300)
@given(data=st.data())
def test_broken_http_gets_bounded_well_formed_answers_from_both_listeners(double, data):
    service = data.draw(st.sampled_from(["secrets", "scheduler"]), label="service")
    paths = ([b"/v1/sys/health", b"/v1/pki/roles/web", b"/v1/sys/mounts/x"] if service == "secrets"
             else [b"/v1/acl/auth-methods", b"/v1/acl/auth-method", b"/v1/acl/auth-method/x"])
    raw = data.draw(request_heads(paths), label="request")
    _check(double, getattr(double, f"{service}_url"), raw)


def test_listeners_keep_serving_after_broken_http(double):
    for url in (double.secrets_url, double.scheduler_url):
        for raw in (b"\x16\x03\x01\x00\xa5\x01\x00" + b"\x00" * 40, b"GET / HTTP/9.9\r\n\r\n",
                    b"GET /v1 HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", b"\r\n\r\n"):
            _check(double, url, raw)
    client = RawClient(double.secrets_url)
    try:
        assert client.request("GET", "/v1/sys/health").status == 200
    finally:
        client.close()
