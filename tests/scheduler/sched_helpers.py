"""Helpers shared by the scheduler tests: the :class:`Sched` handle, request bodies, assertions."""

from __future__ import annotations

import http.client
import uuid
from urllib.parse import urlsplit

import requests

from pytest_schedpki.scheduler.state import SchedulerState
from pytest_schedpki.wire.server import ServiceServer

MANAGEMENT = "root"
_DEFAULT = object()


class Sched:
    """A scheduler listener as a test uses it."""

    def __init__(self, server: ServiceServer, state: SchedulerState):
        self.server = server
        self.state = state
        self.url = server.url
        self.token = MANAGEMENT

    def request(self, method: str, path: str, token=_DEFAULT, **kwargs) -> requests.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        token = self.token if token is _DEFAULT else token
        if token is not None:
            headers.setdefault("X-Nomad-Token", token)
        return requests.request(method, self.url + path, headers=headers, timeout=30, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def create(self, body: dict, **kw) -> requests.Response:
        """PUT /v1/acl/auth-method and insist on 200."""
        r = self.put("/v1/acl/auth-method", json=body, **kw)
        assert r.status_code == 200, r.text
        return r


def mock_oidc(name: str | None = None, **overrides) -> dict:
    """Nomad's ``mock.ACLOIDCAuthMethod()`` as an HTTP body (reference §12)."""
    body = {
        "Name": name or f"acl-auth-method-{uuid.uuid4().hex[:8]}",
        "Type": "OIDC",
        "TokenLocality": "local",
        "MaxTokenTTL": "3600s",
        "Default": False,
        "Config": {
            "OIDCDiscoveryURL": "http://example.com",
            "OIDCClientID": "mock",
            "OIDCClientSecret": "very secret secret",
            "OIDCScopes": ["groups"],
            "BoundAudiences": ["sales", "engineering"],
            "AllowedRedirectURIs": ["foo", "bar"],
            "DiscoveryCaPem": ["foo"],
            "SigningAlgs": ["RS256"],
            "ClaimMappings": {"foo": "bar"},
            "ListClaimMappings": {"foo": "bar"},
        },
    }
    body.update(overrides)
    return body


def assert_plain(r: requests.Response, status: int, text: str) -> None:
    """An upstream plain-text error: exact status, body and Content-Type."""
    assert (r.status_code, r.text) == (status, text)
    assert r.headers["Content-Type"] == "text/plain; charset=utf-8"


def raw_request(url: str, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, dict, bytes]:
    """Send ``path`` exactly as given (no client-side normalisation); returns (status, headers, body)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()
