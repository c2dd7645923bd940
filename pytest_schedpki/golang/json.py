"""Reading a request body the way Go's ``json.NewDecoder(body).Decode(&v)`` reads it.

:func:`decode_first_value` returns the **first** JSON value of the body as a small node tree
(trailing bytes after it are ignored, as the Go decoder ignores them) or raises
:class:`~.scan.GoJSONError` with Go's own text (``EOF``, ``unexpected EOF``, or a scanner
message such as ``invalid character 'b' looking for beginning of object key string``).

Nodes keep what Go's struct decoder needs: objects keep **every** key in order (duplicates
included), strings keep their raw bytes (``time.Time`` parses those), numbers keep their literal.
Strings are unquoted like Go: invalid UTF-8 and lone surrogate escapes become U+FFFD.

:func:`go_format_value` renders a node like Go's ``fmt`` ``%v`` of the value ``encoding/json``
puts in an ``interface{}`` (maps with sorted keys, floats in ``%g`` form).
"""

from __future__ import annotations

import re
from decimal import Decimal

from .duration import _rune_width
from .scan import GoJSONError, first_value_end, quote_char

_SPACE = b" \t\r\n"

__all__ = ["GoJSONError", "JArr", "JNum", "JObj", "JStr", "decode_first_value", "go_format_value", "kind_name", "unmarshal_nodes", "unmarshal_value", "unquote"]


class JObj:
    """A JSON object: ``pairs`` is the list of ``(key, node)`` in body order, duplicates kept."""

    __slots__ = ("pairs",)

    def __init__(self):
        self.pairs: list[tuple[str, object]] = []


class JArr:
    """A JSON array: ``items`` is the list of nodes."""

    __slots__ = ("items",)

    def __init__(self):
        self.items: list[object] = []


class JStr:
    """A JSON string: ``value`` (unquoted, Go rules) and ``raw`` (the bytes between the quotes)."""

    __slots__ = ("value", "raw")

    def __init__(self, value: str, raw: bytes):
        self.value, self.raw = value, raw


class JNum:
    """A JSON number: ``raw`` is its literal text (``"3600"``, ``"1.5e3"``)."""

    __slots__ = ("raw",)

    def __init__(self, raw: str):
        self.raw = raw


def kind_name(node: object) -> str:
    """The JSON kind as Go's ``UnmarshalTypeError`` names it: string, number, bool, array, object, null."""
    if isinstance(node, JStr):
        return "string"
    if isinstance(node, JNum):
        return "number"
    if isinstance(node, bool):
        return "bool"
    if isinstance(node, JArr):
        return "array"
    if isinstance(node, JObj):
        return "object"
    return "null"


# -- building the tree from a validated value --------------------------------------------------

_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPES = {0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t", 0x5C: "\\", 0x2F: "/", 0x22: '"'}


def unquote(raw: bytes) -> str:
    """Go's ``unquoteBytes`` for the (scanner-validated) bytes between a string's quotes."""
    if raw.isascii() and b"\\" not in raw:
        return raw.decode("ascii")
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == 0x5C:
            e = raw[i + 1]
            if e != 0x75:
                out.append(_ESCAPES[e])
                i += 2
                continue
            r = int(raw[i + 2:i + 6], 16)
            i += 6
            if 0xD800 <= r < 0xE000:
                if r < 0xDC00 and raw[i:i + 2] == b"\\u" and i + 6 <= n:
                    r2 = int(raw[i + 2:i + 6], 16)
                    if 0xDC00 <= r2 < 0xE000:
                        out.append(chr(0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)))
                        i += 6
                        continue
                out.append("\ufffd")
                continue
            out.append(chr(r))
        elif c < 0x80:
            out.append(chr(c))
            i += 1
        else:
            width = _rune_width(raw, i)
            out.append(raw[i:i + width].decode("utf-8") if width > 1 else "\ufffd")
            i += width
    return "".join(out)


def _string_end(data: bytes, i: int) -> int:
    """Index of the closing quote of the string whose opening quote is at ``i``."""
    j = i + 1
    while True:
        q = data.index(b'"', j)
        k = q - 1
        while data[k] == 0x5C:
            k -= 1
        if (q - 1 - k) % 2 == 0:  # an even run of backslashes: the quote is not escaped
            return q
        j = q + 1


def _skip_space(data: bytes, i: int) -> int:
    while data[i] in _SPACE:
        i += 1
    return i


def _build(data: bytes) -> object:
    """Build nodes from ``data``, which holds exactly one valid JSON value (no recursion)."""
    stack: list[list] = []  # [container, pending key] per open container
    i = 0
    root: object = None
    while True:
        i = _skip_space(data, i)
        top = stack[-1] if stack else None
        c = data[i]
        if top is not None and c in b",":
            i += 1
            continue
        if top is not None and c in b"]}":
            stack.pop()
            i += 1
            value = top[0]
        else:
            if top is not None and isinstance(top[0], JObj) and top[1] is None:
                end = _string_end(data, i)
                top[1] = unquote(data[i + 1:end])
                i = _skip_space(data, end + 1) + 1  # past the ':'
                continue
            if c == 0x7B:
                stack.append([JObj(), None])
                i += 1
                continue
            if c == 0x5B:
                stack.append([JArr(), None])
                i += 1
                continue
            if c == 0x22:
                end = _string_end(data, i)
                raw = data[i + 1:end]
                value = JStr(unquote(raw), raw)
                i = end + 1
            elif c in b"tfn":
                word = {0x74: b"true", 0x66: b"false", 0x6E: b"null"}[c]
                value = {0x74: True, 0x66: False, 0x6E: None}[c]
                i += len(word)
            else:
                m = _NUMBER.match(data, i)
                value = JNum(m.group().decode("ascii"))
                i = m.end()
        if not stack:
            root = value
            return root
        parent = stack[-1]
        if isinstance(parent[0], JObj):
            parent[0].pairs.append((parent[1], value))
            parent[1] = None
        else:
            parent[0].items.append(value)


def decode_first_value(data: bytes) -> object:
    """Decode the first JSON value of ``data`` like ``json.Decoder.Decode`` (see the module doc).

    Returns a node: :class:`JObj`, :class:`JArr`, :class:`JStr`, :class:`JNum`, ``True``,
    ``False`` or ``None`` (JSON null). Raises :class:`GoJSONError` with Go's message.
    """
    end = first_value_end(data)
    return _build(data[:end])



_INTEGER = re.compile(r"-?[0-9]+")


def _go_number(raw: str):
    """A JSON number as the float64 Go decodes it (an integer literal exactly representable in a
    float64 stays a Python int); one that overflows float64 raises Go's UnmarshalTypeError text."""
    if _INTEGER.fullmatch(raw) and len(raw) < 16:
        return int(raw)
    value = float(raw)
    if value in (float("inf"), float("-inf")):
        raise GoJSONError(f"json: cannot unmarshal number {raw} into Go value of type float64")
    if _INTEGER.fullmatch(raw) and abs(int(raw)) <= 2 ** 53:
        return int(raw)
    return value


def _plain(node: object) -> object:
    if isinstance(node, JObj):
        return {}
    if isinstance(node, JArr):
        return []
    if isinstance(node, JStr):
        return node.value
    if isinstance(node, JNum):
        return _go_number(node.raw)
    return node


def unmarshal_nodes(data: bytes) -> object:
    """The node tree of ``data`` as ``json.Unmarshal`` checks it first: the whole input must be one
    JSON value (raises :class:`GoJSONError`: ``unexpected end of JSON input``, a scanner error, or
    ``invalid character 'x' after top-level value``)."""
    try:
        end = first_value_end(data)
    except GoJSONError as exc:
        if str(exc) in ("EOF", "unexpected EOF"):
            raise GoJSONError("unexpected end of JSON input") from None
        raise
    rest = _skip_space(data + b"\x00", end)
    if rest < len(data):
        raise GoJSONError(f"invalid character {quote_char(data[rest])} after top-level value", rest)
    return _build(data[:end])


def unmarshal_value(data: bytes, into_map: bool = False) -> object:
    """``json.Unmarshal(data, &v)`` with ``v`` an ``interface{}`` (with ``into_map``: a
    ``map[string]interface{}``), as plain Python values: dict (a repeated key keeps its last
    value), list, str, int/float (float64 range), bool, None.

    Raises :class:`GoJSONError` with Go's text: a syntax error anywhere in ``data`` (see
    :func:`unmarshal_nodes`; ``invalid character 'N' looking for beginning of value``); ``json:
    cannot unmarshal number 1e999 into Go value of type float64`` for the first number (in document
    order) beyond float64; with ``into_map``, ``json: cannot unmarshal array into Go value of type
    map[string]interface {}`` for a top-level value that is not an object (``null`` gives None).
    Nesting is walked without recursion."""
    root = unmarshal_nodes(data)
    if into_map and root is not None and not isinstance(root, JObj):
        raise GoJSONError(f"json: cannot unmarshal {kind_name(root)} into Go value of type map[string]interface {{}}")
    result = _plain(root)
    work: list[tuple[object, object, int]] = [(root, result, 0)]
    while work:
        node, value, i = work.pop()
        items = node.pairs if isinstance(node, JObj) else node.items if isinstance(node, JArr) else ()
        if i >= len(items):
            continue
        work.append((node, value, i + 1))
        key, child = items[i] if isinstance(node, JObj) else (None, items[i])
        child_value = _plain(child)
        if isinstance(value, dict):
            value[key] = child_value
        else:
            value.append(child_value)
        work.append((child, child_value, 0))
    return result


# -- Go fmt %v of interface{} values ------------------------------------------------------------

def go_format_float(value: float) -> str:
    """``strconv.FormatFloat(v, 'g', -1, 64)``: shortest digits, ``%e`` form when exp < -4 or >= 6."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    if text == "0":
        return "-0" if sign else "0"
    lead_zeros = len(digits) - len("".join(map(str, digits)).lstrip("0"))
    text = text.lstrip("0")
    dp = len(digits) - lead_zeros + exponent  # decimal point position relative to the first digit
    nd = len(text)
    exp = dp - 1
    neg = "-" if sign else ""
    if exp < -4 or exp >= 6:  # shortest %g decides with precision 6
        mant = text[0] + ("." + text[1:] if nd > 1 else "")
        return f"{neg}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{text}"
    if dp >= nd:
        return f"{neg}{text}{'0' * (dp - nd)}"
    return f"{neg}{text[:dp]}.{text[dp:]}"


def go_format_value(node: object) -> str:
    """Go's ``fmt.Sprintf("%v", v)`` for the ``interface{}`` value ``encoding/json`` makes of ``node``."""
    out: list[str] = []
    work: list[object] = [node]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, JObj):
            merged = dict(item.pairs)  # duplicate keys: the last one wins
            parts: list[object] = ["map["]
            for idx, key in enumerate(sorted(merged)):
                parts.extend([(" " if idx else "") + key + ":", merged[key]])
            parts.append("]")
            work.extend(reversed(parts))
        elif isinstance(item, JArr):
            parts = ["["]
            for idx, child in enumerate(item.items):
                if idx:
                    parts.append(" ")
                parts.append(child)
            parts.append("]")
            work.extend(reversed(parts))
        elif isinstance(item, JStr):
            out.append(item.value)
        elif isinstance(item, JNum):
            out.append(go_format_float(float(item.raw)))
        elif item is True or item is False:
            out.append("true" if item else "false")
        else:
            out.append("<nil>")
    return "".join(out)
