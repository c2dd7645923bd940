"""Request bodies as OpenBao 2.7 reads them: the whole body is scanned token by token first
(``EnforceJSONComplexityLimits``), so trailing garbage after the object is an error too; then the
first value is decoded into a map with numbers kept as text (Go's ``json.Number``).

Errors: ``failed to decode JSON input: <reason>`` (400) with the reasons the live server gives:
``unexpected EOF``, ``invalid character 'a' looking for beginning of value``, ``missing value
after object key``, ``invalid character 'a' in literal true (expecting 'u')``, ``json: cannot
unmarshal array into Go value of type map[string]interface {}``, ``exceeded max depth`` (nesting
deeper than Go's 10000 levels; shallower bodies too deep for Python's json module are read by the
Go scanner port instead). The syntax-error wordings live in :mod:`.json_syntax`.

The token scan also enforces the listener's JSON complexity limits with their defaults
(``max_request_json_strings`` 1000 strings, keys included; ``max_request_json_memory`` 32 MiB +
512 KiB of estimated decoded size): ``refused JSON input due to high complexity: exceeded maximum
number of strings`` / ``... exceeded maximum estimated memory limits`` (400), which wins over a
syntax error further on, as the limit trips while the tokens are read.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from typing import Any

from ..golang.json import JArr, JNum, JObj, JStr, decode_first_value
from ..golang.scan import GoJSONError, first_value_end
from .framework.fields import JsonNumber
from .framework.logical import user_error
from .json_syntax import LITERALS, literal_error, scanner_reason, syntax_reason


class _NonFinite(Exception):
    """Python's json reads ``NaN``/``Infinity``; Go's does not (raised by the decoder's hook)."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


_DECODER = json.JSONDecoder(parse_int=JsonNumber, parse_float=JsonNumber, parse_constant=_refuse_constant)
_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?)(NaN|Infinity)')


def _constant_error(text: str) -> str:
    """Go's text for the first ``NaN``/``Infinity``/``-Infinity`` outside strings."""
    for m in _CONSTANT.finditer(text):
        if m.group(2):
            _refuse_if_complex(text, m.start())
            _refuse_overflow(text, m.start())
            where = "in numeric literal" if m.group(1) else "looking for beginning of value"
            return f"invalid character '{m.group(2)[0]}' {where}"
    return "invalid character 'N' looking for beginning of value"

MAX_JSON_STRINGS = 1000  # OpenBao's default max_request_json_strings
MAX_JSON_MEMORY = 32 * 1024 * 1024 + 512 * 1024  # default max_request_json_memory (bytes, estimated)
# http/util.go memoryForToken: a pointer+type base of 16 plus the token's own estimate; ',' ':' and
# closing delimiters cost nothing; a string adds its decoded length
_COST = {"[": 16 + 24, "{": 16 + 72, "t": 16 + 1, "f": 16 + 1, "n": 16 + 1, "num": 16 + 8, "str": 16 + 16}
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]|true|false|null|-?[0-9][0-9.eE+-]*')


def _may_be_complex(text: str, end: int) -> bool:
    """False when ``text[:end]`` cannot reach either limit (too few quotes and too short)."""
    return text.count('"', 0, end) > 2 * MAX_JSON_STRINGS or end * _COST["{"] > MAX_JSON_MEMORY


def _complexity_trip(text: str, end: int) -> tuple[str, int] | None:
    """The complexity refusal for the tokens of ``text[:end]`` and the end of the token that trips
    it, or None.

    Tokens are found by :data:`_TOKEN` in one C-level ``findall`` and summed a block at a time; only a
    block holding a string (whose cost is its decoded length, and which counts towards the string
    limit) or the token that passes the memory limit is read one token at a time. A body of a million
    numbers costs ~0.3 s here instead of ~1.8 s token by token (same result, see the module's tests).
    """
    if not _may_be_complex(text, end):
        return None
    tokens = _TOKEN.findall(text, 0, end)
    strings = memory = 0
    for start in range(0, len(tokens), _BLOCK):
        block = tokens[start:start + _BLOCK]
        firsts = "".join(map(_FIRST, block))
        if '"' not in firsts:
            cost = sum(map(_COST_BY_FIRST.__getitem__, firsts))
            if memory + cost <= MAX_JSON_MEMORY:
                memory += cost
                continue
        for offset, token in enumerate(block):
            first = token[0]
            if first == '"':
                raw = token[1:-1]
                decoded = json.loads(token) if "\\" in raw else raw
                memory += _COST["str"] + len(decoded.encode("utf-8", errors="surrogatepass"))
                strings += 1
                if strings > MAX_JSON_STRINGS and memory <= MAX_JSON_MEMORY:
                    return "exceeded maximum number of strings", _token_end(text, end, start + offset)
            else:
                memory += _COST_BY_FIRST[first]
            if memory > MAX_JSON_MEMORY:
                return "exceeded maximum estimated memory limits", _token_end(text, end, start + offset)
    return None


_BLOCK = 4096  # tokens summed at once by _complexity_trip
_FIRST = operator.itemgetter(0)
_COST_BY_FIRST = {"[": _COST["["], "{": _COST["{"], "t": _COST["t"], "f": _COST["f"], "n": _COST["n"],
                  '"': _COST["str"], "-": _COST["num"], **dict.fromkeys("0123456789", _COST["num"])}


def _token_end(text: str, end: int, index: int) -> int:
    """Where the ``index``-th token of :data:`_TOKEN` in ``text[:end]`` ends (counting from 0)."""
    match = next(itertools.islice(_TOKEN.finditer(text, 0, end), index, None))
    return match.end()


def _complexity_error(text: str, end: int) -> str | None:
    """The complexity refusal for the tokens of ``text[:end]`` (read without error), or None."""
    trip = _complexity_trip(text, end)
    return trip[0] if trip else None


# a fast syntax check: numbers become their length (no int/float object per number, and no ValueError for an
# integer of more than sys.get_int_max_str_digits() digits, which Go reads as any other number)
_SYNTAX_ONLY = json.JSONDecoder(parse_int=len, parse_float=len, parse_constant=_refuse_constant)


def _reads_cleanly(text: str, end: int) -> bool:
    """Whether Go's scanner reads ``text[:end]`` (values one after another) without a syntax error
    before its end. Checked with the C decoder and no per-number objects, so that a body refused for
    its complexity is not decoded first (decoding 30 MiB of numbers took ~10 s of CPU); anything
    unusual (a non-finite constant, nesting too deep for Python) answers False, and the full path
    decides."""
    prefix, pos = text[:end], 0
    try:
        while True:
            while pos < end and prefix[pos] in " \t\r\n":
                pos += 1
            if pos >= end:
                return True
            _value, pos = _SYNTAX_ONLY.raw_decode(prefix, pos)
    except json.JSONDecodeError as exc:
        return exc.pos >= end
    except (_NonFinite, RecursionError):
        return False


def _refuse_if_complex(text: str, end: int) -> None:
    reason = _complexity_error(text, end)
    if reason:
        raise user_error(f"refused JSON input due to high complexity: {reason}")


def _plain(node: Any) -> Any:
    """A Go scanner node tree (golang.json) as request data, without recursion."""
    holder: list[Any] = [None]
    work: list[tuple[Any, Any, Any]] = [(node, holder, 0)]
    while work:
        item, parent, key = work.pop()
        if isinstance(item, JObj):
            merged = dict(item.pairs)  # duplicate keys: the last one wins
            value: Any = dict.fromkeys(merged)
            work.extend((child, value, k) for k, child in merged.items())
        elif isinstance(item, JArr):
            value = [None] * len(item.items)
            work.extend((child, value, i) for i, child in enumerate(item.items))
        elif isinstance(item, JStr):
            value = item.value
        elif isinstance(item, JNum):
            value = JsonNumber(item.raw)
        else:
            value = item
        parent[key] = value
    return holder[0]


def _first_value_deep(body: bytes) -> Any:
    """The first value of a body nested too deeply for Python's json module: every value is checked by
    the port of Go's scanner (its texts, and ``exceeded max depth`` past 10000 levels)."""
    pos, first, seen = 0, None, False
    while True:
        while pos < len(body) and body[pos] in b" \t\r\n":
            pos += 1
        if pos >= len(body):
            return first
        try:
            end = pos + first_value_end(body[pos:])
            if not seen:
                first, seen = _plain(decode_first_value(body[pos:end])), True
        except GoJSONError as exc:
            raise user_error(f"failed to decode JSON input: {scanner_reason(body[pos:], exc)}") from None
        pos = end


# a string (skipped whole: unrolled as `"` run (escape run)* `"`, 5x faster on a CSR than one alternation per
# character; a string still open where the scan stops - an error inside it - is skipped to that end) or a
# number token (group 1)
_NUMBER_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|(-?[0-9][0-9.eE+-]*)')
# ... where group 1 only matches the number tokens that can overflow a float64: those with an exponent or
# longer than 300 characters. A plain short number matches neither alternative, so the scan steps over it a
# character at a time in C; it cannot match from inside such a number (its run holds no exponent and is
# short), so the tokens found are those of _NUMBER_TOKEN that _overflow_before looks at, without a Python
# step per number.
_WIDE_NUMBER_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
                                r'|(-?[0-9][0-9.+-]*[eE][0-9.eE+-]*|[0-9][0-9.eE+-]{300,}|-[0-9][0-9.eE+-]{299,})')


def _overflow_before(text: str, end: int) -> str | None:
    """The first number token of ``text[:end]`` outside strings that does not fit a float64 (Go
    decodes the body into ``interface{}`` values number by number, so ``1e999`` fails there with
    ``json: cannot unmarshal number 1e999 into Go value of type float64``), or None."""
    if "e" not in text and "E" not in text and len(text) < 300:
        return None
    for m in _WIDE_NUMBER_TOKEN.finditer(text, 0, end):
        token = m.group(1)
        if token:
            try:
                if math.isinf(float(token)):
                    return token
            except ValueError:
                continue
    return None


def _refuse_overflow(text: str, end: int) -> None:
    token = _overflow_before(text, end)
    if token is not None:
        raise user_error(f"failed to decode JSON input: json: cannot unmarshal number {token} into Go value of type float64")


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """Go decodes an escaped surrogate that is not half of a pair (``"\\ud800"``) as U+FFFD;
    Python keeps it (and could not encode it later)."""
    if isinstance(value, JsonNumber):
        return value
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    return value


def _cut_between_tokens(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the body ends between two tokens of a value (``{"a":1}{"b":`` ends after ``:``), not
    inside one (``{"a":1}{"b``). bao's token scan stops quietly at the end there, so a value after the
    first one may be left unfinished; only the first value is decoded."""
    return not text[exc.pos:].strip(" \t\r\n") and not exc.msg.startswith("Unterminated string")


def _byte_reason(body: bytes, exc: json.JSONDecodeError) -> str:
    """:func:`syntax_reason`, except that a byte that is not UTF-8 where decoding stopped is shown as Go
    shows it (``'\\x81'``), not as the U+FFFD the text was decoded to."""
    reason = syntax_reason(exc)
    if "\ufffd" not in reason:
        return reason
    text, pos = body.decode("utf-8", errors="surrogateescape"), 0
    try:
        while True:
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if pos >= len(text):
                return reason
            _value, pos = _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as escaped:
        return syntax_reason(escaped)
    except (_NonFinite, RecursionError):
        return reason


_LARGE = 64 * 1024  # characters: parse_json_body checks a value this long for syntax errors first


def parse_json_body(body: bytes) -> dict[str, Any]:
    """Decode a request body into the request data map (``{}`` for an empty body or ``null``).

    Raises LogicalError 400 ``failed to decode JSON input: <reason>`` or ``refused JSON input due to
    high complexity: <reason>``.
    """
    text = body.decode("utf-8", errors="replace")
    if not text.strip(" \t\r\n"):
        return {}
    trip = _complexity_trip(text, len(text))
    if trip is not None and _reads_cleanly(text, trip[1]):  # the limit trips before any syntax error
        # ... but a number that does not fit a float64 fails the token scan where it stands, like a syntax
        # error: one before (or at) the tripping token wins over the limit
        _refuse_overflow(text, trip[1])
        raise user_error(f"refused JSON input due to high complexity: {trip[0]}")
    first: Any = None
    pos, seen = 0, False
    try:
        while True:
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if pos >= len(text):
                break
            if text[pos] in LITERALS and not text.startswith(LITERALS[text[pos]], pos):
                _refuse_if_complex(text, pos)
                _refuse_overflow(text, pos)
                raise user_error(f"failed to decode JSON input: {literal_error(text, pos)}")
            if len(text) - pos > _LARGE:
                # a syntax error, a non-finite constant or too deep a nesting is raised here alike, without
                # a JsonNumber per number first (the C scanner finds them where _DECODER would)
                _SYNTAX_ONLY.raw_decode(text, pos)
            value, pos = _DECODER.raw_decode(text, pos)
            if not seen:
                first, seen = value, True
    except json.JSONDecodeError as exc:
        if not (seen and _cut_between_tokens(text, exc)):
            _refuse_if_complex(text, min(exc.pos, len(text)))
            _refuse_overflow(text, min(exc.pos, len(text)))
            raise user_error(f"failed to decode JSON input: {_byte_reason(body, exc)}") from None
    except _NonFinite:
        raise user_error(f"failed to decode JSON input: {_constant_error(text)}") from None
    except RecursionError:
        _refuse_if_complex(text, len(text))
        first = _first_value_deep(body)
    # read to the end without a syntax error: the up-front complexity check has decided (a limit that
    # trips before any syntax error is refused there)
    _refuse_overflow(text, len(text))
    if first is None:
        return {}
    if _ESCAPED_SURROGATE.search(text):
        first = _without_lone_surrogates(first)
    if not isinstance(first, dict):
        kind = {list: "array", str: "string", bool: "bool", JsonNumber: "number"}.get(type(first), "value")
        raise user_error(f"failed to decode JSON input: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
    return first
