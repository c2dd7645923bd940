"""Keys, CSRs and certificates for the differential fuzzer, built once per process.

Key generation is slow, so the keys are made once (lazily) and CSRs are signed from them at draw
time. The pool covers every key type and curve a client might put in a CSR, including ones Go
refuses (secp256k1, Ed448, RSA 1024).
"""

from __future__ import annotations

import base64
import datetime
import functools
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.x509.oid import NameOID

KEY_KINDS = ("ec-p256", "ec-p384", "ec-p521", "ec-secp256k1", "rsa-2048", "rsa-1024", "ed25519", "ed448")


@functools.cache
def key(kind: str) -> Any:
    """The process-wide private key of ``kind`` (one of :data:`KEY_KINDS`)."""
    if kind.startswith("ec-"):
        curve = {"p256": ec.SECP256R1, "p384": ec.SECP384R1, "p521": ec.SECP521R1, "secp256k1": ec.SECP256K1}
        return ec.generate_private_key(curve[kind[3:]]())
    if kind.startswith("rsa-"):
        return rsa.generate_private_key(65537, int(kind[4:]))
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    return ed448.Ed448PrivateKey.generate()


def _hash_for(private_key: Any) -> hashes.HashAlgorithm | None:
    return None if isinstance(private_key, (ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)) else hashes.SHA256()


def key_pem(kind: str) -> str:
    """PKCS#8 PEM of :func:`key`."""
    return key(kind).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()).decode()


@functools.lru_cache(maxsize=512)
def csr_pem(kind: str, cn: str | None, dns: tuple[str, ...] = (), ips: tuple[str, ...] = (),
            uris: tuple[str, ...] = (), basic_ca: bool | None = None, key_usage: tuple[str, ...] = ()) -> str:
    """A PEM CSR signed by :func:`key` ``(kind)`` with the given subject CN, SANs and extensions
    (``basic_ca`` adds BasicConstraints; ``key_usage`` names KeyUsage flags)."""
    import ipaddress

    builder = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else []))
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    names += [x509.UniformResourceIdentifier(u) for u in uris]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    if basic_ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=basic_ca, path_length=None), critical=True)
    if key_usage:
        flags = {f: f in key_usage for f in ("digital_signature", "content_commitment", "key_encipherment",
                                             "data_encipherment", "key_agreement", "key_cert_sign", "crl_sign",
                                             "encipher_only", "decipher_only")}
        if not flags["key_agreement"]:
            flags["encipher_only"] = flags["decipher_only"] = False
        builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
    private_key = key(kind)
    return builder.sign(private_key, _hash_for(private_key)).public_bytes(serialization.Encoding.PEM).decode()


@functools.lru_cache(maxsize=8)
def foreign_cert(kind: str, cn: str, expired: bool, ca: bool) -> str:
    """A self-signed certificate no server issued (``expired``: validity ended in 2001)."""
    private_key = key(kind)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    start = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc) if expired else \
        datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
    end = datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc) if expired else \
        start + datetime.timedelta(days=365)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private_key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(private_key.public_key()), critical=False))
    return builder.sign(private_key, _hash_for(private_key)).public_bytes(serialization.Encoding.PEM).decode()


def damaged_cert(position: int, value: int) -> str:
    """A foreign CA certificate (PEM) whose DER has the byte at ``position`` (taken modulo the DER's
    length) replaced by ``value``: damage anywhere in the structure, for Go's parse texts."""
    der = bytearray(base64.b64decode("".join(foreign_cert("ec-p256", "Foreign CA", False, True).splitlines()[1:-1])))
    der[position % len(der)] = value
    return ("-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(bytes(der)).decode()
            + "-----END CERTIFICATE-----\n")
