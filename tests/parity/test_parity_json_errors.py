"""Parity: the syntax-error texts of JSON bodies where Python's decoder and Go's differ in wording
(a comma before a closing bracket; a missing comma inside an array; a bad escape in a string; a
value that is not a string where a member name belongs), and
which error wins when a JSON body trips a complexity limit (``max_request_json_strings``
1000, ``max_request_json_memory`` 32 MiB + 512 KiB) and also holds a syntax error, a non-finite
constant or an out-of-range number, before or after the token that trips the limit. The double
checks the limits before it decodes the body (a 30 MiB body of numbers is refused in under a second,
not after ~10 s of decoding), so the order of these errors is pinned here against the real server.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

JSON = {"Content-Type": "application/json"}
MEMORY = "refused JSON input due to high complexity: exceeded maximum estimated memory limits"
STRINGS = "refused JSON input due to high complexity: exceeded maximum number of strings"
# in ``{"a":[1,1,...`` the 1,419,940th number passes 32 MiB + 512 KiB of estimated memory (24 bytes
# each, plus the object, the key and the array); found on bao 2.7.2
TRIP_AT = 1_419_940
TRIP = TRIP_AT + 10


def _numbers(count: int) -> bytes:
    return b",".join([b"1"] * count)


def _keys(count: int) -> bytes:
    return b",".join(b'"k%d":1' % i for i in range(count))


@pytest.mark.parametrize(("body", "error"), [
    # the memory limit trips, then a syntax error, NaN or 1e999: the limit wins
    (b'{"a":[' + _numbers(TRIP) + b',}', MEMORY),
    (b'{"a":[' + _numbers(TRIP) + b',NaN]}', MEMORY),
    (b'{"a":[' + _numbers(TRIP) + b',1e999]}', MEMORY),
    (b'{"a":[' + _numbers(TRIP) + b']} trailing', MEMORY),
    # a number that overflows a float64 before the trip: the number's error wins (Go's token scan decodes
    # each number as it goes); 5000 digits are also too many for Python's int() (the double answered 500)
    (b'{"a":[' + b"1" * 5000 + b"," + _numbers(TRIP) + b"]}",
     "failed to decode JSON input: json: cannot unmarshal number " + "1" * 5000 + " into Go value of type float64"),
    (b'{"a":[1e999,' + _numbers(TRIP) + b"]}",
     "failed to decode JSON input: json: cannot unmarshal number 1e999 into Go value of type float64"),
    # the error comes before the limit would trip: the error wins
    (b'{"a":[1 1,' + _numbers(TRIP) + b']}', "failed to decode JSON input: invalid character '1' after array element"),
    (b'{"a":[NaN,' + _numbers(TRIP) + b']}', "failed to decode JSON input: invalid character 'N' looking for beginning of value"),
    (b'{"a":[tru,' + _numbers(TRIP) + b']}', "failed to decode JSON input: invalid character ',' in literal true (expecting 'e')"),
    # the error sits at the very token that would trip the limit (the error wins), or at the next one
    (b'{"a":[' + _numbers(TRIP_AT - 1) + b' 1]}', "failed to decode JSON input: invalid character '1' after array element"),
    (b'{"a":[' + _numbers(TRIP_AT) + b' 1]}', MEMORY),
    # the string limit, with an error right after / right at the 1001st string
    (b'{' + _keys(1001) + b',}', STRINGS),
    (b'{' + _keys(1000) + b' "k1000":1}', "failed to decode JSON input: invalid character '\"' after object key:value pair"),
    # under both limits: the error as usual
    (b'{"a":[' + _numbers(1_300_000) + b',}', "failed to decode JSON input: invalid character ',' looking for beginning of value"),
], ids=["memory-then-syntax", "memory-then-nan", "memory-then-overflow", "memory-then-trailing",
        "overflow-then-memory", "exponent-overflow-then-memory", "syntax-first",
        "nan-first", "literal-first", "error-at-the-trip", "error-after-the-trip", "strings-then-syntax", "error-at-the-1001st-string",
        "under-the-limits"])
def test_complexity_limits_against_syntax_errors(pki, body, error):
    pki.send("POST", "/v1/{mount}/roles/complex", data=body, headers=JSON).same().expect(400, errors=[error])
    pki.send("GET", "/v1/{mount}/roles/complex").same().expect(404)


@pytest.mark.parametrize(("body", "error"), [
    (b'{"a":[1,]}', "invalid character ',' looking for beginning of value"),
    (b'[1,  }', "invalid character ',' looking for beginning of value"),
    (b'{"a":1 ,}', "invalid character ',' looking for beginning of value"),
    (b'{"a":[1,2] ,}', "invalid character ',' looking for beginning of value"),
    (b'{"a":[1 2]}', "invalid character '2' after array element"),
    (b'[[1] [2]]', "invalid character '[' after array element"),
    (b'["{" 1]', "invalid character '1' after array element"),
    (b'{"a":[1,2}', "invalid character '}' after array element"),
    (b'{"a":"[" 1}', "invalid character '1' after object key:value pair"),
    (b'{"a":[1]  2}', "invalid character '2' after object key:value pair"),
    (b'{"a":1]', "invalid character ']' after object key:value pair"),
    (b'{"a":}', "missing value after object key"),
    (b'{"a": ]', "invalid character ']' after object key:value pair"),
    (b'[1,{"a":]', "invalid character ']' after object key:value pair"),
    # bad escapes: the backslash and the next character (or \u and the next four) are quoted
    (b'{"a":"\\_"}', "invalid escape sequence `\\_` in string"),
    (b'{"\\q":1}', "invalid escape sequence `\\q` in string"),
    (b'{"a":"\\u12"}', 'invalid escape sequence `\\u12"}` in string'),
    (b'["\\u12G4"]', "invalid escape sequence `\\u12G4` in string"),
    (b'["\\uD800\\u12"]', 'invalid escape sequence `\\u12"]` in string'),
    (b'{"a":"\\u12', "unexpected EOF"),
    (b'["\\', "unexpected EOF"),
    # ... with Go's %q instead of backquotes when the sequence holds a space, a backquote, a character
    # that is not printable or a piece of a multi-byte character (the next byte only)
    (b'{"a":"\\ "}', 'invalid escape sequence "\\\\ " in string'),
    (b'{"a":"\\\t"}', 'invalid escape sequence "\\\\\\t" in string'),
    (b'{"a":"\\\n"}', 'invalid escape sequence "\\\\\\n" in string'),
    (b'{"a":"\\`"}', 'invalid escape sequence "\\\\`" in string'),
    (b'{"a":"\\\x7f"}', 'invalid escape sequence "\\\\\\x7f" in string'),
    ('{"a":"\\\u00e9"}'.encode(), 'invalid escape sequence "\\\\\\xc3" in string'),
    ('{"a":"\\\u00a0"}'.encode(), 'invalid escape sequence "\\\\\\xc2" in string'),
    (b'{"a":"\\u12 4"}', 'invalid escape sequence "\\\\u12 4" in string'),
    # a number inside a string before a bad escape is not a number; one before the string is read first
    (b'{"a":"x5e499\\D"}', "invalid escape sequence `\\D` in string"),
    (b'{"b":5e499,"a":"\\D"}', "json: cannot unmarshal number 5e499 into Go value of type float64"),
    # a byte that is not UTF-8 where decoding stops is shown as the byte (a DER OCSP request sent as JSON)
    (b"\x81abc", "invalid character '\\x81' looking for beginning of value"),
    (b'{"a":1}\x81', "invalid character '\\x81' looking for beginning of value"),
    (b'{"a":\xff}', "invalid character '\\xff' looking for beginning of value"),
    (b"0\x82\x01\x00", "invalid character '\\x82' looking for beginning of value"),
    # a ':' where a comma belongs, followed by a closing bracket, is named like such a comma
    (b'{"a":"x":}', "invalid character ':' looking for beginning of value"),
    (b'{"a":1 : ]', "invalid character ':' looking for beginning of value"),
    (b'["x":]', "invalid character ':' looking for beginning of value"),
    (b'{"a":"x":1}', "invalid character ':' after object key:value pair"),
    (b'["x":1]', "invalid character ':' after array element"),
    (b'[' * 1500 + b'"x":]' + b']' * 1499, "invalid character ':' looking for beginning of value"),
    # a minus sign wants a digit next
    (b'{"a": -}', "invalid character '}' in numeric literal"),
    (b'[- 1]', "invalid character ' ' in numeric literal"),
    (b'{"a": -.5}', "invalid character '.' in numeric literal"),
    (b'{"a": -', "unexpected EOF"),
    # a value that is not a string where a member name belongs
    (b'{{}', "object member name must be a string"),
    (b'{"a":1, 2:3}', "object member name must be a string"),
    (b'{true}', "object member name must be a string"),
    (b'{-1:2}', "object member name must be a string"),
    (b'{t:1}', "invalid character ':' in literal true (expecting 'r')"),
    (b'{-:1}', "invalid character ':' in numeric literal"),
    (b'{:1}', "invalid character ':' looking for beginning of value"),
    # nested too deeply for Python's decoder: the Go scanner port, same texts
    (b'[' * 1500 + b'{1:2}' + b']' * 1500, "object member name must be a string"),
    (b'[' * 1500 + b'"\\q"' + b']' * 1500, "invalid escape sequence `\\q` in string"),
    (b'[' * 1500 + b'1,' + b']' * 1500, "invalid character ',' looking for beginning of value"),
    (b'[' * 1500 + b'1 1' + b']' * 1500, "invalid character '1' after array element"),
    # a fraction or exponent without its digit (found by the differential fuzzer: base64 text "8eDP..."
    # sent as JSON); Python's decoder stops before the '.'/'e', bao names the character after it
    (b"8eDPvq2c", "invalid character 'D' in numeric literal"), (b"8e", "unexpected EOF"),
    (b"8e+", "unexpected EOF"), (b"8E-x", "invalid character 'x' in numeric literal"),
    (b"8.", "unexpected EOF"), (b"8.x", "invalid character 'x' in numeric literal"),
    (b"[8e]", "invalid character ']' in numeric literal"), (b'{"a":8.}', "invalid character '}' in numeric literal"),
    (b"[1.5e+]", "invalid character ']' in numeric literal"), (b"-0e", "unexpected EOF"),
    (b'{"a":8.\n}', "invalid character '\\n' in numeric literal"),
    # ... but a number already whole is followed by a new character (a DER body "0E0E..." read as JSON)
    (b"0E0E0E", "invalid character 'E' looking for beginning of value"),
    (b"0.0.", "invalid character '.' looking for beginning of value"),
    (b"0E0.0", "invalid character '.' looking for beginning of value"),
    (b"1.5.", "invalid character '.' looking for beginning of value"),
    (b"[0.0e0e]", "invalid character 'e' after array element"),
    (b'{"a":1e5.}', "invalid character '.' after object key:value pair"),
    (b"-0.0E-0.5", "invalid character '.' looking for beginning of value"),
])
def test_syntax_error_wording(pki, body, error):
    pki.send("POST", "/v1/{mount}/roles/syntax", data=body, headers=JSON).same().expect(
        400, errors=[f"failed to decode JSON input: {error}"])


@pytest.mark.parametrize(("body", "error"), [
    # bao reads only the first value; a later one may stop between two tokens at the end of the body
    (b'{}{', None),
    (b'{} [1,', None),
    (b'{}{"a":', None),
    (b'null{"a"', None),
    # ... but not inside a token
    (b'{}{"a', "unexpected EOF"),
    (b'{}tr', "unexpected EOF"),
    (b'{}{"a":tr', "unexpected EOF"),
    (b'{}]', "invalid character ']' looking for beginning of value"),
])
def test_a_later_value_cut_short(pki, body, error):
    ex = pki.send("POST", "/v1/{mount}/roles/later", data=body, headers=JSON).same()
    if error is None:
        ex.expect(200)
    else:
        ex.expect(400, errors=[f"failed to decode JSON input: {error}"])
