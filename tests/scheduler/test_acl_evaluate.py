"""What parsed Nomad ACL policies allow: ``acl.NewACL`` and its ``Allow*`` decisions (acl/acl.go).

The cases are the facts of Nomad's acl/acl_test.go (``TestACLManagement``, ``TestACLMerge``,
``TestAllowNamespace``, ``TestWildcardNamespaceMatching``, ``TestNodePool``,
``TestWildcardHostVolumeMatching``, ``TestVariablesMatching``, ``TestACL_matchingCapabilitySet_*``,
``TestAllowOperatorOperation``, ``TestMaxPrivilege``), plus go-glob's matching and the tie rule of
the closest-match sort.
"""

import json

import pytest

from pytest_schedpki.golang.sort import slice_stable
from pytest_schedpki.scheduler.acl.evaluate import max_privilege, new_acl
from pytest_schedpki.scheduler.acl.glob import closest, glob
from pytest_schedpki.scheduler.acl.policy import parse


def acl_of(*rules):
    return new_acl(False, [parse(r) for r in rules])


def blocks(level):
    return "\n".join(f'{block} {{\n  policy = "{level}"\n}}' for block in ('namespace "default"', 'node_pool "my-pool"',
                                                                         "agent", "node", "operator", "quota"))


READ_ALL, WRITE_ALL, DENY_ALL = blocks("read"), blocks("write"), blocks("deny")
SIMPLE = ("allow_agent_read", "allow_agent_write", "allow_node_read", "allow_node_write", "allow_operator_read",
          "allow_operator_write", "allow_quota_read", "allow_quota_write")


def simple(acl):
    return tuple(getattr(acl, name)() for name in SIMPLE)


def test_management_allows_everything():
    acl = new_acl(True, [])
    assert acl.is_management() and all(simple(acl))
    assert acl.allow_namespace_operation("foo", "list-jobs") and acl.allow_namespace("foo")
    assert acl.allow_node_pool_operation("my-pool", "write") and acl.allow_node_pool("my-pool")
    assert acl.allow_variable_operation("ns", "any/path", "destroy")


def test_merge_read_and_write_takes_the_most_privilege():
    acl = acl_of(READ_ALL, WRITE_ALL)
    assert acl.allow_namespace_operation("default", "list-jobs") and acl.allow_namespace_operation("default",
                                                                                                   "submit-job")
    assert acl.allow_namespace("default") and not acl.allow_namespace("foo")
    assert not acl.allow_namespace_operation("foo", "list-jobs")
    assert acl.allow_node_pool_operation("my-pool", "read") and acl.allow_node_pool_operation("my-pool", "write")
    assert not acl.allow_node_pool("other-pool")
    assert not acl.is_management() and all(simple(acl))


def test_merge_read_and_blank():
    acl = acl_of(READ_ALL, "")
    assert acl.allow_namespace_operation("default", "list-jobs")
    assert not acl.allow_namespace_operation("default", "submit-job")
    assert not acl.allow_namespace_operation("default", "host-volume-register")
    assert acl.allow_node_pool_operation("my-pool", "read") and not acl.allow_node_pool_operation("my-pool", "write")
    assert simple(acl) == (True, False) * 4


def test_merge_read_and_deny_denies():
    acl = acl_of(READ_ALL, DENY_ALL)
    assert not acl.allow_namespace_operation("default", "list-jobs")
    assert not acl.allow_node_pool_operation("my-pool", "read") and not acl.allow_node_pool("my-pool")
    assert simple(acl) == (False,) * 8


@pytest.mark.parametrize(("rules", "namespace", "allow"), [
    ('namespace "foo" {}', "foo", False),
    ('namespace "foo" { policy = "deny" }', "foo", False),
    ('namespace "foo" { capabilities = ["deny"] }', "foo", False),
    ('namespace "foo" { capabilities = ["list-jobs"] }', "foo", True),
    ('namespace "foo" { policy = "read" }', "foo", True),
    ('namespace "foo" {}', "*", False),
    ('namespace "foo" { policy = "deny" }', "*", False),
    ('namespace "foo" { capabilities = ["deny"] }', "*", False),
    ('namespace "foo" { capabilities = ["list-jobs"] }', "*", True),
    ('namespace "foo" { policy = "read" }', "*", True),
    ('agent { policy = "read" }', "*", False),
    # TestWildcardNamespaceMatching
    ('namespace "prod-api-*" { policy = "write" }', "prod-api-services", True),
    ('namespace "prod-api" { policy = "write" }', "prod-api-services", False),
    ('namespace "prod-api-services" { policy = "deny" }\nnamespace "prod-api-*" { policy = "write" }',
     "prod-api-services", False),
    ('namespace "prod-api-*" { policy = "deny" }\nnamespace "prod-api-services" { policy = "write" }',
     "prod-api-services", True),
    ('namespace "*-api-services" { policy = "deny" }\nnamespace "prod-api-*" { policy = "write" }',
     "prod-api-services", False),
    ('namespace "prod-api-*" { policy = "write" }\nnamespace "*-api-services" { policy = "deny" }',
     "prod-api-services", False),
    ('namespace "prod-api-*" { policy = "deny" }\nnamespace "prod-api-services" { policy = "write" }', "*", True),
])
def test_allow_namespace(rules, namespace, allow):
    assert acl_of(rules).allow_namespace(namespace) is allow


@pytest.mark.parametrize(("rules", "allowed", "denied", "allow_pool"), [
    ('node_pool "my-pool" {\n  policy = "read"\n}', ["read"], ["delete", "write"], True),
    ('node_pool "my-pool" {\n  policy = "write"\n}', ["delete", "read", "write"], [], True),
    ('node_pool "my-pool" {\n  capabilities = ["write"]\n}', ["write"], ["delete", "read"], True),
    ('node_pool "my-pool" {\n  capabilities = ["read", "delete"]\n}', ["read", "delete"], ["write"], True),
    ('node_pool "my-pool" {\n  policy = "deny"\n  capabilities = ["write", "delete"]\n}', [],
     ["delete", "read", "write"], False),
    ('node_pool "my-pool" {\n  capabilities = ["write", "delete", "deny"]\n}', [], ["delete", "read", "write"], False),
    ('node_pool "*" {\n  policy = "read"\n}', ["read"], ["delete", "write"], True),
])
def test_node_pool_operations(rules, allowed, denied, allow_pool):
    acl = acl_of(rules)
    assert all(acl.allow_node_pool_operation("my-pool", op) for op in allowed)
    assert not any(acl.allow_node_pool_operation("my-pool", op) for op in denied)
    assert acl.allow_node_pool("my-pool") is allow_pool


@pytest.mark.parametrize(("rules", "allow"), [
    ('host_volume "prod-api-*" { policy = "write" }', True),
    ('host_volume "prod-api" { policy = "write" }', False),
    ('host_volume "prod-api-services" { policy = "deny" }\nhost_volume "prod-api-*" { policy = "write" }', False),
    ('host_volume "prod-api-*" { policy = "deny" }\nhost_volume "prod-api-services" { policy = "write" }', True),
    ('host_volume "*-api-services" { policy = "deny" }\nhost_volume "prod-api-*" { policy = "write" }', False),
    ('host_volume "prod-api-*" { policy = "write" }\nhost_volume "*-api-services" { policy = "deny" }', False),
])
def test_wildcard_host_volume_matching(rules, allow):
    assert acl_of(rules).allow_host_volume("prod-api-services") is allow


def variables(*paths):
    return "variables {\n" + "\n".join(f'  path "{p}" {{ capabilities = {json.dumps(caps)} }}'
                                        for p, caps in paths) + "\n}"


CLAIM = {"Namespace": "ns", "Job": "example", "Group": "foo", "Task": "bar"}


@pytest.mark.parametrize(("rules", "ns", "path", "op", "claim", "allow"), [
    (f'namespace "ns" {{ {variables(("foo/bar", ["read"]))} }}', "ns", "foo/bar", "read", None, True),
    (f'namespace "ns" {{ {variables(("foo/bar", ["read"]))} }}', "ns", "foo/bar", "list", None, True),
    (f'namespace "ns" {{ {variables(("foo/*", ["read"]))} }}', "ns", "foo/bar", "read", None, True),
    (f'namespace "ns" {{ {variables(("*/bar", ["read"]))} }}', "ns", "foo/bar", "read", None, True),
    (f'namespace "ns" {{ {variables(("*/bar", ["list"]), ("foo/*", ["write"]))} }}', "ns", "foo/bar", "write", None,
     True),
    (f'namespace "ns" {{ {variables(("*/bar", ["list"]), ("foo/*", ["write"]))} }}', "ns", "foo/bar", "list", None,
     False),
    (f'namespace "ns" {{ {variables(("*", ["read"]), ("foo/*", ["read"]), ("foo/bar", ["list"]))} }}', "ns",
     "foo/bar", "read", None, False),
    (f'namespace "ns" {{ {variables(("bar", ["read"]))} }}', "ns", "foo/bar", "read", None, False),
    (f'namespace "ns" {{ {variables(("*/foo", ["read"]))} }}', "ns", "foo/bar", "read", None, False),
    (f'namespace "*" {{ {variables(("foo/bar", ["read"]))} }}', "ns", "foo/bar", "read", None, True),
    (f'namespace "*" {{ {variables(("bar", ["read"]))} }}', "ns", "foo/bar", "read", None, False),
    (f'namespace "ns" {{ {variables(("foo/bar", ["read"]))} }}', "ns", "*", "read", None, False),
    (f'namespace "ns" {{ {variables(("foo/bar", ["read"]))} }}', "ns*", "bar", "read", None, False),
    (f'namespace "ns" {{ {variables(("*", ["list"]), ("system/*", ["deny"]))} }}', "ns", "system/not-allowed",
     "list", None, False),
    (f'namespace "ns" {{ {variables(("*", ["list"]), ("system/*", ["deny"]))} }}\n'
     f'namespace "prod" {{ {variables(("*", ["list"]))} }}', "prod", "system/is-allowed", "list", None, True),
    (f'namespace "ns" {{ {variables(("nomad/jobs/example", ["deny"]))} }}', "ns", "nomad/jobs/example", "read",
     CLAIM, False),
    (f'namespace "ns" {{ {variables(("nomad/jobs", ["deny"]))} }}', "ns", "nomad/jobs/example", "read", CLAIM, True),
    (f'namespace "ns" {{ {variables(("nomad/jobs/*", ["deny"]))} }}', "ns", "nomad/jobs/example", "read", CLAIM,
     True),
])
def test_variables_matching(rules, ns, path, op, claim, allow):
    assert acl_of(rules).allow_variable_operation(ns, path, op, claim) is allow


def test_variable_search_looks_for_the_namespace_prefix():
    acl = acl_of(f'namespace "ns" {{ {variables(("foo/bar", ["read"]))} }}')
    assert acl.allow_variable_search("ns") and acl.allow_variable_search("*")
    assert not acl.allow_variable_search("no-access")


@pytest.mark.parametrize(("pattern", "name", "difference"), [
    ("production-*", "production-api", 3), ("production-*", "production-admin-api", 9),
    ("production-**", "production-admin-api", 9), ("*", "production-admin-api", 20),
    ("*admin*", "production-admin-api", 15)])
def test_closest_match_difference(pattern, name, difference):
    assert glob(pattern, name)
    assert len(name) - len(pattern) + pattern.count("*") == difference


def test_matching_globs():
    assert glob("production-*", "production-api") and not glob("prod-*x", "production-api")
    assert glob("production-*-api", "production-admin-api") and glob("*", "")
    assert not glob("ab*ba", "aba") and glob("a*b*c", "axxbyyc") and not glob("", "a")


def test_ties_go_to_the_last_match_in_byte_order_as_gos_stable_sort_leaves_them():
    # "a*" and "*a" both differ by 1 from "aa": Go's insertion sort with <= puts the later key first
    assert closest({"a*": "prefix", "*a": "suffix"}, "aa") == "prefix"  # byte order: "*a" < "a*"
    assert closest({"x*": 1}, "y") is None


@pytest.mark.parametrize("n", [1, 2, 19, 20, 21, 40, 41, 64, 100])
def test_slice_stable_keeps_equal_elements_in_order_with_a_strict_less(n):
    items = [(i % 3, i) for i in range(n)][::-1]
    slice_stable(items, lambda x, y: x[0] < y[0])
    assert items == sorted(items, key=lambda x: x[0]) and items == sorted(items, key=lambda x: (x[0], -x[1]))


def test_slice_stable_with_less_or_equal_reverses_ties_within_a_block():
    items = list(range(5))
    slice_stable(items, lambda x, y: True)  # every pair "less or equal"
    assert items == [4, 3, 2, 1, 0]


@pytest.mark.parametrize(("rules", "op", "expect"), [
    ('operator { policy = "write" }', "snapshot-save", True),
    ('operator { policy = "write" }', "keyring-delete", True),
    ('operator { policy = "read" }', "license-read", True),
    ('operator { policy = "read" }', "keyring-read", True),
    ('operator { policy = "read" }', "snapshot-save", False),
    ('operator { capabilities = ["snapshot-save"] }', "snapshot-save", True),
    ('operator { capabilities = ["snapshot-save"] }', "keyring-read", False),
    ('operator { policy = "deny" }', "license-read", False),
])
def test_operator_operations(rules, op, expect):
    assert acl_of(rules).allow_operator_operation(op) is expect


def test_deny_in_any_policy_wins_whatever_the_order():
    for first, second in (('namespace "a" { policy = "deny" }', 'namespace "a" { policy = "write" }'),
                          ('namespace "a" { policy = "write" }', 'namespace "a" { policy = "deny" }')):
        acl = acl_of(first, second)
        assert not acl.allow_namespace_operation("a", "submit-job") and acl.allow_namespace_operation("a", "deny")
    assert not acl_of('operator { capabilities = ["deny"] }', 'operator { capabilities = ["snapshot-save"] }'
                      ).allow_operator_operation("snapshot-save")


def test_plugin_read_and_list():
    assert acl_of('plugin { policy = "list" }').allow_plugin_list()
    assert not acl_of('plugin { policy = "list" }').allow_plugin_read()
    assert not acl_of('plugin { policy = "write" }').allow_plugin_read()  # write does not read, as in Nomad
    assert acl_of('plugin { policy = "read" }').allow_plugin_list()


def test_max_privilege():
    for level, over in (("deny", ["deny", "write", "read", ""]), ("write", ["write", "read", ""]), ("read", ["read", ""])):
        for other in over:
            assert max_privilege(level, other) == level == max_privilege(other, level)
    assert max_privilege("scale", "") == "" and max_privilege("scale", "list") == "list"
