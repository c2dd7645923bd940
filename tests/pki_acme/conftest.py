"""Fixtures of the ACME tests of the double alone: a PKI mount per test (EC root, role ``web`` for
subdomains of example.com) with ACME enabled through :func:`pytest_schedpki.acme.enable_acme`, a client,
and a local http-01 responder the ``challenge_address`` knob points at (no root needed)."""

from __future__ import annotations

import itertools

import pytest
import requests

from pytest_schedpki.acme import AcmeClient, Http01Responder, enable_acme

_COUNTER = itertools.count(1)


class AcmeMount:
    """One test's mount: ``name``, ``url`` (``<secrets>/v1/<name>``), ``directory``, ``client``
    and :meth:`write` / :meth:`read` for the usual API with the root token."""

    def __init__(self, schedpki, name: str):
        self.schedpki = schedpki
        self.name = name
        self.session = requests.Session()
        self.session.headers["X-Vault-Token"] = schedpki.secrets.token
        base = schedpki.secrets.url
        self.url = f"{base}/v1/{name}"
        self.session.post(f"{base}/v1/sys/mounts/{name}", json={"type": "pki"}).raise_for_status()
        self.write("root/generate/internal", common_name="ACME Test Root", key_type="ec", ttl="87600h")
        self.write("roles/web", allowed_domains=["example.com"], allow_subdomains=True, key_type="any")
        self.directory = enable_acme(base, name, schedpki.secrets.token)
        self.client = AcmeClient(self.directory)

    def write(self, path: str, **body) -> dict:
        resp = self.session.post(f"{self.url}/{path}", json=body)
        assert resp.status_code in (200, 204), resp.text
        return resp.json() if resp.content else {}

    def read(self, path: str) -> requests.Response:
        return self.session.get(f"{self.url}/{path}")


@pytest.fixture
def acme(schedpki) -> AcmeMount:
    return AcmeMount(schedpki, f"acme{next(_COUNTER)}")


@pytest.fixture
def responder(schedpki):
    """An http-01 responder on a free local port, with the double's challenge_address knob on it."""
    with Http01Responder() as server:
        schedpki.acme_knobs(challenge_address=server.address)
        yield server
