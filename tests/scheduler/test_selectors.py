"""Binding-rule selectors: the go-bexpr v0.1.16 grammar and ``evaluate.go`` as Nomad's
``lib/auth/binder.go`` (``Binder.Bind`` -> ``bexpr.CreateEvaluator``/``Evaluate``) uses them over the
``{value, list}`` datum of ``lib/auth/claims.go``; the checked examples of reference nomad-acl-sso.md §7."""

import pytest

from pytest_schedpki.scheduler.sso.bexpr import BexprError, matches, parse
from pytest_schedpki.scheduler.sso.claims import ClaimError, interpolate, selector_data

CLAIMS = {"team": "eng", "groups": ["admins", "devs"], "email": "alice@example.com", "org": {"unit": "platform"},
          "level": 3.9, "role": "admin"}
DATUM, VARIABLES = selector_data(CLAIMS, {"team": "team", "email": "email", "/org/unit": "unit", "level": "level",
                                          "nickname": "nickname"}, {"groups": "groups", "role": "roles"})


@pytest.mark.parametrize("selector", [
    'value.team == "eng"', 'value.team != "ops"', '"admins" in list.groups', '"guests" not in list.groups',
    'list.groups contains "devs"', 'value.email matches "@example[.]com$"',
    'value.team == "eng" and not ("guests" in list.groups)', 'value.team == "ops" or value.unit == "platform"',
    "value.nickname is empty", 'value.nickname != "x"', "list.groups is not empty", 'value.level == "3"',
    '"admin" in list.roles', "value.team == eng", '"/value/team" == "eng"', "",
])
def test_checked_matches(selector):
    assert matches(selector, DATUM)


@pytest.mark.parametrize("selector", [
    'value.nickname == "x"', 'team == "eng"', 'value.email matches "("', "value.nickname is not nil",
    'list.groups == "admins"',
])
def test_checked_non_matches(selector):
    assert not matches(selector, DATUM)


def test_parse_errors_follow_pigeons_format():
    with pytest.raises(BexprError) as err:
        parse("value.team ==")
    assert str(err.value) == ('1:14 (13): no match found, expected: "-", "0", "\\"", "`", [ \\t\\r\\n], [1-9] '
                              "or [a-zA-Z]")
    with pytest.raises(BexprError, match=r"^1:21 \(20\): no match found"):
        parse('value.team == "eng" junk')


def test_mapped_names_are_preset_for_templates_and_claims_convert_like_nomad():
    assert DATUM["value"] == {"team": "eng", "email": "alice@example.com", "unit": "platform", "level": "3"}
    assert DATUM["list"] == {"groups": ["admins", "devs"], "roles": ["admin"]}
    assert VARIABLES["value.nickname"] == ""
    assert interpolate("${value.team}-${value.unit}", VARIABLES) == "eng-platform"
    with pytest.raises(ClaimError, match=r"^1:10: unknown variable accessed: value\.nope$"):
        interpolate("prefix-${value.nope}", VARIABLES)
    data, _ = selector_data({"flags": [True, 2.5, "", "x"], "arr": ["a", "b"]}, {"arr": "arr"}, {"flags": "flags"})
    assert data == {"value": {"arr": '["a","b"]'}, "list": {"flags": ["true", "2", "x"]}}
    with pytest.raises(ClaimError, match=r'^value \[1\] in "flags" list claim could not be parsed as string$'):
        selector_data({"flags": [[1]]}, {}, {"flags": "flags"})
