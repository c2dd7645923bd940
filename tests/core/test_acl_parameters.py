"""The parameter constraints of ACL policies (allowed, denied, required), without a server: merging
across policies and the value comparison, as OpenBao's acl.go does them."""

from __future__ import annotations

import pytest

from pytest_schedpki.secrets.acl_parameters import allows, globbed_strings_match, merge
from pytest_schedpki.secrets.framework.fields import JsonNumber
from pytest_schedpki.secrets.policy_parser import ParameterRule, parse_policy_full


@pytest.mark.parametrize(("item", "value", "expected"), [
    ("*", "anything", False), ("*", "*", True), ("a", "a", True), ("a", "b", False), ("ab*", "abc", True), ("ab*", "xab", False),
    ("*bc", "abc", True), ("*b*", "abc", True), ("*b*", "ac", False), ("", "", True), ("x", "", False),
])
def test_globbed_strings_match(item, value, expected):
    """A lone "*" is shorter than 2 characters: compared as it is (strutil.GlobbedStringsMatch)."""
    assert globbed_strings_match(item, value) is expected


def test_a_json_number_matches_no_policy_value():
    rule = ParameterRule({"n": [1, "1"]}, None)
    assert not allows(rule, {"n": JsonNumber("1")})
    assert allows(rule, {"n": "1"})


def test_required_then_empty_then_denied_then_allowed():
    rule = ParameterRule({"ttl": ["1h"]}, {"ttl": ["2h"]}, ("name",))
    assert not allows(rule, {"ttl": "1h"})            # required name missing
    assert allows(rule, {"name": "x", "ttl": "1h"}) is False  # name is not an allowed parameter
    assert allows(ParameterRule(None, None, ()), {}) is True
    assert not allows(ParameterRule(None, {"*": []}), {"a": 1})
    assert allows(ParameterRule(None, {"*": []}), {})  # no parameter at all passes


def test_merging_concatenates_values_and_an_empty_list_wins():
    merged = merge([ParameterRule({"ttl": ["1h"], "a": []}, None, ("x",)),
                    ParameterRule({"ttl": ["2h"], "a": ["v"]}, {"b": []}, ("x", "y"))])
    assert sorted(merged.allowed["ttl"]) == ["1h", "2h"] and merged.allowed["a"] == []
    assert merged.denied == {"b": []} and merged.required == ("x", "y")


def test_policy_texts_keep_their_parameter_rules_lower_cased():
    caps, params = parse_policy_full('path "a" { capabilities = ["update"] allowed_parameters = { "TTL" = ["1h", 5] } '
                                     'required_parameters = ["n"] }\npath "b" { capabilities = ["read"] }')
    assert caps == {"a": {"update"}, "b": {"read"}}
    assert params == {"a": [ParameterRule({"ttl": ["1h", 5]}, None, ("n",))]}
