"""What the ``acme`` family sends, built the same way for each side: flattened JWS requests, valid
or damaged by a :data:`.acme_gen.JWS_VARIANTS` variant, EAB bindings, key-change inner JWS, CSRs.

The account keys (:data:`KEYS`) are made once per process and shared by both sides, so an answer
that shows a key or a thumbprint is the same on both.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID
from jwt.algorithms import get_default_algorithms

from pytest_schedpki.acme.client import b64url, jwk_of

#: account keys by index: EC P-256, EC P-384, RSA 2048, Ed25519
KEYS = [ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP384R1()),
        rsa.generate_private_key(public_exponent=65537, key_size=2048), ed25519.Ed25519PrivateKey.generate()]
#: certificate keys by index (CSRs): EC P-256, RSA 2048
CERT_KEYS = [ec.generate_private_key(ec.SECP256R1()), rsa.generate_private_key(public_exponent=65537, key_size=2048)]
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
BOGUS_NONCE = "bm90LWEtbm9uY2UtZnJvbS10aGlzLXNlcnZlcg"


def alg_of(key: Any) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {256: "ES256", 384: "ES384", 521: "ES512"}[key.curve.key_size]
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    return "EdDSA"


def _sign(alg: str, signing_input: bytes, key: Any) -> bytes:
    if alg == "none":
        return b""
    if alg == "HS256":
        return hmac.new(b"not-the-account-key", signing_input, hashlib.sha256).digest()
    return get_default_algorithms()[alg].sign(signing_input, key)


def payload_bytes(payload: Any) -> bytes:
    """``None``: POST-as-GET's empty payload; bytes as they are; anything else as JSON."""
    if payload is None:
        return b""
    if isinstance(payload, bytes):
        return payload
    return json.dumps(payload).encode()


def jws(variant: str, key: Any, url: str, payload: Any, nonce: str | None, kid: str | None,
        wrong_url: str, unknown_kid: str) -> dict[str, str]:
    """The flattened JWS of ``payload`` signed with ``key`` for ``url``: ``kid`` when given (else the
    ``jwk``), damaged by ``variant`` (nonce and ``kid`` variants are the caller's: it passes the
    nonce and kid to use)."""
    alg = alg_of(key)
    header: dict[str, Any] = {"alg": alg, "url": wrong_url if variant == "wrong_url" else url}
    if nonce is not None:
        header["nonce"] = nonce
    if variant == "unknown_kid":
        header["kid"] = unknown_kid
    elif kid is not None and variant != "use_jwk":
        header["kid"] = kid
    if "kid" not in header or variant == "jwk_and_kid":
        header["jwk"] = jwk_of(key)
    sign_alg = alg
    if variant == "alg_none":
        header["alg"] = sign_alg = "none"
    elif variant == "alg_hs256":
        header["alg"] = sign_alg = "HS256"
    elif variant == "alg_mismatch":
        header["alg"] = "ES256" if alg in ("RS256", "EdDSA") else "RS256"
    protected, encoded = b64url(json.dumps(header)), b64url(payload_bytes(payload))
    signature = bytearray(_sign(sign_alg, f"{protected}.{encoded}".encode(), key))
    if variant == "bad_signature" and signature:
        signature[len(signature) // 2] ^= 0x55
    return {"protected": protected, "payload": encoded, "signature": b64url(bytes(signature))}


def eab_binding(kind: str, account_key: Any, url: str, eab: tuple[str, str] | None) -> dict[str, str] | None:
    """The ``externalAccountBinding`` of an EAB kind (:data:`.acme_gen.EAB_KINDS`) with the side's
    ``(id, base64url HMAC key)``; ``None`` for ``none``."""
    if kind == "none":
        return None
    key_id, secret_text = eab if eab else (ZERO_UUID, b64url(b"\x00" * 32))
    if kind == "unknown_kid":
        key_id = ZERO_UUID
    secret = base64.urlsafe_b64decode(secret_text + "=" * (-len(secret_text) % 4))
    if kind == "bad_mac":
        secret = secret[::-1]
    bound = KEYS[(KEYS.index(account_key) + 1) % len(KEYS)] if kind == "other_key" else account_key
    protected = b64url(json.dumps({"alg": "HS256", "kid": key_id, "url": url}))
    payload = b64url(json.dumps(jwk_of(bound)))
    mac = hmac.new(secret, f"{protected}.{payload}".encode(), hashlib.sha256).digest()
    return {"protected": protected, "payload": payload, "signature": b64url(mac)}


def key_change_inner(kind: str, new_key: Any, old_key: Any, url: str, kid: str) -> dict[str, str]:
    """RFC 8555 7.3.5's inner JWS (signed by the new key, ``jwk``, no nonce) with an ``inner`` kind:
    ``ok``, ``wrong_account``, ``wrong_old_key``, ``nonce_inside``."""
    header: dict[str, Any] = {"alg": alg_of(new_key), "jwk": jwk_of(new_key), "url": url}
    if kind == "nonce_inside":
        header["nonce"] = BOGUS_NONCE
    account = kid + "x" if kind == "wrong_account" else kid
    old = KEYS[(KEYS.index(old_key) + 2) % len(KEYS)] if kind == "wrong_old_key" else old_key
    protected = b64url(json.dumps(header))
    payload = b64url(json.dumps({"account": account, "oldKey": jwk_of(old)}))
    signature = get_default_algorithms()[header["alg"]].sign(f"{protected}.{payload}".encode(), new_key)
    return {"protected": protected, "payload": payload, "signature": b64url(signature)}


def csr(kind: str, names: list[str], ips: list[str], account_key: Any) -> bytes | str | None:
    """The ``csr`` value of a finalize (:data:`.acme_gen.CSR_KINDS`): base64url DER, a damaged string,
    or ``None`` to leave the field out."""
    if kind == "missing":
        return None
    if kind == "empty_string":
        return ""
    if kind == "garbage":
        return b64url(b"\x30\x03\x02\x01\x00not a csr")
    key = {"other_key_type": CERT_KEYS[1], "account_key": account_key}.get(kind, CERT_KEYS[0])
    sans: list[x509.GeneralName] = []
    if kind != "cn_only" and kind != "no_names":
        sans = [x509.DNSName(n) for n in names if n]
        sans += [x509.IPAddress(__import__("ipaddress").ip_address(i)) for i in ips if _is_ip(i)]
        if kind == "extra_name":
            sans.append(x509.DNSName("extra.example.com"))
    cn = [x509.NameAttribute(NameOID.COMMON_NAME, names[0])] if kind == "cn_only" and names and names[0] else []
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(cn))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return b64url(builder.sign(key, algorithm).public_bytes(serialization.Encoding.DER))


def cert_key_of(kind: str, account_key: Any) -> Any:
    """The private key a finalize of ``kind`` certified (for revoke-cert by the certificate's key)."""
    return {"other_key_type": CERT_KEYS[1], "account_key": account_key}.get(kind, CERT_KEYS[0])


def _is_ip(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False
