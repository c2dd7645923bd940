"""Request framing on both listeners, over real sockets, as Go's ``net/http`` server frames a request
(both upstreams are Go servers). Answers measured on ``bao server -dev`` 2.7.2; see
``pytest_schedpki/wire/framing.py``. Before: two different ``Content-Length`` values were framed with
the last one and the rest of the body was answered as a second request (request smuggling)."""

from __future__ import annotations

import socket

import pytest

GO_400 = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
GO_501 = (b"HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
          b"Unsupported transfer encoding")

PATHS = {"scheduler": "/v1/acl/auth-methods", "secrets": "/v1/sys/health"}


def _url(double, service: str) -> str:
    return double.scheduler_url if service == "scheduler" else double.secrets_url


def _exchange(double, service: str, raw: bytes) -> bytes:
    """Send ``raw`` on a new connection and return every byte answered until the server closes (a
    connection the server keeps open fails the test through the socket timeout)."""
    host, port = _url(double, service).split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(raw)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except TimeoutError:
            pytest.fail(f"the connection stayed open after: {data!r}")
        return data


def _post(service: str, headers: bytes, body: bytes = b"", version: bytes = b"1.1") -> bytes:
    return b"POST %s HTTP/%s\r\nHost: x\r\n%s\r\n%s" % (PATHS[service].encode(), version, headers, body)


SMUGGLED = b"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
@pytest.mark.parametrize("lengths", [(b"5", b"56"), (b"56", b"5"), (b"5", b"6")], ids=["short-first", "long-first", "near"])
def test_two_different_content_lengths_are_one_400_and_the_connection_closes(double, service, lengths):
    headers = b"".join(b"Content-Length: %s\r\n" % value for value in lengths)
    # the 51 bytes after "hello" were answered as a second request before
    assert _exchange(double, service, _post(service, headers, b"hello" + SMUGGLED)) == GO_400


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
@pytest.mark.parametrize("headers, body", [
    (b"Content-Length: 5\r\ncontent-length: 6\r\n", b"hello!"),                       # the name's case does not matter
    (b"Content-Length: 5, 5\r\n", b"hello"),                                           # one line with a list
    (b"Content-Length: -1\r\n", b""),
    (b"Content-Length: +5\r\n", b"hello"),
    (b"Content-Length: 1_0\r\n", b"hellohello"),                                       # Python's int() took it as 10
    (b"Content-Length: \r\n", b""),
    (b"Content-Length: 9223372036854775808\r\n", b""),                                 # 2^63
    (b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\nContent-Length: 30\r\n", b"0\r\n\r\n"),
    (b"Transfer-Encoding: chunked\r\nContent-Length: x\r\n", b"0\r\n\r\n"),
], ids=["case", "list", "negative", "signed", "underscore", "empty", "2^63", "chunked-two-lengths", "chunked-bad-length"])
def test_a_content_length_go_refuses_is_one_400(double, service, headers, body):
    assert _exchange(double, service, _post(service, headers, body)) == GO_400


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
def test_two_content_lengths_over_http_1_0_are_refused_too(double, service):
    assert _exchange(double, service, _post(service, b"Content-Length: 5\r\nContent-Length: 30\r\n", b"hello",
                                            version=b"1.0")) == GO_400


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
@pytest.mark.parametrize("encoding", [
    b"Transfer-Encoding: identity, chunked\r\n", b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: gzip\r\n", b"Transfer-Encoding: identity\r\n", b"Transfer-Encoding: \r\n",
    b"Transfer-Encoding: gzip\r\nContent-Length: 5\r\nContent-Length: 30\r\n",  # the encoding is looked at first
], ids=["identity-chunked", "twice", "gzip", "identity", "empty", "before-lengths"])
def test_a_transfer_encoding_other_than_chunked_is_go_s_501(double, service, encoding):
    # before: `identity, chunked` was framed as no body and the chunks read as the next request
    assert _exchange(double, service, _post(service, encoding, b"5\r\nhello\r\n0\r\n\r\n")) == GO_501


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
@pytest.mark.parametrize("target", [b"/v1/sys/health\x00", b"/v1/sys/he\x00alth", b"/v1/sys/health?a=\x00",
                                    b"/v1/sys/he\x7falth", b"/v1/sys/he\x01alth"],
                         ids=["nul-end", "nul-inside", "nul-query", "del", "soh"])
def test_a_control_byte_in_the_request_target_is_go_s_400(double, service, target):
    # before: the path reached the application (secrets: 403 permission denied)
    assert _exchange(double, service, b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % target) == GO_400


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
@pytest.mark.parametrize("value", [b"a\x00b", b"a\x7fb", b"a\x0bb", b"a\x1bb"], ids=["nul", "del", "vt", "esc"])
def test_a_control_byte_in_a_header_value_is_go_s_400(double, service, value):
    assert _exchange(double, service, b"GET %s HTTP/1.1\r\nHost: x\r\nX-A: %s\r\n\r\n"
                     % (PATHS[service].encode(), value)) == GO_400


def _status_and_open(double, service: str, raw: bytes) -> tuple[bytes, bool]:
    """The first answer's status line, and whether the connection stays open after it."""
    host, port = _url(double, service).split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")))
        while len(rest) < length:
            rest += sock.recv(65536)
        assert len(rest) == length, "more bytes than one answer: a second request was read from the body"
        sock.settimeout(0.3)
        try:
            still_open = sock.recv(1) != b""
        except TimeoutError:
            still_open = True
        return head.split(b"\r\n", 1)[0], still_open


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
@pytest.mark.parametrize("headers, body", [
    (b"Content-Length: 5\r\nContent-Length: 5\r\n", b"hello"),            # equal values count as one
    (b"Content-Length: 5\r\nContent-Length:  5 \r\n", b"hello"),          # ... once trimmed
    (b"Content-Length: 05\r\n", b"hello"),
    (b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", b"5\r\nhello\r\n0\r\n\r\n"),  # chunked wins
    (b"Transfer-Encoding:  CHUNKED \r\n", b"5\r\nhello\r\n0\r\n\r\n"),
], ids=["equal", "equal-trimmed", "leading-zero", "chunked-and-length", "chunked-case"])
def test_framing_go_accepts_is_answered_and_the_connection_stays_open(double, service, headers, body):
    status, still_open = _status_and_open(double, service, _post(service, headers, body))
    assert status.split(b" ")[1] == b"405"  # both paths take GET only: the body was framed and skipped
    assert still_open


@pytest.mark.parametrize("service", ["scheduler", "secrets"])
def test_http_1_0_ignores_transfer_encoding_and_reads_the_content_length(double, service):
    raw = _post(service, b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\nConnection: keep-alive\r\n", b"hello",
                version=b"1.0")
    status, still_open = _status_and_open(double, service, raw)
    assert status.split(b" ")[1] == b"405" and still_open  # read as chunks, "hello" broke the body: closed
    raw = _post(service, b"Transfer-Encoding: gzip\r\n", version=b"1.0")  # not 501 over HTTP/1.0
    assert _status_and_open(double, service, raw)[0].split(b" ")[1] == b"405"


def test_expect_100_continue_is_sent_once(double):
    raw = (b"PUT /v1/sys/mounts/x HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\nExpect: 100-continue\r\n"
           b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    answer = _exchange(double, "secrets", raw)
    assert answer.count(b"100 Continue") == 1 and answer.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 ")


def test_a_refused_request_gets_no_100_continue(double):
    raw = (b"PUT /v1/sys/mounts/x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n"
           b"Content-Length: 3\r\n\r\n")
    assert _exchange(double, "secrets", raw) == GO_400
