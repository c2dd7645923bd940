"""The reads of Go's ``golang.org/x/crypto/cryptobyte`` that ``crypto/x509`` parses with, as
predicates over DER: each says whether Go's read succeeds, so that :mod:`.goparse` can give Go's
error for the first one that fails.

``ReadASN1``: one identifier octet (no high tag numbers), a definite length of at most four octets in
its shortest form, the content present in full. OIDs: base-128 arcs without a leading 0x80 octet
(``ReadASN1ObjectIdentifier`` also caps each arc below 2^31). Booleans: exactly 0x00 or 0xFF.
"""

from __future__ import annotations

SEQUENCE, SET, BOOLEAN, INTEGER, BIT_STRING, OCTET_STRING, OID = 0x30, 0x31, 0x01, 0x02, 0x03, 0x04, 0x06


def read_any(data: bytes, pos: int) -> tuple[int, bytes, int] | None:
    """``ReadAnyASN1`` at ``pos``: ``(tag, content, next position)``, or ``None``."""
    if pos + 2 > len(data) or data[pos] & 0x1F == 0x1F:
        return None
    tag, first, pos = data[pos], data[pos + 1], pos + 2
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
    return tag, data[pos:pos + length], pos + length


def read_element(data: bytes, pos: int, tag: int) -> tuple[bytes, int] | None:
    """``ReadASN1`` of one element with identifier octet ``tag`` at ``pos``: ``(content, next
    position)``, or ``None`` (other tag, truncated, indefinite or non-minimal length)."""
    if pos >= len(data) or data[pos] != tag:
        return None
    element = read_any(data, pos)
    return None if element is None else (element[1], element[2])


def peek(data: bytes, pos: int, tag: int) -> bool:
    """``PeekASN1Tag``: whether the next element has identifier octet ``tag``."""
    return pos < len(data) and data[pos] == tag


def is_integer(content: bytes) -> bool:
    """INTEGER content Go accepts: non-empty and minimally encoded."""
    return bool(content) and not (len(content) > 1 and ((content[0] == 0 and content[1] < 0x80)
                                                        or (content[0] == 0xFF and content[1] >= 0x80)))


def is_boolean(content: bytes) -> bool:
    """``ReadASN1Boolean``'s content rule."""
    return len(content) == 1 and content[0] in (0x00, 0xFF)


def is_bit_string(content: bytes) -> bool:
    """``ReadASN1BitString``'s content rule: a padding count up to 7 whose bits are zero."""
    if not content or content[0] > 7:
        return False
    padding, bits = content[0], content[1:]
    return (not bits and padding == 0) or (bool(bits) and bits[-1] & ((1 << padding) - 1) == 0)


def oid_arcs(content: bytes) -> list[int] | None:
    """``ReadASN1ObjectIdentifier`` on the content octets: the arcs, or ``None``."""
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


def is_oid_der(content: bytes) -> bool:
    """``newOIDFromDER`` (``x509.OID``, no size limit on an arc): non-empty, the last octet ends an
    arc, no arc starts with 0x80."""
    if not content or content[-1] & 0x80:
        return False
    start = True
    for byte in content:
        if start and byte == 0x80:
            return False
        start = not byte & 0x80
    return True


def skip_optional(data: bytes, pos: int, tag: int) -> int | None:
    """``SkipOptionalASN1``: the position after an optional element, ``None`` when it is damaged."""
    if not peek(data, pos, tag):
        return pos
    element = read_element(data, pos, tag)
    return None if element is None else element[1]
