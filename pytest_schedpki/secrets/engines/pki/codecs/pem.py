"""Decoding of PEM input the way OpenBao's Go code does it, and Go ``encoding/asn1`` error texts.

* :func:`pem_decode` follows ``encoding/pem.Decode`` (malformed blocks are skipped);
* :func:`pem_sequence` is the strict bundle loop of the import paths (``error when parsing block <n>:
  invalid PEM data``);
* :func:`go_asn1_error` reproduces the ``asn1: ...`` message Go gives for DER that is not a CSR.

Re-exported by :mod:`pytest_schedpki.secrets.engines.pki.codecs.x509`.
"""

from __future__ import annotations

import base64
import re

from pytest_schedpki.golang.base64 import go_base64_error
from pytest_schedpki.process.library_warnings import quiet

_PEM_BEGIN = re.compile(r"(?m)^-----BEGIN ([^\n]*?)-----[ \t]*\r?$")


def _without_headers(block: str) -> str:
    """The base64 part of a PEM block's inside: Go reads ``Key: value`` header lines only at its start
    (until the first line without a colon); a colon further on is bad base64, not a header."""
    lines = block.splitlines()
    start = 1 if lines and not lines[0].strip() else 0  # the rest of the BEGIN line
    while start < len(lines) and ":" in lines[start]:
        start += 1
    return "\n".join(lines[start:])


def pem_decode(text: str) -> tuple[tuple[str, bytes] | None, str]:
    """Go ``pem.Decode``: ``((type, der), rest)`` for the first well-formed block (blocks with a bad
    body or no matching END line are skipped, as Go skips them), or ``(None, text)``. Header lines
    (``Key: value``) are dropped."""
    pos = 0
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if m is None:
            return None, text
        kind = m.group(1)
        end_marker = f"-----END {kind}-----"
        end = text.find("\n" + end_marker, m.end())
        if end < 0:
            pos = m.end()
            continue
        body = _without_headers(text[m.end():end])
        joined = "".join(body.split())
        try:
            # Go's StdEncoding is stricter than Python's: whole 4-character quanta, padding only at the end
            if go_base64_error(joined.encode("ascii")) is not None:
                raise ValueError("illegal base64 data")
            der = base64.b64decode(joined, validate=True)
        except (ValueError, TypeError):
            pos = m.end()
            continue
        after = text[end + 1 + len(end_marker):]
        newline = after.find("\n")
        return (kind, der), (after[newline + 1:] if newline >= 0 else "")


def pem_blocks(text: str) -> list[tuple[str, bytes]]:
    """``(type, der)`` of every decodable PEM block in ``text``, in order (``pem.Decode`` in a loop)."""
    out = []
    block, rest = pem_decode(text)
    while block is not None:
        out.append(block)
        block, rest = pem_decode(rest)
    return out


def pem_sequence(text: str) -> list[tuple[str, bytes]]:
    """Strict bundle decoding as OpenBao's import paths do it: every non-blank part must be a PEM
    block; raises ``ValueError("error when parsing block <n>: invalid PEM data")`` otherwise."""
    out, rest, index = [], text, 0
    while rest.strip():
        index += 1
        block, rest = pem_decode(rest)
        if block is None:
            raise ValueError(f"error when parsing block {index}: invalid PEM data")
        out.append(block)
    return out


_GO_PARAMS = ("{optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> "
              "stringType:0 timeType:0 set:false omitEmpty:false}")


class _Asn1Error(Exception):
    pass


def _tag_and_length(data: bytes, offset: int) -> tuple[int, int, bool, int, int]:
    """encoding/asn1 ``parseTagAndLength``: (class, tag, compound, length, new offset)."""
    if offset >= len(data):
        raise _Asn1Error("asn1: syntax error: truncated tag or length")
    b = data[offset]
    offset += 1
    cls, compound, tag = b >> 6, bool(b & 0x20), b & 0x1F
    if tag == 0x1F:
        tag = 0
        while True:
            if offset >= len(data):
                raise _Asn1Error("asn1: syntax error: truncated tag or length")
            b = data[offset]
            offset += 1
            tag = (tag << 7) | (b & 0x7F)
            if not b & 0x80:
                break
    if offset >= len(data):
        raise _Asn1Error("asn1: syntax error: truncated tag or length")
    b = data[offset]
    offset += 1
    if not b & 0x80:
        return cls, tag, compound, b & 0x7F, offset
    count = b & 0x7F
    if count == 0:
        raise _Asn1Error("asn1: syntax error: indefinite length found (not DER)")
    length = 0
    for _ in range(count):
        if offset >= len(data):
            raise _Asn1Error("asn1: syntax error: truncated tag or length")
        b = data[offset]
        offset += 1
        if length >= 1 << 23:
            raise _Asn1Error("asn1: structure error: length too large")
        length = (length << 8) | b
        if length == 0:
            raise _Asn1Error("asn1: structure error: superfluous leading zeros in length")
    if length < 0x80:
        raise _Asn1Error("asn1: structure error: non-minimal length")
    return cls, tag, compound, length, offset


# A Go struct as encoding/asn1 walks it: (type name in errors, universal tag or None for RawValue,
# constructed?, fields | "int" | "oid" | "bitstring" | "any" | "optional" | "rest").
_ALGORITHM = ("AlgorithmIdentifier", 16, True, [("ObjectIdentifier", 6, False, "oid"), ("RawValue", None, None, "optional")])
CSR_SCHEMA = ("certificateRequest", 16, True, [
    ("tbsCertificateRequest", 16, True, [
        ("int", 2, False, "int"),
        ("RawValue", None, None, "any"),
        ("publicKeyInfo", 16, True, [_ALGORITHM, ("BitString", 3, False, "bitstring")]),
        ("attributes", None, None, "rest"),  # `asn1:"tag:0"`: Go prints a pointer there, not checked
    ]),
    _ALGORITHM,
    ("BitString", 3, False, "bitstring"),
])


def _check_primitive(kind: str, value: bytes) -> None:
    if kind == "int":
        if not value:
            raise _Asn1Error("asn1: structure error: empty integer")
        if len(value) > 1 and ((value[0] == 0 and value[1] < 0x80) or (value[0] == 0xFF and value[1] >= 0x80)):
            raise _Asn1Error("asn1: structure error: integer not minimally-encoded")
        if len(value) > 8:
            raise _Asn1Error("asn1: structure error: integer too large")
    elif kind == "oid":
        if not value:
            raise _Asn1Error("asn1: syntax error: zero length OBJECT IDENTIFIER")
        if value[-1] & 0x80:
            raise _Asn1Error("asn1: syntax error: truncated base 128 integer")
    elif kind == "bitstring":
        if not value:
            raise _Asn1Error("asn1: syntax error: zero length BIT STRING")
        padding = value[0]
        if padding > 7 or (len(value) == 1 and padding > 0) or (value[-1] & ((1 << padding) - 1)):
            raise _Asn1Error("asn1: syntax error: invalid padding bits in BIT STRING")


def _parse_field(data: bytes, offset: int, spec: tuple) -> int:
    """encoding/asn1 ``parseField`` for one field at ``offset`` of ``data``; returns the next offset
    (unchanged for an absent optional field)."""
    name, tag, compound, body = spec
    if offset >= len(data):
        if body == "optional":
            return offset
        raise _Asn1Error("asn1: syntax error: sequence truncated")
    cls, got, constructed, length, start = _tag_and_length(data, offset)
    if tag is not None and (cls != 0 or got != tag or constructed != compound):
        if body == "optional":
            return offset
        raise _Asn1Error(f"asn1: structure error: tags don't match ({tag} vs {{class:{cls} tag:{got} length:{length} "
                         f"isCompound:{str(constructed).lower()}}}) {_GO_PARAMS} {name} @{start}")
    if length > len(data) - start:
        raise _Asn1Error("asn1: syntax error: data truncated")
    value = data[start:start + length]
    if isinstance(body, list):
        inner = 0
        for field in body:
            if field[3] == "rest":
                break
            inner = _parse_field(value, inner, field)
    else:
        _check_primitive(body, value)
    return start + length


def go_asn1_error(der: bytes, schema: tuple = CSR_SCHEMA) -> str:
    """The error Go's ``asn1.Unmarshal`` gives for ``der`` read as ``schema`` (by default the
    ``certificateRequest`` of ``x509.ParseCertificateRequest``): ``asn1: syntax error: sequence
    truncated``, ``asn1: structure error: tags don't match (16 vs {class:0 tag:0 length:0
    isCompound:false}) {...} certificateRequest @2``, ``asn1: syntax error: trailing data``... When
    the structure walks cleanly the later x509 checks are summarised as ``x509: malformed certificate
    request`` (an approximation)."""
    try:
        end = _parse_field(der, 0, schema)
    except _Asn1Error as exc:
        return str(exc)
    if end < len(der):
        return "asn1: syntax error: trailing data"
    return "x509: malformed certificate request"


_PRINTABLE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 '()+,-./:=?*&")


def go_string_error(tag: int, value: bytes) -> str | None:
    """Go ``x509.parseASN1String``'s complaint about an attribute value, or None when it is fine."""
    if tag == 19:  # PrintableString (Go accepts '*' and '&' too)
        return None if set(value) <= _PRINTABLE else "invalid PrintableString"
    if tag == 12:  # UTF8String
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return "invalid UTF-8 string"
        return None
    if tag == 22:  # IA5String
        return None if value.isascii() else "invalid IA5String"
    if tag == 18:  # NumericString
        return None if set(value) <= set(b"0123456789 ") else "invalid NumericString"
    if tag == 30:  # BMPString
        if len(value) % 2:
            return "invalid BMPString"
        try:
            value.decode("utf-16-be")
        except UnicodeDecodeError:
            return "invalid BMPString"
        return None
    if tag == 20:  # T61String: any bytes
        return None
    return f"unsupported string type: {tag}"


def go_name_error(der: bytes, offset: int = 0) -> str:
    """Go's error for the X.509 Name (RDNSequence) at ``offset`` of ``der``:
    ``x509: invalid RDNSequence: invalid attribute value: invalid UTF-8 string`` and its siblings,
    or ``x509: invalid RDNSequence`` when the structure itself is broken."""
    try:
        _, _, _, length, start = _tag_and_length(der, offset)
        pos, end = start, start + length
        while pos < end:  # SET OF AttributeTypeAndValue
            _, _, _, set_length, set_start = _tag_and_length(der, pos)
            pos = set_start + set_length
            inner = set_start
            while inner < pos:
                _, _, _, atv_length, atv_start = _tag_and_length(der, inner)
                inner = atv_start + atv_length
                _, _, _, oid_length, oid_start = _tag_and_length(der, atv_start)  # the attribute type
                _, tag, _, value_length, value_start = _tag_and_length(der, oid_start + oid_length)
                problem = go_string_error(tag, der[value_start:value_start + value_length])
                if problem:
                    return f"x509: invalid RDNSequence: invalid attribute value: {problem}"
    except (_Asn1Error, IndexError):
        pass
    return "x509: invalid RDNSequence"


def _names_at(der: bytes, certificate: bool) -> list[int]:
    """Offsets of the names Go parses, in its order: a CSR's subject; a certificate's issuer, subject."""
    _, _, _, _, info = _tag_and_length(der, 0)  # the outer SEQUENCE, then the TBS / request info
    _, _, _, _, pos = _tag_and_length(der, info)
    cls, tag, _, length, start = _tag_and_length(der, pos)
    if not certificate:  # version INTEGER, then the subject
        return [start + length]
    if cls == 2 and tag == 0:  # [0] version, then the serial number
        _, _, _, length, start = _tag_and_length(der, start + length)
    _, _, _, length, start = _tag_and_length(der, start + length)  # signature AlgorithmIdentifier
    issuer = start + length
    _, _, _, length, start = _tag_and_length(der, issuer)
    _, _, _, validity_length, validity_start = _tag_and_length(der, start + length)
    return [issuer, validity_start + validity_length]


def go_name_problem(der: bytes, certificate: bool) -> str | None:
    """Go's error for the first bad attribute string in a CSR's subject or a certificate's issuer or
    subject (``x509: invalid RDNSequence: invalid attribute value: invalid PrintableString`` ...), or
    None when none is found (the DER walk stops quietly where the structure is broken)."""
    try:
        offsets = _names_at(der, certificate)
    except (_Asn1Error, IndexError):
        return None
    for offset in offsets:
        problem = go_name_error(der, offset)
        if problem != "x509: invalid RDNSequence":
            return problem
    return None


def load_der_certificate(der: bytes):
    """``x509.load_der_x509_certificate`` without cryptography's deprecation warning for a serial that
    is not positive (such a certificate gets Go's error from :func:`serial_error`; under a test
    suite's ``-W error`` the warning would otherwise turn into a 500)."""
    from cryptography import x509  # lazy, as the rest of this module: it parses PEM without cryptography

    with quiet():  # CryptographyDeprecationWarning is a UserWarning
        return x509.load_der_x509_certificate(der)


def serial_of(cert) -> int:
    """``cert.serial_number`` without cryptography's warning for a serial that is not positive (a
    client's certificate, e.g. an imported issuer; see :mod:`pytest_schedpki.process.library_warnings`)."""
    with quiet():
        return cert.serial_number


def serial_error(cert) -> str | None:
    """Go's ``x509: negative serial number`` for a certificate whose serial is negative (Go 1.23+
    refuses it at parse time; cryptography still loads it, with a deprecation warning), else None."""
    negative = serial_of(cert) < 0
    return "x509: negative serial number" if negative else None


def name_error(parsed, der: bytes) -> str | None:
    """For a CSR or certificate cryptography loaded (it decodes names lazily): Go's parse error when a
    name does not read, else None."""
    certificate = hasattr(parsed, "tbs_certificate_bytes")
    try:
        if certificate and parsed.issuer is None:  # cryptography decodes the names here
            return None
        if parsed.subject is not None:
            return None
    except ValueError:
        pass
    return go_name_problem(der, certificate) or "x509: invalid RDNSequence"
