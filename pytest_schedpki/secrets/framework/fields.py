"""Request parameters as OpenBao's framework types them (``sdk/framework`` FieldData).

Values arrive as JSON (numbers kept as their text, like Go's ``json.Number``), as form fields or
as query strings (all strings: the CLI sends every value as a string). Each path declares a schema
``{name: Field}``; :func:`validate` converts every supplied value upfront, the way the framework's
``Validate()`` does, and fails with ``Field validation failed: error converting input for field
"<name>": <reason>`` (400) using the Go/mapstructure reason texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pytest_schedpki.golang.duration import SECOND, GoDurationError, go_quote, parse_duration

from .logical import user_error

STRING = "string"
LOWER_STRING = "lowercase_string"
NAME_STRING = "name_string"
BOOL = "bool"
INT = "int"
DURATION = "duration_second"  # seconds, >= 0
SIGNED_DURATION = "signed_duration_second"
COMMA_STRING_SLICE = "comma_string_slice"
STRING_SLICE = "string_slice"
COMMA_INT_SLICE = "comma_int_slice"
MAP = "map"
KV_PAIRS = "kv_pairs"  # map of strings, or "key=value" texts (OpenBao's TypeKVPairs)
ANY = "any"


class JsonNumber(str):
    """A JSON number kept as its source text (Go's ``json.Number``)."""


@dataclass(frozen=True)
class Field:
    """One parameter: its framework type and default (returned by :meth:`FieldData.get` when absent)."""

    type: str
    default: Any = None
    required: bool = False


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


def duration_seconds(value: Any, signed: bool = False) -> int:
    """go-secure-stdlib ``ParseDurationSecond``: ``""`` is 0; an integer string or number is seconds;
    ``"<n>d"`` is days; anything else a Go duration. Other types: ``could not parse duration from
    input``. Unsigned fields refuse negatives: ``cannot provide negative value '<n>'``."""
    if isinstance(value, JsonNumber):
        value = str(value)
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise ConversionError("could not parse duration from input")
    if isinstance(value, (int, float)):
        seconds = int(value)
    elif isinstance(value, str):
        if value == "":
            seconds = 0
        elif re.fullmatch(r"[+-]?\d+", value) and -(2 ** 63) <= int(value) < 2 ** 63:
            seconds = int(value)
        elif value.endswith("d"):  # strconv.ParseInt(days, 10, 64), its own error texts
            days = value[:-1]
            if not re.fullmatch(r"[+-]?\d+", days):
                raise ConversionError(f"strconv.ParseInt: parsing {go_quote(days)}: invalid syntax")
            if not -(2 ** 63) <= int(days) < 2 ** 63:
                raise ConversionError(f"strconv.ParseInt: parsing {go_quote(days)}: value out of range")
            seconds = int(days) * 86400
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


def _trim(items: list[str]) -> list[str]:
    return [i.strip() for i in items]


def _strings_of(items: list[Any]) -> list[str]:
    """mapstructure's weak decode of a JSON array into ``[]string``, items trimmed. An item that is an
    object or an array fails with its index and value, every such failure listed (sorted as text):
    ``1 error(s) decoding:\n\n* '[0]' expected type 'string', got unconvertible type
    'map[string]interface {}', value: 'map[oid:1.2.3]'``."""
    out, points = [], []
    for index, item in enumerate(items):
        if isinstance(item, (dict, list)):
            points.append(f"'[{index}]' expected type 'string', got unconvertible type '{_go_type_name(item)}', "
                          f"value: '{_go_value_text(item)}'")
        else:
            out.append(to_string(item).strip())
    if points:
        raise ConversionError(f"{len(points)} error(s) decoding:\n\n* " + "\n* ".join(sorted(points)))
    return out


def comma_string_slice(value: Any) -> list[str]:
    """``ParseCommaStringSlice``: a string splits on commas (``""`` is ``[]``); a list's items are
    weakly converted to strings; every item is trimmed."""
    if isinstance(value, JsonNumber):
        value = str(value)
    if isinstance(value, str):
        return [] if value == "" else _trim(value.split(","))
    if isinstance(value, list):
        return _strings_of(value)
    if value is None:
        return []
    if isinstance(value, bool):
        return [to_string(value)]
    if isinstance(value, dict) and not value:  # mapstructure: an empty map weakly decodes to an empty slice
        return []
    if isinstance(value, dict):
        raise ConversionError("1 error(s) decoding:\n\n* '[0]' expected type 'string', got unconvertible type "
                              f"'map[string]interface {{}}', value: '{_go_map_text(value)}'")
    raise _unconvertible("string", value)


def string_slice(value: Any) -> list[str]:
    """TypeStringSlice: ``""`` is ``[]``; a single value becomes a one-item list (no comma split)."""
    if isinstance(value, str) and value == "":
        return []
    if isinstance(value, list):
        return _strings_of(value)
    if value is None:
        return []
    if isinstance(value, dict):
        return []
    return _trim([to_string(value)])


def comma_int_slice(value: Any) -> list[int]:
    """TypeCommaIntSlice: a comma string or a list of int-like values."""
    if isinstance(value, str):
        return [] if value == "" else [to_int(v.strip()) for v in value.split(",")]
    if isinstance(value, list):
        return [to_int(v) for v in value]
    return [to_int(value)]


class KeyPairError(ConversionError):
    """A ``TypeKVPairs`` item without ``=`` or with an empty key; its text names the field, so
    :meth:`FieldData.validate` writes it (``invalid key pair at index 1 in field "meta"``)."""

    def __init__(self, index: int):
        super().__init__(f"invalid key pair at index {index}")
        self.index = index


def kv_pairs(value: Any) -> dict[str, str] | None:
    """OpenBao's ``TypeKVPairs``: an object whose values weakly decode to strings, else a list of
    ``key=value`` texts (a single value is a one-item list; split at the first ``=``). ``None`` stays
    ``None``. Raises :class:`KeyPairError` for an item without ``=`` or with an empty key."""
    if value is None:
        return None
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) for v in value.values()):
            return {str(k): to_string(v) for k, v in value.items()}
        raise ConversionError("decoding failed due to the following error(s):\n\n'[0]' expected type 'string', "
                              "got unconvertible type 'map[string]interface {}'")
    items = value if isinstance(value, list) else [value]
    result: dict[str, str] = {}
    for index, item in enumerate(items):
        if isinstance(item, (dict, list)):
            raise ConversionError("decoding failed due to the following error(s):\n\n"
                                  f"'[{index}]' expected type 'string', got unconvertible type '{_go_type_name(item)}'")
        key, equals, text = to_string(item).partition("=")
        if not equals or not key:
            raise KeyPairError(index)
        result[key] = text
    return result


_NAME_RE = re.compile(r"^\w(([\w.-]+)?\w)?$")


def convert(kind: str, value: Any) -> Any:
    """Convert ``value`` to the framework type ``kind``; raises ConversionError."""
    if kind == STRING:
        return to_string(value)
    if kind == LOWER_STRING:
        return to_string(value).lower()
    if kind == NAME_STRING:
        text = to_string(value)
        if not _NAME_RE.match(text):
            raise ConversionError("field does not match the formatting rules")
        return text
    if kind == BOOL:
        return to_bool(value)
    if kind == INT:
        return to_int(value)
    if kind == DURATION:
        return duration_seconds(value)
    if kind == SIGNED_DURATION:
        return duration_seconds(value, signed=True)
    if kind == COMMA_STRING_SLICE:
        return comma_string_slice(value)
    if kind == STRING_SLICE:
        return string_slice(value)
    if kind == COMMA_INT_SLICE:
        return comma_int_slice(value)
    if kind == KV_PAIRS:
        return kv_pairs(value)
    if kind == MAP:
        if isinstance(value, dict):
            return value
        if value is None:
            return {}
        raise ConversionError(f"'' expected a map, got '{'slice' if isinstance(value, list) else 'string'}'")
    return value


class FieldData:
    """Converted request values for one path: ``raw`` (what was sent, path captures included) plus the
    schema. ``get(name)`` returns the converted value or the field's default; ``get_ok(name)`` also
    says whether it was sent."""

    def __init__(self, raw: dict[str, Any], schema: dict[str, Field]):
        self.raw = raw
        self.schema = schema
        self._values: dict[str, Any] = {}

    def validate(self, prefix: str = "Field validation failed: ") -> None:
        """Convert every supplied value; raises the framework's 400 on the first failure, its text
        ``<prefix>error converting input for field "<name>": <why>`` (``prefix`` ``""`` for handlers
        that read their fields themselves, as the token store's role handler does)."""
        for name, value in self.raw.items():
            field = self.schema.get(name)
            if field is None:
                continue
            if value is None and field.type in (DURATION, SIGNED_DURATION):
                continue  # getPrimitive: a null duration is not set (the default applies)
            if value is None:  # Go weak-decodes JSON null to the type's zero value, and the field counts as sent
                try:
                    self._values[name] = convert(field.type, None)
                except ConversionError:
                    self._values[name] = _zero(field.type)
                continue
            try:
                self._values[name] = convert(field.type, value)
            except KeyPairError as exc:
                raise user_error(f'{prefix}error converting input for field "{name}": '
                                 f'invalid key pair at index {exc.index} in field "{name}"') from None
            except ConversionError as exc:
                raise user_error(f'{prefix}error converting input for field "{name}": {exc}') from None

    def get_ok(self, name: str) -> tuple[Any, bool]:
        """``(value, True)`` when the request carried ``name`` (``null`` as the type's zero value, as
        Go's framework reads it, except for durations: a ``null`` duration is not set), else
        ``(default, False)``."""
        if name in self._values:
            return self._values[name], True
        field = self.schema.get(name)
        if field is None:
            raise KeyError(f"unknown field: {name!r}")
        default = field.default
        if isinstance(default, (list, dict)):
            default = type(default)(default)
        if default is None and field.type in (COMMA_STRING_SLICE, STRING_SLICE, COMMA_INT_SLICE):
            return [], False
        if default is not None or field.type == ANY:
            return (convert(field.type, default) if field.type != ANY else default), False
        return _zero(field.type), False

    def get(self, name: str) -> Any:
        """The converted value, or the default (the type's zero value when there is none)."""
        return self.get_ok(name)[0]

    def sent(self, name: str) -> bool:
        """Whether the request carried ``name`` (a ``null`` counts, Go sees the zero value; not for
        durations, see :meth:`get_ok`)."""
        return name in self._values


def _zero(kind: str) -> Any:
    if kind in (STRING, LOWER_STRING, NAME_STRING):
        return ""
    if kind == BOOL:
        return False
    if kind in (INT, DURATION, SIGNED_DURATION):
        return 0
    if kind == MAP:
        return {}
    return None
