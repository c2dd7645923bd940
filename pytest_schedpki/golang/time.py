"""Go ``time.Time`` as Nomad's JSON carries it: RFC 3339 in, RFC3339Nano out.

:class:`GoTime` is an instant in **nanoseconds since the Unix epoch** plus the zone offset (seconds
east of UTC) it was written with; it covers Go's whole JSON range (years 0000-9999, nanoseconds),
which Python's ``datetime`` does not.

* :func:`parse_rfc3339` follows ``time.Time.UnmarshalJSON`` (Go >= 1.20): the raw bytes between the
  quotes go to ``time.Parse(time.RFC3339, ...)`` (lenient: one-digit hours and a fractional second
  are accepted), and failures raise :class:`GoTimeError` with Go's ``time.ParseError`` text, e.g.
  ``parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"``.
* :meth:`GoTime.rfc3339nano` is ``time.RFC3339Nano`` (fraction with trailing zeros trimmed; ``Z``
  for a zero offset), the form of ``CreateTime``/``ModifyTime`` in responses.

The server's local zone is taken to be UTC, so an explicit ``+00:00`` offset formats back as ``Z``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from .duration import time_quote

NS = 1_000_000_000
DAY_NS = 86_400 * NS
RFC3339 = "2006-01-02T15:04:05Z07:00"
_ZERO_UNIX_S = -62_135_596_800  # 0001-01-01T00:00:00Z, Go's zero time


class GoTimeError(ValueError):
    """A time text Go rejects; ``str()`` is Go's exact message."""


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400  # floor division: no C-style adjustment needed
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


@dataclass(frozen=True, order=True)
class GoTime:
    """An instant: ``unix_ns`` nanoseconds since 1970-01-01T00:00:00Z, shown at ``offset`` seconds east of UTC."""

    unix_ns: int
    offset: int = 0

    @classmethod
    def from_datetime(cls, value: datetime.datetime) -> GoTime:
        """From an aware ``datetime`` (naive means UTC); stored in UTC like Go's ``time.Now().UTC()``."""
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        delta = value - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return cls((delta.days * 86_400 + delta.seconds) * NS + delta.microseconds * 1_000, 0)

    def is_zero(self) -> bool:
        """Go's ``IsZero``: the instant 0001-01-01T00:00:00Z, whatever the offset."""
        return self.unix_ns == _ZERO_UNIX_S * NS

    def to_datetime(self) -> datetime.datetime | None:
        """The instant as an aware UTC ``datetime`` (microseconds), or None outside Python's range."""
        try:
            return datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
                microseconds=self.unix_ns // 1_000
            )
        except OverflowError:
            return None

    def rfc3339nano(self) -> str:
        """Format like Go's ``time.RFC3339Nano`` in this time's own offset."""
        local = self.unix_ns + self.offset * NS
        days, rem = divmod(local, DAY_NS)
        y, m, d = _civil_from_days(days)
        secs, nanos = divmod(rem, NS)
        hh, rest = divmod(secs, 3600)
        mm, ss = divmod(rest, 60)
        frac = f".{nanos:09d}".rstrip("0") if nanos else ""
        if self.offset == 0:
            zone = "Z"
        else:
            sign = "-" if self.offset < 0 else "+"
            zh, zm = divmod(abs(self.offset) // 60, 60)
            zone = f"{sign}{zh:02d}:{zm:02d}"
        return f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}{frac}{zone}"


ZERO_TIME = GoTime(_ZERO_UNIX_S * NS, 0)


def _error(value: bytes, layout_elem: str, value_elem: bytes, message: str = "") -> GoTimeError:
    if message:
        return GoTimeError("parsing time " + time_quote(value) + message)
    return GoTimeError(
        "parsing time " + time_quote(value) + " as " + time_quote(RFC3339) + ": cannot parse "
        + time_quote(value_elem) + " as " + time_quote(layout_elem)
    )


def _isdigit(s: bytes, i: int) -> bool:
    return i < len(s) and 0x30 <= s[i] <= 0x39


def _getnum(s: bytes, fixed: bool) -> tuple[int, bytes] | None:
    if not _isdigit(s, 0):
        return None
    if not _isdigit(s, 1):
        return None if fixed else (s[0] - 48, s[1:])
    return (s[0] - 48) * 10 + (s[1] - 48), s[2:]


# The RFC 3339 layout as Go's parser walks it: (literal prefix, std element).
_CHUNKS = (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00"))


def parse_rfc3339(raw: bytes) -> GoTime:
    """Parse the raw bytes of a JSON string's content as Go's ``time.Parse(time.RFC3339, ...)``.

    Raises :class:`GoTimeError` with Go's message (layout/value elements, ``month out of range``,
    ``day out of range``, ``extra text``...).
    """
    avalue = bytes(raw)
    value = avalue
    year = month = day = hour = minute = sec = nsec = 0
    offset: int | None = None
    for prefix, std in _CHUNKS:
        pre = prefix.encode()
        if not value.startswith(pre):
            return _raise(_error(avalue, prefix, value))
        value = value[len(pre):]
        hold = value
        range_err = ""
        bad = False
        if std == "2006":
            if len(value) < 4 or not _isdigit(value, 0):
                bad = True
            else:
                p, value = value[:4], value[4:]
                text = p.decode("latin-1")
                body = text[1:] if text[0] in "+-" else text
                if not body.isdigit() or not body.isascii():
                    bad = True
                else:
                    year = int(text)
        elif std in ("01", "02", "04", "05"):
            got = _getnum(value, True)
            if got is None:
                bad = True
            else:
                num, value = got
                if std == "01":
                    month = num
                    range_err = "month" if not 1 <= num <= 12 else ""
                elif std == "02":
                    day = num
                elif std == "04":
                    minute = num
                    range_err = "minute" if num >= 60 else ""
                else:
                    sec = num
                    range_err = "second" if num >= 60 else ""
                    if not range_err and len(value) >= 2 and value[0] in b".," and _isdigit(value, 1):
                        n = 2
                        while _isdigit(value, n):
                            n += 1
                        digits = value[1:min(n, 10)]
                        nsec = int(digits) * 10 ** (10 - min(n, 10))
                        value = value[n:]
        elif std == "15":
            got = _getnum(value, False)
            if got is None:
                bad = True
            else:
                hour, value = got
                range_err = "hour" if hour >= 24 else ""
        else:  # Z07:00
            if value[:1] == b"Z":
                value, offset = value[1:], 0
            elif len(value) < 6 or value[3:4] != b":":
                bad = True
            else:
                sign, hh, mm, value = value[0:1], value[1:3], value[4:6], value[6:]
                hr_got = _getnum(hh, True)
                mm_got = _getnum(mm, True) if hr_got is not None else None
                hr = hr_got[0] if hr_got else 0
                mn = mm_got[0] if mm_got else 0
                if hr > 24:
                    range_err = "time zone offset hour"
                if mn > 60:
                    range_err = "time zone offset minute"
                bad = hr_got is None or mm_got is None or sign not in (b"+", b"-")
                offset = (hr * 60 + mn) * 60 * (-1 if sign == b"-" else 1)
        if range_err:
            return _raise(_error(avalue, std, value, ": " + range_err + " out of range"))
        if bad:
            return _raise(_error(avalue, std, hold))
    if value:
        return _raise(_error(avalue, "", value, ": extra text: " + time_quote(value)))
    if day < 1 or day > _days_in(month, year):
        return _raise(_error(avalue, "", value, ": day out of range"))
    wall = ((_days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + sec) * NS) + nsec
    off = offset or 0
    return GoTime(wall - off * NS, off)


def _raise(exc: GoTimeError):
    raise exc
