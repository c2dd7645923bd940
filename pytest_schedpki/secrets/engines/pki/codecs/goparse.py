"""Go's ``x509.ParseCertificate`` error texts, from a walk of the DER in Go's order (``crypto/x509``
``parser.go``: ``parseCertificate``, ``parseName``, ``parseExtension``, ``processExtensions`` and the
``parse*Extension`` functions it calls).

``cryptography`` decides whether a certificate parses; this walk only says what Go would say, and
finds what Go refuses but ``cryptography`` accepts or reads only lazily (a critical authority or
subject key identifier, a critical authority information access, a damaged extension value). The
reads follow ``cryptobyte`` (:mod:`.cryptobyte`).

Covered: the certificate and TBS framing, version, serial number, both signature algorithm
identifiers, the structure of the issuer and subject names, the validity and SPKI framing, the unique
identifiers, each extension's structure (OID, critical flag, value), duplicate extensions, the values
of basic constraints, key usage, extended key usage, subject and authority key identifiers, subject
alternative names (structure, IA5 text, IP length), CRL distribution points, authority information
access and certificate policies, the outermost element of name constraints, and the signature.
Texts for problems inside name values, times, keys and URIs come from elsewhere (:mod:`.pem`) or stay
approximate (``x509: malformed certificate``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .cryptobyte import (
    BIT_STRING,
    BOOLEAN,
    INTEGER,
    OCTET_STRING,
    OID,
    SEQUENCE,
    SET,
    is_bit_string,
    is_boolean,
    is_integer,
    is_oid_der,
    oid_arcs,
    peek,
    read_any,
    read_element,
    skip_optional,
)
from .pem import go_string_error

__all__ = ["certificate_error", "is_integer", "read_element"]


def _name_error(element: bytes) -> str | None:
    """``parseName`` over the content of a Name's SEQUENCE: its structure, then each value string
    (``parseASN1String``, :func:`.pem.go_string_error`)."""
    pos = 0
    while pos < len(element):
        rdn = read_element(element, pos, SET)
        if rdn is None:
            return "x509: invalid RDNSequence"
        members, pos = rdn
        at = 0
        while at < len(members):
            atav = read_element(members, at, SEQUENCE)
            if atav is None:
                return "x509: invalid RDNSequence: invalid attribute"
            body, at = atav
            kind = read_element(body, 0, OID)
            if kind is None or oid_arcs(kind[0]) is None:
                return "x509: invalid RDNSequence: invalid attribute type"
            value = read_any(body, kind[1])
            if value is None:  # bao 2.7.2's text (its Go's parseName)
                return "x509: invalid RDNSequence: invalid attribute value: invalid ASN.1 element"
            problem = go_string_error(value[0], value[1])
            if problem and not problem.startswith("unsupported string type"):  # bao 2.7.2 accepts other types
                return f"x509: invalid RDNSequence: invalid attribute value: {problem}"
    return None


# ----------------------------------------------------------------------------- parseValidity

_UTC_TIME = re.compile(rb"(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?(Z|[+-]\d{4})")
_GENERALIZED_TIME = re.compile(rb"(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\.\d{0,8}[1-9])?(Z|[+-]\d{4})")


def _time_ok(match: re.Match | None, year: int) -> bool:
    """What ``time.Parse`` accepts and ``Format`` writes back unchanged: a real date and time of day,
    and a zone ``Z`` or a non-zero offset of at most 24 hours and 60 minutes."""
    if match is None:
        return False
    month, day, hour, minute = (int(match.group(i)) for i in (2, 3, 4, 5))
    second = int(match.group(6)) if match.group(6) else 0
    zone = match.group(match.lastindex)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month] if 1 <= month <= 12 else 0
    if not (1 <= day <= days and hour < 24 and minute < 60 and second < 60):
        return False
    return zone == b"Z" or (zone[1:] != b"0000" and int(zone[1:3]) <= 24 and int(zone[3:5]) <= 60)


def _validity_error(validity: bytes) -> str | None:
    """``parseValidity``: notBefore, then notAfter, each a UTCTime (``YYMMDDhhmm[ss]`` and a zone; a
    two-digit year below 69 is 20xx, as ``time.Parse`` reads it) or a GeneralizedTime
    (``YYYYMMDDhhmmss``, optional fraction, a zone), read as cryptobyte's ``ReadASN1UTCTime`` /
    ``ReadASN1GeneralizedTime`` read them (the text must be what Go writes back)."""
    pos = 0
    for _ in range(2):
        if peek(validity, pos, 0x17):
            element = read_element(validity, pos, 0x17)
            match = None if element is None else _UTC_TIME.fullmatch(element[0])
            year = 0 if match is None else int(match.group(1))
            if element is None or not _time_ok(match, year + (1900 if year >= 69 else 2000)):
                return "x509: malformed UTCTime"
        elif peek(validity, pos, 0x18):
            element = read_element(validity, pos, 0x18)
            match = None if element is None else _GENERALIZED_TIME.fullmatch(element[0])
            if element is None or not _time_ok(match, int(match.group(1)) if match else 0):
                return "x509: malformed GeneralizedTime"
        else:
            return "x509: unsupported time format"
        pos = element[1]
    return None


# ----------------------------------------------------------------------------- processExtensions

def _basic_constraints(value: bytes) -> str | None:
    seq = read_element(value, 0, SEQUENCE)
    if seq is None:
        return "x509: invalid basic constraints"
    body, at = seq[0], 0
    if peek(body, at, BOOLEAN):
        flag = read_element(body, at, BOOLEAN)
        if flag is None or not is_boolean(flag[0]):
            return "x509: invalid basic constraints"
        at = flag[1]
    if peek(body, at, INTEGER):
        number = read_element(body, at, INTEGER)
        if number is None or not is_integer(number[0]) or len(number[0]) > 8:
            return "x509: invalid basic constraints"
    return None


def _key_usage(value: bytes) -> str | None:
    bits = read_element(value, 0, BIT_STRING)
    return None if bits is not None and is_bit_string(bits[0]) else "x509: invalid key usage"


def _ext_key_usage(value: bytes) -> str | None:
    seq = read_element(value, 0, SEQUENCE)
    if seq is None:
        return "x509: invalid extended key usages"
    body, at = seq[0], 0
    while at < len(body):
        usage = read_element(body, at, OID)
        if usage is None or oid_arcs(usage[0]) is None:
            return "x509: invalid extended key usages"
        at = usage[1]
    return None


def _authority_key_id(value: bytes) -> str | None:
    seq = read_element(value, 0, SEQUENCE)
    if seq is None or (peek(seq[0], 0, 0x80) and read_element(seq[0], 0, 0x80) is None):
        return "x509: invalid authority key identifier"
    return None


def _subject_key_id(value: bytes) -> str | None:
    return None if read_element(value, 0, OCTET_STRING) is not None else "x509: invalid subject key identifier"


_SAN_IA5 = {1: "rfc822Name", 2: "dNSName", 6: "uniformResourceIdentifier"}


def _subject_alt_names(value: bytes) -> str | None:
    seq = read_element(value, 0, SEQUENCE)
    if seq is None:
        return "x509: invalid subject alternative names"
    body, at = seq[0], 0
    while at < len(body):
        name = read_any(body, at)
        if name is None:
            return "x509: invalid subject alternative name"
        tag, content, at = name
        kind = tag ^ 0x80
        if kind in _SAN_IA5 and any(byte >= 0x80 for byte in content):
            return f"x509: SAN {_SAN_IA5[kind]} is malformed"
        if kind == 7 and len(content) not in (4, 16):
            return f"x509: cannot parse IP address of length {len(content)}"
    return None


def _members(value: bytes) -> list[bytes | None] | None:
    """The contents of the SEQUENCE members of the SEQUENCE that starts ``value``: ``None`` when that
    SEQUENCE does not read; a member that does not read ends the list as ``None``."""
    seq = read_element(value, 0, SEQUENCE)
    if seq is None:
        return None
    body, at, out = seq[0], 0, []
    while at < len(body):
        member = read_element(body, at, SEQUENCE)
        out.append(None if member is None else member[0])
        if member is None:
            break
        at = member[1]
    return out


def _crl_distribution_points(value: bytes) -> str | None:
    points = _members(value)
    if points is None:
        return "x509: invalid CRL distribution points"
    for content in points:
        if content is None:
            return "x509: invalid CRL distribution point"
        if not peek(content, 0, 0xA0):
            continue
        name = read_element(content, 0, 0xA0)
        full = None if name is None else read_element(name[0], 0, 0xA0)
        if full is None:
            return "x509: invalid CRL distribution point"
        names, inner = full[0], 0
        while inner < len(names) and peek(names, inner, 0x86):
            uri = read_element(names, inner, 0x86)
            if uri is None:
                return "x509: invalid CRL distribution point"
            inner = uri[1]
    return None


def _authority_info_access(value: bytes) -> str | None:
    members = _members(value)
    for content in [None] if members is None else members:
        method = None if content is None else read_element(content, 0, OID)
        if method is None or oid_arcs(method[0]) is None or (
                peek(content, method[1], 0x86) and read_element(content, method[1], 0x86) is None):
            return "x509: invalid authority info access"
    return None


def _certificate_policies(value: bytes) -> str | None:
    members = _members(value)
    for content in [None] if members is None else members:
        oid = None if content is None else read_element(content, 0, OID)
        if oid is None or not is_oid_der(oid[0]):
            return "x509: invalid certificate policies"
    return None


def _name_constraints(value: bytes) -> str | None:
    return None if read_element(value, 0, SEQUENCE) is not None else "x509: invalid NameConstraints extension"


_PROCESS: dict[str, Callable[[bytes], str | None]] = {
    "2.5.29.15": _key_usage,
    "2.5.29.19": _basic_constraints,
    "2.5.29.17": _subject_alt_names,
    "2.5.29.30": _name_constraints,
    "2.5.29.31": _crl_distribution_points,
    "2.5.29.35": _authority_key_id,
    "2.5.29.37": _ext_key_usage,
    "2.5.29.14": _subject_key_id,
    "2.5.29.32": _certificate_policies,
    "1.3.6.1.5.5.7.1.1": _authority_info_access,
}
_NOT_CRITICAL = {  # RFC 5280 says conforming CAs mark these non-critical; Go refuses them critical
    "2.5.29.35": "x509: authority key identifier incorrectly marked critical",
    "2.5.29.14": "x509: subject key identifier incorrectly marked critical",
    "1.3.6.1.5.5.7.1.1": "x509: authority info access incorrectly marked critical",
}


def _extensions_error(extensions: bytes) -> str | None:
    """``parseExtension`` for each element, the duplicate check, then ``processExtensions``."""
    outer = read_element(extensions, 0, SEQUENCE)
    if outer is None:
        return "x509: malformed extensions"
    body, pos, seen = outer[0], 0, []
    while pos < len(body):
        element = read_element(body, pos, SEQUENCE)
        if element is None:
            return "x509: malformed extension"
        extension, pos = element
        oid = read_element(extension, 0, OID)
        arcs = None if oid is None else oid_arcs(oid[0])
        if oid is None or arcs is None:
            return "x509: malformed extension OID field"
        at, critical = oid[1], False
        if peek(extension, at, BOOLEAN):
            flag = read_element(extension, at, BOOLEAN)
            if flag is None or not is_boolean(flag[0]):
                return "x509: malformed extension critical field"
            critical, at = flag[0][0] == 0xFF, flag[1]
        value = read_element(extension, at, OCTET_STRING)
        if value is None:
            return "x509: malformed extension value field"
        dotted = ".".join(map(str, arcs))
        if any(dotted == other for other, _, _ in seen):
            return f'x509: certificate contains duplicate extension with OID "{dotted}"'
        seen.append((dotted, critical, value[0]))
    for dotted, critical, value in seen:
        if critical and dotted in _NOT_CRITICAL:  # checked before the value is read
            return _NOT_CRITICAL[dotted]
        check = _PROCESS.get(dotted)
        problem = check(value) if check is not None else None
        if problem:
            return problem
    return None


# ----------------------------------------------------------------------------- the certificate

def _version(tbs: bytes) -> tuple[int, int] | str:
    """``(version, position after it)`` (1 when absent), or Go's error."""
    if not peek(tbs, 0, 0xA0):
        return 1, 0
    explicit = read_element(tbs, 0, 0xA0)
    if explicit is None:
        return "x509: malformed version"
    inner = read_element(explicit[0], 0, INTEGER)
    if inner is None or inner[1] != len(explicit[0]) or not is_integer(inner[0]) or len(inner[0]) > 8 \
            or inner[0][0] & 0x80:
        return "x509: malformed version"
    version = int.from_bytes(inner[0], "big") + 1
    return (version, explicit[1]) if version <= 3 else "x509: invalid version"


def certificate_error(der: bytes) -> str | None:
    """The first ``x509.ParseCertificate`` error the walk finds in ``der`` (see the module doc), or
    ``None`` when it finds none."""
    outer = read_element(der, 0, SEQUENCE)
    if outer is None:
        return "x509: malformed certificate"
    body = outer[0]
    tbs_el = read_element(body, 0, SEQUENCE)
    if tbs_el is None:
        return "x509: malformed tbs certificate"
    tbs, after_tbs = tbs_el
    version = _version(tbs)
    if isinstance(version, str):
        return version
    version_number, pos = version
    serial = read_element(tbs, pos, INTEGER)
    if serial is None or not is_integer(serial[0]):
        return "x509: malformed serial number"
    sig_ai = read_element(tbs, serial[1], SEQUENCE)
    if sig_ai is None:
        return "x509: malformed signature algorithm identifier"
    outer_ai = read_element(body, after_tbs, SEQUENCE)
    if outer_ai is None:
        return "x509: malformed algorithm identifier"
    if outer_ai[0] != sig_ai[0]:
        return "x509: inner and outer signature algorithm identifiers don't match"
    pos = sig_ai[1]
    for what in ("issuer", "validity", "subject", "spki"):
        element = read_element(tbs, pos, SEQUENCE)
        if element is None:
            return f"x509: malformed {what}"
        pos = element[1]
        problem = (_name_error(element[0]) if what in ("issuer", "subject")
                   else _validity_error(element[0]) if what == "validity" else None)
        if problem:
            return problem
    spki = element[0]
    algorithm = read_element(spki, 0, SEQUENCE)
    if algorithm is None:
        return "x509: malformed public key algorithm identifier"
    key = read_element(spki, algorithm[1], BIT_STRING)
    if key is None or not is_bit_string(key[0]):
        return "x509: malformed subjectPublicKey"
    if version_number > 1:
        pos = skip_optional(tbs, pos, 0x81)
        if pos is None:
            return "x509: malformed issuerUniqueID"
        pos = skip_optional(tbs, pos, 0x82)
        if pos is None:
            return "x509: malformed subjectUniqueID"
        if version_number == 3 and peek(tbs, pos, 0xA3):
            extensions = read_element(tbs, pos, 0xA3)
            if extensions is None:
                return "x509: malformed extensions"
            problem = _extensions_error(extensions[0])
            if problem:
                return problem
    signature = read_element(body, outer_ai[1], BIT_STRING)
    if signature is None or not is_bit_string(signature[0]):
        return "x509: malformed signature"
    return None
