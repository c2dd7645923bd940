"""Go's ``time.ParseDuration`` and ``Duration.String()``, in nanoseconds, with Go's error texts.

Both upstreams speak Go durations: Nomad's MaxTokenTTL and leeways, Vault's ``ttl``/``max_ttl``
and its warnings (``TTL "768h0m0s" is longer than ...``).
"""

from __future__ import annotations

import re

NANOSECOND = 1
MICROSECOND = 1_000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS = {
    "ns": NANOSECOND, "us": MICROSECOND, "\u00b5s": MICROSECOND, "\u03bcs": MICROSECOND,
    "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR,
}
_MAX_INT64 = (1 << 63) - 1
_PART = re.compile(r"([0-9]*)(\.[0-9]*)?([^0-9.]*)")


class GoDurationError(ValueError):
    """A duration Go would refuse; ``str()`` is Go's error text, e.g. ``time: invalid duration "abc"``."""


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the printable ASCII/Unicode texts duration errors show."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def parse_duration(text: str) -> int:
    """Parse a Go duration string (``"1h30m"``, ``"1.5h"``, ``"-1h"``, ``"300ms"``, ``"0"``) into
    nanoseconds.

    Raises :class:`GoDurationError` with Go's text: ``time: invalid duration "<s>"`` (also for
    ``""``), ``time: missing unit in duration "<s>"``, ``time: unknown unit "<u>" in duration "<s>"``.
    """
    orig = text
    quoted = go_quote(orig)
    invalid = GoDurationError(f"time: invalid duration {quoted}")
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if s == "":
        raise invalid
    total = 0
    while s:
        if not (s[0].isdigit() or s[0] == "."):
            raise invalid
        m = _PART.match(s)
        whole, frac, rest = m.group(1), m.group(2) or "", s[m.end(2) if m.group(2) else m.end(1):]
        if whole == "" and frac in ("", "."):
            raise invalid
        unit_match = re.match(r"[^0-9.]*", rest)
        unit = unit_match.group(0)
        if unit == "":
            raise GoDurationError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise GoDurationError(f"time: unknown unit {go_quote(unit)} in duration {quoted}")
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if frac[1:]:
            digits = frac[1:]
            value += int(int(digits) * scale / (10 ** len(digits)))
        if value > _MAX_INT64:
            raise invalid
        total += value
        if total > _MAX_INT64 + (1 if neg else 0):
            raise invalid
        s = rest[len(unit):]
    return -total if neg else total


def format_duration(ns: int) -> str:
    """Go's ``Duration.String()``: ``0s``, ``1h0m0s``, ``1m30s``, ``1.5s``, ``1.5ms``, ``100ns``, ``1µs``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u < MICROSECOND:
            out = f"{u}ns"
        elif u < MILLISECOND:
            out = _frac(u, 3) + "\u00b5s"
        else:
            out = _frac(u, 6) + "ms"
    else:
        secs_part = _frac(u % MINUTE, 9) + "s"
        minutes = u // MINUTE
        if minutes == 0:
            out = secs_part
        else:
            hours = minutes // 60
            out = (f"{hours}h" if hours else "") + f"{minutes % 60}m" + secs_part
    return "-" + out if neg else out


def _frac(value: int, precision: int) -> str:
    whole, frac = divmod(value, 10**precision)
    frac_text = f"{frac:0{precision}d}".rstrip("0")
    return f"{whole}.{frac_text}" if frac_text else str(whole)


def format_seconds(seconds: int | float) -> str:
    """``Duration.String()`` of a whole number of seconds (Vault's TTL warnings)."""
    return format_duration(int(round(seconds * SECOND)))
