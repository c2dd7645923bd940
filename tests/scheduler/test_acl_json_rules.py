"""Policy rules in JSON read as Nomad's HCL1 fork reads them (hashicorp/hcl v1.0.1-nomad-1
``json/parser/parser.go`` ``objectList``/``objectType``/``listType``/``objectKey``/``objectValue``,
``json/scanner/scanner.go`` ``Scan``): lax structure, the library's error texts, through
``acl.Parse`` (``Failed to parse ACL Policy: <error>``)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_schedpki.scheduler.acl.policy import PolicyError, parse


def namespaces(rules):
    return [(ns["Name"], ns["Policy"]) for ns in parse(rules).Namespaces]


@pytest.mark.parametrize(("rules", "expected"), [
    ('{"namespace": [{"dev": {"policy": "read"}]]}', [("dev", "read")]),  # a ] closes the {
    ('{"namespace": {"dev": {"policy": "read",},},}', [("dev", "read")]),  # trailing commas
    ('{"namespace": {"a": {"policy": "read"}} "node": {"policy": "write"}}', [("a", "read")]),  # no comma: ends
    ('{"namespace": {"a": {"policy": "read"}}} trailing garbage', [("a", "read")]),  # never scanned
    ('{"namespace": {"a": {"policy": "read", "capabilities": ["list-jobs", true, [false]]}}}', [("a", "read")]),
    ('{"namespace": {"a": {"policy": "read"}}, "node": ', [("a", "read")]),  # cut short: the object ends
])
def test_lax_structure_is_accepted(rules, expected):
    assert namespaces(rules) == expected


def test_an_open_brace_alone_is_an_empty_policy():
    with pytest.raises(PolicyError) as err:
        parse("{")
    assert str(err.value) == "Invalid policy: {"


def test_several_keys_make_nested_blocks():
    assert namespaces('{"namespace" "dev": {"policy": "write"}}') == [("dev", "write")]


def test_bools_in_a_list_are_dropped():
    ns = parse('{"namespace": {"a": {"capabilities": [true, "list-jobs", false]}}}').Namespaces[0]
    assert ns["Capabilities"] == ["list-jobs"]


@pytest.mark.parametrize(("rules", "text"), [
    ('{"namespace": {"a": {"capabilities": [null]}}}', "unexpected token while parsing list: NULL"),
    ('{"namespace": {"a": {"capabilities": ["x"', "unexpected token while parsing list: EOF"),
    ('{"namespace": : 1}', "Expected object value, got unknown token: {Type:COLON Pos:1:15 Text::}"),
    ('{"a": 1, 2: 3}', "expected: STRING got: NUMBER"),
    ('{: 1}', "expected: STRING got: COLON"),
    ('{"namespace": nul}', "1:17: illegal char"),
    # the last scanner error wins: "re" stops at the newline (1:34), then `ad"}}}` runs to the end
    ('{"namespace": {"a": {"policy": "re\nad"}}}', "2:7: literal not terminated"),
    ('{"namespace": {"a\\/": {}}}', "1:19: illegal char escape"),
    ('{"namespace": 01}', "1:16: numbers cannot start with 0"),
    ('{"namespace": @}', "1:15: illegal char: @"),
])
def test_library_error_texts(rules, text):
    with pytest.raises(PolicyError) as err:
        parse(rules)
    assert str(err.value) == f"Failed to parse ACL Policy: {text}"


JSONISH = ['{', '}', '[', ']', ',', ':', '"namespace"', '"a"', '"policy"', '"read"', '"capabilities"', "true",
           "null", "1", "01", "-", ".5", "1e", '"\\x4"', '"\\u00e9"', '"open', "\n", "x", "é", "@"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(JSONISH), max_size=16).map(lambda parts: "{" + " ".join(parts)))
def test_any_json_text_is_a_policy_or_an_error(text):
    try:
        parse(text, strict=False)
    except PolicyError as exc:
        assert str(exc).startswith(("Failed to parse ACL Policy: ", "Invalid "))
