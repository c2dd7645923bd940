"""Go's ``strconv.ParseInt`` / ``strconv.ParseUint`` (``strconv/atoi.go``), with their error texts.

Python's ``int(text)`` refuses a decimal text of more than 4300 digits (``ValueError``,
``sys.get_int_max_str_digits()``); Go has no such limit: it reads digit by digit and stops with
``value out of range`` as soon as the value passes the type's bound. These functions do the same,
so a hostile 5000-digit number gets Go's answer instead of a Python exception, and
:func:`decimal_in_range` gives the same guarantee to callers that check a range themselves.
"""

from __future__ import annotations

import re

from pytest_schedpki.golang.duration import go_quote

# More significant digits than any value a range check here is asked about (2**128 has 39 digits),
# far fewer than int()'s 4300-digit limit.
_MAX_SIGNIFICANT = 80

_SHORT_DECIMAL = re.compile(r"[0-9]{1,18}")  # below 10**18: inside int64 and uint64, a plain int() suffices


class NumError(ValueError):
    """Go's ``*strconv.NumError``: ``str()`` is ``strconv.<func>: parsing "<text>": <reason>``;
    ``reason`` is ``invalid syntax`` or ``value out of range``; ``func`` is ``ParseInt`` or
    ``ParseUint``; ``num`` the text parsed (as Go, the whole text, sign included)."""

    def __init__(self, func: str, num: str, reason: str):
        super().__init__(f"strconv.{func}: parsing {go_quote(num)}: {reason}")
        self.func, self.num, self.reason = func, num, reason


SYNTAX = "invalid syntax"
RANGE = "value out of range"


def _digit(c: str) -> int:
    if "0" <= c <= "9":
        return ord(c) - 48
    low = c.lower()
    return ord(low) - 87 if "a" <= low <= "z" and c.isascii() else 99


def _underscore_ok(s: str) -> bool:
    """Go's ``underscoreOK``: underscores only between digits (or after a base prefix)."""
    saw = "^"
    i = 0
    if len(s) >= 1 and s[0] in "+-":
        s = s[1:]
    hexa = False
    if len(s) >= 2 and s[0] == "0" and s[1].lower() in "box":
        i = 2
        saw = "0"
        hexa = s[1].lower() == "x"
    while i < len(s):
        c = s[i]
        if "0" <= c <= "9" or (hexa and "a" <= c.lower() <= "f" and c.isascii()):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
        i += 1
    return saw != "_"


def parse_uint(text: str, base: int = 10, bits: int = 64, func: str = "ParseUint") -> int:
    """``strconv.ParseUint(text, base, bits)``; raises :class:`NumError`.

    ``base`` 0 reads Go's prefixes (``0x``, ``0o``, ``0b``, a leading ``0`` for octal) and
    underscores between digits. Digits are read in order, so an overflow found before a bad
    character is ``value out of range`` (as in Go), and a text of any length costs at most one
    pass over its leading zeros and ~``bits`` digits.
    """
    if base == 10 and _SHORT_DECIMAL.fullmatch(text) and bits == 64:
        return int(text)
    if text == "":
        raise NumError(func, text, SYNTAX)
    s, base0 = text, base == 0
    if base0:
        base = 10
        if s[0] == "0":
            if len(s) >= 3 and s[1].lower() in "box":
                base = {"b": 2, "o": 8, "x": 16}[s[1].lower()]
                s = s[2:]
            else:
                base, s = 8, s[1:]
    elif not 2 <= base <= 36:
        raise NumError(func, text, "invalid base " + str(base))
    max_val = (1 << bits) - 1
    cutoff = max_val // base + 1
    n, underscores = 0, False
    for c in s:
        if c == "_" and base0:
            underscores = True
            continue
        d = _digit(c)
        if d >= base:
            raise NumError(func, text, SYNTAX)
        if n >= cutoff:
            raise NumError(func, text, RANGE)
        n = n * base + d
        if n > max_val:
            raise NumError(func, text, RANGE)
    if underscores and not _underscore_ok(text):
        raise NumError(func, text, SYNTAX)
    return n


def parse_int(text: str, base: int = 10, bits: int = 64) -> int:
    """``strconv.ParseInt(text, base, bits)`` (an optional sign, then :func:`parse_uint`);
    raises :class:`NumError` naming ``ParseInt`` and the whole text."""
    if base == 10 and _SHORT_DECIMAL.fullmatch(text) and bits == 64:
        return int(text)
    if text == "":
        raise NumError("ParseInt", text, SYNTAX)
    body = text[1:] if text[0] in "+-" else text
    try:
        magnitude = parse_uint(body, base, bits)
    except NumError as exc:
        if exc.reason != RANGE:
            raise NumError("ParseInt", text, exc.reason) from None
        magnitude = 1 << bits
    cutoff = 1 << (bits - 1)
    negative = text[0] == "-"
    if magnitude > cutoff or (magnitude == cutoff and not negative):
        raise NumError("ParseInt", text, RANGE)
    return -magnitude if negative else magnitude


def decimal_in_range(text: str, low: int, high: int) -> int | None:
    """``int(text)`` for a decimal text already known to match ``[+-]?[0-9]+``, or None when the
    value is outside ``low <= value <= high`` (however many digits it has: leading zeros are
    skipped and a value longer than any bound asked about is out of range before ``int()`` runs,
    whose 4300-digit limit would raise ``ValueError``)."""
    sign = text[:1] if text[:1] in ("+", "-") else ""
    digits = text[len(sign):].lstrip("0") or "0"
    if len(digits) > _MAX_SIGNIFICANT:
        return None
    value = int(sign + digits)
    return value if low <= value <= high else None
