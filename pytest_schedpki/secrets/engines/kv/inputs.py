"""How the KV engine reads its parameters, with the texts the plugin itself gives.

The plugin reads ``data``, ``custom_metadata`` and ``delete_version_after`` itself (not through the
framework's up-front validation), so their errors carry no ``Field validation failed:`` prefix:
``error converting input for field "data": '' expected type 'map[string]interface {}', got
unconvertible type 'string'`` (400). JSON numbers arrive as their text (Go's ``json.Number``) and
are stored as Python numbers, so they are written back as JSON numbers.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_schedpki.golang.duration import format_seconds
from pytest_schedpki.secrets.framework.fields import (
    ConversionError,
    JsonNumber,
    _go_type_name,
    convert,
    duration_seconds,
    to_string,
)
from pytest_schedpki.secrets.framework.logical import LogicalError, multierror_text, user_error

UINT32 = 1 << 32


def plain(value: Any) -> Any:
    """``value`` with every JSON number text turned into an int or float (recursively)."""
    if isinstance(value, JsonNumber):
        text = str(value)
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _conversion(name: str, reason: str):
    return user_error(f'error converting input for field "{name}": {reason}')


def map_input(name: str, value: Any) -> dict[str, Any]:
    """A ``map`` parameter read by the plugin: a JSON object, else 400 with mapstructure's text."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _conversion(name, f"'' expected type 'map[string]interface {{}}', got unconvertible type "
                                f"'{_go_type_name(value)}'")
    return plain(value)


def custom_metadata_input(value: Any) -> dict[str, str]:
    """``custom_metadata``: a JSON object whose values become strings (numbers keep their text,
    booleans become ``"1"``/``"0"``, null ``""``), then the plugin's limits: at most 64 keys, keys of
    1-128 and values of 1-512 bytes. Errors (400): the map conversion text, ``custom_metadata
    validation failed: '' expected type 'string', got unconvertible type '<T>'``, or a multierror
    of ``custom_metadata validation failed: ...`` lines."""
    map_input("custom_metadata", value)
    if value is None:
        return {}
    out: dict[str, str] = {}
    for key, item in value.items():
        try:
            out[str(key)] = to_string(item)
        except ConversionError:
            raise user_error("custom_metadata validation failed: '' expected type 'string', got unconvertible type "
                             f"'{_go_type_name(item)}'") from None
    problems: list[str] = []
    if len(out) > 64:
        problems.append(f"payload must contain at most 64 keys, provided {len(out)}")
    else:
        for key, item in out.items():
            if not 0 < len(key.encode()) <= 128:
                problems.append(f'length of key "{key}" is {len(key.encode())} but must be 0 < len(key) <= 128')
            if not 0 < len(item.encode()) <= 512:
                problems.append(f'length of value for key "{key}" is {len(item.encode())} but must be '
                                "0 < len(value) <= 512")
    if problems:
        raise LogicalError(400, [multierror_text(*(f"custom_metadata validation failed: {p}" for p in problems))])
    return out


def typed_input(name: str, kind: str, value: Any) -> Any:
    """A parameter the plugin converts itself (no ``Field validation failed:`` prefix):
    ``error converting input for field "<name>": <mapstructure reason>`` (400)."""
    try:
        return convert(kind, value)
    except ConversionError as exc:
        raise _conversion(name, str(exc)) from None


def duration_input(name: str, value: Any) -> int:
    """A duration the plugin parses (seconds, ``"<n>d"``, or a Go duration); negative is kept
    (the caller clamps). ``"<x>d"`` with a non-integer ``<x>`` fails as go-secure-stdlib does:
    ``strconv.ParseInt: parsing "<x>": invalid syntax``."""
    if isinstance(value, str) and value.endswith("d") and not re.fullmatch(r"[+-]?\d+", value[:-1] or "x"):
        raise _conversion(name, f'strconv.ParseInt: parsing "{value[:-1]}": invalid syntax')
    try:
        return duration_seconds(value, signed=True)
    except ConversionError as exc:
        raise _conversion(name, str(exc)) from None


def uint32(value: int) -> int:
    """Go's ``uint32(int)`` conversion (``-1`` -> ``4294967295``)."""
    return value % UINT32


def go_duration(seconds: int) -> str:
    """``time.Duration.String()`` of whole seconds (``3600`` -> ``"1h0m0s"``, ``0`` -> ``"0s"``)."""
    return format_seconds(seconds)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of ``patch`` onto ``target`` (a new value; inputs untouched)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out
