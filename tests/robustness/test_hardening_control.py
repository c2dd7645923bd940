"""Hardening of the control endpoints and of stopping (issue 11): bad seeds, requests a web page
could send, the control token, and requests held by a hang when the server stops."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import requests
from robust_helpers import scheduler_fingerprint, secrets_fingerprint
from served_process import ServedProcess

from pytest_schedpki import Double

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_YAML = "secrets:\n" + "".join("  " * i + "- \n" for i in range(1, 3000))
DEEP_FLOW = "scheduler:\n  auth_methods:\n    - " + "[" * 900 + "]" * 900


@pytest.fixture
def fresh(double):
    double.reset()
    double.control_token = None
    return double


def _fingerprints(double):
    return scheduler_fingerprint(double.scheduler), secrets_fingerprint(double.secrets)


# -- defect 8: bad input to /_schedpki/seed --------------------------------------------------------

@pytest.mark.parametrize("body", [DEEP_JSON, DEEP_YAML, DEEP_FLOW], ids=["json", "yaml-block", "yaml-flow"])
def test_a_seed_nested_too_deeply_is_400_and_applies_nothing(fresh, body):
    before = _fingerprints(fresh)
    r = requests.post(f"{fresh.secrets_url}/_schedpki/seed", data=body, headers={"Content-Type": "application/yaml"})
    assert (r.status_code, r.json()) == (400, {"error": "body is nested too deeply to parse"})
    assert _fingerprints(fresh) == before


def _raw(url: str, request: bytes) -> tuple[int, bytes]:
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize("framing", [b"Transfer-Encoding: chunked\r\n\r\n40\r\nsecrets:\n", b"Content-Length: 40\r\n\r\nsecrets:\n"],
                         ids=["chunked", "content-length"])
def test_a_seed_cut_short_is_400_and_applies_nothing(fresh, framing):
    before = _fingerprints(fresh)
    status, body = _raw(fresh.secrets_url, b"POST /_schedpki/seed HTTP/1.1\r\nHost: 127.0.0.1\r\n" + framing)
    assert (status, body) == (400, b'{"error": "request body cut short (unexpected EOF)"}\n')
    assert _fingerprints(fresh) == before


def test_a_seed_failing_half_way_applies_nothing(fresh):
    before = _fingerprints(fresh)
    seed = ("scheduler:\n  auth_methods:\n    - {Name: half-way, Type: OIDC, TokenLocality: local, MaxTokenTTL: 1h,"
            " Config: {OIDCDiscoveryURL: 'https://x/', OIDCClientID: c, BoundAudiences: [a],"
            " AllowedRedirectURIs: ['https://x/cb']}}\n"
            "secrets:\n  mounts:\n    - type: pki\n")
    r = requests.post(f"{fresh.secrets_url}/_schedpki/seed", data=seed)
    assert r.status_code == 400 and "secrets.mounts[0].path" in r.json()["error"]
    assert _fingerprints(fresh) == before


def test_a_control_body_over_32_mib_is_413(fresh):
    status, body = _raw(fresh.secrets_url, b"POST /_schedpki/seed HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                           b"Content-Length: 33554433\r\n\r\n")
    assert (status, body) == (413, b'{"error": "request body too large (over 33554432 bytes)"}\n')


# -- cross-site requests and the control token -----------------------------------------------------

@pytest.mark.parametrize("headers", [
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"},
], ids=["origin", "null-origin", "sec-fetch-cross-site", "sec-fetch-same-site"])
def test_control_writes_a_web_page_could_send_are_refused(fresh, headers):
    before = _fingerprints(fresh)
    fresh.secrets.enable_mount("kept")
    marker = _fingerprints(fresh)
    assert marker != before
    for path, data in (("reset", None), ("seed", "secrets:\n  mounts:\n    - path: evil\n")):
        r = requests.post(f"{fresh.secrets_url}/_schedpki/{path}", data=data, headers={"Content-Type": "text/plain", **headers})
        assert r.status_code == 403 and r.json()["error"].startswith("cross-site request refused"), r.text
    assert _fingerprints(fresh) == marker


def test_control_requests_from_the_same_origin_and_non_browsers_are_served(fresh):
    url = fresh.secrets_url
    assert requests.post(f"{url}/_schedpki/sync").status_code == 200  # no Origin: curl, requests, Go
    assert requests.post(f"{url}/_schedpki/sync", headers={"Origin": url}).status_code == 200
    assert requests.post(f"{url}/_schedpki/sync", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
    assert requests.get(f"{url}/_schedpki/lag", headers={"Origin": "https://evil.example"}).status_code == 200


def test_a_foreign_host_name_is_refused_dns_rebinding(fresh):
    port = fresh.secrets_url.rsplit(":", 1)[1]
    r = requests.post(f"{fresh.secrets_url}/_schedpki/reset", headers={"Host": f"rebind.evil.example:{port}"})
    assert r.status_code == 403
    assert r.json()["error"].startswith(f"host 'rebind.evil.example:{port}' may be a public name (DNS rebinding)")
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "[::1]", "app.localhost", "schedpki:8200",
                 "host.docker.internal"):
        assert requests.post(f"{fresh.secrets_url}/_schedpki/sync", headers={"Host": host}).status_code == 200, host


def test_a_configured_control_token_is_required(fresh):
    fresh.control_token = "s3cret"
    try:
        url = f"{fresh.scheduler_url}/_schedpki/lag"
        for headers in ({}, {"X-Schedpki-Control-Token": "wrong"}):
            r = requests.get(url, headers=headers)
            assert (r.status_code, r.json()) == (403, {"error": "missing or wrong control token (send it in the "
                                                                "X-Schedpki-Control-Token header)"})
        assert requests.get(url, headers={"X-Schedpki-Control-Token": "s3cret"}).status_code == 200
        # with the token, any host name (a container's name) is fine
        r = requests.get(url, headers={"X-Schedpki-Control-Token": "s3cret", "Host": "doubles.ci.example.com:4646"})
        assert r.status_code == 200
    finally:
        fresh.control_token = None


def test_serve_takes_the_control_token_from_the_command_line():
    served = ServedProcess("--control-token", "t0ken")
    try:
        status, _ = _raw(f"http://127.0.0.1:{served.ports['secrets']}",
                         b"POST /_schedpki/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        assert status == 403
        status, body = _raw(f"http://127.0.0.1:{served.ports['secrets']}",
                            b"POST /_schedpki/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Schedpki-Control-Token: t0ken\r\n"
                            b"Content-Length: 0\r\n\r\n")
        assert (status, body) == (200, b'{"reset": true}\n')
    finally:
        served.stop()


# -- a request held by a hang when the server stops ------------------------------------------------

def _held_request(port: int) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run():
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            try:
                while chunk := sock.recv(65536):
                    data += chunk
                    if b"\r\n\r\n" in data:
                        break
            except ConnectionResetError:
                pass
            result["answer"] = data

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def _wait_for_hit(url: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if requests.get(f"{url}/_schedpki/faults").json()[0]["hits"] == 1:
            return
        time.sleep(0.05)
    raise AssertionError("the request never reached the hang")


def test_serve_stopping_drops_a_request_held_by_a_hang():
    served = ServedProcess()
    try:
        url = f"http://127.0.0.1:{served.ports['secrets']}"
        assert requests.post(f"{url}/_schedpki/faults", json={"path": "/v1/sys/health", "hang": True}).status_code == 200
        thread, result = _held_request(served.ports["secrets"])
        _wait_for_hit(url)
        assert served.stop() == 0
        thread.join(10)
        assert result["answer"] == b""  # was: HTTP/1.1 200 OK
    finally:
        served.stop()


def test_double_stop_drops_a_request_held_by_a_hang():
    double = Double().start()
    try:
        double.faults.add(__import__("pytest_schedpki").Fault(path="/v1/sys/health", hang=True))
        thread, result = _held_request(double.secrets_server.port)
        _wait_for_hit(double.secrets_url)
    finally:
        double.stop()
    thread.join(10)
    assert result["answer"] == b""
    assert double.journal.entries()[-1].status == 0
