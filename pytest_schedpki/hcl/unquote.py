"""HCL1's string unquoting (``hcl/strconv/quote.go`` ``Unquote``): Go's escapes (``\\n``, ``\\x41``,
``\\u00e9``, ``\\101``, ...) outside ``${...}`` interpolations, which are copied as written.

:func:`unquote` takes a quoted STRING token's text and returns its value, or raises
:class:`UnquoteError` (``str()``: ``invalid syntax``, Go's ``strconv.ErrSyntax``). HCL1's
``Token.Value`` panics with ``unquote <text> err: invalid syntax`` on such a token; a decoder that
recovers (Nomad's ``hclDecode``) reports that text.
"""

from __future__ import annotations

_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}
_HEX = "0123456789abcdefABCDEF"


class UnquoteError(ValueError):
    """``strconv.ErrSyntax``."""

    def __init__(self) -> None:
        super().__init__("invalid syntax")


def _escape(s: str) -> tuple[str, str]:
    """One escape after the backslash: (value, rest)."""
    if not s:
        raise UnquoteError
    c, s = s[0], s[1:]
    if c in _SIMPLE:
        return _SIMPLE[c], s
    if c in "xuU":
        n = {"x": 2, "u": 4, "U": 8}[c]
        digits = s[:n]
        if len(digits) < n or any(d not in _HEX for d in digits):
            raise UnquoteError
        value = int(digits, 16)
        if c != "x" and value > 0x10FFFF:
            raise UnquoteError
        if 0xD800 <= value <= 0xDFFF and c != "x":
            return "\ufffd", s[n:]  # Go encodes a surrogate rune as U+FFFD
        return chr(value), s[n:]
    if c in "01234567":
        digits = s[:2]
        if len(digits) < 2 or any(d not in "01234567" for d in digits):
            raise UnquoteError
        value = int(c + digits, 8)
        if value > 255:
            raise UnquoteError
        return chr(value), s[2:]
    raise UnquoteError


def unquote(text: str) -> str:
    """``hclstrconv.Unquote(text)``. Raises :class:`UnquoteError`."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise UnquoteError
    s = text[1:-1]
    if "$" not in s and "{" not in s and "\n" in s:
        raise UnquoteError
    if "\\" not in s and '"' not in s and "$" not in s:
        return s
    out: list[str] = []
    while s:
        if s.startswith("${"):
            out.append("${")
            s = s[2:]
            braces = 1
            while s and braces:
                ch, s = s[0], s[1:]
                out.append(ch)
                braces += {"{": 1, "}": -1}.get(ch, 0)
            if braces:
                raise UnquoteError
            continue
        ch = s[0]
        if ch == "\n" or ch == '"':
            raise UnquoteError
        if ch != "\\":
            out.append(ch)
            s = s[1:]
            continue
        value, s = _escape(s[1:])
        out.append(value)
    return "".join(out)
