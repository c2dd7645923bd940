"""TLS material for the double's own HTTPS listeners (not the PKI engine's certificates).

One ECDSA P-256 CA and one server certificate for ``localhost``, ``127.0.0.1`` and ``::1`` (plus
the listen host), both valid from 2000-01-01 to 2999-12-31 so that a test frozen at any date by
freezegun still completes the handshake (OpenSSL checks validity against the real clock, but
also against nothing else the test can move). Files are written to a private temporary folder.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOT_BEFORE = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
NOT_AFTER = datetime.datetime(2999, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class TLSMaterial:
    """Paths of the PEM files (``ca_path`` is what clients trust: ``VAULT_CACERT``, ``NOMAD_CACERT``,
    ``requests``' ``verify=``) and the two contexts."""

    directory: str
    ca_path: str
    cert_path: str
    key_path: str

    def server_context(self) -> ssl.SSLContext:
        """An SSLContext for the listeners (TLS 1.2+)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_path, self.key_path)
        return context

    def client_context(self) -> ssl.SSLContext:
        """An SSLContext that trusts the double's CA (hostname checking on)."""
        return ssl.create_default_context(cafile=self.ca_path)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pytest-schedpki"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def create_tls_material(host: str = "127.0.0.1", directory: str | None = None) -> TLSMaterial:
    """Generate the CA and server certificate; write ``ca.pem``, ``server.pem``, ``server-key.pem``
    into ``directory`` (a new private temporary folder by default)."""
    directory = directory or tempfile.mkdtemp(prefix="schedpki-tls-")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("pytest-schedpki test CA")
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                    x509.IPAddress(ipaddress.ip_address("::1"))]
    try:
        address = ipaddress.ip_address(host)
        if x509.IPAddress(address) not in sans:
            sans.append(x509.IPAddress(address))
    except ValueError:
        if host != "localhost":
            sans.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = {name: os.path.join(directory, name) for name in ("ca.pem", "server.pem", "server-key.pem")}
    with open(paths["ca.pem"], "wb") as fh:
        fh.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.pem"], "wb") as fh:
        fh.write(cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM))
    fd = os.open(paths["server-key.pem"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return TLSMaterial(directory, paths["ca.pem"], paths["server.pem"], paths["server-key.pem"])
