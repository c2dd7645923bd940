"""Fixtures of the Vault Enterprise emulation tests (external policy service / CIEPS, cert_metadata).

One Double per session with ``double.secrets.enterprise = True`` set before mounting ``pki``, which
holds two EC roots generated over HTTP (``root-a``, the default issuer, and ``root-b``) and the
roles of :data:`ROLES`. Every test starts from that baseline (``Double.reset``), so a policy service
plugged inside a test is unplugged for the next one.

``policy_http`` is a tiny werkzeug policy service on ``127.0.0.1`` (port 0): it records each POST
(headers and JSON body) and answers with what ``policy_http.behaviour(request_dict)`` returns,
``(status, body)`` where ``body`` is a dict (sent as JSON) or bytes.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
import requests
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

sys.path.insert(0, str(Path(__file__).parent))

from ent_helpers import ROOT, Client  # noqa: E402

from pytest_schedpki import Double  # noqa: E402

ROLES = {
    "meta": {"allow_any_name": True, "key_type": "ec", "ttl": "1h"},
    "nometa": {"allow_any_name": True, "key_type": "ec", "no_store_metadata": True},
    "nostore": {"allow_any_name": True, "key_type": "ec", "no_store": True},
}


@pytest.fixture(scope="session")
def ent_double():
    """The started Double (Enterprise emulation on) with the baseline described above."""
    double = Double().start()
    double.secrets.enterprise = True
    base = double.secrets_url + "/v1/"
    r = requests.post(base + "sys/mounts/pki", json={"type": "pki", "config": {"max_lease_ttl": "87600h"}},
                      headers=ROOT)
    assert r.status_code == 204, r.text
    for name, cn in (("root-a", "Root A"), ("root-b", "Root B")):
        r = requests.post(base + "pki/root/generate/internal", headers=ROOT,
                          json={"common_name": cn, "issuer_name": name, "key_type": "ec", "ttl": "8760h"})
        assert r.status_code == 200, r.text
    r = requests.post(base + "pki/config/issuers", json={"default": "root-a"}, headers=ROOT)
    assert r.status_code == 200, r.text
    for name, body in ROLES.items():
        r = requests.post(base + f"pki/roles/{name}", json=body, headers=ROOT)
        assert r.status_code == 200, r.text
    double.save_baseline()
    yield double
    double.stop()


@pytest.fixture
def ent(ent_double):
    """Per test: the baseline (Enterprise on), no handler errors left behind. An HTTP helper."""
    ent_double.reset()
    ent_double.pop_handler_errors()
    client = Client(ent_double)
    yield client
    assert ent_double.pop_handler_errors() == []


class PolicyHTTPService:
    """A test's own CIEPS service over HTTP (see the module docstring)."""

    def __init__(self):
        self.received: list[dict] = []
        self.headers: list[dict] = []
        self.behaviour = lambda request: (500, b"no behaviour set")
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/evaluate"

    def app(self, environ, start_response):
        request = Request(environ)
        body = json.loads(request.get_data())
        self.received.append(body)
        self.headers.append(dict(request.headers))
        status, answer = self.behaviour(body)
        payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        return Response(payload, status=status, mimetype="application/json")(environ, start_response)

    def stop(self):
        self.server.shutdown()


@pytest.fixture(scope="session")
def policy_http_session():
    service = PolicyHTTPService()
    yield service
    service.stop()


@pytest.fixture
def policy_http(policy_http_session):
    """The HTTP policy service, emptied for this test."""
    policy_http_session.received.clear()
    policy_http_session.headers.clear()
    policy_http_session.behaviour = lambda request: (500, b"no behaviour set")
    return policy_http_session
