"""bao 2.7.2's texts for a JSON body that does not parse, where Python's decoder (or the port of Go's
scanner, for bodies nested too deeply for Python) stops: Go's ``encoding/json`` syntax errors with the
wordings bao uses (``after array element`` inside arrays, a comma or a colon before a closing bracket
named as such, bad escapes quoted as bao quotes them, a non-string member name, a minus sign without
a digit). :func:`syntax_reason` reads a ``json.JSONDecodeError``, :func:`scanner_reason` a
:class:`~pytest_schedpki.golang.scan.GoJSONError`; :func:`literal_error` names the first wrong
character of a ``true``/``false``/``null`` literal.
"""

from __future__ import annotations

import json
import re

from ..golang.duration import go_quote
from ..golang.scan import GoJSONError

LITERALS = {"t": "true", "f": "false", "n": "null"}


def scanner_reason(value: bytes, exc: GoJSONError) -> str:
    """bao 2.7.2's text for what the Go scanner port refused in ``value``: only ``exceeded max depth``
    where Go prefixes the character, and the wordings :func:`_reason` gives for the Python decoder
    (a comma before a closing bracket, bad escapes, a non-string member name)."""
    message = str(exc)
    if message.endswith("exceeded max depth"):
        return "exceeded max depth"
    if exc.offset is None:
        return message
    text = value.decode("utf-8", errors="replace")
    at = len(value[:exc.offset].decode("utf-8", errors="replace"))
    if _comma_before_close(text, at):
        return "invalid character ',' looking for beginning of value"
    if _colon_before_close(text, at):
        return "invalid character ':' looking for beginning of value"
    if message.endswith(("in string escape code", "hexadecimal character escape")):
        return _escape_error(text, text.rfind("\\", 0, at + 1))
    if message.endswith("looking for beginning of object key string"):
        return _member_name_error(text, at) or f"invalid character {_char(text[at])} looking for beginning of value"
    return message


def _char(ch: str) -> str:
    """Go's ``encoding/json`` quoteChar: the character between single quotes, escaped as
    ``strconv.Quote`` does when not printable (a BOM reads ``'\\ufeff'``)."""
    if "\udc80" <= ch <= "\udcff":  # a byte that is not UTF-8 (decoded with surrogateescape): Go shows the byte
        return f"'\\x{ord(ch) - 0xDC00:02x}'"
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + go_quote(ch)[1:-1] + "'"


def literal_error(text: str, pos: int) -> str:
    """Go's scanner text for a ``true``/``false``/``null`` literal that starts at ``pos`` of ``text`` and
    goes wrong: ``invalid character 'x' in literal true (expecting 'r')``, or ``unexpected EOF`` when the
    text ends inside it."""
    word = LITERALS[text[pos]]
    for offset, expected in enumerate(word):
        got = text[pos + offset] if pos + offset < len(text) else ""
        if got == "":
            return "unexpected EOF"
        if got != expected:
            return f"invalid character {_char(got)} in literal {word} (expecting {_char(expected)})"
    return f"invalid character {_char(text[pos])} looking for beginning of value"


def _escape_error(text: str, start: int) -> str:
    """bao 2.7.2's text for a bad escape whose backslash is at ``start``: the backslash and the next
    byte (``\\u`` and the next four bytes), or ``unexpected EOF`` when the text ends first. The
    sequence is written between backquotes, or with Go's ``%q`` when it holds a backquote, a space,
    a character that is not printable or a piece of a multi-byte character."""
    rest = text[start:start + 6].encode("utf-8", errors="surrogateescape")
    size = 6 if rest[1:2] == b"u" else 2
    if len(rest) < size:
        return "unexpected EOF"
    what = rest[:size].decode("utf-8", errors="surrogateescape")
    if any(ch == "`" or "\udc80" <= ch <= "\udcff" or ch.isspace() or not ch.isprintable() for ch in what):
        return f"invalid escape sequence {_go_quote_bytes(what)} in string"
    return f"invalid escape sequence `{what}` in string"


def _go_quote_bytes(text: str) -> str:
    """Go's ``%q`` of ``text`` decoded with ``surrogateescape``: a byte that is not UTF-8 as ``\\xNN``."""
    return '"' + "".join(f"\\x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else go_quote(ch)[1:-1]
                         for ch in text) + '"'


def _comma_before_close(text: str, pos: int) -> bool:
    """Whether a closing bracket at ``pos`` follows a comma: bao 2.7.2 then names the comma
    (``invalid character ',' looking for beginning of value``), in arrays and objects alike."""
    return text[pos:pos + 1] in ("]", "}") and text[:pos].rstrip(" \t\r\n").endswith(",")


def _colon_before_close(text: str, pos: int) -> bool:
    """Whether a ``:`` at ``pos``, where a comma or the end of a container belongs, is followed by a
    closing bracket: bao 2.7.2 then names it as it names a comma there (``invalid character ':'
    looking for beginning of value``); a ``:`` followed by anything else is a character after an
    element or a key:value pair."""
    return text[pos:pos + 1] == ":" and text[pos + 1:].lstrip(" \t\r\n")[:1] in ("]", "}")


def _member_name_error(text: str, pos: int) -> str | None:
    """bao 2.7.2's text where an object member name should start at ``pos`` but a value that is not a
    string does (``object member name must be a string``), or that value's own syntax error; None
    when no value starts there."""
    ch, after = text[pos], text[pos + 1:pos + 2]
    if ch in "{[" or ch in "0123456789":
        return "object member name must be a string"
    if ch == "-":
        if not after:
            return "unexpected EOF"
        return "object member name must be a string" if after in "0123456789" else \
            f"invalid character {_char(after)} in numeric literal"
    if ch in LITERALS:
        return "object member name must be a string" if text.startswith(LITERALS[ch], pos) else \
            literal_error(text, pos)
    return None


_CONTAINER_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _innermost_container(text: str, pos: int) -> str | None:
    """``"["`` or ``"{"``: the innermost array or object still open at ``pos`` (the text before ``pos``
    reads without error), or None at the top level."""
    stack: list[str] = []
    for m in _CONTAINER_TOKEN.finditer(text, 0, pos):
        token = m.group()
        if token in "[{":
            stack.append(token)
        elif token in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _number_goes_on(text: str, pos: int) -> bool:
    """Whether the number ending at ``pos`` can still take ``text[pos]``: a ``.`` before any fraction
    or exponent, an ``e``/``E`` before any exponent (``0E0E`` is a whole number and then a new
    character, which bao reports as such)."""
    start = pos
    while start and text[start - 1] in "0123456789.eE+-":
        start -= 1
    token = text[start:pos].lower()
    return "e" not in token and (text[pos] != "." or "." not in token)


def _number_tail_error(text: str, pos: int) -> str:
    """A number whose fraction or exponent has no digit (``8.``, ``8e``, ``8e+x``; Python's decoder
    stops before the ``.``/``e``): bao 2.7.2 names the character where the digit should be, ``in
    numeric literal``, or ``unexpected EOF`` at the end."""
    at = pos + 1
    if text[pos] in "eE" and text[at:at + 1] in ("+", "-"):
        at += 1
    after = text[at:at + 1]
    return f"invalid character {_char(after)} in numeric literal" if after else "unexpected EOF"


def syntax_reason(exc: json.JSONDecodeError) -> str:
    """Go's syntax-error text for where Python's decoder stopped (bao 2.7.2's wording: ``after array
    element`` inside arrays, ``after object key:value pair`` inside objects; a comma followed by a
    closing bracket is reported at the comma)."""
    text, pos = exc.doc, exc.pos
    rest = text[pos:].lstrip(" \t\r\n")
    if not rest or exc.msg.startswith("Unterminated string"):
        return "unexpected EOF"
    pos = len(text) - len(rest)
    ch = text[pos]
    if ch in ".eE" and pos == exc.pos and pos and text[pos - 1] in "0123456789" and _number_goes_on(text, pos):
        return _number_tail_error(text, pos)
    if exc.msg.startswith("Invalid control character"):
        return f"invalid character {_char(ch)} in string literal"
    if exc.msg.startswith(("Invalid \\escape", "Invalid \\uXXXX escape")):
        return _escape_error(text, pos - 1 if exc.msg.startswith("Invalid \\u") else pos)
    if exc.msg.startswith("Expecting ':' delimiter"):
        return f"invalid character {_char(ch)} after object key"
    if exc.msg.startswith("Expecting ',' delimiter"):
        if _colon_before_close(text, pos):
            return "invalid character ':' looking for beginning of value"
        where = "array element" if _innermost_container(text, pos) == "[" else "object key:value pair"
        return f"invalid character {_char(ch)} after {where}"
    if _comma_before_close(text, pos):
        return "invalid character ',' looking for beginning of value"
    if exc.msg.startswith("Expecting value") and ch in "}]" and text[:pos].rstrip(" \t\r\n").endswith(":"):
        # bao 2.7.2: a ``}`` there is a missing value, a ``]`` a character after a key:value pair
        return "missing value after object key" if ch == "}" else "invalid character ']' after object key:value pair"
    if exc.msg.startswith("Expecting property name"):
        key_error = _member_name_error(text, pos)
        if key_error:
            return key_error
    if ch in LITERALS:
        return literal_error(text, pos)
    if ch == "-":  # a number's sign: Go's scanner then wants a digit
        after = text[pos + 1:pos + 2]
        return f"invalid character {_char(after)} in numeric literal" if after else "unexpected EOF"
    return f"invalid character {_char(ch)} looking for beginning of value"
