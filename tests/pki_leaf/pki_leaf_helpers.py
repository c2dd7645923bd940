"""Helpers shared by the leaf tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import datetime
import ipaddress

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

UTC = datetime.timezone.utc
T0 = datetime.datetime(2030, 6, 1, 12, 0, 0, tzinfo=UTC)
HOUR = 3600


class Client:
    """``call(method, path, body=None, headers=None)`` against ``/v1/<path>`` with the root token."""

    def __init__(self, double):
        self.double = double
        self.url = double.secrets_url + "/v1/"

    def call(self, method, path, body=None, headers=None, token="root"):
        h = {"X-Vault-Token": token} if token else {}
        h.update(headers or {})
        return requests.request(method, self.url + path, json=body, headers=h)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, body if body is not None else {}, **kw)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def state(self, mount="pki"):
        return self.double.secrets.mount(mount).backend.state

    def advance(self, seconds):
        self.double.manual_clock.advance(seconds)


def cert_of(text: str) -> x509.Certificate:
    """Parse a PEM certificate text (the first block)."""
    return x509.load_pem_x509_certificate(text.encode())


def make_csr(cn=None, dns=(), emails=(), ips=(), uris=(), key=None, basic_constraints=False, user_id=None):
    """A PEM CSR (EC P-256 unless ``key`` is given) with the given subject CN, SANs and extras."""
    key = key or ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else []
    if user_id:
        attrs.append(x509.NameAttribute(NameOID.USER_ID, user_id))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs))
    sans = ([x509.DNSName(d) for d in dns] + [x509.RFC822Name(e) for e in emails]
            + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips] + [x509.UniformResourceIdentifier(u) for u in uris])
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if basic_constraints:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def issuer_cert(client: Client, name: str = "root-a", mount: str = "pki") -> x509.Certificate:
    """The certificate of the issuer named ``name`` in ``mount``."""
    return next(i for i in client.state(mount).issuers.values() if i.issuer_name == name).certificate
