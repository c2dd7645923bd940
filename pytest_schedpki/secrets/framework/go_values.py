"""Go's weak conversions of a request value, as OpenBao's framework and mapstructure make them, with
their error texts: strings, booleans, integers and durations (:mod:`.fields` types requests with them).
"""

from __future__ import annotations

import re
from typing import Any

from pytest_schedpki.golang.duration import SECOND, GoDurationError, go_quote, parse_duration


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


def _int64(number: int) -> int:
    if not -(2 ** 63) <= number < 2 ** 63:
        raise ConversionError(_INT_RANGE)
    return number


def to_int(value: Any) -> int:
    """mapstructure weak decode to int (strings via ``strconv.ParseInt(s, 0, 64)``)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, JsonNumber):
        try:
            number = int(str(value))
        except ValueError:
            raise ConversionError(_INT_SYNTAX) from None
        return _int64(number)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        if value == "":
            return 0
        try:
            number = int(value, 0)
        except ValueError:
            raise ConversionError(_INT_SYNTAX) from None
        return _int64(number)
    if value is None:
        return 0
    raise _unconvertible("int", value)


DURATION_OVERFLOW = "multiplication of durations resulted in overflow, one operand may be too large"
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_MAX_INT64_DIGITS = 19


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: the number, or None when Go would refuse it (not decimal, or out
    of the int64 range). Longer digit strings are refused before ``int()``, which raises for more than
    ``sys.get_int_max_str_digits()`` digits."""
    if not _DECIMAL.fullmatch(text) or len(text.lstrip("+-").lstrip("0")) > _MAX_INT64_DIGITS:
        return None
    number = int(text)
    return number if -(2 ** 63) <= number < 2 ** 63 else None


def _times(count: int, unit_seconds: int) -> int:
    """go-secure-stdlib ``overflowMul(time.Duration(count), unit)`` in seconds: ``count`` units as
    nanoseconds must fit an int64, else :data:`DURATION_OVERFLOW`."""
    if not -(2 ** 63) <= count * unit_seconds * SECOND < 2 ** 63:
        raise ConversionError(DURATION_OVERFLOW)
    return count * unit_seconds


def duration_seconds(value: Any, signed: bool = False) -> int:
    """go-secure-stdlib ``ParseDurationSecond`` (``parseutil/parseutil.go``), in seconds: ``""`` is 0;
    an integer string or number is seconds; ``"<n>d"`` is days; anything else a Go duration. Seconds or
    days whose nanoseconds overflow an int64 (more than 9223372036 seconds or 106751 days either way):
    ``multiplication of durations resulted in overflow, one operand may be too large``. Other types:
    ``could not parse duration from input``. Unsigned fields (``TypeDurationSecond``) then refuse
    negatives: ``cannot provide negative value '<n>'``. Raises :class:`ConversionError` with those texts."""
    if isinstance(value, JsonNumber):
        value = str(value)
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise ConversionError("could not parse duration from input")
    if isinstance(value, float) and not -(2 ** 63) <= value < 2 ** 63:
        raise ConversionError(DURATION_OVERFLOW)  # time.Duration(value) is out of range (Go: the int64 minimum)
    if isinstance(value, (int, float)):
        seconds = _times(int(value), 1)
    elif isinstance(value, str):
        number = _parse_int64(value) if value else 0
        if value == "":
            seconds = 0
        elif number is not None:
            seconds = _times(number, 1)
        elif value.endswith("d"):  # strconv.ParseInt(days, 10, 64), its own error texts
            days = value[:-1]
            if not _DECIMAL.fullmatch(days):
                raise ConversionError(f"strconv.ParseInt: parsing {go_quote(days)}: invalid syntax")
            count = _parse_int64(days)
            if count is None:
                raise ConversionError(f"strconv.ParseInt: parsing {go_quote(days)}: value out of range")
            seconds = _times(count, 86400)
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
