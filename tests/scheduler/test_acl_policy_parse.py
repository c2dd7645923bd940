"""Nomad ACL policy rules parsed and validated as ``acl.Parse`` does (acl/policy.go), and refused
through ``POST /v1/acl/policy/:name`` as ``ACL.UpsertPolicies`` refuses them
(``policy 0 invalid: `` + ``ACLPolicy.Validate``'s multierror, nomad/structs/acl.go).

The cases are the facts of Nomad's acl/policy_test.go (``TestParse``, ``TestParse_BadInput``,
``TestParse_ExtraKeys``); the full error texts follow the source where the test only checks a
prefix (docs/reference/nomad-acl.md).
"""

import pytest
from sched_helpers import assert_plain

from pytest_schedpki.scheduler.acl import capabilities as caps
from pytest_schedpki.scheduler.acl.policy import PolicyError, parse

READ = ["list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling",
        "list-scaling-policies", "read-scaling-policy", "host-volume-read"]
WRITE = READ + ["scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs", "alloc-exec", "alloc-lifecycle",
                "csi-mount-volume", "csi-write-volume", "submit-recommendation", "host-volume-create",
                "host-volume-read"]
SCALE = ["list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job", "read-job",
         "submit-recommendation"]

EVERY_BLOCK = """
namespace "default" {
    policy = "read"
}
namespace "other" {
    policy = "write"
}
namespace "secret" {
    capabilities = ["deny", "read-logs"]
}
namespace "apps" {
    variables {
        path "jobs/write-does-not-imply-read-or-delete" {
            capabilities = ["write"]
        }
        path "project/read-implies-list" {
            capabilities = ["read"]
        }
        path "project/explicit" {
            capabilities = ["read", "list", "destroy"]
        }
    }
}
namespace "autoscaler" {
    policy = "scale"
}
host_volume "production-tls-*" {
    capabilities = ["mount-readonly"]
}
host_volume "staging-tls-*" {
    policy = "write"
}
node_pool "prod" {
    capabilities = ["read"]
}
node_pool "dev" {
    policy = "write"
}
agent {
    policy = "read"
}
node {
    policy = "write"
}
operator {
    policy = "deny"
}
sentinel {
    policy = "read"
    capabilities = ["sentinel-delete"]
}
quota {
    policy = "read"
}
plugin {
    policy = "read"
}
"""

EVERY_BLOCK_JSON = """
{
    "namespace": [
        {"default": {"policy": "read"},},
        {"other": {"policy": "write"},},
        {"secret": {"capabilities": ["deny", "read-logs"]}},
        {"apps": {"variables": [{"path": [
            {"jobs/write-does-not-imply-read-or-delete": {"capabilities": ["write"],},},
            {"project/read-implies-list": {"capabilities": ["read"],},},
            {"project/explicit": {"capabilities": ["read", "list", "destroy"],},},
        ],},],},},
        {"autoscaler": {"policy": "scale"},},
    ],
    "host_volume": [{"production-tls-*": {"capabilities": ["mount-readonly"]}},
                    {"staging-tls-*": {"policy": "write"}}],
    "node_pool": [{"prod": {"capabilities": ["read"]}}, {"dev": {"policy": "write"}}],
    "agent": {"policy": "read"},
    "node": {"policy": "write"},
    "operator": {"policy": "deny"},
    "quota": {"policy": "read"},
    "plugin": {"policy": "read"}
}"""


def ns(name, policy="", capabilities=None, variables=None):
    return {"Name": name, "Policy": policy, "Capabilities": capabilities, "Variables": variables}


def path(spec, *capabilities):
    return {"PathSpec": spec, "Capabilities": list(capabilities)}


EXPECTED_NAMESPACES = [
    ns("default", "read", READ), ns("other", "write", WRITE), ns("secret", "", ["deny", "read-logs"]),
    ns("apps", variables={"Paths": [path("jobs/write-does-not-imply-read-or-delete", "write"),
                                    path("project/read-implies-list", "read", "list"),
                                    path("project/explicit", "read", "list", "destroy")]}),
    ns("autoscaler", "scale", SCALE)]


@pytest.mark.parametrize("rules", [EVERY_BLOCK, EVERY_BLOCK_JSON], ids=["hcl", "json"])
def test_every_block_parses_and_expands_as_nomad(rules):
    p = parse(rules)
    assert p.Namespaces == EXPECTED_NAMESPACES
    assert p.HostVolumes == [{"Name": "production-tls-*", "Policy": "", "Capabilities": ["mount-readonly"]},
                             {"Name": "staging-tls-*", "Policy": "write",
                              "Capabilities": ["mount-readonly", "mount-readwrite"]}]
    assert p.NodePools == [{"Name": "prod", "Policy": "", "Capabilities": ["read"]},
                           {"Name": "dev", "Policy": "write", "Capabilities": ["delete", "read", "write"]}]
    assert (p.Agent, p.Node, p.Quota, p.Plugin) == ({"Policy": "read"}, {"Policy": "write"}, {"Policy": "read"},
                                                    {"Policy": "read"})
    assert p.Operator == {"Policy": "deny", "Capabilities": ["deny"]}
    assert p.Raw == rules
    if rules is EVERY_BLOCK:
        assert p.Sentinel == {"Policy": "read", "Capabilities": ["sentinel-delete", "sentinel-read"]}


@pytest.mark.parametrize(("rules", "expected"), [
    ('namespace "default" {\n  capabilities = ["sentinel-override"]\n}', [ns("default", "", ["sentinel-override"])]),
    ('namespace "default" {\n  capabilities = ["host-volume-register"]\n}\n'
     'namespace "other" {\n  capabilities = ["host-volume-create"]\n}\n'
     'namespace "foo" {\n  capabilities = ["host-volume-write"]\n}',
     [ns("default", "", ["host-volume-register", "host-volume-create", "host-volume-read"]),
      ns("other", "", ["host-volume-create", "host-volume-read"]),
      ns("foo", "", ["host-volume-write", "host-volume-register", "host-volume-create", "host-volume-delete",
                     "host-volume-read"])]),
    ('namespace "foo" {}', [ns("foo")]),
])
def test_implied_capabilities(rules, expected):
    assert parse(rules).Namespaces == expected


def test_node_pool_shorthands_append_after_the_capabilities():
    rules = """
node_pool "pool-read-only" { policy = "read" }
node_pool "pool-read-write" { policy = "write" }
node_pool "pool-read-upsert" {
  policy = "read"
  capabilities = ["write"]
}
node_pool "pool-multiple-capabilities" {
  policy = "read"
  capabilities = ["write", "delete"]
}
node_pool "pool-deny-policy" {
  policy = "deny"
  capabilities = ["write"]
}
node_pool "pool-deny-capability" { capabilities = ["deny", "read"] }
node_pool "pool-*" { policy = "read" }
"""
    assert [(p["Name"], p["Capabilities"]) for p in parse(rules).NodePools] == [
        ("pool-read-only", ["read"]), ("pool-read-write", ["delete", "read", "write"]),
        ("pool-read-upsert", ["write", "read"]), ("pool-multiple-capabilities", ["write", "delete", "read"]),
        ("pool-deny-policy", ["write", "deny"]), ("pool-deny-capability", ["deny", "read"]), ("pool-*", ["read"])]


def test_plugin_takes_list_and_empty_rules_are_an_empty_policy():
    assert parse('plugin {\n  policy = "list"\n}').Plugin == {"Policy": "list"}
    empty = parse("")
    assert (empty.Namespaces, empty.Agent, empty.Raw) == ([], None, "")


NS_NIL = 'Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}'

ERRORS = [
    ('namespace "default" {\n  policy = "foo"\n}',
     'Invalid namespace policy: &acl.NamespacePolicy{Name:"default", Policy:"foo", ' + NS_NIL),
    ('namespace {\n  policy = "read"\n}',
     'Invalid namespace name: &acl.NamespacePolicy{Name:"", Policy:"read", ' + NS_NIL),
    ('{"namespace": [{"": {"policy": "read"}}]}',
     'Invalid namespace name: &acl.NamespacePolicy{Name:"", Policy:"read", ' + NS_NIL),
    ('namespace "has a space"{\n  policy = "read"\n}',
     'Invalid namespace name: &acl.NamespacePolicy{Name:"has a space", Policy:"read", ' + NS_NIL),
    ('namespace "dev" {\n  variables "*" {\n    capabilities = ["read", "write"]\n  }\n}',
     "Invalid variable policy: no variable paths in namespace dev"),
    ('namespace "dev" {\n  variables {\n    path "/nomad/job" {\n      capabilities = ["read", "write"]\n    }\n  }\n}',
     "Invalid variable path \"/nomad/job\" in namespace dev: cannot start with a leading '/'`"),
    ('namespace "dev" {\n  policy = "read"\n  variables {\n    path {}\n'
     '    path "nomad/jobs/example" {\n      capabilities = ["read"]\n    }\n  }\n}',
     "Invalid missing variable path in namespace dev"),
    ('{"namespace": [{"dev": {"policy": "read", "variables": [{"paths": [{"": {"capabilities": ["read"]}}]}]}}]}',
     "Invalid variable policy: no variable paths in namespace dev"),
    ('namespace "dev" {\n  variables {\n    path "a" {\n      capabilities = ["sudo"]\n    }\n  }\n}',
     "Invalid variable capability 'sudo' in namespace dev"),
    ('namespace "default" {\n  capabilities = ["deny", "foo"]\n}',
     'Invalid namespace capability \'foo\': &acl.NamespacePolicy{Name:"default", Policy:"", '
     'Capabilities:[]string{"deny", "foo"}, Variables:(*acl.VariablesPolicy)(nil)}'),
    ("namespace {}", "Failed to parse ACL Policy: invalid acl policy: runtime error: index out of range [0] "
                     "with length 0"),
    ('namespace "\\500" {}', 'Failed to parse ACL Policy: invalid acl policy: unquote "\\500" err: invalid syntax'),
    ('agent {\n  policy = "foo"\n}', 'Invalid agent policy: &acl.AgentPolicy{Policy:"foo"}'),
    ("agent {}", 'Invalid agent policy: &acl.AgentPolicy{Policy:""}'),
    ('node {\n  policy = "foo"\n}', 'Invalid node policy: &acl.NodePolicy{Policy:"foo"}'),
    ('operator {\n  policy = "foo"\n}',
     'Invalid operator policy: &acl.OperatorPolicy{Policy:"foo", Capabilities:[]string(nil)}'),
    ('operator {\n  capabilities = ["nope"]\n}', "Invalid operator capability 'nope'"),
    ('quota {\n  policy = "foo"\n}', 'Invalid quota policy: &acl.QuotaPolicy{Policy:"foo"}'),
    ('plugin {\n  policy = "reader"\n}', 'Invalid plugin policy: &acl.PluginPolicy{Policy:"reader"}'),
    ('plugin {\n  policy = "scale"\n}', 'Invalid plugin policy: &acl.PluginPolicy{Policy:"scale"}'),
    ('sentinel {\tpolicy = "invalid" }',
     'Invalid sentinel policy: &acl.SentinelPolicy{Policy:"invalid", Capabilities:[]string(nil)}'),
    ('sentinel { capabilities = ["invalid-capability"] }', "Invalid sentinel capability 'invalid-capability'"),
    ('{\n  "Name": "my-policy",\n  "Description": "This is a great policy",\n  "Rules": "anything"\n}',
     'Invalid policy: {\n  "Name": "my-policy",\n  "Description": "This is a great policy",\n'
     '  "Rules": "anything"\n}'),
    ('node_pool "" {\n}', "Invalid node pool name ''"),
    ('node_pool "pool%" {\n}', "Invalid node pool name 'pool%'"),
    ('node_pool "my-pool" {\n  capabilities = ["read", "invalid"]\n}',
     "Invalid node pool capability 'invalid' for 'my-pool'"),
    ('node_pool "my-pool" {\n  policy = "list"\n}', "Invalid node pool policy 'list' for 'my-pool'"),
    ('node_pool {\n  policy = "read"\n}', "Invalid node pool name ''"),
    ('{"node_pool": [{"": {"policy": "read"}}]}', "Invalid node pool name ''"),
    ('host_volume "volume has a space" {\n  capabilities = ["mount-readwrite"]\n}',
     'Invalid host volume name: &acl.HostVolumePolicy{Name:"volume has a space", Policy:"", '
     'Capabilities:[]string{"mount-readwrite"}}'),
    ('host_volume {\n  policy = "read"\n}',
     'Invalid host volume name: &acl.HostVolumePolicy{Name:"", Policy:"read", Capabilities:[]string(nil)}'),
    ('{"host_volume": [{"": {"policy": "read"}}]}',
     'Invalid host volume name: &acl.HostVolumePolicy{Name:"", Policy:"read", Capabilities:[]string(nil)}'),
    ('host_volume "v" {\n  capabilities = ["mount"]\n}',
     'Invalid host volume capability \'mount\': &acl.HostVolumePolicy{Name:"v", Policy:"", '
     'Capabilities:[]string{"mount"}}'),
    # HCL1's syntax and decoding errors, with their positions
    ('namespace "a" {\n  capabilities = "read"\n}', "Failed to parse ACL Policy: At 2:18: unknown slice type: "
                                                    "*ast.LiteralType"),
    ('namespace "a" {\n  policy = ["read"]\n}',
     "Failed to parse ACL Policy: At 2:12: root.namespace[0].Policy: unknown type for string *ast.ListType"),
    ('namespace "a" {\n  capabilities = [["read"]]\n}',
     "Failed to parse ACL Policy: At 2:19: root.namespace[0].Capabilities[0]: unknown type for string "
     "*ast.ListType"),
    ('namespace "a" {\n  policy = "read"\n', "Failed to parse ACL Policy: At 3:2: object expected closing RBRACE "
                                             "got: EOF"),
]


@pytest.mark.parametrize(("rules", "text"), ERRORS, ids=range(len(ERRORS)))
def test_bad_rules_get_nomads_error_text(rules, text):
    with pytest.raises(PolicyError) as caught:
        parse(rules)
    assert str(caught.value) == text


EXTRA_KEYS = """
namespace "foo" {
  policy = "write"
  variables {
    path "project/*" {
      capabilities = ["read", "write"]
    }
  }
}
namespace "bar" {
  policy = "write"
  variables {
    path "system/*" {
      capabilities = ["read", "write"]
    }
  }
}
bogus { policy = "read" }
anotherbogus { policy = "write" }
node { policy = "read" }
node { policy = "write" }
agent { policy = "read" }
agent { policy = "write" }
operator { policy = "read" }
operator { policy = "write" }
quota { policy = "read" }
quota { policy = "write" }
host_volume "volume-read-only" { policy = "read" }
host_volume "volume-read-write" { policy = "write" }
plugin { policy = "read" }
plugin { policy = "write" }
node_pool "pool-read-only" { policy = "read" }
node_pool "pool-read-write" { policy = "write" }
"""


def test_unknown_and_repeated_blocks_are_refused_only_when_strict():
    with pytest.raises(PolicyError) as caught:
        parse(EXTRA_KEYS, strict=True)
    assert str(caught.value) == "Invalid or duplicate policy keys: agent, anotherbogus, bogus, node, operator, plugin, quota"
    lenient = parse(EXTRA_KEYS, strict=False)
    assert (lenient.Agent, lenient.Plugin) == ({"Policy": "write"}, {"Policy": "write"})  # the last block wins


def test_an_error_inside_a_closed_block_is_dropped_as_nomads_hcl_fork_drops_it():
    """Nomad builds with ``hcl v1.0.1-nomad-1``, whose ``objectType`` keeps going when the token that
    failed is the block's ``}`` (OpenBao's library refuses the same text)."""
    assert parse('namespace "a" { policy = }\n}').Namespaces == [ns("a")]
    with pytest.raises(PolicyError, match=r"^Failed to parse ACL Policy: At 1:27: object expected closing RBRACE"):
        parse('namespace "a" { policy = }')


def test_block_names_match_case_insensitively_and_labels_are_not_extra_keys():
    assert parse('NAMESPACE "x" { POLICY = "read" }').Namespaces == [ns("x", "read", READ)]
    with pytest.raises(PolicyError, match=r"^Invalid or duplicate policy keys: b$"):
        parse('namespace "a" "b" {}')


def test_every_capability_nomad_declares_is_valid():
    assert {"submit-job", "read-logs", "alloc-node-exec", "host-volume-delete", "set-alloc-health-deployment",
            "delete-service-registration", "sentinel-override", "submit-recommendation"} <= caps.NAMESPACE_CAPABILITIES
    assert len(caps.NAMESPACE_CAPABILITIES) == 45


# -- through the HTTP endpoint (ACL.UpsertPolicies -> 400 "policy 0 invalid: <multierror>") ------------------

def test_bad_rules_are_refused_by_the_policy_endpoint_and_change_nothing(sched):
    body = {"Name": "eng", "Rules": 'namespace "default" {\n  policy = "foo"\n}'}
    assert_plain(sched.post("/v1/acl/policy/eng", json=body), 400,
                 "policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Invalid namespace policy: "
                 '&acl.NamespacePolicy{Name:"default", Policy:"foo", ' + NS_NIL + "\n\n")
    assert sched.get("/v1/acl/policy/eng").status_code == 404


def test_every_policy_error_is_listed_in_nomads_order(sched):
    body = {"Name": "a b", "Rules": "agent {}", "Description": "d" * 257}
    assert_plain(sched.put("/v1/acl/policy/a b", json=body), 400,
                 "policy 0 invalid: 3 errors occurred:\n\t* invalid name 'a b'\n\t* failed to parse rules: "
                 "Invalid agent policy: &acl.AgentPolicy{Policy:\"\"}\n\t* description longer than 256\n\n")


def test_valid_rules_are_stored_as_written(sched):
    rules = 'namespace "web-*" {\n  policy = "write"\n  capabilities = ["alloc-node-exec"]\n}\nnode { policy = "read" }'
    assert sched.post("/v1/acl/policy/web", json={"Name": "web", "Rules": rules}).status_code == 200
    assert sched.get("/v1/acl/policy/web").json()["Rules"] == rules


@pytest.mark.parametrize(("label", "name"), [("a\\x41", "aA"), ("\\u0062-\\101", "b-A"), ("x\\t", "x\t"),
                                             ("${a\\q}", "${a\\q}")])
def test_labels_are_unquoted_with_hcls_escapes(label, name):
    """HCL's ``Unquote``: Go's escapes outside ``${...}``, which is copied as written."""
    rules = f'namespace "{label}" {{}}'
    if name.replace("-", "").isalnum():
        assert parse(rules).Namespaces == [ns(name)]
    else:
        with pytest.raises(PolicyError, match=r"^Invalid namespace name: "):
            parse(rules)


@pytest.mark.parametrize("label", ["\\q", "\\x4", "\\400", "\\U00110000"])
def test_a_bad_escape_is_nomads_recovered_panic(label):
    with pytest.raises(PolicyError) as caught:
        parse(f'namespace "{label}" {{}}')
    assert str(caught.value) == f'Failed to parse ACL Policy: invalid acl policy: unquote "{label}" err: invalid syntax'
