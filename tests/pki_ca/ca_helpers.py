"""Helpers of the CA-side tests: :class:`Pki` (one mount of the running double, over HTTP), the
expected upstream warning texts, and small response/certificate accessors."""

from __future__ import annotations

import json
from typing import Any

import requests
from cryptography import x509

from pytest_schedpki import Double

ROOT = {"X-Vault-Token": "root"}
HOUR = 3600
AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it "
               "harder for systems to find missing certificates in the chain or to validate revocation status of "
               "certificates. Consider updating /config/urls or the newly generated issuer with this information.")


class Pki:
    """One mount of the running double: ``call(method, path, body)`` relative to the mount."""

    def __init__(self, double: Double, mount: str):
        self.double = double
        self.mount = mount
        self.backend = double.secrets.mount(mount).backend

    @property
    def state(self):
        return self.backend.state

    def call(self, method: str, path: str, body: Any = None, token: str | None = "root",
             headers: dict[str, str] | None = None, raw_body: str | None = None) -> requests.Response:
        hdrs = {"X-Vault-Token": token} if token else {}
        hdrs.update(headers or {})
        url = f"{self.double.secrets_url}/v1/{self.mount}/{path}"
        if raw_body is not None:
            return requests.request(method, url, data=raw_body, headers=hdrs, timeout=30)
        return requests.request(method, url, json=body, headers=hdrs, timeout=30)

    def ok(self, method: str, path: str, body: Any = None, **kw) -> dict[str, Any]:
        """The JSON envelope of a call that must answer 200."""
        resp = self.call(method, path, body, **kw)
        assert resp.status_code == 200, (resp.status_code, resp.text)
        return resp.json()

    def patch(self, path: str, body: dict[str, Any], content_type: str = "application/merge-patch+json"):
        return self.call("PATCH", path, headers={"Content-Type": content_type}, raw_body=json.dumps(body))

    def root(self, **body: Any) -> dict[str, Any]:
        """Generate an internal EC root (fast) unless told otherwise; returns ``data``."""
        kind = body.pop("kind", "internal")
        body.setdefault("key_type", "ec")
        if "not_after" not in body:
            body.setdefault("ttl", "8760h")
        return self.ok("POST", f"root/generate/{kind}", body)["data"]


def errors(resp: requests.Response) -> list[str]:
    """The ``errors`` list of an error answer (asserting the exact JSON content type)."""
    assert resp.headers["Content-Type"] == "application/json"
    return resp.json()["errors"]


def cert_of(pem: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem.encode())
