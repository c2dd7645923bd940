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

from .field_collections import KeyPairError, comma_int_slice, comma_string_slice, kv_pairs, string_slice
from .go_values import (  # noqa: F401 - re-exported: the framework's conversions are imported from here
    ConversionError,
    JsonNumber,
    _go_type_name,
    duration_seconds,
    parse_go_bool,
    to_bool,
    to_int,
    to_string,
)
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


@dataclass(frozen=True)
class Field:
    """One parameter: its framework type and default (returned by :meth:`FieldData.get` when absent)."""

    type: str
    default: Any = None
    required: bool = False


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
        kept = _DEFAULTS.get(id(field))
        if kept is None or kept[0] is not field:
            kept = (field, _default_of(field))
            if len(_DEFAULTS) < _DEFAULTS_MAX:  # schemas are a fixed set; bounded all the same
                _DEFAULTS[id(field)] = kept
        value = kept[1]
        return (type(value)(value) if isinstance(value, (list, dict)) else value), False

    def get(self, name: str) -> Any:
        """The converted value, or the default (the type's zero value when there is none)."""
        return self.get_ok(name)[0]

    def sent(self, name: str) -> bool:
        """Whether the request carried ``name`` (a ``null`` counts, Go sees the zero value; not for
        durations, see :meth:`get_ok`)."""
        return name in self._values


_DEFAULTS: dict[int, tuple[Field, Any]] = {}  # id(field) -> (field, its converted default); holds the field
_DEFAULTS_MAX = 8192


def _default_of(field: Field) -> Any:
    """What :meth:`FieldData.get` returns for an absent ``field``: its default converted to its type
    (an empty list for a slice without one), else the type's zero value (``ConversionError`` for a
    default the type refuses, raised on every read as before)."""
    default = field.default
    if isinstance(default, (list, dict)):
        default = type(default)(default)
    if default is None and field.type in (COMMA_STRING_SLICE, STRING_SLICE, COMMA_INT_SLICE):
        return []
    if default is not None or field.type == ANY:
        return convert(field.type, default) if field.type != ANY else default
    return _zero(field.type)


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
