"""Key material of the PKI engine on ``cryptography``: the key types and sizes OpenBao accepts, generation
(through the key pool), type/size of a public key, the hash and padding a signing key uses, and
private keys in and out (PEM, DER, PKCS#8).
"""

from __future__ import annotations

import base64
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

from pytest_schedpki.secrets.framework.logical import user_error

from . import keypool

RSA_BITS = (2048, 3072, 4096, 8192)
EC_CURVES = {224: ec.SECP224R1, 256: ec.SECP256R1, 384: ec.SECP384R1, 521: ec.SECP521R1}
_CURVE_BITS = {"secp224r1": 224, "secp256r1": 256, "secp384r1": 384, "secp521r1": 521}

# ---------------------------------------------------------------------------------------------- keys


def validate_key_type_length(key_type: str, key_bits: int) -> int:
    """certutil ``ValidateKeyTypeLength`` after ``DefaultOrValueKeyBits``: returns the effective
    ``key_bits`` (rsa 0 -> 2048, ec 0 -> 256, ed25519 -> 0).

    Raises 400 ``unknown key type <t>``, ``RSA keys < 2048 bits are unsafe and not supported: got <n>``,
    ``unsupported bit length for RSA key: <n>``, ``unsupported bit length for EC key: <n>``.
    """
    if key_type == "rsa":
        key_bits = key_bits or 2048
        if key_bits < 2048:
            raise user_error(f"RSA keys < 2048 bits are unsafe and not supported: got {key_bits}")
        if key_bits not in RSA_BITS:
            raise user_error(f"unsupported bit length for RSA key: {key_bits}")
        return key_bits
    if key_type == "ec":
        key_bits = key_bits or 256
        if key_bits not in EC_CURVES:
            raise user_error(f"unsupported bit length for EC key: {key_bits}")
        return key_bits
    if key_type == "ed25519":
        return 0
    raise user_error(f"unknown key type {key_type}")


def generate_key(key_type: str, key_bits: int) -> tuple[Any, str, int]:
    """A fresh private key: ``(private_key, key_type, key_bits)`` with the effective bit length.

    ``key_type`` ``rsa`` (2048 for 0, 3072, 4096, 8192), ``ec`` (224, 256 for 0, 384, 521) or
    ``ed25519`` (bits ignored, reported as 0). Errors as :func:`validate_key_type_length` (400).
    Keys come from the process's :mod:`.keypool` (pre-generated RSA keys; deterministic keys when
    configured).
    """
    key_bits = validate_key_type_length(key_type, key_bits)
    if key_type == "rsa":
        return keypool.current().rsa(key_bits), "rsa", key_bits
    if key_type == "ec":
        return keypool.current().ec(EC_CURVES[key_bits]()), "ec", key_bits
    return keypool.current().ed25519(), "ed25519", 0


def key_type_of(public_key: Any) -> tuple[str, int]:
    """``("rsa"|"ec"|"ed25519", bits)`` of a public (or private) key; ed25519 bits are 0.
    Other key kinds give ``("", 0)``."""
    if isinstance(public_key, (rsa.RSAPublicKey, rsa.RSAPrivateKey)):
        return "rsa", public_key.key_size
    if isinstance(public_key, (ec.EllipticCurvePublicKey, ec.EllipticCurvePrivateKey)):
        return "ec", _CURVE_BITS.get(public_key.curve.name, public_key.curve.key_size)
    if isinstance(public_key, (ed25519.Ed25519PublicKey, ed25519.Ed25519PrivateKey)):
        return "ed25519", 0
    return "", 0


def public_keys_equal(a: Any, b: Any) -> bool:
    """Whether two public keys are the same key (compared by their SubjectPublicKeyInfo DER)."""
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    return a.public_bytes(serialization.Encoding.DER, fmt) == b.public_bytes(serialization.Encoding.DER, fmt)


def signature_hash(signing_key: Any, signature_bits: int = 0) -> hashes.HashAlgorithm | None:
    """The digest for a signature by ``signing_key``: RSA SHA-256 unless ``signature_bits`` is 384/512;
    EC the given bits, else curve-matched (P-224/P-256 SHA-256, P-384 SHA-384, P-521 SHA-512);
    ed25519 ``None``."""
    by_bits = {256: hashes.SHA256, 384: hashes.SHA384, 512: hashes.SHA512}
    if isinstance(signing_key, ed25519.Ed25519PrivateKey):
        return None
    if signature_bits in by_bits:
        return by_bits[signature_bits]()
    if isinstance(signing_key, ec.EllipticCurvePrivateKey):
        bits = _CURVE_BITS.get(signing_key.curve.name, 256)
        return hashes.SHA384() if bits == 384 else hashes.SHA512() if bits == 521 else hashes.SHA256()
    return hashes.SHA256()


def _pss_padding(signing_key: Any, use_pss: bool, algorithm: hashes.HashAlgorithm | None) -> Any:
    if use_pss and isinstance(signing_key, rsa.RSAPrivateKey) and algorithm is not None:
        return padding.PSS(mgf=padding.MGF1(algorithm), salt_length=padding.PSS.DIGEST_LENGTH)
    return None


def _private_format(key: Any, pkcs8: bool) -> serialization.PrivateFormat:
    if pkcs8 or isinstance(key, ed25519.Ed25519PrivateKey):
        return serialization.PrivateFormat.PKCS8
    return serialization.PrivateFormat.TraditionalOpenSSL


def private_key_pem(key: Any, pkcs8: bool = False) -> str:
    """PEM of a private key, no trailing newline: ``RSA PRIVATE KEY`` (PKCS#1) / ``EC PRIVATE KEY``
    (SEC1) unless ``pkcs8``; ed25519 is always PKCS#8 ``PRIVATE KEY``."""
    raw = key.private_bytes(serialization.Encoding.PEM, _private_format(key, pkcs8), serialization.NoEncryption())
    return raw.decode().rstrip("\n")


def private_key_der_b64(key: Any, pkcs8: bool = False) -> str:
    """Base64 DER of a private key in the same formats as :func:`private_key_pem`."""
    raw = key.private_bytes(serialization.Encoding.DER, _private_format(key, pkcs8), serialization.NoEncryption())
    return base64.b64encode(raw).decode()


def private_key_type(key: Any) -> str:
    """``private_key_type`` as OpenBao reports it: ``rsa``, ``ec`` or ``ed25519``."""
    return key_type_of(key)[0]


def load_private_key(der_or_pem: bytes) -> Any:
    """A private key from PEM or DER in PKCS#1, SEC1 or PKCS#8 (unencrypted); ``ValueError`` otherwise."""
    loader = serialization.load_pem_private_key if der_or_pem.lstrip().startswith(b"-----") \
        else serialization.load_der_private_key
    try:
        return loader(der_or_pem, password=None)
    except UnsupportedAlgorithm as exc:  # an unknown key algorithm or curve is a parse failure too
        raise ValueError(str(exc)) from None
