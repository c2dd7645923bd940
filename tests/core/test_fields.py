"""OpenBao's framework coercion of request values (the CLI sends every value as a string)."""

import pytest

from pytest_schedpki.secrets.framework.fields import (
    BOOL,
    COMMA_STRING_SLICE,
    DURATION,
    INT,
    STRING,
    STRING_SLICE,
    Field,
    FieldData,
    JsonNumber,
    convert,
)
from pytest_schedpki.secrets.framework.logical import LogicalError


@pytest.mark.parametrize("kind, raw, value", [
    (STRING, JsonNumber("123"), "123"), (STRING, True, "1"), (STRING, "x", "x"),
    (BOOL, "true", True), (BOOL, "T", True), (BOOL, "0", False), (BOOL, "", False), (BOOL, JsonNumber("1"), True),
    (INT, "2048", 2048), (INT, JsonNumber("384"), 384), (INT, "0x10", 16), (INT, True, 1),
    (DURATION, "1h", 3600), (DURATION, "3600", 3600), (DURATION, JsonNumber("60"), 60), (DURATION, "2d", 172800),
    (DURATION, "", 0),
    (COMMA_STRING_SLICE, "a, b,c", ["a", "b", "c"]), (COMMA_STRING_SLICE, ["a", " b"], ["a", "b"]),
    (COMMA_STRING_SLICE, "", []), (STRING_SLICE, "a,b", ["a,b"]), (STRING_SLICE, "", []),
])
def test_weak_conversion(kind, raw, value):
    assert convert(kind, raw) == value


@pytest.mark.parametrize("name, kind, raw, message", [
    ("ttl", DURATION, True, 'Field validation failed: error converting input for field "ttl": could not parse duration from input'),
    ("ttl", DURATION, "soon", 'Field validation failed: error converting input for field "ttl": time: invalid duration "soon"'),
    ("alt_names", STRING, ["a"], "Field validation failed: error converting input for field \"alt_names\": '' expected type 'string', got unconvertible type '[]interface {}'"),
    ("key_bits", INT, "abc", "Field validation failed: error converting input for field \"key_bits\": '' cannot parse value as 'int': strconv.ParseInt: invalid syntax"),
    ("key_bits", INT, JsonNumber("3.5"), "Field validation failed: error converting input for field \"key_bits\": '' cannot parse value as 'int': strconv.ParseInt: invalid syntax"),
    ("no_store", BOOL, "maybe", "Field validation failed: error converting input for field \"no_store\": '' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"),
    ("allow_localhost", BOOL, JsonNumber("2"), "Field validation failed: error converting input for field \"allow_localhost\": '' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"),
    ("key_bits", INT, [1], "Field validation failed: error converting input for field \"key_bits\": '' expected type 'int', got unconvertible type '[]interface {}'"),
    ("allowed_domains", COMMA_STRING_SLICE, {"a": JsonNumber("1")}, "Field validation failed: error converting input for field \"allowed_domains\": 1 error(s) decoding:\n\n* '[0]' expected type 'string', got unconvertible type 'map[string]interface {}', value: 'map[a:1]'"),
    ("ttl", DURATION, "-5", "Field validation failed: error converting input for field \"ttl\": cannot provide negative value '-5'"),
])
def test_validation_errors_are_upstream_texts(name, kind, raw, message):
    data = FieldData({name: raw}, {name: Field(kind)})
    with pytest.raises(LogicalError) as exc:
        data.validate()
    assert exc.value.status == 400
    assert exc.value.errors == [message]


def test_defaults_and_sent():
    data = FieldData({"a": "1"}, {"a": Field(INT), "b": Field(STRING, default="pem"), "c": Field(COMMA_STRING_SLICE)})
    data.validate()
    assert data.get_ok("a") == (1, True)
    assert data.get_ok("b") == ("pem", False)
    assert data.get("c") == [] and not data.sent("c")
