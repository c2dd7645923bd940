"""RFC 3339 times as OpenBao parses and prints them (Go ``time.Parse(time.RFC3339, ...)`` and
``Format(time.RFC3339Nano)``), with Go's error texts.

Used for ``not_after`` on CA generation (and usable by the issue/sign paths) and for the times that
OpenBao quotes inside its error messages.
"""

from __future__ import annotations

import calendar
import datetime
import re

from pytest_schedpki.golang.duration import time_quote

LAYOUT = "2006-01-02T15:04:05Z07:00"


class Rfc3339Error(ValueError):
    """A value Go's ``time.Parse(time.RFC3339, v)`` refuses; ``str()`` is Go's error text, e.g.
    ``parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"``."""


def _cannot(value: str, rest: str, element: str) -> Rfc3339Error:
    return Rfc3339Error(f"parsing time {time_quote(value)} as {time_quote(LAYOUT)}: cannot parse {time_quote(rest)} as {time_quote(element)}")


def _out_of_range(value: str, what: str) -> Rfc3339Error:
    return Rfc3339Error(f"parsing time {time_quote(value)}: {what} out of range")


def parse_rfc3339(value: str) -> datetime.datetime:
    """Parse ``2030-01-01T00:00:00Z`` / ``...+02:00`` / fractional seconds into an aware UTC datetime
    (sub-microsecond digits are dropped). Raises :class:`Rfc3339Error` with Go's message: ``cannot
    parse "<rest>" as "<element>"``, ``<field> out of range``, ``extra text: "<rest>"``."""
    rest = value
    fields: dict[str, int] = {}
    steps = (("2006", 4, "year"), ("-", 0, ""), ("01", 2, "month"), ("-", 0, ""), ("02", 2, "day"),
             ("T", 0, ""), ("15", 2, "hour"), (":", 0, ""), ("04", 2, "minute"), (":", 0, ""),
             ("05", 2, "second"))
    for element, width, name in steps:
        if width == 0:
            if not rest.startswith(element):
                raise _cannot(value, rest, element)
            rest = rest[len(element):]
            continue
        digits = rest[:width]
        if len(digits) < width or not digits.isdigit():
            raise _cannot(value, rest, element)
        fields[name] = int(digits)
        rest = rest[width:]
        limits = {"month": (1, 12), "hour": (0, 23), "minute": (0, 59), "second": (0, 59)}
        if name in limits and not limits[name][0] <= fields[name] <= limits[name][1]:
            raise _out_of_range(value, name)
    micro = 0
    m = re.match(r"[.,](\d+)", rest)
    if m:
        micro = int((m.group(1) + "000000")[:6])
        rest = rest[m.end():]
    if rest.startswith("Z"):
        offset = datetime.timedelta(0)
        rest = rest[1:]
    else:
        m = re.match(r"([+-])(\d\d):(\d\d)", rest)
        if not m:
            raise _cannot(value, rest, "Z07:00")
        hours, minutes = int(m.group(2)), int(m.group(3))
        if hours > 24 or minutes > 60:
            raise _out_of_range(value, "time zone offset hour" if hours > 24 else "time zone offset minute")
        offset = datetime.timedelta(hours=hours, minutes=minutes) * (-1 if m.group(1) == "-" else 1)
        rest = rest[m.end():]
    if rest:
        raise Rfc3339Error(f"parsing time {time_quote(value)}: extra text: {time_quote(rest)}")
    year, month, day = fields["year"], fields["month"], fields["day"]
    if not 1 <= day <= calendar.monthrange(max(year, 1), month)[1] or year == 0:
        raise _out_of_range(value, "day")
    local = datetime.datetime(year, month, day, fields["hour"], fields["minute"], fields["second"], micro,
                              tzinfo=datetime.timezone(offset))
    return local.astimezone(datetime.timezone.utc)


def format_rfc3339_nano(moment: datetime.datetime) -> str:
    """Go ``t.UTC().Format(time.RFC3339Nano)``: ``2026-11-21T05:42:36.268240026Z`` with trailing
    fractional zeros trimmed (``2030-01-01T00:00:00Z`` when whole)."""
    utc = moment.astimezone(datetime.timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += "." + f"{utc.microsecond:06d}".rstrip("0")
    return text + "Z"
