"""Helpers of the privileged-signing tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
from collections.abc import Iterable, Sequence

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

UTC = datetime.timezone.utc
T0 = datetime.datetime(2031, 3, 1, 8, 0, 0, tzinfo=UTC)
HOUR = 3600
UID = x509.ObjectIdentifier("0.9.2342.19200300.100.1.1")
UPN = "1.3.6.1.4.1.311.20.2.3"
AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of certificates. "
               "Consider updating /config/urls or the newly generated issuer with this information.")
BC_IGNORED = "specified CSR contained a Basic Constraints extension that was ignored during issuance"
PATH_ZERO = ("Max path length of the signed certificate is zero. This certificate cannot be used to issue intermediate "
             "CA certificates.")
BEYOND = ("The expiration time for the signed certificate is after the CA's expiration time. If the new certificate is "
          "not treated as a root, validation paths with the certificate past the issuing CA's expiration time will fail.")


class Client:
    """``post``/``get``/``call`` against ``/v1/<path>`` of the double (root token unless ``token``)."""

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

    def ok(self, path, body=None, **kw) -> dict:
        """POST and require a 200; returns the JSON body."""
        r = self.post(path, body, **kw)
        assert r.status_code == 200, r.text
        return r.json()

    def error(self, path, body=None, status=400, **kw) -> list:
        """POST and require ``status``; returns the ``errors`` list."""
        r = self.post(path, body, **kw)
        assert r.status_code == status, r.text
        assert r.headers["Content-Type"] == "application/json" and set(r.json()) == {"errors"}
        return r.json()["errors"]

    def backend(self, mount="pki"):
        return self.double.secrets.mount(mount).backend


def cert_of(text: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(text.encode())


def ext(cert: x509.Certificate, kind):
    """The extension of class ``kind`` or ``None``."""
    try:
        return cert.extensions.get_extension_for_class(kind)
    except x509.ExtensionNotFound:
        return None


def ext_names(cert: x509.Certificate) -> list[str]:
    """Extensions in certificate order as ``name:critical|non-critical``."""
    return [f"{e.oid._name}:{'critical' if e.critical else 'non-critical'}" for e in cert.extensions]


def name(*pairs: tuple[x509.ObjectIdentifier, str]) -> x509.Name:
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in pairs])


def cn_name(cn: str) -> x509.Name:
    return name((NameOID.COMMON_NAME, cn))


def utf8_other(oid: str, value: str) -> x509.OtherName:
    raw = value.encode()
    return x509.OtherName(x509.ObjectIdentifier(oid), bytes([0x0C, len(raw)]) + raw)


def make_csr(key=None, cn: str | None = "csr.example.com", subject: x509.Name | None = None,
             sans: Sequence[x509.GeneralName] = (), exts: Iterable[tuple[object, bool]] = (),
             algorithm=None) -> str:
    """A PEM CSR (EC P-256 unless ``key``) with a subject, SANs and ``(extension, critical)`` pairs."""
    key = key or ec.generate_private_key(ec.SECP256R1())
    subject = subject if subject is not None else (cn_name(cn) if cn else x509.Name([]))
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    for extension, critical in exts:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(key, algorithm or hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def self_signed(key, cn: str = "Self Issued CA", subject: x509.Name | None = None, ca: bool | None = True,
                path_length: int | None = None, exts: Iterable[tuple[object, bool]] = (), ski: bool = True,
                algorithm: hashes.HashAlgorithm | None | str = "sha256", days: int = 365,
                serial: int | None = None) -> str:
    """A self-signed certificate (PEM) valid from T0 - 1 min for ``days``; BasicConstraints unless
    ``ca`` is None; ``algorithm`` a hash (default SHA-256), None for Ed25519 keys."""
    subject = subject if subject is not None else cn_name(cn)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
               .serial_number(serial or x509.random_serial_number())
               .not_valid_before(T0 - datetime.timedelta(minutes=1)).not_valid_after(T0 + datetime.timedelta(days=days)))
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=path_length), critical=True)
    for extension, critical in exts:
        builder = builder.add_extension(extension, critical=critical)
    if ski:
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    if algorithm == "sha256":
        algorithm = hashes.SHA256()
    return builder.sign(key, algorithm).public_bytes(serialization.Encoding.PEM).decode()


def ip(text: str) -> x509.IPAddress:
    return x509.IPAddress(ipaddress.ip_address(text))


def sha1_ski(public_key) -> bytes:
    """RFC 5280 method 1 (what certutil computes for signed certificates)."""
    return x509.SubjectKeyIdentifier.from_public_key(public_key).digest


def truncated_sha256_ski(public_key) -> bytes:
    """RFC 7093 method 1 (what Go 1.25+ generates for a CA template without SKI): the leftmost 160
    bits of SHA-256 over the subjectPublicKey bits (the EC point / the PKCS#1 RSA key)."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    if isinstance(public_key, rsa.RSAPublicKey):
        bits = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
    else:
        bits = public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return hashlib.sha256(bits).digest()[:20]
