"""Helpers of the revocation tests: :class:`Mount` (one PKI mount of the running double, over HTTP),
key/certificate builders and CRL accessors."""

from __future__ import annotations

import datetime
import json
from typing import Any

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

UTC = datetime.timezone.utc
T0 = datetime.datetime(2030, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
HOUR = 3600
MULTI = "1 error occurred:\n\t* {}\n\n"


class Mount:
    """One PKI mount of the running double: ``call(method, path, body)`` relative to the mount."""

    def __init__(self, double, name: str):
        self.double = double
        self.name = name

    @property
    def backend(self):
        return self.double.secrets.mount(self.name).backend

    @property
    def state(self):
        return self.backend.state

    def call(self, method: str, path: str, body: Any = None, token: str | None = "root",
             params: dict | None = None) -> requests.Response:
        headers = {"X-Vault-Token": token} if token else {}
        url = f"{self.double.secrets_url}/v1/{self.name}/{path}"
        return requests.request(method, url, json=body, headers=headers, params=params, timeout=30)

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

    def issue(self, role: str = "web", **body: Any) -> dict[str, Any]:
        body.setdefault("common_name", "a.example.com")
        return self.ok("POST", f"issue/{role}", body)["data"]

    def revoke(self, **body: Any) -> dict[str, Any]:
        return self.ok("POST", "revoke", body)

    def crl(self, path: str = "crl") -> x509.CertificateRevocationList:
        """A CRL served as DER (``crl``, ``issuer/<ref>/crl/der``, ``crl/delta``)."""
        resp = self.call("GET", path, token=None)
        assert resp.status_code == 200, (path, resp.status_code, resp.text)
        return x509.load_der_x509_crl(resp.content)

    def revoked_list(self) -> list[str] | None:
        resp = self.call("LIST", "certs/revoked")
        return resp.json()["data"]["keys"] if resp.status_code == 200 else None


def crl_number(crl: x509.CertificateRevocationList) -> int:
    return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


def entries(crl: x509.CertificateRevocationList) -> dict[int, datetime.datetime]:
    """``{serial: revocation date}`` of a CRL."""
    return {e.serial_number: e.revocation_date_utc for e in crl}


def serial_int(colon: str) -> int:
    return int(colon.replace(":", ""), 16)


def cert_of(pem: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem.encode())


def key_pem(key, fmt: str = "traditional") -> str:
    """A private key as PEM: ``traditional`` (PKCS#1 / SEC1) or ``pkcs8`` (always for Ed25519/X25519)."""
    pkcs8 = fmt == "pkcs8" or not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey))
    form = serialization.PrivateFormat.PKCS8 if pkcs8 else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption()).decode()


def ec_key(curve=ec.SECP256R1):
    return ec.generate_private_key(curve())


def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def ed_key():
    return ed25519.Ed25519PrivateKey.generate()


def signed_cert(signer_key, issuer_name: x509.Name, *, serial: int | None = None, cn: str = "forged.example.com",
                not_before: datetime.datetime = T0 - datetime.timedelta(hours=1),
                not_after: datetime.datetime = T0 + datetime.timedelta(hours=1), ca: bool = False,
                public_key=None) -> x509.Certificate:
    """A certificate signed by ``signer_key`` under ``issuer_name`` (any DN)."""
    builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, cn)]))
               .issuer_name(issuer_name).public_key(public_key or ec_key().public_key())
               .serial_number(serial or x509.random_serial_number()).not_valid_before(not_before)
               .not_valid_after(not_after))
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    return builder.sign(signer_key, None if isinstance(signer_key, ed25519.Ed25519PrivateKey) else hashes.SHA256())


def pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()
