"""Request bodies as OpenBao 2.7 reads them: the whole body is scanned token by token first
(``EnforceJSONComplexityLimits``), so trailing garbage after the object is an error too; then the
first value is decoded into a map with numbers kept as text (Go's ``json.Number``).

Errors: ``failed to decode JSON input: <reason>`` (400) with the reasons the live server gives:
``unexpected EOF``, ``invalid character 'a' looking for beginning of value``, ``missing value
after object key``, ``invalid character 'a' in literal true (expecting 'u')``, ``json: cannot
unmarshal array into Go value of type map[string]interface {}``.
"""

from __future__ import annotations

import json
from typing import Any

from .fields import JsonNumber
from .wire import user_error

_LITERALS = {"t": "true", "f": "false", "n": "null"}
_DECODER = json.JSONDecoder(parse_int=JsonNumber, parse_float=JsonNumber)


def _char(ch: str) -> str:
    return "'\\''" if ch == "'" else f"'{ch}'"


def _literal_error(text: str, pos: int) -> str:
    word = _LITERALS[text[pos]]
    for offset, expected in enumerate(word):
        got = text[pos + offset] if pos + offset < len(text) else ""
        if got == "":
            return "unexpected EOF"
        if got != expected:
            return f"invalid character {_char(got)} in literal {word} (expecting {_char(expected)})"
    return f"invalid character {_char(text[pos])} looking for beginning of value"


def _reason(exc: json.JSONDecodeError) -> str:
    text, pos = exc.doc, exc.pos
    rest = text[pos:].lstrip(" \t\r\n")
    if not rest or exc.msg.startswith("Unterminated string"):
        return "unexpected EOF"
    pos = len(text) - len(rest)
    ch = text[pos]
    if exc.msg.startswith("Invalid control character"):
        return f"invalid character {_char(ch)} in string literal"
    if exc.msg.startswith("Expecting ':' delimiter"):
        return f"invalid character {_char(ch)} after object key"
    if exc.msg.startswith("Expecting ',' delimiter"):
        return f"invalid character {_char(ch)} after object key:value pair"
    if exc.msg.startswith("Expecting value") and ch in "}]" and text[:pos].rstrip(" \t\r\n").endswith(":"):
        return "missing value after object key"
    if ch in _LITERALS:
        return _literal_error(text, pos)
    return f"invalid character {_char(ch)} looking for beginning of value"


def parse_json_body(body: bytes) -> dict[str, Any]:
    """Decode a request body into the request data map (``{}`` for an empty body or ``null``).

    Raises LogicalError 400 ``failed to decode JSON input: <reason>``.
    """
    text = body.decode("utf-8", errors="replace")
    if not text.strip(" \t\r\n"):
        return {}
    first: Any = None
    pos, seen = 0, False
    try:
        while True:
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if pos >= len(text):
                break
            if text[pos] in _LITERALS and not text.startswith(_LITERALS[text[pos]], pos):
                raise user_error(f"failed to decode JSON input: {_literal_error(text, pos)}")
            value, pos = _DECODER.raw_decode(text, pos)
            if not seen:
                first, seen = value, True
    except json.JSONDecodeError as exc:
        raise user_error(f"failed to decode JSON input: {_reason(exc)}") from None
    except RecursionError:
        raise user_error("failed to decode JSON input: exceeded max depth") from None
    if first is None:
        return {}
    if not isinstance(first, dict):
        kind = {list: "array", str: "string", bool: "bool", JsonNumber: "number"}.get(type(first), "value")
        raise user_error(f"failed to decode JSON input: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
    return first
