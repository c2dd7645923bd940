"""TLS material for the double's own HTTPS listeners (not the PKI engine's certificates).

One ECDSA P-256 CA and one server certificate for ``localhost``, ``127.0.0.1`` and ``::1`` (plus
the listen host), both valid from 2000-01-01 to 2999-12-31 so that a test frozen at any date by
freezegun still completes the handshake (OpenSSL checks validity against the real clock, but
also against nothing else the test can move).

Only public material stays on disk: ``ca.pem`` (what clients trust) and ``server.pem`` (the server
certificate and the CA), in a private folder (mode 0700) under ``$XDG_RUNTIME_DIR`` when the system
has one (a per-user folder, not shared temporary space), else under the temporary directory. The
server's private key lives in memory; :meth:`TLSMaterial.server_context` writes it to a 0600 file in
that folder only for the instant OpenSSL reads it. :meth:`TLSMaterial.cleanup` removes the folder
(``schedpki serve`` on stop, the pytest plugin at session end, and an ``atexit`` hook otherwise).
"""

from __future__ import annotations

import atexit
import datetime
import ipaddress
import os
import shutil
import ssl
import tempfile
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOT_BEFORE = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
NOT_AFTER = datetime.datetime(2999, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class TLSMaterial:
    """Paths of the PEM files (``ca_path`` is what clients trust: ``VAULT_CACERT``, ``NOMAD_CACERT``,
    ``requests``' ``verify=``; ``cert_path`` holds the server certificate followed by the CA) in
    ``directory``, the server's private key in memory, and the two contexts."""

    directory: str
    ca_path: str
    cert_path: str
    key_pem: bytes = field(repr=False, default=b"")
    owned: bool = True  # the directory was created here: cleanup() removes it

    def server_context(self) -> ssl.SSLContext:
        """An SSLContext for the listeners (TLS 1.2+). The key touches the disk (a 0600 file in the
        private folder) only while OpenSSL loads it."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        fd, key_path = tempfile.mkstemp(prefix="key-", suffix=".pem", dir=self.directory)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(self.key_pem)
            context.load_cert_chain(self.cert_path, key_path)
        finally:
            os.unlink(key_path)
        return context

    def client_context(self) -> ssl.SSLContext:
        """An SSLContext that trusts the double's CA (hostname checking on)."""
        return ssl.create_default_context(cafile=self.ca_path)

    def cleanup(self) -> None:
        """Remove the folder of the PEM files when it was created by :func:`create_tls_material`
        (idempotent; a folder passed in by the caller is left alone)."""
        if self.owned:
            shutil.rmtree(self.directory, ignore_errors=True)


def private_directory(prefix: str = "schedpki-tls-") -> str:
    """A new folder only this user can read (mode 0700): under ``$XDG_RUNTIME_DIR`` (per-user, not
    shared temporary space) when that is a folder of ours, else under :func:`tempfile.gettempdir`.
    It is removed when the process exits, if nothing removed it before."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = None
    if runtime:
        try:
            info = os.stat(runtime)
            if os.path.isdir(runtime) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0:
                base = runtime
        except OSError:
            base = None
    directory = tempfile.mkdtemp(prefix=prefix, dir=base)
    atexit.register(shutil.rmtree, directory, True)
    return directory


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pytest-schedpki"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def create_tls_material(host: str = "127.0.0.1", directory: str | None = None) -> TLSMaterial:
    """Generate the CA and server certificate; write ``ca.pem`` and ``server.pem`` into ``directory``
    (default: a new :func:`private_directory`, removed by :meth:`TLSMaterial.cleanup` or at exit).
    The private key stays in memory."""
    owned = directory is None
    directory = directory or private_directory()
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
    paths = {name: os.path.join(directory, name) for name in ("ca.pem", "server.pem")}
    with open(paths["ca.pem"], "wb") as fh:
        fh.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.pem"], "wb") as fh:
        fh.write(cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return TLSMaterial(directory, paths["ca.pem"], paths["server.pem"], key_pem, owned)
