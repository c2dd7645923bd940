"""Helpers of the Enterprise emulation tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pytest_schedpki.secrets.engines.pki.enterprise.external_policy_client import certificate_template

ROOT = {"X-Vault-Token": "root"}
UNSUPPORTED = {"errors": ["1 error occurred:\n\t* unsupported path\n\n"]}


class Client:
    """``call(method, path, body=None, token="root")`` against ``/v1/<path>``."""

    def __init__(self, double):
        self.double = double
        self.url = double.secrets_url + "/v1/"

    def call(self, method, path, body=None, token="root", headers=None):
        h = {"X-Vault-Token": token} if token else {}
        h.update(headers or {})
        return requests.request(method, self.url + path, json=body, headers=h)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, body if body is not None else {}, **kw)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def list(self, path, **kw):
        return self.call("LIST", path, **kw)

    @property
    def backend(self):
        return self.double.secrets.mount("pki").backend

    def issuer(self, name):
        return next(i for i in self.backend.state.issuers.values() if i.issuer_name == name)


def cert_of(text: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(text.encode())


def make_csr(cn="client.example.com", key=None) -> tuple[str, object]:
    """A PEM CSR (EC P-256 unless ``key``) and its key."""
    key = key or ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder()
           .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
           .sign(key, hashes.SHA256()))
    return csr.public_bytes(serialization.Encoding.PEM).decode(), key


def cn_of(cert: x509.Certificate) -> str:
    return cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def simple_policy(issuer_ref=None, warnings=(), store=False, lease=False, cn=None, dns=None, extensions=None,
                  ttl=3600, seen=None):
    """A policy callable that approves everything: CN/DNS SAN from ``common_name`` of the request
    (or ``cn``/``dns``), the requested issuer unless ``issuer_ref``; records requests in ``seen``."""

    def service(request):
        if seen is not None:
            seen.append(request)
        user = request["user_request_key_values"]
        name = cn or user.get("common_name", "anonymous")
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        sans = [x509.DNSName(d) for d in (dns if dns is not None else [name])]
        template = certificate_template(request, subject=subject, sans=sans, ttl=ttl, extensions=extensions)
        return {"request_uuid": request["request_uuid"], "certificate": template, "warnings": list(warnings),
                "issuer_ref": issuer_ref or request["vault_request_values"]["requested_issuer_id"],
                "store_certificate": store, "generate_lease": lease}

    return service


class TinyCA:
    """A throwaway CA for TLS-related configuration tests: ``cert_pem`` and ``leaf(cn)`` ->
    ``(certificate PEM, PKCS#8 key PEM)`` of a non-CA leaf with a DNS SAN of ``cn``."""

    def __init__(self):
        import datetime

        self._datetime = datetime
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tiny test CA")])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(self.name).issuer_name(self.name)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.cert_pem = self.cert.public_bytes(serialization.Encoding.PEM).decode()

    def leaf(self, cn):
        datetime = self._datetime
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
                .issuer_name(self.name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(cn)]), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .sign(self.key, hashes.SHA256()))
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
        return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem
