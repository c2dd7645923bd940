"""Helpers of the tidy and issuer-revocation tests: :class:`Mount` (one PKI mount of the running
double, over HTTP), constants and CRL accessors."""

from __future__ import annotations

import datetime
import json
from typing import Any

import requests
from cryptography import x509

UTC = datetime.timezone.utc
T0 = datetime.datetime(2030, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
T0_TEXT = "2030-01-02T03:04:05.123456Z"
HOUR = 3600
MULTI = "1 error occurred:\n\t* {}\n\n"
STARTED = ("Tidy operation successfully started. Any information from the operation will be printed to OpenBao's "
           "server logs.")
OPERATIONS = ("tidy_cert_store / tidy_revoked_certs / tidy_invalid_certs / tidy_revoked_cert_issuer_associations / "
              "tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_acme")
NOTHING = f"Manual tidy requested but no tidy operations were set. Enable at least one tidy operation to be run ({OPERATIONS})."
STATUS_KEYS = sorted([
    "acme_account_deleted_count", "acme_account_revoked_count", "acme_account_safety_buffer",
    "acme_orders_deleted_count", "cert_store_deleted_count", "current_cert_store_count", "current_revoked_cert_count",
    "error", "internal_backend_uuid", "issuer_safety_buffer", "message", "missing_issuer_cert_count", "page_size",
    "pause_duration", "revoked_cert_deleted_count", "revoked_safety_buffer", "safety_buffer", "state", "tidy_acme",
    "tidy_cert_store", "tidy_expired_issuers", "tidy_invalid_certs", "tidy_move_legacy_ca_bundle",
    "tidy_revoked_cert_issuer_associations", "tidy_revoked_certs", "time_finished", "time_started",
    "total_acme_account_count"])


class Mount:
    """One PKI mount of the running double: ``call(method, path, body)`` relative to the mount."""

    def __init__(self, double, name: str):
        self.double = double
        self.name = name
        self.root: dict[str, Any] = {}

    @property
    def backend(self):
        return self.double.secrets.mount(self.name).backend

    def call(self, method: str, path: str, body: Any = None, token: str | None = "root") -> requests.Response:
        headers = {"X-Vault-Token": token} if token else {}
        return requests.request(method, f"{self.double.secrets_url}/v1/{self.name}/{path}", json=body,
                                headers=headers, timeout=30)

    def patch(self, path: str, body: dict[str, Any]) -> requests.Response:
        """A JSON merge-patch of ``path``."""
        return requests.patch(f"{self.double.secrets_url}/v1/{self.name}/{path}", data=json.dumps(body), timeout=30,
                              headers={"X-Vault-Token": "root", "Content-Type": "application/merge-patch+json"})

    def ok(self, method: str, path: str, body: Any = None, **kw) -> dict[str, Any]:
        """The JSON envelope of a call that must answer 200."""
        resp = self.call(method, path, body, **kw)
        assert resp.status_code == 200, (resp.status_code, resp.text)
        assert resp.headers["Content-Type"] == "application/json"
        return resp.json()

    def fails(self, method: str, path: str, body: Any, status: int) -> list[str]:
        """The ``errors`` of a call that must answer ``status`` (JSON, no other key)."""
        resp = self.call(method, path, body)
        assert resp.status_code == status, (resp.status_code, resp.text)
        assert resp.headers["Content-Type"] == "application/json"
        assert list(resp.json()) == ["errors"]
        return resp.json()["errors"]

    def tidy(self, **body: Any) -> requests.Response:
        """``POST tidy`` that must be accepted (202)."""
        resp = self.call("POST", "tidy", body)
        assert resp.status_code == 202, (resp.status_code, resp.text)
        return resp

    def status(self) -> dict[str, Any]:
        return self.ok("GET", "tidy-status")["data"]

    def issue(self, role: str = "web", **body: Any) -> dict[str, Any]:
        body.setdefault("common_name", "a.example.com")
        return self.ok("POST", f"issue/{role}", body)["data"]

    def revoke(self, serial: str) -> dict[str, Any]:
        return self.ok("POST", "revoke", {"serial_number": serial})["data"]

    def listed(self, path: str) -> list[str]:
        """``LIST <path>`` keys; ``[]`` for the empty list's 404."""
        resp = self.call("LIST", path)
        if resp.status_code == 404:
            assert resp.json() == {"errors": []}
            return []
        assert resp.status_code == 200, (resp.status_code, resp.text)
        return resp.json()["data"]["keys"]

    def crl(self, ref: str = "default") -> x509.CertificateRevocationList:
        resp = self.call("GET", f"issuer/{ref}/crl/der", token=None)
        assert resp.status_code == 200, (ref, resp.status_code, resp.text)
        return x509.load_der_x509_crl(resp.content)


def crl_number(crl: x509.CertificateRevocationList) -> int:
    return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


def crl_entries(crl: x509.CertificateRevocationList) -> dict[int, datetime.datetime]:
    """``{serial: revocation date}`` of a CRL."""
    return {e.serial_number: e.revocation_date_utc for e in crl}


def serial_int(colon: str) -> int:
    return int(colon.replace(":", ""), 16)


def not_after(pem: str) -> datetime.datetime:
    return x509.load_pem_x509_certificate(pem.encode()).not_valid_after_utc
