"""HTTP/1.1 persistent connections: several requests per connection, bodies left unread are drained,
``Connection: close`` and HTTP/1.0 are honoured, and stopping the double cuts idle connections."""

from __future__ import annotations

import http.client
import socket

import pytest

from pytest_schedpki import Double


@pytest.fixture
def double():
    double = Double().start()
    yield double
    double.faults.clear()
    double.stop()


def _port(double: Double) -> int:
    return int(double.secrets_url.rsplit(":", 1)[1])


def _exchange(sock: socket.socket, raw: bytes) -> bytes:
    """Send ``raw`` and read one response (headers + Content-Length body)."""
    sock.sendall(raw)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_one_connection_serves_many_requests(double):
    conn = http.client.HTTPConnection("127.0.0.1", _port(double), timeout=5)
    for _ in range(3):
        conn.request("GET", "/v1/sys/health")
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("Connection") is None
        response.read()
    first_socket = conn.sock
    conn.request("GET", "/v1/sys/health")
    conn.getresponse().read()
    assert conn.sock is first_socket


def test_an_unread_request_body_is_drained_before_the_next_request(double):
    with socket.create_connection(("127.0.0.1", _port(double)), timeout=5) as sock:
        body = b"x" * 5000  # the control endpoint below never reads it
        first = _exchange(sock, b"GET /_schedpki/clock HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(body), body))
        assert first.startswith(b"HTTP/1.1 200")
        second = _exchange(sock, b"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert second.startswith(b"HTTP/1.1 200") and b'"initialized":true' in second


def test_chunked_request_then_another_request(double):
    with socket.create_connection(("127.0.0.1", _port(double)), timeout=5) as sock:
        first = _exchange(sock, b"POST /v1/sys/mounts/pki_c HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n"
                                b"Transfer-Encoding: chunked\r\n\r\nf\r\n{\"type\": \"pki\"}\r\n0\r\n\r\n")
        assert first.startswith(b"HTTP/1.1 204")
        second = _exchange(sock, b"GET /v1/sys/mounts/pki_c HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n\r\n")
        assert second.startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("request_line, status_line, header", [
    (b"GET /v1/sys/health HTTP/1.1\r\nConnection: close", b"HTTP/1.1 200 OK", b"Connection: close"),
    # Go answers HTTP/1.0 in HTTP/1.0 and says nothing of closing, HTTP/1.0's default
    (b"GET /v1/sys/health HTTP/1.0", b"HTTP/1.0 200 OK", None),
])
def test_connection_close_and_http_1_0_end_the_connection(double, request_line, status_line, header):
    with socket.create_connection(("127.0.0.1", _port(double)), timeout=5) as sock:
        answer = _exchange(sock, request_line + b"\r\nHost: x\r\n\r\n")
        assert answer.startswith(status_line + b"\r\n")
        if header is None:
            assert b"Connection:" not in answer.split(b"\r\n\r\n")[0]
        else:
            assert header in answer
        assert sock.recv(10) == b""  # closed by the server


def test_http_1_0_keep_alive_is_honoured(double):
    with socket.create_connection(("127.0.0.1", _port(double)), timeout=5) as sock:
        answer = _exchange(sock, b"GET /v1/sys/health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        assert b"Connection: keep-alive" in answer
        assert answer.startswith(b"HTTP/1.0 200 OK\r\n")
        assert _exchange(sock, b"GET /v1/sys/health HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200")  # as before


def test_stop_cuts_idle_keep_alive_connections():
    double = Double().start()
    conn = http.client.HTTPConnection("127.0.0.1", _port(double), timeout=5)
    conn.request("GET", "/v1/sys/health")
    conn.getresponse().read()
    double.stop()
    conn.sock.settimeout(5)
    assert conn.sock.recv(10) == b""  # the server side is gone
    conn.close()


def test_a_dropped_connection_fault_still_drops(double):
    from pytest_schedpki.faults import Fault

    double.faults.add(Fault(service="secrets", path="/v1/sys/health", drop=True, times=1))
    conn = http.client.HTTPConnection("127.0.0.1", _port(double), timeout=5)
    conn.request("GET", "/v1/sys/health")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        conn.getresponse()
    conn.close()


@pytest.mark.parametrize("transport", ["tcp", "inprocess"])
def test_answers_carry_no_server_header_as_go_servers_send_none(transport):
    """bao and Nomad (Go's net/http) send no ``Server`` header; neither does the double, on either
    service and either transport."""
    import requests

    double = Double().start()
    try:
        if transport == "inprocess":
            double.route_in_process()
        for url in (double.secrets_url + "/v1/sys/health", double.scheduler_url + "/v1/acl/auth-methods"):
            resp = requests.get(url, timeout=10)
            assert resp.status_code == 200
            assert "Server" not in resp.headers, resp.headers
            assert "Date" in resp.headers
    finally:
        double.stop()


def _read_answers(sock: socket.socket, count: int) -> list[bytes]:
    """``count`` answers (head + Content-Length body) read off ``sock``, in order."""
    data, answers = b"", []
    while len(answers) < count:
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(rest) < length:
            rest += sock.recv(65536)
        answers.append(head + b"\r\n\r\n" + rest[:length])
        data = rest[length:]
    return answers


@pytest.mark.parametrize("split", ["one segment", "two pipelined", "body later"])
def test_a_body_is_read_whether_it_came_with_its_head_or_after_it(double, split):
    """A body already in the buffer with its head (read without waiting), two such requests pipelined in
    one segment (the first's buffered bytes include the second request), and a body sent 0.2 s after its
    head (read waiting for it): each request gets its own answer, with its own body's data."""
    import json
    import time

    def put(name: str, value: str) -> tuple[bytes, bytes]:
        body = json.dumps({"data": {"value": value}}).encode()
        head = (f"POST /v1/secret/data/{name} HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        return head, body

    with socket.create_connection(("127.0.0.1", _port(double)), timeout=5) as sock:
        mount = b'{"type": "kv", "options": {"version": 2}}'
        sock.sendall(b"POST /v1/sys/mounts/secret HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(mount), mount))
        assert _read_answers(sock, 1)[0].startswith(b"HTTP/1.1 204")
        (head_a, body_a), (head_b, body_b) = put("a", "first"), put("b", "second")
        if split == "one segment":
            sock.sendall(head_a + body_a)
            answers = _read_answers(sock, 1)
        elif split == "two pipelined":
            sock.sendall(head_a + body_a + head_b + body_b)
            answers = _read_answers(sock, 2)
        else:
            sock.sendall(head_a)
            time.sleep(0.2)
            sock.sendall(body_a)
            answers = _read_answers(sock, 1)
        assert all(a.startswith(b"HTTP/1.1 200") for a in answers), answers
        for name, expected in [("a", "first"), ("b", "second")][:len(answers)]:
            sock.sendall(f"GET /v1/secret/data/{name} HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n\r\n".encode())
            read = json.loads(_read_answers(sock, 1)[0].partition(b"\r\n\r\n")[2])
            assert read["data"]["data"] == {"value": expected}
