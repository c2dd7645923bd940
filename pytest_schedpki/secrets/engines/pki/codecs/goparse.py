"""Go's ``x509.ParseCertificate`` error texts, from a walk of the DER in Go's order (``crypto/x509``
``parser.go``: ``parseCertificate``, ``parseExtension``, ``processExtensions``).

``cryptography`` decides whether a certificate parses; this walk only says what Go would say, and
finds what Go refuses but ``cryptography`` accepts (a critical authority or subject key identifier,
a critical authority information access, an unreadable extension value that ``cryptography`` reads
lazily). Reads follow ``cryptobyte``: definite lengths of at most four octets in their shortest
form, one identifier octet, OIDs of base-128 arcs below 2^31 without a leading 0x80 octet, booleans
of exactly 0x00 or 0xFF.

Covered: the certificate and TBS framing, version, serial number, both signature algorithm
identifiers, issuer/validity/subject framing, the SPKI framing, the unique identifiers, each
extension's structure (OID, critical flag, value), duplicate extensions, the outermost structure of
the extensions Go interprets, and the signature. Texts for problems inside names, times, keys and
extension contents beyond their outermost element come from elsewhere (:mod:`.pem`) or stay
approximate (``x509: malformed certificate``).
"""

from __future__ import annotations

SEQUENCE, BOOLEAN, INTEGER, BIT_STRING, OCTET_STRING, OID = 0x30, 0x01, 0x02, 0x03, 0x04, 0x06


def read_element(data: bytes, pos: int, tag: int) -> tuple[bytes, int] | None:
    """cryptobyte ``ReadASN1`` of one element with identifier octet ``tag`` at ``pos``: ``(content,
    next position)``, or ``None`` (other tag, truncated, indefinite or non-minimal length)."""
    if pos + 2 > len(data) or data[pos] != tag:
        return None
    first, pos = data[pos + 1], pos + 2
    if first & 0x80:
        count = first & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            return None
        length = int.from_bytes(data[pos:pos + count], "big")
        if length < 0x80 or data[pos] == 0:
            return None
        pos += count
    else:
        length = first
    if pos + length > len(data):
        return None
    return data[pos:pos + length], pos + length


def is_integer(content: bytes) -> bool:
    """cryptobyte's INTEGER content rule: non-empty and minimally encoded."""
    return bool(content) and not (len(content) > 1 and ((content[0] == 0 and content[1] < 0x80)
                                                        or (content[0] == 0xFF and content[1] >= 0x80)))


def _oid_arcs(content: bytes) -> list[int] | None:
    """cryptobyte ``ReadASN1ObjectIdentifier`` on the content octets: the arcs, or ``None``."""
    values, value, octets = [], 0, 0
    for byte in content:
        if octets == 5 or value >= 1 << 24 or (octets == 0 and byte == 0x80):
            return None
        value, octets = (value << 7) | (byte & 0x7F), octets + 1
        if not byte & 0x80:
            values.append(value)
            value, octets = 0, 0
    if not values or octets:
        return None
    first = values[0]
    head = [0, first] if first < 40 else [1, first - 40] if first < 80 else [2, first - 80]
    return head + values[1:]


def _bit_string(content: bytes) -> bool:
    """cryptobyte ``ReadASN1BitString``'s content rule."""
    if not content or content[0] > 7:
        return False
    padding, bits = content[0], content[1:]
    return (not bits and padding == 0) or (bool(bits) and bits[-1] & ((1 << padding) - 1) == 0)


def _skip_optional(data: bytes, pos: int, tag: int) -> int | None:
    """``SkipOptionalASN1``: the position after an optional element, ``None`` when it is damaged."""
    if pos >= len(data) or data[pos] != tag:
        return pos
    element = read_element(data, pos, tag)
    return None if element is None else element[1]


# processExtensions: the outermost read of each extension Go interprets, and its text
_OUTERMOST = {
    "2.5.29.15": (BIT_STRING, "x509: invalid key usage"),
    "2.5.29.19": (SEQUENCE, "x509: invalid basic constraints"),
    "2.5.29.17": (SEQUENCE, "x509: invalid subject alternative names"),
    "2.5.29.30": (SEQUENCE, "x509: invalid NameConstraints extension"),
    "2.5.29.31": (SEQUENCE, "x509: invalid CRL distribution points"),
    "2.5.29.35": (SEQUENCE, "x509: invalid authority key identifier"),
    "2.5.29.37": (SEQUENCE, "x509: invalid extended key usages"),
    "2.5.29.14": (OCTET_STRING, "x509: invalid subject key identifier"),
    "2.5.29.32": (SEQUENCE, "x509: invalid certificate policies"),
    "1.3.6.1.5.5.7.1.1": (SEQUENCE, "x509: invalid authority info access"),
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
        arcs = None if oid is None else _oid_arcs(oid[0])
        if arcs is None:
            return "x509: malformed extension OID field"
        at, critical = oid[1], False
        if at < len(extension) and extension[at] == BOOLEAN:
            flag = read_element(extension, at, BOOLEAN)
            if flag is None or len(flag[0]) != 1 or flag[0][0] not in (0x00, 0xFF):
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
        rule = _OUTERMOST.get(dotted)
        if rule is not None:
            content = read_element(value, 0, rule[0])
            if content is None or (rule[0] == BIT_STRING and not _bit_string(content[0])):
                return rule[1]
    return None


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
    pos, version = 0, 1
    explicit = read_element(tbs, pos, 0xA0)
    if explicit is not None:
        inner = read_element(explicit[0], 0, INTEGER)
        if inner is None or inner[1] != len(explicit[0]) or not is_integer(inner[0]) or len(inner[0]) > 8 \
                or inner[0][0] & 0x80:
            return "x509: malformed version"
        version = int.from_bytes(inner[0], "big") + 1
        if version > 3:
            return "x509: invalid version"
        pos = explicit[1]
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
    spki = element[0]
    algorithm = read_element(spki, 0, SEQUENCE)
    if algorithm is None:
        return "x509: malformed public key algorithm identifier"
    key = read_element(spki, algorithm[1], BIT_STRING)
    if key is None or not _bit_string(key[0]):
        return "x509: malformed subjectPublicKey"
    if version > 1:
        pos = _skip_optional(tbs, pos, 0x81)
        if pos is None:
            return "x509: malformed issuerUniqueID"
        pos = _skip_optional(tbs, pos, 0x82)
        if pos is None:
            return "x509: malformed subjectUniqueID"
        if version == 3 and pos < len(tbs) and tbs[pos] == 0xA3:
            extensions = read_element(tbs, pos, 0xA3)
            if extensions is None:
                return "x509: malformed extensions"
            problem = _extensions_error(extensions[0])
            if problem:
                return problem
    signature = read_element(body, outer_ai[1], BIT_STRING)
    if signature is None or not _bit_string(signature[0]):
        return "x509: malformed signature"
    return None
