"""Go's reading of the public key in a certificate or CSR (``crypto/x509`` ``parsePublicKey``), where
cryptography reads it differently: cryptography fails only at ``public_key()`` and reads compressed
EC points, Go refuses at parse time, reads only uncompressed points (``ecdsa.ParseUncompressedPublicKey``)
and knows only the NIST curves P-224/256/384/521.
"""

from __future__ import annotations

from .cryptobyte import peek, read_element

# id-ecPublicKey curves as their DER OIDs appear in a SubjectPublicKeyInfo, with Go's nistec names
_CURVE_OIDS = {bytes.fromhex("06052b81040021"): "P224", bytes.fromhex("06082a8648ce3d030107"): "P256",
               bytes.fromhex("06052b81040022"): "P384", bytes.fromhex("06052b81040023"): "P521"}
_EC_PUBLIC_KEY = "1.2.840.10045.2.1"
_GO_CURVES = frozenset({"secp224r1", "secp256r1", "secp384r1", "secp521r1"})
_GO_CURVE_NAMES = {"secp224r1": "P224", "secp256r1": "P256", "secp384r1": "P384", "secp521r1": "P521"}
_FIELD_BYTES = {"P224": 28, "P256": 32, "P384": 48, "P521": 66}


def _spki_point(tbs: bytes, certificate: bool) -> bytes | None:
    """The subjectPublicKey bits (after the unused-bits octet) of a certificate's TBS or a CSR's
    request info, or None when the structure does not read."""
    body = read_element(tbs, 0, 0x30)
    if body is None:
        return None
    fields, pos = body[0], 0
    if certificate and peek(fields, 0, 0xA0):
        pos = read_element(fields, 0, 0xA0)[1]
    skip = (0x02, 0x30, 0x30, 0x30, 0x30) if certificate else (0x02, 0x30)  # up to the subject
    for tag in skip:
        element = read_element(fields, pos, tag)
        if element is None:
            return None
        pos = element[1]
    spki = read_element(fields, pos, 0x30)
    algorithm = None if spki is None else read_element(spki[0], 0, 0x30)
    bits = None if algorithm is None else read_element(spki[0], algorithm[1], 0x03)
    return None if bits is None or not bits[0] else bits[0][1:]


def _ec_point_problem(point: bytes | None, curve: str) -> str | None:
    """``ecdsa.ParseUncompressedPublicKey``'s refusal of an EC point's encoding (Go's x509 parser reads
    only uncompressed points: ``ecdsa: invalid uncompressed public key``; a wrong length: ``invalid
    P256 point encoding``), or None."""
    if point is None:
        return None
    if not point or point[0] != 4:
        return "ecdsa: invalid uncompressed public key"
    if len(point) != 1 + 2 * _FIELD_BYTES[curve]:
        return f"invalid {curve} point encoding"
    return None


def public_key_or_none(parsed):
    """The public key of a certificate or CSR, or None for an algorithm cryptography does not know
    (Go then has a nil ``PublicKey``, which callers refuse in their own words)."""
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        return parsed.public_key()
    except UnsupportedAlgorithm:
        return None


def invalid_public_key(parsed, fallback: str) -> str | None:
    """Go's parse error for a certificate or CSR (``parsed``, from cryptography) whose public key is
    invalid - Go's parser fails where cryptography only fails later, at ``public_key()``: ``P256 point
    not on curve`` for an EC point off its curve, else ``fallback``. None when the key loads, or when
    its algorithm is unknown (Go then parses a nil key that the callers refuse in their own words)."""
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        key = parsed.public_key()
    except UnsupportedAlgorithm:  # Go refuses an unknown curve, and parses an unknown algorithm as nil
        ec_key = parsed.public_key_algorithm_oid.dotted_string == _EC_PUBLIC_KEY
        return "x509: unsupported elliptic curve" if ec_key else None
    except ValueError:
        pass
    else:  # Go's x509 knows only the NIST curves P-224/256/384/521 (secp256k1 is refused)
        curve = getattr(key, "curve", None)
        if curve is not None and curve.name not in _GO_CURVES:
            return "x509: unsupported elliptic curve"
        if curve is not None:  # cryptography also reads compressed points, Go does not
            return _ec_point_problem(_spki_point(_tbs_of(parsed), _is_certificate(parsed)), _GO_CURVE_NAMES[curve.name])
        return None
    tbs = _tbs_of(parsed)
    if parsed.public_key_algorithm_oid.dotted_string == _EC_PUBLIC_KEY:
        for oid, name in _CURVE_OIDS.items():
            if oid in tbs:
                point = _spki_point(tbs, _is_certificate(parsed))
                return _ec_point_problem(point, name) or f"{name} point not on curve"
    return fallback


def _is_certificate(parsed) -> bool:
    return hasattr(parsed, "tbs_certificate_bytes")


def _tbs_of(parsed) -> bytes:
    return parsed.tbs_certificate_bytes if _is_certificate(parsed) else parsed.tbs_certrequest_bytes
