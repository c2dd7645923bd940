"""Nomad's own ACL evaluation as a table of facts (tests/scheduler/data/nomad_acl_facts.yaml: every
case of acl/acl_test.go and acl/policy_test.go at aa026cc9 that concerns what the double
implements), replayed through the double's ``pytest_schedpki.scheduler.acl``: ``parse`` (Nomad's
``Parse``), ``new_acl`` (``NewACL``), the ``allow_*`` methods (``Allow*``),
``glob.matching_wildcards`` (``findAllMatchingWildcards``) and ``max_privilege``.

A fact is Go's name and arguments with the expected answer; the method name is mapped to the
double's snake_case name, nothing else is translated.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest
import yaml

from pytest_schedpki.scheduler.acl.evaluate import max_privilege, new_acl
from pytest_schedpki.scheduler.acl.glob import matching_wildcards
from pytest_schedpki.scheduler.acl.policy import PolicyError, parse

FACTS = yaml.safe_load((pathlib.Path(__file__).parent / "data" / "nomad_acl_facts.yaml").read_text(encoding="utf-8"))
TEXTS = FACTS["texts"]


def snake(go_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", go_name).lower()


def _plain(value):
    """The double's parsed policy as the table writes it: empty strings and None left out."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None and v != ""}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _ids(cases):
    return [c["source"].split(" ", 1)[1] for c in cases]


def test_the_table_holds_every_fact():
    checks = sum(len(d["checks"]) for d in FACTS["decisions"])
    assert (len(FACTS["parse"]), len(FACTS["decisions"]), checks, len(FACTS["wildcards"]),
            len(FACTS["max_privilege"]), sum(map(len, FACTS["valid_capabilities"].values()))) == \
        (43, 93, 200, 8, 18, 57)


@pytest.mark.parametrize("case", FACTS["parse"], ids=_ids(FACTS["parse"]))
def test_parse_fact(case):
    if case.get("ok"):
        policy = parse(case["rules"], case["strict"])
        if "expect" in case:
            # Go's nil block lists are the double's empty lists
            got = _plain({k: v for k, v in dataclasses.asdict(policy).items() if k != "Raw" and v != []})
            assert got == case["expect"]
        return
    with pytest.raises(PolicyError) as err:
        parse(case["rules"], case["strict"])
    assert case["error_contains"] in str(err.value)


@pytest.mark.parametrize("case", FACTS["decisions"], ids=_ids(FACTS["decisions"]))
def test_decision_fact(case):
    acl = new_acl(case["management"], [parse(TEXTS.get(p, p)) for p in case["policies"]])
    got = [[name, args, getattr(acl, snake(name))(*args)] for name, args, _ in case["checks"]]
    assert got == case["checks"]


@pytest.mark.parametrize("case", FACTS["wildcards"], ids=_ids(FACTS["wildcards"]))
def test_wildcard_fact(case):
    acl = new_acl(False, [parse(case["rules"])])
    matches = matching_wildcards(acl.wildcard_namespaces, case["name"])
    if "globs" in case:
        assert [pattern for pattern, _, _ in matches] == case["globs"]
    else:
        assert matches[0][1] == case["first_difference"]


@pytest.mark.parametrize(("a", "b", "expected"), FACTS["max_privilege"])
def test_max_privilege_fact(a, b, expected):
    assert max_privilege(a, b) == expected


@pytest.mark.parametrize(("kind", "capability"), [(k, c) for k, caps in FACTS["valid_capabilities"].items()
                                                  for c in caps])
def test_every_capability_constant_is_valid(kind, capability):
    rules = {"namespace": f'namespace "a" {{ capabilities = ["{capability}"] }}',
             "variables": f'namespace "a" {{ variables {{ path "p" {{ capabilities = ["{capability}"] }} }} }}',
             "host_volume": f'host_volume "a" {{ capabilities = ["{capability}"] }}',
             "node_pool": f'node_pool "a" {{ capabilities = ["{capability}"] }}'}[kind]
    parse(rules)
