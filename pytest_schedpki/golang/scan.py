"""A port of Go's ``encoding/json`` scanner (``scanner.go``), state by state, for exact error texts.

:func:`first_value_end` finds where the first JSON value of a body ends, as ``json.Decoder``'s
``readValue`` does, or raises :class:`GoJSONError` with Go's message: ``EOF`` (only whitespace),
``unexpected EOF`` (the body ends inside a value), or a syntax error such as
``invalid character 'b' looking for beginning of object key string`` (the byte shown with Go's
``quoteChar``; bytes are taken one at a time, so a UTF-8 ``é`` shows as ``'Ã'``, as in Go).
Nesting deeper than 10000 is ``exceeded max depth``.
"""

from __future__ import annotations

import re

MAX_NESTING_DEPTH = 10_000


class GoJSONError(ValueError):
    """The body is not one readable JSON value; ``str()`` is Go's message, ``offset`` the byte where
    the scanner stopped (``None`` at the end of the input)."""

    def __init__(self, message: str, offset: int | None = None):
        super().__init__(message)
        self.offset = offset


_CONTINUE, _BEGIN_LITERAL, _BEGIN_OBJECT, _OBJECT_KEY, _OBJECT_VALUE, _END_OBJECT = 0, 1, 2, 3, 4, 5
_BEGIN_ARRAY, _ARRAY_VALUE, _END_ARRAY, _SKIP_SPACE, _END, _ERROR = 6, 7, 8, 9, 10, 11
_PARSE_OBJECT_KEY, _PARSE_OBJECT_VALUE, _PARSE_ARRAY_VALUE = 0, 1, 2
_SPACE = b" \t\r\n"
_HEX = b"0123456789abcdefABCDEF"


def quote_char(c: int) -> str:
    """Go's ``quoteChar``: the byte shown as a rune literal in scanner errors (``'b'``, ``'\\n'``)."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    if c == 0x5C:
        return "'\\\\'"
    short = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}
    if c in short:
        return f"'{short[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if 0x80 <= c <= 0xA0 or c == 0xAD:  # not printable in Go's strconv.IsPrint
        return f"'\\u{c:04x}'"
    return f"'{chr(c)}'"


class _Scanner:
    __slots__ = ("step", "parse_state", "err", "end_top")

    def __init__(self):
        self.step = _begin_value
        self.parse_state: list[int] = []
        self.err = ""
        self.end_top = False

    def error(self, c: int, context: str) -> int:
        self.step = _state_error
        self.err = "invalid character " + quote_char(c) + " " + context
        return _ERROR

    def push(self, c: int, state: int, success: int) -> int:
        self.parse_state.append(state)
        if len(self.parse_state) <= MAX_NESTING_DEPTH:
            return success
        return self.error(c, "exceeded max depth")

    def pop(self) -> None:
        self.parse_state.pop()
        if not self.parse_state:
            self.step, self.end_top = _end_top, True
        else:
            self.step = _end_value


def _state_error(s, c):
    return _ERROR


def _begin_value_or_empty(s, c):
    if c in _SPACE:
        return _SKIP_SPACE
    if c == 0x5D:  # ]
        return _end_value(s, c)
    return _begin_value(s, c)


def _begin_value(s, c):
    if c in _SPACE:
        return _SKIP_SPACE
    if c == 0x7B:  # {
        s.step = _begin_string_or_empty
        return s.push(c, _PARSE_OBJECT_KEY, _BEGIN_OBJECT)
    if c == 0x5B:  # [
        s.step = _begin_value_or_empty
        return s.push(c, _PARSE_ARRAY_VALUE, _BEGIN_ARRAY)
    nxt = {0x22: _in_string, 0x2D: _neg, 0x30: _zero, 0x74: _lit(b"rue", "true"),
           0x66: _lit(b"alse", "false"), 0x6E: _lit(b"ull", "null")}.get(c)
    if nxt is None and 0x31 <= c <= 0x39:
        nxt = _digits
    if nxt is None:
        return s.error(c, "looking for beginning of value")
    s.step = nxt
    return _BEGIN_LITERAL


def _begin_string_or_empty(s, c):
    if c in _SPACE:
        return _SKIP_SPACE
    if c == 0x7D:  # }
        s.parse_state[-1] = _PARSE_OBJECT_VALUE
        return _end_value(s, c)
    return _begin_string(s, c)


def _begin_string(s, c):
    if c in _SPACE:
        return _SKIP_SPACE
    if c == 0x22:
        s.step = _in_string
        return _BEGIN_LITERAL
    return s.error(c, "looking for beginning of object key string")


def _end_value(s, c):
    if not s.parse_state:
        s.step, s.end_top = _end_top, True
        return _end_top(s, c)
    if c in _SPACE:
        s.step = _end_value
        return _SKIP_SPACE
    ps = s.parse_state[-1]
    if ps == _PARSE_OBJECT_KEY:
        if c == 0x3A:  # :
            s.parse_state[-1] = _PARSE_OBJECT_VALUE
            s.step = _begin_value
            return _OBJECT_KEY
        return s.error(c, "after object key")
    if ps == _PARSE_OBJECT_VALUE:
        if c == 0x2C:  # ,
            s.parse_state[-1] = _PARSE_OBJECT_KEY
            s.step = _begin_string
            return _OBJECT_VALUE
        if c == 0x7D:
            s.pop()
            return _END_OBJECT
        return s.error(c, "after object key:value pair")
    if c == 0x2C:
        s.step = _begin_value
        return _ARRAY_VALUE
    if c == 0x5D:
        s.pop()
        return _END_ARRAY
    return s.error(c, "after array element")


def _end_top(s, c):
    if c not in _SPACE:
        s.error(c, "after top-level value")
    return _END


def _in_string(s, c):
    if c == 0x22:
        s.step = _end_value
        return _CONTINUE
    if c == 0x5C:
        s.step = _in_string_esc
        return _CONTINUE
    if c < 0x20:
        return s.error(c, "in string literal")
    return _CONTINUE


def _in_string_esc(s, c):
    if c in b'bfnrt\\/"':
        s.step = _in_string
        return _CONTINUE
    if c == 0x75:  # u
        s.step = _hex_step(4)
        return _CONTINUE
    return s.error(c, "in string escape code")


def _hex_step(remaining: int):
    def step(s, c):
        if c in _HEX:
            s.step = _in_string if remaining == 1 else _hex_step(remaining - 1)
            return _CONTINUE
        return s.error(c, "in \\u hexadecimal character escape")
    return step


def _neg(s, c):
    if c == 0x30:
        s.step = _zero
        return _CONTINUE
    if 0x31 <= c <= 0x39:
        s.step = _digits
        return _CONTINUE
    return s.error(c, "in numeric literal")


def _digits(s, c):
    if 0x30 <= c <= 0x39:
        return _CONTINUE
    return _zero(s, c)


def _zero(s, c):
    if c == 0x2E:
        s.step = _dot
        return _CONTINUE
    if c in b"eE":
        s.step = _exp
        return _CONTINUE
    return _end_value(s, c)


def _dot(s, c):
    if 0x30 <= c <= 0x39:
        s.step = _dot0
        return _CONTINUE
    return s.error(c, "after decimal point in numeric literal")


def _dot0(s, c):
    if 0x30 <= c <= 0x39:
        return _CONTINUE
    if c in b"eE":
        s.step = _exp
        return _CONTINUE
    return _end_value(s, c)


def _exp(s, c):
    if c in b"+-":
        s.step = _exp_sign
        return _CONTINUE
    return _exp_sign(s, c)


def _exp_sign(s, c):
    if 0x30 <= c <= 0x39:
        s.step = _exp0
        return _CONTINUE
    return s.error(c, "in exponent of numeric literal")


def _exp0(s, c):
    if 0x30 <= c <= 0x39:
        return _CONTINUE
    return _end_value(s, c)


def _lit(rest: bytes, word: str):
    """States after the first letter of true/false/null: expect ``rest`` byte by byte."""
    def make(i: int):
        def step(s, c):
            if c == rest[i]:
                s.step = _end_value if i == len(rest) - 1 else make(i + 1)
                return _CONTINUE
            return s.error(c, f"in literal {word} (expecting {quote_char(rest[i])})")
        return step
    return make(0)


def first_value_end(data: bytes) -> int:
    """Offset just past the first JSON value, as ``Decoder.readValue`` finds it; raises GoJSONError.

    Inside a string, a run of bytes that cannot end it (no quote, backslash or control byte) is
    skipped with one regex match, so a long string costs one step, not one per byte."""
    s = _Scanner()
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        op = s.step(s, c)
        if op == _END:
            return i
        if op in (_END_OBJECT, _END_ARRAY) and _end_value(s, 0x20) == _END:
            return i + 1
        if op == _ERROR:
            raise GoJSONError(s.err, i)
        i += 1
        if s.step is _in_string and i < n and data[i] >= 0x20 and data[i] not in b'"\\':
            i = _STRING_RUN.match(data, i).end()
    if s.step(s, 0x20) == _END:
        return len(data)
    if any(c not in _SPACE for c in data):
        raise GoJSONError("unexpected EOF")
    raise GoJSONError("EOF")


_STRING_RUN = re.compile(rb'[^"\\\x00-\x1f]*')  # bytes that keep the scanner inside a string
