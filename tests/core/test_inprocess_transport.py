"""The in-process transport gives Python clients what the TCP path gives them: the same status, headers
and body for many requests, the same exceptions for faults and timeouts, the same journal; only the
double's routed URLs skip the socket, and HTTPS only for clients that would trust the listener."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from pytest_schedpki import Double
from pytest_schedpki.faults import Fault
from pytest_schedpki.wire import clients as _clients  # noqa: F401 - see test_plugin_transport_option
from pytest_schedpki.wire import inprocess as _inprocess  # noqa: F401
from pytest_schedpki.wire.tls import create_tls_material

ROOT = {"X-Vault-Token": "root"}
MGMT = {"X-Nomad-Token": "root"}
ROLE = {"allow_any_name": True, "key_type": "ec", "ttl": "1h", "max_ttl": "2h"}
METHOD = {"Name": "okta", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
          "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "id",
                     "OIDCClientSecret": "s3cret", "BoundAudiences": ["id"], "AllowedRedirectURIs": ["http://x"]}}


@pytest.fixture(scope="module")
def pair():
    """Two doubles with the same state: ``tcp`` reached over its sockets, ``inproc`` routed in-process."""
    tcp, inproc = Double().start(), Double().start()
    inproc.route_in_process()
    yield tcp, inproc
    tcp.stop()
    inproc.stop()


@pytest.fixture
def fresh(pair):
    for double in pair:
        double.reset()
        double.pop_handler_errors()
    yield pair
    for double in pair:
        assert double.pop_handler_errors() == []


def _client_sockets(session: requests.Session, prefix: str = "http://") -> int:
    """Sockets the session's connection pools opened (urllib3 connections keep theirs while pooled)."""
    pools = session.get_adapter(prefix).poolmanager.pools
    return sum(1 for key in pools.keys() for conn in list(pools[key].pool.queue) if conn and conn.sock is not None)


def _chunks(data: bytes):
    yield data[:5]
    yield data[5:]


def _exchanges(session: requests.Session, double: Double) -> list[requests.Response]:
    s, n = double.secrets_url, double.scheduler_url
    big = b'{"x": "' + b"a" * (32 * 1024 * 1024) + b'"}'
    calls = [
        ("GET", f"{s}/v1/sys/health", {}),
        ("HEAD", f"{s}/v1/sys/health", {}),
        ("POST", f"{s}/v1/sys/mounts/pki", {"json": {"type": "pki"}, "headers": ROOT}),
        ("POST", f"{s}/v1/sys/mounts/pki", {"json": {"type": "pki"}, "headers": ROOT}),  # 400 existing path
        ("POST", f"{s}/v1/pki/roles/web", {"json": ROLE, "headers": ROOT}),
        ("GET", f"{s}/v1/pki/roles/web", {"headers": ROOT}),
        ("GET", f"{s}/v1/pki/roles/nope", {"headers": ROOT}),
        ("LIST", f"{s}/v1/pki/roles", {"headers": ROOT}),
        ("GET", f"{s}/v1/pki/roles?list=true", {"headers": ROOT}),
        ("GET", f"{s}/v1/pki/roles/web", {"headers": {"X-Vault-Token": "bad"}}),
        ("GET", f"{s}/v1/pki/roles/web", {"headers": {"X-Vault-Token": b"root"}}),  # bytes values are sent as is
        ("GET", f"{s}/v1/pki/roles/web", {"headers": {"X-Vault-Token": "r\u00f6ot"}}),  # latin-1 on the wire
        ("GET", f"{s}/v1/pki/roles/web", {}),
        ("POST", f"{s}/v1/pki/roles/web", {"data": b"{not json", "headers": ROOT}),
        ("POST", f"{s}/v1/pki/roles/chunked", {"data": _chunks(json.dumps(ROLE).encode()), "headers": ROOT}),
        ("PUT", f"{s}/v1/pki/roles/big", {"data": big, "headers": ROOT}),  # 413
        ("DELETE", f"{s}/v1/pki/roles/web", {"headers": ROOT}),
        ("GET", f"{s}/v1/pki/r%C3%B6les/x?a=%20b", {"headers": ROOT}),
        ("PATCH", f"{s}/v1/pki/roles/chunked", {"data": b'{"ttl": "30m"}',
                                                 "headers": {**ROOT, "Content-Type": "application/merge-patch+json"}}),
        ("GET", f"{s}/v1/pki/nope", {"headers": ROOT}),
        ("DELETE", f"{s}/v1/sys/health", {"headers": ROOT}),
        ("PATCH", f"{s}/v1/sys/health", {"headers": ROOT}),
        ("DELETE", f"{n}/v1/acl/auth-methods", {"headers": MGMT}),
        ("POST", f"{n}/v1/acl/auth-method", {"json": METHOD, "headers": MGMT}),
        ("GET", f"{n}/v1/acl/auth-method/okta", {"headers": MGMT}),
        ("GET", f"{n}/v1/acl/auth-methods", {"headers": MGMT}),
        ("GET", f"{n}/v1/acl/auth-methods?index=1&wait=10ms", {"headers": MGMT}),
        ("GET", f"{n}/v1/acl/auth-method/okta", {}),
        ("POST", f"{n}/v1/acl/auth-method/okta", {"data": b"[", "headers": MGMT}),
        ("DELETE", f"{n}/v1/acl/auth-method/okta", {"headers": MGMT}),
        ("GET", f"{s}/_schedpki/keypool", {}),
        ("GET", f"{s}/_schedpki/nope", {}),
    ]
    return [session.request(method, url, timeout=30, **kwargs) for method, url, kwargs in calls]


def _normal(response: requests.Response) -> tuple:
    """Status, reason, headers and body with what changes between two runs made equal: the Date header,
    request ids, times, the key pool's ``ready`` count (its background thread fills the pool between
    the two runs, whichever path answers; Content-Length then only has to match the body)."""
    headers = {k: v for k, v in response.headers.items() if k != "Date"}
    if "Content-Length" in headers and response.request.method != "HEAD":
        headers["Content-Length"] = int(headers["Content-Length"]) == len(response.content)
    body = re.sub(rb'"request_id":"[0-9a-f-]+"', b'"request_id":""', response.content)
    body = re.sub(rb'"server_time_utc":[0-9]+', b'"server_time_utc":0', body)
    body = re.sub(rb'"(CreateTime|ModifyTime)":"[^"]*"', rb'"\1":""', body)
    body = re.sub(rb'"ready": [0-9]+', b'"ready": 0', body)
    return response.status_code, response.reason, headers, body, response.raw.version


def _journal(double: Double) -> list[tuple]:
    """The journal, oldest first, with the per-request ids and the health time left out."""
    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()
                    if k not in ("request_id", "server_time_utc", "CreateTime", "ModifyTime", "ready")}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value
    return [(e.service, e.method, e.path, e.query, e.token_kind, plain(e.body), e.status, plain(e.response))
            for e in double.journal.entries()]


class _TaggingAdapter(HTTPAdapter):
    """An adapter that adds a header of its own (the fast path must not skip it)."""

    def add_headers(self, request, **kwargs):
        request.headers["X-Vault-Token"] = "root"


def _session(path: str) -> requests.Session:
    """A session whose routed requests take the ``requests`` fast path (default adapter) or, with
    retries configured, urllib3's pool and the urllib3 hook."""
    session = requests.Session()
    if path == "urllib3":
        session.mount("http://", HTTPAdapter(max_retries=1))
    return session


def test_an_adapter_that_adds_headers_keeps_them_in_process(fresh):
    answers = []
    for double in fresh:
        with requests.Session() as session:
            session.mount("http://", _TaggingAdapter())
            answers.append(session.get(f"{double.secrets_url}/v1/sys/mounts", timeout=5).status_code)
    assert answers == [200, 200]


@pytest.mark.parametrize("path", ["adapter", "urllib3"])
def test_answers_byte_identical_to_the_tcp_path(fresh, path):
    """The same requests on the same double from its baseline, over TCP and then in-process."""
    _, double = fresh
    double.route_in_process(False)
    try:
        with requests.Session() as session:
            over_tcp = _exchanges(session, double)
            assert _client_sockets(session) > 0
        tcp_journal = _journal(double)
    finally:
        double.route_in_process()
    double.reset()
    session = _session(path)
    in_process = _exchanges(session, double)
    assert _client_sockets(session) == 0  # nothing went over a socket
    assert [r.status_code for r in in_process] == [r.status_code for r in over_tcp]
    assert {r.status_code for r in in_process} >= {200, 204, 400, 403, 404, 405, 413}
    for a, b in zip(over_tcp, in_process, strict=True):
        assert _normal(b) == _normal(a), b.url
    assert _journal(double) == tcp_journal


def test_urllib_answers_and_errors_like_tcp(fresh):
    out = []
    for double in fresh:
        ok = urllib.request.urlopen(urllib.request.Request(f"{double.secrets_url}/v1/sys/health"), timeout=5)
        with ok:
            out.append((ok.status, ok.reason, sorted(json.loads(ok.read())), ok.headers["Content-Type"],
                        ok.headers["Connection"]))
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(urllib.request.Request(f"{double.scheduler_url}/v1/acl/auth-method/x",
                                                          headers=MGMT, method="GET"))
        out.append((error.value.code, error.value.read(), error.value.headers["Content-Type"]))
        request = urllib.request.Request(f"{double.scheduler_url}/v1/acl/auth-method", headers=MGMT,
                                         data=json.dumps(METHOD).encode(), method="POST")
        with urllib.request.urlopen(request) as created:
            out.append((created.status, json.loads(created.read())["Name"]))
    assert out[3:] == out[:3]
    assert out[0][4] == "close"  # urllib asks for it; the listener says so


def test_only_routed_urls_skip_the_socket(fresh):
    tcp, inproc = fresh
    session = requests.Session()
    assert session.get(f"{inproc.secrets_url}/v1/sys/health").status_code == 200
    assert _client_sockets(session) == 0
    assert session.get(f"{tcp.secrets_url}/v1/sys/health").status_code == 200
    assert _client_sockets(session) == 1
    inproc.route_in_process(False)
    try:
        assert session.get(f"{inproc.secrets_url}/v1/sys/health").status_code == 200
        assert _client_sockets(session) == 2  # back on the socket
    finally:
        session.close()
        inproc.route_in_process()


@pytest.mark.parametrize("side", [0, 1], ids=["tcp", "inprocess"])
def test_faults_reach_the_client_as_over_tcp(fresh, side):
    double = fresh[side]
    url = f"{double.secrets_url}/v1/sys/health"
    double.faults.add(Fault(service="secrets", path="/v1/sys/health", drop=True, times=1))
    with pytest.raises(requests.exceptions.ConnectionError) as dropped:
        requests.get(url, timeout=5)
    assert "Connection aborted" in str(dropped.value)
    double.faults.add(Fault(service="secrets", path="/v1/sys/health", drop=True, times=1))
    with pytest.raises(http.client.RemoteDisconnected):
        urllib.request.urlopen(url, timeout=5)
    hang = double.faults.add(Fault(service="secrets", path="/v1/sys/health", hang=True, times=1))
    with pytest.raises(requests.exceptions.ReadTimeout) as timed_out:
        requests.get(url, timeout=0.2)
    assert f"HTTPConnectionPool(host='127.0.0.1', port={double.secrets_server.port}): Read timed out. " \
           "(read timeout=0.2)" in str(timed_out.value)
    hang.release()
    for _ in range(500):  # the released request is answered (to nobody) and journaled
        if len(double.journal.entries()) == 3:
            break
        threading.Event().wait(0.01)
    double.faults.add(Fault(service="secrets", path="/v1/sys/health", status=503, body={"errors": ["sealed"]},
                            times=2))
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=Retry(total=3, status_forcelist=[503], backoff_factor=0)))
    assert session.get(url, timeout=5).status_code == 200  # urllib3's retries ride out the two 503s
    double.faults.add(Fault(service="secrets", path="/v1/sys/health", drop=True, times=1))
    assert session.get(url, timeout=5).status_code == 200  # ... and a dropped connection
    statuses = [e.status for e in double.journal.entries()]
    assert statuses == [0, 0, 200, 503, 503, 200, 0, 200]


@pytest.mark.parametrize("side", [0, 1], ids=["tcp", "inprocess"])
def test_a_blocking_query_longer_than_the_client_timeout_times_out(fresh, side):
    double = fresh[side]
    url = f"{double.scheduler_url}/v1/acl/auth-methods?index=100&wait=2s"
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(url, headers=MGMT, timeout=0.2)
    woke = threading.Event()
    answer = {}

    def wait():
        answer["r"] = requests.get(url, headers=MGMT, timeout=10)
        woke.set()

    threading.Thread(target=wait, daemon=True).start()
    assert woke.wait(10)
    assert answer["r"].status_code == 200 and answer["r"].json() == []


def test_https_in_process_only_for_clients_that_trust_the_listener(tmp_path):
    material = create_tls_material(directory=str(tmp_path))
    double = Double()
    double.tls = material
    double.start(ssl_context=material.server_context())
    try:
        double.route_in_process()
        url = f"{double.secrets_url}/v1/sys/health"
        for verify in (material.ca_path, False):
            with requests.Session() as session:
                assert session.get(url, verify=verify, timeout=5).status_code == 200
                assert _client_sockets(session, "https://") == 0
        with requests.Session() as session:  # a bundle without the double's CA: the handshake decides
            with pytest.raises(requests.exceptions.SSLError):
                session.get(url, verify=requests.certs.where(), timeout=5)
        with pytest.raises(requests.exceptions.SSLError):  # the system store does not know the double's CA
            requests.get(url, timeout=5)
        context = material.client_context()
        with urllib.request.urlopen(url, context=context, timeout=5) as answer:  # urllib over HTTPS: TCP
            assert answer.status == 200
    finally:
        double.stop()


def test_hooks_leave_when_no_listener_is_routed():
    code = """
import urllib.request, urllib3.connectionpool as pool
from pytest_schedpki import Double
originals = (pool.HTTPConnectionPool._make_request, urllib.request.HTTPHandler.http_open)
double = Double().start()
double.route_in_process()
patched = (pool.HTTPConnectionPool._make_request, urllib.request.HTTPHandler.http_open)
double.stop()
restored = (pool.HTTPConnectionPool._make_request, urllib.request.HTTPHandler.http_open)
print(all(a is not b for a, b in zip(originals, patched)), all(a is b for a, b in zip(originals, restored)))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_httpx_is_routed_when_imported_after_routing_and_not_imported_by_it():
    # routing does not import httpx (and the click it brings): it is patched when the process imports it
    code = """
import sys
from pytest_schedpki import Double
double = Double().start()
double.route_in_process()
imported_by_routing = "httpx" in sys.modules
import httpx
with httpx.Client(base_url=double.secrets_url) as client:
    status = client.get("/v1/sys/health").status_code
hook_left = any(type(f).__name__ == "_Watch" for f in sys.meta_path)
patched = httpx.HTTPTransport.handle_request.__module__
double.stop()
restored = httpx.HTTPTransport.handle_request.__module__
print(imported_by_routing, status, hook_left, patched, restored)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "200", "False", "pytest_schedpki.wire.clients",
                                   "httpx._transports.default"], done.stderr


_SESSION_TEST = """
import requests
from urllib.parse import urlsplit

from pytest_schedpki.wire.inprocess import ROUTES

def test_transport(schedpki):
    with requests.Session() as session:
        assert session.get(schedpki.secrets.url + "/v1/sys/health").status_code == 200
        pools = session.get_adapter("http://").poolmanager.pools
        sockets = sum(1 for k in pools.keys() for c in list(pools[k].pool.queue) if c and c.sock is not None)
    parts = urlsplit(schedpki.secrets.url)
    routed = ROUTES.get(parts.scheme, parts.hostname, parts.port) is not None
    print("TRANSPORT", routed, sockets)
"""


@pytest.mark.parametrize(("args", "ini", "expected"), [
    ((), "", "TRANSPORT True 0"),
    (("--schedpki-transport", "tcp"), "", "TRANSPORT False 1"),
    ((), "schedpki_transport = tcp", "TRANSPORT False 1"),
    (("--schedpki-transport", "inprocess"), "schedpki_transport = tcp", "TRANSPORT True 0"),
])
def test_plugin_transport_option(pytester, args, ini, expected):
    # The transport modules are imported by this module: pytester's in-process runs drop modules first
    # imported inside a run, so a later run's test would import a new, empty route table while the
    # plugin (imported before) still routes through the old one.
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(_SESSION_TEST)
    result = pytester.runpytest("-s", *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*" + expected])


def test_plugin_transport_option_refuses_other_names(pytester):
    pytester.makeini("[pytest]\nschedpki_transport = socket\n")
    pytester.makepyfile(_SESSION_TEST)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # refused once, at session start
    result.stderr.fnmatch_lines(["ERROR: schedpki_transport must be one of inprocess, tcp, got 'socket'"])


def test_an_exception_in_a_handler_is_recorded_and_answered_as_over_tcp(fresh, monkeypatch):
    from pytest_schedpki.secrets import http as secrets_http

    def broken(service, request):
        raise RuntimeError("boom")

    monkeypatch.setattr(secrets_http, "handle", broken)
    answers = []
    for double in fresh:
        response = requests.get(f"{double.secrets_url}/v1/sys/health", timeout=5)
        answers.append((response.status_code, response.headers["Content-Type"], response.content))
        errors = double.pop_handler_errors()
        assert [(e.service, e.method, e.path, str(e.exception)) for e in errors] == [
            ("secrets", "GET", "/v1/sys/health", "boom")]
    assert answers[1] == answers[0]
    assert answers[0][0] == 500


def test_httpx_answers_faults_and_timeouts_as_over_tcp(fresh):
    httpx = pytest.importorskip("httpx")
    answers = []
    for double in fresh:
        with httpx.Client(base_url=double.secrets_url, headers=ROOT, timeout=5) as client:
            replies = [client.post("/v1/sys/mounts/pki", json={"type": "pki"}),
                       client.post("/v1/pki/roles/web", json=ROLE),
                       client.post("/v1/pki/roles/gen", content=_chunks(json.dumps(ROLE).encode())),
                       client.get("/v1/pki/roles/web"),
                       client.get("/v1/pki/roles/nope")]
            answers.append([(r.status_code, r.reason_phrase, r.http_version,
                             {k: v for k, v in r.headers.items() if k != "date"},
                             re.sub(rb'"request_id":"[0-9a-f-]+"', b"", r.content)) for r in replies])
            double.faults.add(Fault(service="secrets", path="/v1/sys/health", drop=True, times=1))
            with pytest.raises(httpx.RemoteProtocolError):
                client.get("/v1/sys/health")
            hang = double.faults.add(Fault(service="secrets", path="/v1/sys/health", hang=True, times=1))
            with pytest.raises(httpx.ReadTimeout):
                client.get("/v1/sys/health", timeout=0.2)
            hang.release()
    assert [a[0] for a in answers[0]] == [204, 200, 200, 200, 404]
    assert answers[1] == answers[0]
