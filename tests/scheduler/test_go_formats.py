"""Go text formats the scheduler reproduces: durations, RFC 3339 times, JSON scanner errors, ``%v``."""

import pytest

from pytest_schedpki.golang.duration import GoDurationError, format_duration, parse_duration, to_nanoseconds
from pytest_schedpki.golang.json import GoJSONError, decode_first_value, go_format_value
from pytest_schedpki.golang.time import GoTimeError, parse_rfc3339

S = 1_000_000_000


@pytest.mark.parametrize("ns, text", [
    (0, "0s"), (1, "1ns"), (1_500, "1.5\u00b5s"), (1_500_000, "1.5ms"), (S, "1s"), (int(1.5 * S), "1.5s"),
    (60 * S, "1m0s"), (90 * S, "1m30s"), (3600 * S, "1h0m0s"), (86400 * S, "24h0m0s"), (-3600 * S, "-1h0m0s"),
    ((1 << 63) - 1, "2562047h47m16.854775807s"), (-(1 << 63), "-2562047h47m16.854775808s"),
])
def test_format_duration_is_go_duration_string(ns, text):
    assert format_duration(ns) == text


@pytest.mark.parametrize("text, ns", [
    ("1h30m", 5400 * S), ("1.5h", 5400 * S), ("-1h", -3600 * S), ("+5s", 5 * S), ("0", 0), ("-0", 0), (".5s", S // 2),
    ("1.s", S), ("1\u00b5s", 1000), ("1\u03bcs", 1000), ("1us", 1000), ("2562047h47m16.854775807s", (1 << 63) - 1),
    ("1.0000000000000000000001s", S),
])
def test_parse_duration_accepts_go_syntax(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'), ("-", 'time: invalid duration "-"'), (".s", 'time: invalid duration ".s"'),
    ("1h5", 'time: missing unit in duration "1h5"'), ("1e5s", 'time: unknown unit "e" in duration "1e5s"'),
    ("5\u00b5", 'time: unknown unit "\\xc2\\xb5" in duration "5\\xc2\\xb5"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ('1"h', 'time: unknown unit "\\"h" in duration "1\\"h"'),
])
def test_parse_duration_errors_are_go_texts(text, message):
    with pytest.raises(GoDurationError) as exc:
        parse_duration(text)
    assert str(exc.value) == message


def test_python_side_durations():
    import datetime

    assert to_nanoseconds(60) == 60 * S and to_nanoseconds(0.5) == S // 2
    assert to_nanoseconds(datetime.timedelta(minutes=1, microseconds=3)) == 60 * S + 3000
    assert to_nanoseconds("1h") == 3600 * S
    with pytest.raises(ValueError):
        to_nanoseconds(True)


@pytest.mark.parametrize("raw, shown", [
    ("2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"),
    ("2020-01-01T00:00:00.100000000Z", "2020-01-01T00:00:00.1Z"),
    ("2020-01-01T00:00:00.123456789123Z", "2020-01-01T00:00:00.123456789Z"),
    ("2020-01-01T00:00:00+00:00", "2020-01-01T00:00:00Z"),
    ("2020-01-01T5:06:07-07:30", "2020-01-01T05:06:07-07:30"),
    ("2020-01-01T00:00:00,5Z", "2020-01-01T00:00:00.5Z"),
    ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
    ("9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999Z"),
])
def test_rfc3339_round_trips_like_go(raw, shown):
    assert parse_rfc3339(raw.encode()).rfc3339nano() == shown


@pytest.mark.parametrize("raw, message", [
    ("2020-13-01T00:00:00Z", 'parsing time "2020-13-01T00:00:00Z": month out of range'),
    ("2020-01-01T24:00:00Z", 'parsing time "2020-01-01T24:00:00Z": hour out of range'),
    ("2020-01-01T00:00:00", 'parsing time "2020-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"'),
    ("2020-01-01 00:00:00Z", 'parsing time "2020-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"'),
    ("2020-01-01T00:00:00Zx", 'parsing time "2020-01-01T00:00:00Zx": extra text: "x"'),
    ("2020-01-01T00:00:00+25:00", 'parsing time "2020-01-01T00:00:00+25:00": time zone offset hour out of range'),
    ("2020-1-01T00:00:00Z", 'parsing time "2020-1-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-01T00:00:00Z" as "01"'),
])
def test_rfc3339_errors_are_go_parse_errors(raw, message):
    with pytest.raises(GoTimeError) as exc:
        parse_rfc3339(raw.encode())
    assert str(exc.value) == message


@pytest.mark.parametrize("data, message", [
    (b"", "EOF"), (b" \n", "EOF"), (b"[", "unexpected EOF"), (b"nul", "unexpected EOF"),
    (b"\xc3\xa9", "invalid character '\u00c3' looking for beginning of value"),
    (b"\x80", "invalid character '\\u0080' looking for beginning of value"),
    (b"\\", "invalid character '\\\\' looking for beginning of value"),
    (b'"\\u12z"', "invalid character 'z' in \\u hexadecimal character escape"),
    (b"1e+x", "invalid character 'x' in exponent of numeric literal"),
    (b"-a", "invalid character 'a' in numeric literal"),
    (b"[" * 10001, "invalid character '[' exceeded max depth"),
])
def test_json_scanner_errors(data, message):
    with pytest.raises(GoJSONError) as exc:
        decode_first_value(data)
    assert str(exc.value) == message


def test_deep_but_legal_nesting_is_decoded_without_recursion():
    node = decode_first_value(b"[" * 5000 + b"]" * 5000)
    assert go_format_value(node).startswith("[[[[")


@pytest.mark.parametrize("data, shown", [
    (b"[1e6, 123456, 1234567, 0.0001, 0.00001, -0.0, 100, 1.5]", "[1e+06 123456 1.234567e+06 0.0001 1e-05 -0 100 1.5]"),
    (b'{"b": null, "a": {"c": [true, "x"]}, "b": 2}', "map[a:map[c:[true x]] b:2]"),
])
def test_go_percent_v(data, shown):
    assert go_format_value(decode_first_value(data)) == shown
