"""The two PEM inputs of ``revoke``/``revoke-with-key``, read the way OpenBao reads them, with Go's
error texts: the ``certificate`` to revoke and the ``private_key`` proving possession.

Upstream (``path_revoke.go``): the certificate must be at least 75 bytes, the first PEM block
(``pem.Decode``, any block type) is parsed with ``x509.ParseCertificate``; the key must be at least
64 bytes, its first PEM block goes through ``certutil.ParseDERKey`` (SEC1 EC, then PKCS#1 RSA, then
PKCS#8 - the block type is ignored) and must match the certificate's public key (type, then value).
Every failure here is a Go error returned by the handler, so the HTTP answer is **500** with a
multierror text (:func:`~pytest_schedpki.secrets.framework.logical.internal_error`), except the two length checks
of the handler itself (400 and 500, see :mod:`.revoke`).

Parsing uses ``cryptography``; Go's texts are rebuilt from a walk of the DER: ``x509.ParseCertificate``
(cryptobyte) for the first fields of a certificate, ``encoding/asn1`` (via :mod:`..codecs.pem`) for the
three key structures ``ecPrivateKey``, ``pkcs1PrivateKey`` and ``pkcs8`` including Go's "use
ParseXxx instead" hints. Failures deeper than that structure get an approximate text.
"""

from __future__ import annotations

from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa, x25519

from pytest_schedpki.secrets.framework.logical import internal_error

from ..codecs.gokey import invalid_public_key
from ..codecs.goparse import certificate_error, read_element
from ..codecs.pem import (  # the encoding/asn1 walk of codecs/pem.py
    _Asn1Error,
    _parse_field,
    go_name_problem,
    load_der_certificate,
    name_error,
    pem_decode,
    serial_error,
)

CERT_TOO_SHORT = ("provided certificate data was too short; perhaps a path was passed to the API rather than the "
                  "contents of a PEM file")
NO_CERT_PEM = "certificate contains no PEM data"
KEY_NO_PEM = "provided key PEM block contained no data or failed to parse"
KEY_TYPE_MISMATCH = "provided private key type does not match certificate's public key type"
KEY_MISMATCH = "provided private key does not match certificate's public key"
UNKNOWN_CERT_KEY = ("certificate has an unknown public key algorithm; unable to validate provided private key; ask an "
                    "admin to revoke this certificate instead")

# --------------------------------------------------------------------------------- certificate


def go_certificate_error(der: bytes) -> str:
    """The ``x509.ParseCertificate`` error for ``der`` (see :func:`..codecs.goparse.certificate_error`;
    ``x509: malformed certificate`` where the walk finds nothing)."""
    return certificate_error(der) or "x509: malformed certificate"


def parse_revoked_certificate(text: str) -> x509.Certificate:
    """The ``certificate`` field of a revocation: raises 500 ``provided certificate data was too
    short; ...`` (< 75 bytes), ``certificate contains no PEM data``, ``certificate could not be
    parsed: <Go x509 error>``."""
    if len(text.encode()) < 75:
        raise internal_error(CERT_TOO_SHORT)
    block, _ = pem_decode(text)
    if block is None:
        raise internal_error(NO_CERT_PEM)
    der = block[1]
    try:
        cert = load_der_certificate(der)
    except x509.InvalidVersion:  # Go: a version field above v3
        raise internal_error("certificate could not be parsed: x509: invalid version") from None
    except ValueError:
        reason = go_certificate_error(der)
        if reason == "x509: malformed certificate":  # the structure is sound: maybe a bad name
            reason = go_name_problem(der, certificate=True) or reason
        raise internal_error(f"certificate could not be parsed: {reason}") from None
    problem = (serial_error(cert) or name_error(cert, der)  # Go parses eagerly, the serial first
               or invalid_public_key(cert, "x509: malformed certificate") or certificate_error(der))
    if problem:
        raise internal_error(f"certificate could not be parsed: {problem}")
    return cert


def check_signature_from(cert: x509.Certificate, parent: x509.Certificate) -> bool:
    """Go's ``cert.CheckSignatureFrom(parent)``: ``parent`` may sign certificates (a v3 parent needs
    BasicConstraints CA; a KeyUsage, when present, must include keyCertSign) and its public key
    verifies ``cert``'s signature. Names are not compared (upstream accepts any issuer DN here)."""
    try:
        constraints = parent.extensions.get_extension_for_class(x509.BasicConstraints).value
        if not constraints.ca:
            return False
    except x509.ExtensionNotFound:
        if parent.version == x509.Version.v3:
            return False
    try:
        if not parent.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign:
            return False
    except x509.ExtensionNotFound:
        pass
    public = parent.public_key()
    try:
        if isinstance(public, rsa.RSAPublicKey):
            public.verify(cert.signature, cert.tbs_certificate_bytes, cert.signature_algorithm_parameters,
                          cert.signature_hash_algorithm)
        elif isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(cert.signature, cert.tbs_certificate_bytes, cert.signature_algorithm_parameters)
        elif isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(cert.signature, cert.tbs_certificate_bytes)
        else:
            return False
    except Exception:  # noqa: BLE001 - InvalidSignature, or an algorithm that does not fit the key
        return False
    return True


# ----------------------------------------------------------------------------------- private key

_ALGORITHM = ("AlgorithmIdentifier", 16, True, [("ObjectIdentifier", 6, False, "oid"), ("RawValue", None, None, "optional")])
# Go's struct layouts as encoding/asn1 walks them (unnamed Go types - []byte, *big.Int - print "")
_STRUCTS = {
    "ec": ("ecPrivateKey", 16, True, [("int", 2, False, "int"), ("", 4, False, "any"), ("", None, None, "rest")]),
    "pkcs1": ("pkcs1PrivateKey", 16, True, [("int", 2, False, "int"), ("", 2, False, "any"), ("int", 2, False, "int"),
                                            ("", 2, False, "any"), ("", 2, False, "any"), ("", 2, False, "any"),
                                            ("", None, None, "rest")]),
    "pkcs8": ("pkcs8", 16, True, [("int", 2, False, "int"), _ALGORITHM, ("", 4, False, "any"), ("", None, None, "rest")]),
}
_HINT = "x509: failed to parse private key (use {} instead for this key format)"
_PARSER = {"ec": "ParseECPrivateKey", "pkcs1": "ParsePKCS1PrivateKey", "pkcs8": "ParsePKCS8PrivateKey"}
# Go's x509.ParsePKCS8PrivateKey knows these algorithms; X25519 parses but is no crypto.Signer
_PKCS8_KNOWN = {"1.2.840.113549.1.1.1": "RSA", "1.2.840.10045.2.1": "EC", "1.3.101.112": "Ed25519", "1.3.101.110": "X25519"}
_GO_CURVES = ("secp224r1", "secp256r1", "secp384r1", "secp521r1")


def _structure_error(der: bytes, kind: str) -> str | None:
    """``None`` when ``asn1.Unmarshal`` of Go's ``kind`` struct succeeds, else its error text."""
    try:
        _parse_field(der, 0, _STRUCTS[kind])
    except _Asn1Error as exc:
        return str(exc)
    return None


def _version(der: bytes) -> int:
    """The leading INTEGER (version) of a structurally valid key blob (0 if unreadable)."""
    body = read_element(der, 0, 0x30)
    version = read_element(body[0], 0, 0x02) if body else None
    return int.from_bytes(version[0], "big", signed=True) if version else 0


def _pkcs8_oid(der: bytes) -> str:
    """The dotted algorithm OID of a structurally valid PKCS#8 blob (``""`` if unreadable)."""
    body = read_element(der, 0, 0x30)
    version = read_element(body[0], 0, 0x02) if body else None
    algorithm = read_element(body[0], version[1], 0x30) if version else None
    oid = read_element(algorithm[0], 0, 0x06) if algorithm else None
    if not oid or not oid[0]:
        return ""
    raw = oid[0]
    arcs, value = [], 0
    for byte in raw:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in [first, arcs[0] - 40 * first, *arcs[1:]])


def _semantic_error(kind: str, der: bytes, key: Any) -> str | None:
    """Go's error after a successful struct walk (``None``: Go accepts the key). ``key`` is what
    ``cryptography`` loaded from the same DER, or ``None``."""
    if kind == "pkcs8":
        oid = _pkcs8_oid(der)
        if oid not in _PKCS8_KNOWN:
            return f"x509: PKCS#8 wrapping contained private key with unknown algorithm: {oid}"
        if oid == "1.2.840.10045.2.1" and isinstance(key, ec.EllipticCurvePrivateKey) \
                and key.curve.name not in _GO_CURVES:
            return "x509: failed to parse EC private key embedded in PKCS#8: x509: unknown elliptic curve"
        if key is None:
            return f"x509: failed to parse {_PKCS8_KNOWN[oid]} private key embedded in PKCS#8"
        return None
    version = _version(der)
    if kind == "ec":
        if version != 1:
            return f"x509: unknown EC private key version {version}"
        if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name not in _GO_CURVES:
            return "x509: unknown elliptic curve"
        return None if isinstance(key, ec.EllipticCurvePrivateKey) else "x509: invalid elliptic curve private key value"
    if version > 1:
        return "x509: unsupported private key version"
    return None if isinstance(key, rsa.RSAPrivateKey) else "x509: private key contains zero or negative value"


def _go_parse_errors(der: bytes, key: Any) -> dict[str, str | None]:
    """For each of ``ParseECPrivateKey``, ``ParsePKCS1PrivateKey``, ``ParsePKCS8PrivateKey``: ``None``
    when Go would parse ``der`` with it, else Go's error (structure error, semantic error, or the
    "use ParseXxx instead" hint Go gives when another struct fits)."""
    structure = {kind: _structure_error(der, kind) for kind in _STRUCTS}
    hints = {"ec": ("pkcs8", "pkcs1"), "pkcs1": ("ec", "pkcs8"), "pkcs8": ("ec", "pkcs1")}
    out: dict[str, str | None] = {}
    for kind in ("ec", "pkcs1", "pkcs8"):
        if structure[kind] is None:
            out[kind] = _semantic_error(kind, der, key)
            continue
        other = next((o for o in hints[kind] if structure[o] is None), None)
        if other is not None:
            out[kind] = _HINT.format(_PARSER[other])
        elif kind == "ec":
            out[kind] = f"x509: failed to parse EC private key: {structure[kind]}"
        else:
            out[kind] = structure[kind]
    return out


def parse_revocation_key(text: str) -> Any:
    """The ``private_key`` of ``revoke-with-key`` (length already checked by the handler) as a
    ``cryptography`` RSA, EC (P-224/256/384/521) or Ed25519 private key. Raises 500 ``provided key PEM
    block contained no data or failed to parse``; ``failed to parse provided private key: got errors
    attempting to parse DER private key:\\n1. <EC error>\\n2. <PKCS#1 error>\\n3. <PKCS#8 error>``;
    ``failed to parse provided private key: unknown type for parsed PKCS8 Private Key`` (X25519)."""
    block, _ = pem_decode(text)
    if block is None:
        raise internal_error(KEY_NO_PEM)
    der = block[1]
    try:
        key = serialization.load_der_private_key(der, password=None)
    except Exception:  # noqa: BLE001 - any refusal (ValueError, UnsupportedAlgorithm...) is "not a key" for Go too
        key = None
    if isinstance(key, (rsa.RSAPrivateKey, ed25519.Ed25519PrivateKey)) or (
            isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name in _GO_CURVES):
        return key
    errors = _go_parse_errors(der, key)
    if errors["pkcs8"] is None and isinstance(key, x25519.X25519PrivateKey):
        raise internal_error("failed to parse provided private key: unknown type for parsed PKCS8 Private Key")
    raise internal_error("failed to parse provided private key: got errors attempting to parse DER private key:\n"
                         f"1. {errors['ec']}\n2. {errors['pkcs1']}\n3. {errors['pkcs8']}")


def check_key_matches(key: Any, cert: x509.Certificate) -> None:
    """``validatePrivateKeyMatchesCert``: the key's type must be the certificate's (RSA, ECDSA,
    Ed25519), else 500 ``provided private key type does not match certificate's public key type``;
    then modulus+exponent / point+curve / key bytes must be equal, else 500 ``provided private key does
    not match certificate's public key``. A certificate with another key kind: 500 ``certificate has
    an unknown public key algorithm; ...``."""
    public = cert.public_key()
    mine = key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        if not isinstance(mine, rsa.RSAPublicKey):
            raise internal_error(KEY_TYPE_MISMATCH)
        same = public.public_numbers() == mine.public_numbers()
    elif isinstance(public, ec.EllipticCurvePublicKey):
        if not isinstance(mine, ec.EllipticCurvePublicKey):
            raise internal_error(KEY_TYPE_MISMATCH)
        a, b = public.public_numbers(), mine.public_numbers()
        same = (a.x, a.y, public.curve.name) == (b.x, b.y, mine.curve.name)
    elif isinstance(public, ed25519.Ed25519PublicKey):
        if not isinstance(mine, ed25519.Ed25519PublicKey):
            raise internal_error(KEY_TYPE_MISMATCH)
        raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
        same = public.public_bytes(*raw) == mine.public_bytes(*raw)
    else:
        raise internal_error(UNKNOWN_CERT_KEY)
    if not same:
        raise internal_error(KEY_MISMATCH)

