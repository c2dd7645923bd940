"""Go ``time.Duration`` text: parsing like ``time.ParseDuration`` and formatting like ``Duration.String()``.

Durations are integers of **nanoseconds** (Go's ``time.Duration`` is an int64 of nanoseconds).

* :func:`parse_duration` accepts what Go accepts (``"1h30m"``, ``"1.5h"``, ``"-5s"``, ``"0"``,
  ``"300ms"``, ``"1µs"``...) and raises :class:`GoDurationError` with Go's exact texts:
  ``time: invalid duration "abc"``, ``time: missing unit in duration "5"``,
  ``time: unknown unit "x" in duration "5x"``. Note that ``""`` is an error, as in Go.
* :func:`format_duration` renders ``Duration.String()``: ``0s``, ``1h0m0s``, ``1m30s``, ``1.5s``,
  ``1.5ms``, ``100ns``, ``1µs`` (micro sign U+00B5).
* :func:`time_quote` is the quoting the ``time`` package uses inside those messages (non-ASCII and
  control bytes as ``\\xNN``); :func:`go_quote` is ``strconv.Quote``/``%q`` (printable Unicode kept).
* :func:`format_seconds` renders a whole number of seconds (Vault's TTL warnings).

Both upstreams speak Go durations: Nomad's MaxTokenTTL and leeways, Vault's ``ttl``/``max_ttl`` and
its warnings (``TTL "768h0m0s" is longer than permitted maxTTL ...``).
"""

from __future__ import annotations

import datetime

_MAX = 1 << 63  # magnitude bound of an int64 duration (the negative side may reach it)

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}

SECOND = 1_000_000_000


class GoDurationError(ValueError):
    """A duration text Go's ``time.ParseDuration`` rejects; ``str()`` is Go's exact message."""


def time_quote(text: str | bytes) -> str:
    """Quote ``text`` the way Go's ``time`` package does in error messages.

    Printable ASCII is kept (``"`` and ``\\`` get a backslash); every byte of a control or non-ASCII
    character is written as ``\\xNN`` (lowercase hex). ``bytes`` are taken as raw (maybe invalid) UTF-8.
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    out = ['"']
    i = 0
    while i < len(data):
        c = data[i]
        if 0x20 <= c < 0x80:
            out.append("\\" + chr(c) if c in (0x22, 0x5C) else chr(c))
            i += 1
            continue
        width = _rune_width(data, i) if c >= 0x80 else 1
        out.extend(f"\\x{b:02x}" for b in data[i:i + width])
        i += width
    out.append('"')
    return "".join(out)


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (the ``%q`` verb): printable characters kept, ``"`` and ``\\`` escaped,
    control characters as ``\\n``, ``\\t``, ``\\r`` (also ``\\a \\b \\f \\v``) or ``\\xNN``, other
    non-printable characters (a BOM, a zero-width space) as ``\\uNNNN`` / ``\\UNNNNNNNN``."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _GO_CONTROL_ESCAPES:
            out.append(_GO_CONTROL_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


_GO_CONTROL_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                       "\v": "\\v"}


def format_seconds(seconds: int | float) -> str:
    """``Duration.String()`` of a number of seconds (``2764800`` -> ``"768h0m0s"``)."""
    return format_duration(int(round(seconds * SECOND)))


def _rune_width(data: bytes, i: int) -> int:
    """Byte width of the UTF-8 rune at ``i``; 1 for an invalid byte (Go's ``utf8.DecodeRune``)."""
    lead = data[i]
    size = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    if size and i + size <= len(data):
        try:
            data[i:i + size].decode("utf-8")
            return size
        except UnicodeDecodeError:
            pass
    return 1


def _invalid(orig: str) -> GoDurationError:
    return GoDurationError("time: invalid duration " + time_quote(orig))


def parse_duration(text: str) -> int:
    """Parse a Go duration string into nanoseconds, exactly as ``time.ParseDuration`` does.

    A duration is an optional sign then one or more ``<decimal><unit>`` parts, units ``ns``, ``us``
    (or ``µs``/``μs``), ``ms``, ``s``, ``m``, ``h``; ``"0"`` alone needs no unit. Fractions are
    truncated to whole nanoseconds. Raises :class:`GoDurationError` with Go's message.
    """
    orig, s, neg = text, text, False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if s == "":
        raise _invalid(orig)
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise _invalid(orig)
        # integer part [0-9]*
        i = 0
        value = 0
        while i < len(s) and "0" <= s[i] <= "9":
            value = value * 10 + (ord(s[i]) - 48)
            if value > _MAX:
                raise _invalid(orig)
            i += 1
        pre = i > 0
        s = s[i:]
        # fraction part (\.[0-9]*)?
        frac, scale, post = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and "0" <= s[i] <= "9":
                if not overflow:
                    nxt = frac * 10 + (ord(s[i]) - 48)
                    if frac > (_MAX - 1) // 10 or nxt > _MAX:
                        overflow = True  # Go stops accumulating but keeps consuming digits
                    else:
                        frac, scale = nxt, scale * 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise _invalid(orig)
        # unit: everything up to the next '.' or digit
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise GoDurationError("time: missing unit in duration " + time_quote(orig))
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise GoDurationError("time: unknown unit " + time_quote(unit_text) + " in duration " + time_quote(orig))
        if value > _MAX // unit:
            raise _invalid(orig)
        value *= unit
        if frac > 0:
            value += int(float(frac) * (float(unit) / scale))
            if value > _MAX:
                raise _invalid(orig)
        total += value
        if total > _MAX:
            raise _invalid(orig)
    if neg:
        return -total
    if total > _MAX - 1:
        raise _invalid(orig)
    return total


def _frac(value: int, prec: int) -> tuple[str, int]:
    """Go's fmtFrac: the fraction digits of ``value`` (last ``prec`` digits), trailing zeros dropped."""
    digits = []
    printed = False
    for _ in range(prec):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    text = "".join(reversed(digits))
    return ("." + text if printed else ""), value


def format_duration(ns: int) -> str:
    """Render nanoseconds like Go's ``Duration.String()`` (``"1h0m0s"``, ``"1.5s"``, ``"0s"``)."""
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < 1_000:
            out = f"{u}ns"
        elif u < 1_000_000:
            frac, whole = _frac(u, 3)
            out = f"{whole}{frac}\u00b5s"
        else:
            frac, whole = _frac(u, 6)
            out = f"{whole}{frac}ms"
    else:
        frac, whole = _frac(u, 9)
        out = f"{whole % 60}{frac}s"
        whole //= 60
        if whole > 0:
            out = f"{whole % 60}m{out}"
            whole //= 60
            if whole > 0:
                out = f"{whole}h{out}"
    return "-" + out if neg else out


def to_nanoseconds(value: int | float | str | datetime.timedelta, what: str = "duration") -> int:
    """Coerce a Python-side duration to nanoseconds.

    ``int``/``float`` are **seconds**, ``timedelta`` is exact to the microsecond, ``str`` is a Go
    duration (``"1h"``). Raises ``ValueError`` (or :class:`GoDurationError`) for anything else.
    """
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected seconds, a timedelta or a Go duration string, got {value!r}")
    if isinstance(value, datetime.timedelta):
        return (value.days * 86_400 + value.seconds) * SECOND + value.microseconds * 1_000
    if isinstance(value, (int, float)):
        return int(round(value * SECOND))
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError(f"{what}: expected seconds, a timedelta or a Go duration string, got {value!r}")
