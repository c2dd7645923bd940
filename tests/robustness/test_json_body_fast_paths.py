"""The request-body JSON checks that read large bodies in C give what a token-by-token reading gives.

``jsonbody._complexity_trip`` sums its tokens a block at a time and ``jsonbody._overflow_before`` lets
the regular expression step over plain numbers; the reference functions below read every token in
Python, as both did before. They are compared on generated JSON-like texts, with the limits made small
(and the block size too) so that the limits trip and block edges fall everywhere. Then the bodies that
made the old code slow or raise: a syntax error after a million numbers, an integer longer than Python's
``int`` accepts in front of a body over the memory limit (the number's overflow wins, as on bao; the double
answered 500 before), each checked for its exact answer.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_schedpki.secrets import jsonbody
from pytest_schedpki.secrets.framework.logical import LogicalError


def _reference_trip(text: str, end: int, max_strings: int, max_memory: int) -> tuple[str, int] | None:
    """Every token of ``text[:end]`` read one at a time (http/util.go memoryForToken's costs)."""
    strings = memory = 0
    for m in jsonbody._TOKEN.finditer(text, 0, end):
        token = m.group()
        if token[0] == '"':
            raw = token[1:-1]
            decoded = json.loads(token) if "\\" in raw else raw
            memory += jsonbody._COST["str"] + len(decoded.encode("utf-8", errors="surrogatepass"))
            strings += 1
            if strings > max_strings and memory <= max_memory:
                return "exceeded maximum number of strings", m.end()
        else:
            memory += jsonbody._COST.get(token[0], jsonbody._COST["num"])
        if memory > max_memory:
            return "exceeded maximum estimated memory limits", m.end()
    return None


def _reference_overflow(text: str, end: int) -> str | None:
    """Every number token of ``text[:end]`` outside strings looked at one at a time."""
    for m in jsonbody._NUMBER_TOKEN.finditer(text, 0, end):
        token = m.group(1)
        if token and ("e" in token or "E" in token or len(token) > 300):
            try:
                if math.isinf(float(token)):
                    return token
            except ValueError:
                continue
    return None


_FRAGMENTS = st.sampled_from(['"', '\\"', "\\\\", "\\u00e9", "[", "{", "]", "}", ",", ":", " ", "1", "23", "-",
                              "-7", "e", "E", "e9", "1e999", "-1E400", "0.5", "+", ".", "true", "false", "null",
                              "tru", "x", "\u00e9", '"k"', '"\u00e9\u00e9"', "9" * 310, "-" + "9" * 300,
                              "1" * 299])
_texts = st.lists(_FRAGMENTS, max_size=60).map("".join)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts, cut=st.integers(0, 400), max_strings=st.integers(0, 4), max_memory=st.integers(0, 400),
       block=st.integers(1, 5))
@example(text='[1,2,3,4,5,6,7,8,9]', cut=400, max_strings=1, max_memory=16 + 24 + 24 * 3, block=2)
@example(text='{"a":"bc","d":[1,true]}', cut=400, max_strings=1, max_memory=400, block=1)
def test_complexity_trip_reads_like_every_token(text, cut, max_strings, max_memory, block):
    end = min(cut, len(text))
    expected = _reference_trip(text, end, max_strings, max_memory)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonbody, "MAX_JSON_STRINGS", max_strings)
        patch.setattr(jsonbody, "MAX_JSON_MEMORY", max_memory)
        patch.setattr(jsonbody, "_BLOCK", block)
        if not jsonbody._may_be_complex(text, end):
            assert expected is None, text
        assert jsonbody._complexity_trip(text, end) == expected, text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts, cut=st.integers(0, 400))
@example(text="-" + "1" * 300, cut=400)  # 301 characters: looked at (and fits)
@example(text='"1e999" 1e999', cut=400)
def test_overflow_check_finds_the_number_every_token_reading_finds(text, cut):
    end = min(cut, len(text))
    assert jsonbody._overflow_before(text, end) == _reference_overflow(text, end), text


def _numbers(count: int) -> bytes:
    return b",".join([b"1"] * count)


TRIP_AT = 1_419_940  # see tests/parity/test_parity_json_errors.py (found on bao 2.7.2)


@pytest.mark.parametrize(("body", "error"), [
    (b'{"a":[' + b"1" * 5000 + b"," + _numbers(TRIP_AT + 10) + b"]}",
     "failed to decode JSON input: json: cannot unmarshal number " + "1" * 5000 + " into Go value of type float64"),
    (b'{"a":[' + _numbers(TRIP_AT - 1) + b" 1]}",
     "failed to decode JSON input: invalid character '1' after array element"),
    (b'{"a":[' + _numbers(300_000) + b",}",
     "failed to decode JSON input: invalid character ',' looking for beginning of value"),
    (b'{"a":[' + _numbers(300_000) + b",NaN]}",
     "failed to decode JSON input: invalid character 'N' looking for beginning of value"),
    (b'{"a":' + b"1" * 5000 + b"}",
     "failed to decode JSON input: json: cannot unmarshal number " + "1" * 5000 + " into Go value of type float64"),
], ids=["overflow-then-memory", "syntax-at-the-trip", "syntax-after-many", "nan-after-many", "long-integer"])
def test_large_bodies_get_their_error(body, error):
    with pytest.raises(LogicalError) as info:
        jsonbody.parse_json_body(body)
    assert (info.value.status, info.value.errors) == (400, [error])


def test_a_large_valid_body_decodes_with_numbers_as_text():
    data = jsonbody.parse_json_body(b'{"a":[' + _numbers(200_000) + b'],"b":"c"}')
    assert len(data["a"]) == 200_000 and data["a"][0] == "1" and isinstance(data["a"][0], jsonbody.JsonNumber)
    assert data["b"] == "c"
