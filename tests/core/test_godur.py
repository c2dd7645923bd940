"""Go duration parsing and formatting, pinned to Go's own outputs and error texts."""

import pytest

from pytest_schedpki.golang.duration import GoDurationError, format_duration, parse_duration

NS = 1
SEC = 1_000_000_000


@pytest.mark.parametrize("text, ns", [
    ("1h", 3600 * SEC), ("3600s", 3600 * SEC), ("1h30m", 5400 * SEC), ("1.5h", 5400 * SEC),
    ("90m", 5400 * SEC), ("-1h", -3600 * SEC), ("0", 0), ("+5s", 5 * SEC), ("300ms", 300_000_000),
    (".5s", SEC // 2), ("1us", 1000), ("1\u00b5s", 1000), ("100ns", 100), ("1.s", SEC),
])
def test_parse_accepts_go_syntax(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'),
    ("abc", 'time: invalid duration "abc"'),
    ("5", 'time: missing unit in duration "5"'),
    ("5x", 'time: unknown unit "x" in duration "5x"'),
    ("1h-", 'time: unknown unit "h-" in duration "1h-"'),
    (".s", 'time: invalid duration ".s"'),
    ("-", 'time: invalid duration "-"'),
])
def test_parse_errors_are_go_texts(text, message):
    with pytest.raises(GoDurationError) as exc:
        parse_duration(text)
    assert str(exc.value) == message


@pytest.mark.parametrize("ns, text", [
    (0, "0s"), (3600 * SEC, "1h0m0s"), (24 * 3600 * SEC, "24h0m0s"), (3600 * 3600 * SEC, "3600h0m0s"),
    (60 * SEC, "1m0s"), (90 * SEC, "1m30s"), (10 * SEC, "10s"), (1500 * 1_000_000, "1.5s"),
    (1_500_000, "1.5ms"), (100 * NS, "100ns"), (1000, "1\u00b5s"), (-3600 * SEC, "-1h0m0s"),
    (768 * 3600 * SEC, "768h0m0s"),
])
def test_format_matches_duration_string(ns, text):
    assert format_duration(ns) == text
