"""Go's weak conversions of a request value, as OpenBao's framework and mapstructure make them, with
their error texts: strings, booleans, integers and durations (:mod:`.fields` types requests with them).
"""

from __future__ import annotations

from typing import Any

from pytest_schedpki.golang.duration import SECOND, GoDurationError, parse_duration
from pytest_schedpki.golang.strconv import RANGE, NumError, parse_int


class JsonNumber(str):
    """A JSON number kept as its source text (Go's ``json.Number``)."""


class ConversionError(ValueError):
    """A value that does not convert to the field type; ``str()`` is the Go/mapstructure reason."""


def _go_type_name(value: Any) -> str:
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, JsonNumber):
        return "json.Number"
    if value is None:
        return "<nil>"
    return "string"


def _unconvertible(target: str, value: Any) -> ConversionError:
    return ConversionError(f"'' expected type '{target}', got unconvertible type '{_go_type_name(value)}'")


def to_string(value: Any) -> str:
    """mapstructure weak decode to string: bools become ``"1"``/``"0"``, numbers their JSON text."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    if value is None:
        return ""
    raise _unconvertible("string", value)


_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_go_bool(text: str) -> bool:
    """Go ``strconv.ParseBool``; raises ConversionError with mapstructure's text."""
    if text in _GO_BOOLS:
        return _GO_BOOLS[text]
    raise ConversionError("'' cannot parse value as 'bool': strconv.ParseBool: invalid syntax")


def to_bool(value: Any) -> bool:
    """mapstructure weak decode to bool (``""`` is false; strings via ParseBool; numbers != 0)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, JsonNumber):
        return parse_go_bool(str(value))
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        return False if value == "" else parse_go_bool(value)
    if value is None:
        return False
    raise _unconvertible("bool", value)


_INT_SYNTAX = "'' cannot parse value as 'int': strconv.ParseInt: invalid syntax"


def _go_map_text(value: dict) -> str:
    return "map[" + " ".join(f"{k}:{_go_value_text(v)}" for k, v in sorted(value.items())) + "]"


def _go_value_text(value: Any) -> str:
    if isinstance(value, dict):
        return _go_map_text(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_value_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    return str(value)


_INT_RANGE = "'' cannot parse value as 'int': strconv.ParseInt: value out of range"


def to_int(value: Any) -> int:
    """mapstructure weak decode to int (strings via ``strconv.ParseInt(s, 0, 64)``)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, JsonNumber):
        return _parse_int64(str(value), 10)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        if value == "":
            return 0
        return _parse_int64(value, 0)
    if value is None:
        return 0
    raise _unconvertible("int", value)


def _parse_int64(text: str, base: int) -> int:
    """``strconv.ParseInt(text, base, 64)`` (Go's prefixes and underscores in base 0; no spaces, ASCII
    digits only; any length), its failure as mapstructure's text."""
    try:
        return parse_int(text, base, 64)
    except NumError as exc:
        raise ConversionError(_INT_RANGE if exc.reason == RANGE else _INT_SYNTAX) from None


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
DURATION_OVERFLOW = "multiplication of durations resulted in overflow, one operand may be too large"


def overflow_mul(count: int, unit_seconds: int) -> int:
    """go-secure-stdlib's ``overflowMul(time.Duration(count), unit)``: ``count * unit_seconds``, or
    ConversionError ``multiplication of durations resulted in overflow, one operand may be too large``
    when the product in nanoseconds leaves int64."""
    if not _INT64_MIN <= count * unit_seconds * 1_000_000_000 <= _INT64_MAX:
        raise ConversionError(DURATION_OVERFLOW)
    return count * unit_seconds


def duration_seconds(value: Any, signed: bool = False) -> int:
    """go-secure-stdlib ``ParseDurationSecond``: ``""`` is 0; an integer string (``ParseInt(s, 10,
    64)``, any length) or number is seconds; else ``"<n>d"`` is days (``strconv.ParseInt: parsing
    "<n>": ...``); anything else a Go duration. Seconds or days whose nanoseconds overflow int64:
    ``multiplication of durations resulted in overflow, one operand may be too large``. Other types:
    ``could not parse duration from input``. Unsigned fields refuse negatives: ``cannot provide
    negative value '<n>'``."""
    if isinstance(value, JsonNumber):
        value = str(value)
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise ConversionError("could not parse duration from input")
    if isinstance(value, float) and not -(2 ** 63) <= value < 2 ** 63:
        raise ConversionError(DURATION_OVERFLOW)  # time.Duration(value) is out of range (Go: the int64 minimum)
    if isinstance(value, (int, float)):
        seconds = overflow_mul(int(value), 1)
    elif isinstance(value, str):
        try:
            seconds = overflow_mul(parse_int(value, 10, 64), 1) if value != "" else 0
        except NumError:
            if value.endswith("d"):
                try:
                    days = parse_int(value[:-1], 10, 64)
                except NumError as exc:
                    raise ConversionError(str(exc)) from None
                seconds = overflow_mul(days, 86400)
            else:
                try:
                    seconds = int(parse_duration(value) / SECOND)
                except GoDurationError as exc:
                    raise ConversionError(str(exc)) from None
    elif value is None:
        seconds = 0
    else:
        raise ConversionError("could not parse duration from input")
    if not signed and seconds < 0:
        raise ConversionError(f"cannot provide negative value '{seconds}'")
    return seconds
