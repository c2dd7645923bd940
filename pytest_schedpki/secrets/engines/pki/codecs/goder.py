"""X.509 pieces written the way Go writes them, where cryptography's builders refuse or differ.

* :func:`go_oid_arcs` / :func:`oid_encodable`: certutil's ``StringToOid`` (arcs through
  ``strconv.Atoi``) and what Go's encoders then accept; :func:`asn1_marshaled_oid`: what
  ``encoding/asn1`` writes for negative arcs;
* :func:`go_key_usage_der`: KeyUsage with EncipherOnly/DecipherOnly but no KeyAgreement (Go writes
  the bits asked for; cryptography's ``KeyUsage`` refuses them);
* :func:`name_constraints_extension`: dNSName constraints such as ``*.x.test`` (cryptography refuses
  the ``*``), and Go's read-back check of each name;
* :func:`name_attribute`: a subject string typed as Go's asn1 types it (PrintableString or UTF8String);
* :func:`other_name`: the ``[0] EXPLICIT UTF8String`` otherName SAN OpenBao writes;
* :func:`readable`: a copy of such a certificate cryptography can decode, for reading its other
  extensions.

The extensions are built from DER as ``x509.UnrecognizedExtension`` values, so the bytes are
upstream's.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Sequence
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.name import _ASN1Type

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.golang.strconv import decimal_in_range
from pytest_schedpki.secrets.framework.logical import internal_error


def der_tlv(tag: int, body: bytes) -> bytes:
    """One DER element: ``tag``, definite length, ``body``."""
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


_PRINTABLE = re.compile(r"^[A-Za-z0-9 '()+,\-./:=?]*$")


def name_attribute(oid: x509.ObjectIdentifier, value: str) -> x509.NameAttribute:
    """One subject attribute encoded as Go's asn1 would: PrintableString when every character is in
    the printable set, else UTF8String."""
    kind = _ASN1Type.PrintableString if _PRINTABLE.match(value) else _ASN1Type.UTF8String
    # Go checks no lengths (a country of any length is accepted upstream); cryptography would refuse
    return x509.NameAttribute(oid, value, _type=kind, _validate=False)


def other_name(oid: str, value: str) -> x509.OtherName:
    """An otherName SAN whose value is ``[0] EXPLICIT UTF8String`` (what OpenBao writes for
    ``other_sans``); cryptography takes the inner value as DER, built here by hand.

    An OID Go cannot marshal raises 500 ``error marshaling other SANs: strconv.Atoi: parsing "":
    invalid syntax`` / ``... cryptobyte: invalid OID: 1`` (upstream fails there too, at signing)."""
    try:
        arcs = go_oid_arcs(oid)
    except ValueError as exc:
        raise internal_error(f"error marshaling other SANs: {exc}") from None
    if not oid_encodable(arcs):
        raise internal_error(f"error marshaling other SANs: cryptobyte: invalid OID: {'.'.join(map(str, arcs))}")
    raw = value.encode()
    return x509.OtherName(x509.ObjectIdentifier(".".join(map(str, arcs))), der_tlv(0x0C, raw))


def go_oid_arcs(text: str) -> list[int]:
    """certutil ``StringToOid``: the dot-separated arcs through ``strconv.Atoi`` (a sign allowed).
    Raises ValueError with Go's text: ``strconv.Atoi: parsing "x": invalid syntax`` / ``value out
    of range``."""
    arcs = []
    for part in text.split("."):
        if not re.fullmatch(r"[+-]?[0-9]+", part):
            raise ValueError(f"strconv.Atoi: parsing {go_quote(part)}: invalid syntax")
        value = decimal_in_range(part, -(2 ** 63), 2 ** 63 - 1)
        if value is None:
            raise ValueError(f"strconv.Atoi: parsing {go_quote(part)}: value out of range")
        arcs.append(value)
    return arcs


def asn1_marshalable(arcs: list[int]) -> bool:
    """Whether ``encoding/asn1``'s Marshal takes the arcs (``makeObjectIdentifier``): at least two, the
    first at most 2, the second below 40 when the first is below 2. Negative arcs pass this check;
    :func:`asn1_marshaled_oid` says what is then written for them."""
    return len(arcs) >= 2 and arcs[0] <= 2 and (arcs[0] >= 2 or arcs[1] < 40)


def asn1_marshaled_oid(arcs: list[int]) -> str | None:
    """The OID ``encoding/asn1`` writes for arcs that pass :func:`asn1_marshalable`, read back as a
    dotted string, or None when it writes an empty OID.

    Go's ``oidEncoder`` writes ``40*arc0 + arc1`` (int64 arithmetic, wrapping) and then every later
    arc in base 128, and ``base128IntLength`` is 0 for a negative value, so a negative sub-identifier
    is written as no bytes at all: ``1.2.-5`` becomes ``1.2``, ``1.-1`` becomes ``0.39`` (39 read back
    by X.690's rule for the first sub-identifier). OpenBao 2.7.2 answers so for a role's
    ``policy_identifiers`` and for ``sign-revocation-list`` extensions (checked against the real
    server)."""
    first = (arcs[0] * 40 + arcs[1] + 2 ** 63) % 2 ** 64 - 2 ** 63
    written = [value for value in (first, *arcs[2:]) if value >= 0]
    if not written:
        return None
    head = written[0]
    top = 0 if head < 40 else 1 if head < 80 else 2
    return ".".join(map(str, (top, head - 40 * top, *written[1:])))


def oid_encodable(arcs: list[int]) -> bool:
    """Whether Go's encoders accept the arcs: at least two, none negative, the first at most 2, the
    second below 40 under 0 and 1 (``encoding/asn1``, ``cryptobyte``)."""
    return len(arcs) >= 2 and min(arcs) >= 0 and arcs[0] <= 2 and (arcs[0] == 2 or arcs[1] < 40)


_GO_KEY_USAGE_BITS = ("digitalsignature", "contentcommitment", "keyencipherment", "dataencipherment",
                      "keyagreement", "certsign", "crlsign", "encipheronly", "decipheronly")


def go_key_usage_der(wanted: set[str]) -> x509.UnrecognizedExtension:
    """KeyUsage as Go's ``marshalKeyUsage`` writes it (bit i = ``1 << i`` of ``x509.KeyUsage``, a
    minimal BIT STRING). Used for EncipherOnly/DecipherOnly without KeyAgreement, which Go writes
    as asked and cryptography's builder refuses."""
    value = sum(1 << i for i, name in enumerate(_GO_KEY_USAGE_BITS) if name in wanted)
    data = bytes(int(f"{(value >> shift) & 0xFF:08b}"[::-1], 2) for shift in (0, 8))
    data = data[:2] if data[1] else data[:1]
    last = data[-1]
    unused = (last & -last).bit_length() - 1 if last else 0
    return x509.UnrecognizedExtension(x509.oid.ExtensionOID.KEY_USAGE, der_tlv(0x03, bytes([unused]) + data))


def name_constraints_extension(permitted_dns_domains: Sequence[str]) -> x509.ExtensionType:
    """NameConstraints with these permitted dNSName subtrees, encoded as Go does (DER by hand, so a
    ``*.x.test`` constraint cryptography's builder refuses is written as upstream writes it).

    Raises 500 ``unable to parse created certificate: x509: failed to parse dnsName constraint
    "<d>"`` for a name Go writes but its own parser then refuses (empty label, space, ...)."""
    for domain in permitted_dns_domains:
        trimmed = domain[1:] if domain.startswith(".") else domain
        labels = trimmed.split(".") if trimmed else []
        if any(not label or any(not 33 <= ord(c) <= 126 for c in label) for label in labels):
            raise internal_error(f"unable to parse created certificate: x509: failed to parse dnsName constraint "
                                 f"{go_quote(domain)}")
    subtrees = b"".join(der_tlv(0x30, der_tlv(0x82, d.encode("utf-8"))) for d in permitted_dns_domains)
    der = der_tlv(0x30, der_tlv(0xA0, subtrees))
    return x509.UnrecognizedExtension(x509.oid.ExtensionOID.NAME_CONSTRAINTS, der)


NAME_CONSTRAINTS_OID = b"\x06\x03\x55\x1d\x1e"  # the encoded OIDs (06 03 55 1d ..) the DER helpers look for
KEY_USAGE_OID = b"\x06\x03\x55\x1d\x0f"


def _extension_value_span(der: bytes, oid_der: bytes) -> tuple[int, int] | None:
    """``(start, end)`` of the value inside the OCTET STRING of the extension with this OID."""
    at = der.find(oid_der)
    if at < 0:
        return None
    pos = at + len(oid_der)
    if der[pos:pos + 3] == b"\x01\x01\xff":
        pos += 3
    size, pos = der[pos + 1], pos + 2
    if size & 0x80:
        n = size & 0x7F
        size, pos = int.from_bytes(der[pos:pos + n], "big"), pos + n
    return pos, pos + size


def extension_value_der(der: bytes, oid_der: bytes) -> bytes | None:
    """The encoded value (inside the OCTET STRING) of the extension whose OID encodes as ``oid_der``
    (:data:`NAME_CONSTRAINTS_OID`, :data:`KEY_USAGE_OID`), read from a certificate's DER; None when
    absent. Reads what cryptography refuses to decode (a ``*`` in a dNSName constraint)."""
    span = _extension_value_span(der, oid_der)
    return der[span[0]:span[1]] if span else None


def readable(cert: x509.Certificate) -> x509.Certificate:
    """``cert``, or - when cryptography cannot decode its extensions although Go writes and reads
    them - a copy it can read, for reading the OTHER extensions only (its signature no longer
    verifies): each ``*`` of a NameConstraints replaced by ``x`` (dNSName constraints like
    ``*.x.test``), KeyAgreement added to a KeyUsage holding EncipherOnly/DecipherOnly alone."""
    try:
        cert.extensions  # noqa: B018 - decoding them is the test
        return cert
    except ValueError:
        pass
    der = bytearray(cert.public_bytes(serialization.Encoding.DER))
    span = _extension_value_span(bytes(der), NAME_CONSTRAINTS_OID)
    if span:
        der[span[0]:span[1]] = der[span[0]:span[1]].replace(b"*", b"x")
    span = _extension_value_span(bytes(der), KEY_USAGE_OID)
    if span and span[1] - span[0] >= 4:
        bits = bytearray(der[span[0] + 3:span[1]])
        bits[0] |= 0x08
        der[span[0] + 2] = (bits[-1] & -bits[-1]).bit_length() - 1
        der[span[0] + 3:span[1]] = bits
    try:
        return x509.load_der_x509_certificate(bytes(der))
    except ValueError:
        return cert


#: the notBefore written first when the real one is before 1950 (UTCTime 500101000000Z)
PLACEHOLDER_NOT_BEFORE = datetime.datetime(1950, 1, 1, tzinfo=datetime.timezone.utc)
_PLACEHOLDER_UTCTIME = b"\x17\x0d500101000000Z"


def _element(der: bytes, pos: int) -> tuple[int, int]:
    """``(content start, end)`` of the DER element at ``pos``."""
    size, start = der[pos + 1], pos + 2
    if size & 0x80:
        n = size & 0x7F
        size, start = int.from_bytes(der[start:start + n], "big"), start + n
    return start, start + size


def with_early_not_before(cert: x509.Certificate, not_before: datetime.datetime, issuer_key: Any,
                          sign: Callable[[bytes], bytes]) -> x509.Certificate:
    """``cert`` (built with :data:`PLACEHOLDER_NOT_BEFORE`) with its notBefore set to ``not_before``
    (before 1950) as the GeneralizedTime Go writes, re-signed with ``sign(tbs) -> signature``:
    a back-dating ``not_before_duration`` can reach back that far, and cryptography's builder
    refuses such a date."""
    der = cert.public_bytes(serialization.Encoding.DER)
    tbs = cert.tbs_certificate_bytes
    at = tbs.find(_PLACEHOLDER_UTCTIME)
    if at < 2 or tbs[at - 2] != 0x30:
        raise ValueError("The not valid before date must be on or after 1950 January 1.")
    validity_end = at + tbs[at - 1]
    when = not_before.astimezone(datetime.timezone.utc).strftime("%Y%m%d%H%M%SZ").rjust(15, "0")
    validity = der_tlv(0x30, der_tlv(0x18, when.encode()) + tbs[at + len(_PLACEHOLDER_UTCTIME):validity_end])
    content_start, _ = _element(tbs, 0)
    new_tbs = der_tlv(0x30, tbs[content_start:at - 2] + validity + tbs[validity_end:])
    outer_start, _ = _element(der, 0)
    _, tbs_end = _element(der, outer_start)
    _, algorithm_end = _element(der, tbs_end)
    signature = sign(new_tbs)
    body = new_tbs + der[tbs_end:algorithm_end] + der_tlv(0x03, b"\x00" + signature)
    return x509.load_der_x509_certificate(der_tlv(0x30, body))
