"""Parity: request framing over raw sockets, as Go's ``net/http`` server frames a request (see
``pytest_schedpki/wire/framing.py``). A request Go refuses gets the same bytes from both sides and
the connection closes; one it accepts gets the same status and the connection stays open."""

from __future__ import annotations

import os
import re
import socket

import pytest

pytestmark = pytest.mark.parity

# as tests/parity/conftest.py reads it (a bare ``from conftest import`` finds whichever tests/*/conftest.py
# the session imported first under that name)
SELFCHECK = os.environ.get("SCHEDPKI_PARITY_SELFCHECK", "") not in ("", "0")

P = b"POST /v1/sys/health HTTP/1.1\r\nHost: x\r\n"
G = b"GET /v1/sys/health"

REFUSED = {
    "two-lengths": P + b"Content-Length: 5\r\nContent-Length: 30\r\n\r\nhelloGET /v1/sys/health HTTP/1.1\r\n\r\n",
    "length-case": P + b"Content-Length: 5\r\ncontent-length: 6\r\n\r\nhello!",
    "length-list": P + b"Content-Length: 5, 5\r\n\r\nhello",
    "length-negative": P + b"Content-Length: -1\r\n\r\n",
    "length-signed": P + b"Content-Length: +5\r\n\r\nhello",
    "length-underscore": P + b"Content-Length: 1_0\r\n\r\nhellohello",
    "length-empty": P + b"Content-Length: \r\n\r\n",
    "length-2^63": P + b"Content-Length: 9223372036854775808\r\n\r\n",
    "chunked-two-lengths": P + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\n0\r\n\r\n",
    "chunked-bad-length": P + b"Transfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n0\r\n\r\n",
    "http10-two-lengths": b"POST /v1/sys/health HTTP/1.0\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\nhello",
    "te-identity-chunked": P + b"Transfer-Encoding: identity, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "te-twice": P + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te-gzip": P + b"Transfer-Encoding: gzip\r\n\r\n",
    "te-empty": P + b"Transfer-Encoding: \r\n\r\n",
    "te-gzip-two-lengths": P + b"Transfer-Encoding: gzip\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\n",
    "nul-path": G + b"\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
    "nul-query": G + b"?a=\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
    "del-path": G + b"\x7f HTTP/1.1\r\nHost: x\r\n\r\n",
    "tab-path": b"GET /v1/sys/he\talth HTTP/1.1\r\nHost: x\r\n\r\n",
    "nul-header-value": G + b" HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
    "del-header-value": G + b" HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n",
    # the header block as textproto reads it, then net/http's Host and name checks (with their reason)
    "no-host": G + b" HTTP/1.1\r\n\r\n",
    "two-hosts": G + b" HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "two-hosts-bad-te": P.replace(b"Host: x", b"Host: a\r\nHost: b") + b"Transfer-Encoding: gzip\r\n\r\n",
    "space-in-name": G + b" HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n",
    "space-before-colon": G + b" HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n",
    "host-space-before-colon": G + b" HTTP/1.1\r\nHost : x\r\n\r\n",
    "bare-cr-value": G + b" HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n",
    "empty-name": G + b" HTTP/1.1\r\nHost: x\r\n: b\r\n\r\n",
    "no-colon": G + b" HTTP/1.1\r\nHost: x\r\nXA\r\n\r\n",
    "non-token-name": G + b" HTTP/1.1\r\nHost: x\r\nX(A): b\r\n\r\n",
    "high-byte-name": G + b" HTTP/1.1\r\nHost: x\r\nX\xffA: b\r\n\r\n",
    "malformed-host": G + b" HTTP/1.1\r\nHost: a b\r\n\r\n",
    "host-high-byte": G + b" HTTP/1.1\r\nHost: h\xe9\r\n\r\n",
    "first-line-folded": G + b" HTTP/1.1\r\n X: a\r\nHost: x\r\n\r\n",
}

ACCEPTED = {
    "equal-lengths": P + b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
    "equal-lengths-trimmed": P + b"Content-Length: 5\r\nContent-Length:  5 \r\n\r\nhello",
    "leading-zero": P + b"Content-Length: 05\r\n\r\nhello",
    "chunked-and-length": P + b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "chunked-upper-case": P + b"Transfer-Encoding:  CHUNKED \r\n\r\n0\r\n\r\n",
    "chunked-equal-lengths": P + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
    "get-chunked": G + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "tab-header-value": G + b" HTTP/1.1\r\nHost: x\r\nX-A: a\tb\r\n\r\n",
    "folded-header": G + b" HTTP/1.1\r\nHost: x\r\nX-A: a\r\n folded\r\n\r\n",
    "high-byte-header-value": G + b" HTTP/1.1\r\nHost: x\r\nX-A: a\xffb\r\n\r\n",
    "http10-no-host": G + b" HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "empty-host": G + b" HTTP/1.1\r\nHost:\r\n\r\n",
    "host-with-port-and-brackets": G + b" HTTP/1.1\r\nHost: [::1]:8200\r\n\r\n",
    "bare-lf-lines": G + b" HTTP/1.1\nHost: x\nX-A: b\n\n",
}


@pytest.fixture
def urls(request, bao_server):
    """The two base URLs: ``(bao, double)`` (self-check mode: a second real server)."""
    if SELFCHECK:
        return bao_server.url, request.getfixturevalue("second_bao_server").url
    return bao_server.url, request.getfixturevalue("fresh_double").secrets_url


def _exchange(url: str, raw: bytes, wait: float = 2.0) -> tuple[bytes, bool]:
    """Send ``raw``; return the bytes answered within ``wait`` s and whether the server closed."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(raw)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except TimeoutError:
            return data, False
        except ConnectionResetError:
            pass
        return data, True


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_request_go_refuses_gets_the_same_bytes_and_the_connection_closes(urls, name):
    bao, double = (_exchange(url, REFUSED[name]) for url in urls)
    assert bao[1] and double[1], "the connection must close"
    assert double[0] == bao[0]


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_a_request_go_accepts_gets_the_same_status_and_the_connection_stays_open(urls, name):
    bao, double = (_exchange(url, ACCEPTED[name], wait=0.5) for url in urls)
    status = [re.match(rb"HTTP/1\.[01] (\d{3}) ", side[0]).group(1) for side in (bao, double)]
    assert status[1] == status[0]
    assert not bao[1] and not double[1], "the connection must stay open"


# Answers whose status line carries each kind of reason phrase: Go's StatusText (title case, "I'm a
# teapot"-style exceptions such as "Request URI Too Long"), and "status code N" for a code Go does not
# know; the double wrote werkzeug's upper-case phrases ("405 METHOD NOT ALLOWED", "299 UNKNOWN")
STATUS_LINES = {
    "405": b"DELETE /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n",
    "404": b"GET /v1/pki-none/ca HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n\r\n",
    "403": b"GET /v1/sys/mounts HTTP/1.1\r\nHost: x\r\n\r\n",
    "health-414": b"GET /v1/sys/health?activecode=414 HTTP/1.1\r\nHost: x\r\n\r\n",
    "health-418": b"GET /v1/sys/health?activecode=418 HTTP/1.1\r\nHost: x\r\n\r\n",
    "health-299": b"GET /v1/sys/health?activecode=299 HTTP/1.1\r\nHost: x\r\n\r\n",
    "health-513": b"GET /v1/sys/health?activecode=513 HTTP/1.1\r\nHost: x\r\n\r\n",
}


@pytest.mark.parametrize("name", list(STATUS_LINES))
def test_the_status_line_carries_gos_reason_phrase(urls, name):
    bao, double = (_exchange(url, STATUS_LINES[name], wait=0.5)[0].split(b"\r\n", 1)[0] for url in urls)
    assert double == bao


# An HTTP/1.0 request is answered in HTTP/1.0 (the double answered HTTP/1.1 with "Connection: close"):
# the status line, the Connection header and whether the connection stays open
HTTP10 = {
    "close": b"GET /v1/sys/seal-status HTTP/1.0\r\n\r\n",
    "keep-alive": b"GET /v1/sys/seal-status HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "keep-alive-403": b"GET /v1/sys/mounts HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
}


@pytest.mark.parametrize("name", list(HTTP10))
def test_an_http_1_0_request_is_answered_in_http_1_0(urls, name):
    def seen(url):
        data, closed = _exchange(url, HTTP10[name], wait=0.5)
        head = data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        return head[0], [line for line in head if line.lower().startswith(b"connection:")], closed

    bao, double = (seen(url) for url in urls)
    assert double == bao


@pytest.mark.parametrize("method", [b"get", b"Get", b"post", b"list", b"head", b"delete"])
@pytest.mark.parametrize("path", [b"/v1/sys/health", b"/v1/sys/mounts", b"/v1/sys/policies/acl/default"])
def test_methods_are_case_sensitive(urls, method, path):
    """Go compares ``r.Method`` as sent: a lower-case method is an unknown one, 405 ``{"errors":[]}``
    (werkzeug's ``Request.method`` upper-cases; the double served ``get`` as ``GET``)."""
    raw = method + b" " + path + b" HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\nConnection: close\r\n\r\n"
    bao, double = (_exchange(url, raw)[0] for url in urls)
    assert bao.startswith(b"HTTP/1.1 405 Method Not Allowed\r\n") and bao.endswith(b'\r\n\r\n{"errors":[]}\n')
    assert double.split(b"\r\n", 1)[0] == bao.split(b"\r\n", 1)[0] and double.endswith(b'\r\n\r\n{"errors":[]}\n')


QUERIES = ["/v1/{m}/roles?list=true;x=1", "/v1/{m}/roles?list=%zz", "/v1/{m}/roles?%zz=1&list=true",
           "/v1/{m}/roles?l%69st=true", "/v1/{m}/roles?&&list=true&", "/v1/{m}/roles/r?x=%",
           "/v1/sys/health?standbyok=%", "/v1/sys/health?activecode=5%30%30;", "/v1/sys/health?activecode=+200"]


@pytest.fixture
def roles(urls):
    """A PKI mount with a root and role ``r`` on both servers (raw requests: ``requests`` would
    re-quote the queries below)."""
    import requests
    mount = "q" + os.urandom(4).hex()
    for url in urls:
        for path, body in ((f"sys/mounts/{mount}", {"type": "pki"}),
                           (f"{mount}/root/generate/internal", {"common_name": "r", "key_type": "ec"}),
                           (f"{mount}/roles/r", {"allow_any_name": True})):
            requests.post(f"{url}/v1/{path}", json=body, headers={"X-Vault-Token": "root"}, timeout=30).raise_for_status()
    return mount


@pytest.mark.parametrize("target", QUERIES)
def test_queries_are_read_as_gos_url_parse_query_reads_them(urls, roles, target):
    """A pair holding ``;`` or an invalid escape is dropped, not kept verbatim (``list=%zz`` is no
    ``list``: the read is a 405; ``%zz=1`` is no unknown parameter warning)."""
    raw = (f"GET {target.format(m=roles)} HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\nConnection: close\r\n\r\n").encode()
    bao, double = (_exchange(url, raw)[0] for url in urls)
    assert double.split(b"\r\n", 1)[0] == bao.split(b"\r\n", 1)[0]
    assert _volatile_free(double) == _volatile_free(bao)


def _volatile_free(answer: bytes) -> bytes:
    return re.sub(rb'"(request_id|server_time_utc|cluster_id|cluster_name)":("[^"]*"|\d+)', b"",
                  answer.split(b"\r\n\r\n", 1)[1])


HEADERS = {
    "token-padded": b"X-Vault-Token:  root \t\r\n",
    "token-twice": b"X-Vault-Token: root\r\nX-Vault-Token: nope\r\n",
    "token-twice-reversed": b"X-Vault-Token: nope\r\nX-Vault-Token: root\r\n",
    "wrap-ttl-twice": b"X-Vault-Token: root\r\nX-Vault-Wrap-TTL: 30s\r\nX-Vault-Wrap-TTL: abc\r\n",
    "wrap-ttl-padded": b"X-Vault-Token: root\r\nX-Vault-Wrap-TTL: 30s \r\n",
    "namespace-twice": b"X-Vault-Token: root\r\nX-Vault-Namespace: root\r\nX-Vault-Namespace: x\r\n",
    "content-type-twice": b"X-Vault-Token: root\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n",
}


@pytest.mark.parametrize("name", list(HEADERS))
def test_header_values_are_the_first_field_trimmed(urls, name):
    """Go's handlers read ``Header.Get``: the first of repeated fields, spaces and tabs around it
    trimmed by ``textproto`` (werkzeug joined repeated fields with commas and kept trailing blanks)."""
    raw = b"GET /v1/sys/mounts HTTP/1.1\r\nHost: x\r\n" + HEADERS[name] + b"Connection: close\r\n\r\n"
    bao, double = (_exchange(url, raw)[0] for url in urls)
    assert double.split(b"\r\n", 1)[0] == bao.split(b"\r\n", 1)[0]
    if b' 200 ' not in bao.split(b"\r\n", 1)[0]:
        assert double.split(b"\r\n\r\n", 1)[1] == bao.split(b"\r\n\r\n", 1)[1]
    else:
        assert (b'"wrap_info":{' in bao) == (b'"wrap_info":{' in double)


@pytest.mark.parametrize("path", ["/v1/sys/mounts/a%00b", "/v1/sys/mounts/a%09b", "/v1/sys/health%7F", "/x%01",
                                  "/v1/sys/mounts/a%C2%A0b", "/v1/sys/mounts/a%E2%80%8Bb", "/v1/sys/mounts/%E3%80%80",
                                  "/v1/sys/mounts/a%FFb", "/v1/sys/mounts/a%C3%A9", "/v1/sys/mounts?q=%00"])
def test_a_path_go_cannot_print_is_refused_first(urls, path):
    """OpenBao's outermost handler is go-cleanhttp's ``PrintablePathCheckHandler``: a decoded path with
    a rune ``unicode.IsPrint`` refuses gets a bare 400 (no body, none of OpenBao's headers); a byte
    that is not UTF-8 reads as U+FFFD, which is printable, and the query is not looked at."""
    raw = f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\nConnection: close\r\n\r\n".encode()
    bao, double = (re.sub(rb"Date: [^\r]*\r\n", b"", _exchange(url, raw)[0]) for url in urls)
    bare = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if bao == bare:
        assert double == bare
    else:
        assert double.split(b"\r\n", 1)[0] == bao.split(b"\r\n", 1)[0]
