"""Proxy variables and routed URLs: a routed plain-http URL of the double is answered in-process even
when ``HTTP_PROXY`` names a proxy (no network hop for a proxy to take part in, see
docs/divergences.md); unrouted URLs and a session's own ``proxies`` still go to the proxy."""

from __future__ import annotations

import socket

import hvac
import pytest
import requests

from pytest_schedpki import Double


@pytest.fixture(scope="module")
def doubles():
    """``(routed, unrouted)``: one double served in-process, one reached over TCP only."""
    routed, unrouted = Double().start(), Double().start()
    routed.route_in_process()
    yield routed, unrouted
    routed.stop()
    unrouted.stop()


@pytest.fixture
def dead_proxy(monkeypatch):
    """``HTTP_PROXY``/``http_proxy`` naming a port nobody listens on; no ``NO_PROXY``."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.setenv("http_proxy", url)
    return url


def test_routed_url_answers_in_process_despite_http_proxy(doubles, dead_proxy):
    routed, _ = doubles
    session = requests.Session()
    response = session.get(f"{routed.secrets_url}/v1/sys/health")
    assert response.status_code == 200
    assert response.json()["initialized"] is True
    adapter = session.get_adapter("http://")
    assert (list(adapter.poolmanager.pools.keys()), adapter.proxy_manager) == ([], {})  # no socket, no proxy
    client = hvac.Client(url=routed.secrets_url, token="root")
    assert client.sys.read_health_status(method="GET")["sealed"] is False


def test_unrouted_url_still_goes_to_the_proxy(doubles, dead_proxy):
    _, unrouted = doubles
    with pytest.raises(requests.exceptions.ProxyError):
        requests.get(f"{unrouted.secrets_url}/v1/sys/health", timeout=5)


def test_session_proxies_still_apply_to_routed_urls(doubles, dead_proxy, monkeypatch):
    routed, _ = doubles
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("http_proxy")
    session = requests.Session()
    session.proxies = {"http": dead_proxy}
    with pytest.raises(requests.exceptions.ProxyError):
        session.get(f"{routed.secrets_url}/v1/sys/health", timeout=5)


def test_routed_url_keeps_requests_ca_bundle(doubles, dead_proxy, monkeypatch, tmp_path):
    routed, _ = doubles
    bundle = tmp_path / "ca.pem"
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    settings = requests.Session().merge_environment_settings(f"{routed.secrets_url}/v1/sys/health", {}, None,
                                                             None, None)
    assert settings == {"proxies": {}, "stream": False, "verify": str(bundle), "cert": None}
    unrouted = requests.Session().merge_environment_settings("http://unrouted.example:8200/v1/sys/health", {},
                                                             None, None, None)
    assert unrouted["proxies"] == {"http": dead_proxy} and unrouted["verify"] == str(bundle)
