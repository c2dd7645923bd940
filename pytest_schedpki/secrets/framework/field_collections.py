"""The framework's collection types of a request value: comma and plain string slices, comma int
slices and key=value pairs (``TypeKVPairs``), with mapstructure's error texts (:mod:`.fields` types
requests with them).
"""

from __future__ import annotations

from typing import Any

from .go_values import (
    ConversionError,
    JsonNumber,
    _go_map_text,
    _go_type_name,
    _go_value_text,
    _unconvertible,
    to_int,
    to_string,
)


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
