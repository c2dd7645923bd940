"""Property: for random Nomad ACL policies drawn from the grammar and random requests, the double's
decision (:mod:`pytest_schedpki.scheduler.acl`: ``parse`` -> ``new_acl`` -> ``allow_*``) equals a
reference decision written here, straight from the documented rules:

1. A namespace, node pool or host volume block grants its ``capabilities`` plus what its
   ``policy`` shorthand stands for: namespace ``read`` = list-jobs, parse-job, read-job,
   csi-list-volume, csi-read-volume, read-job-scaling, list-scaling-policies, read-scaling-policy,
   host-volume-read; ``write`` = read's + scale-job, submit-job, dispatch-job, read-logs, read-fs,
   alloc-exec, alloc-lifecycle, csi-mount-volume, csi-write-volume, submit-recommendation,
   host-volume-create; ``scale`` = list-scaling-policies, read-scaling-policy, read-job-scaling,
   scale-job, read-job, submit-recommendation; ``deny`` = deny. host-volume-write implies
   host-volume-register, -create, -delete, -read; -register implies -create, -read; -create
   implies -read. Node pool ``read`` = read, ``write`` = delete, read, write. Host volume ``read`` =
   mount-readonly, ``write`` = mount-readonly, mount-readwrite.
2. All blocks with the same name, across all the token's policies, add up; if any of them grants
   ``deny``, the name's grant is exactly ``{deny}``.
3. A request for a name uses the grant of that exact name if any block names it (a name without
   ``*``: a block's wildcard name is never an exact match, even for the request ``*``); otherwise, among
   the names with ``*`` that match it (``*`` = any run of characters), the one with the smallest
   ``len(request) - len(pattern) + number of *``; on a tie, the greatest pattern in byte order;
   otherwise nothing is granted. An operation is allowed when it is in the grant. A namespace
   request ``*`` is also allowed when any namespace's grant holds the operation.
   ``AllowNamespace``/``AllowNodePool``/``AllowHostVolume``: the grant is non-empty and holds no deny.
4. agent, node, operator, quota, plugin: the token's level is ``deny`` if any policy says deny,
   else ``write``, ``read``, ``list`` in that order (``scale`` is no level). Read needs read or write,
   write needs write; plugin read needs read, plugin list needs list or read.
"""

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_schedpki.scheduler.acl.evaluate import new_acl
from pytest_schedpki.scheduler.acl.policy import PolicyError, parse

NS_READ = {"list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling",
           "list-scaling-policies", "read-scaling-policy", "host-volume-read"}
NS_SHORTHAND = {
    "": set(), "deny": {"deny"}, "read": NS_READ,
    "write": NS_READ | {"scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs", "alloc-exec",
                        "alloc-lifecycle", "csi-mount-volume", "csi-write-volume", "submit-recommendation",
                        "host-volume-create"},
    "scale": {"list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job", "read-job",
              "submit-recommendation"}}
IMPLIED = {"host-volume-write": {"host-volume-register", "host-volume-create", "host-volume-delete",
                                 "host-volume-read"},
           "host-volume-register": {"host-volume-create", "host-volume-read"},
           "host-volume-create": {"host-volume-read"}}
POOL_SHORTHAND = {"": set(), "deny": {"deny"}, "read": {"read"}, "write": {"delete", "read", "write"}}
VOLUME_SHORTHAND = {"": set(), "deny": {"deny"}, "read": {"mount-readonly"},
                    "write": {"mount-readonly", "mount-readwrite"}}
NS_OPS = sorted(NS_SHORTHAND["write"] | NS_SHORTHAND["scale"] | {"deny", "host-volume-write", "host-volume-register",
                                                                  "host-volume-delete", "alloc-node-exec"})
SINGLE = ("agent", "node", "operator", "quota", "plugin")

names = st.text("ab-*", min_size=1, max_size=3)
pool_names = st.text("ab_*", min_size=1, max_size=3)
request_names = st.text("ab-_*x", min_size=0, max_size=4)


def block(kind, valid_shorthands, capabilities, name_strategy):
    return st.fixed_dictionaries({
        "kind": st.just(kind), "name": name_strategy, "policy": st.sampled_from(valid_shorthands),
        "capabilities": st.lists(st.sampled_from(capabilities), max_size=3)})


policies = st.lists(st.fixed_dictionaries({
    "labelled": st.lists(st.one_of(
        block("namespace", ["", "deny", "read", "write", "scale"], NS_OPS, names),
        block("node_pool", ["", "deny", "read", "write"], ["read", "write", "delete", "deny"], pool_names),
        block("host_volume", ["", "deny", "read", "write"], ["mount-readonly", "mount-readwrite", "deny"], names)),
        max_size=5),
    "single": st.dictionaries(st.sampled_from(SINGLE), st.sampled_from(["deny", "read", "write", "list", "scale"])),
    "json": st.booleans()}), max_size=4)


def render(policy) -> str:
    """The policy as HCL, or as JSON (HCL1's nested form)."""
    singles = {k: v for k, v in policy["single"].items() if not (v == "list" and k != "plugin")
               and not (v == "scale" and k == "plugin")}
    if policy["json"]:
        doc = {}
        for b in policy["labelled"]:
            body = {"policy": b["policy"]} if b["policy"] else {}
            body["capabilities"] = b["capabilities"]
            doc.setdefault(b["kind"], []).append({b["name"]: body})
        doc.update({k: {"policy": v} for k, v in singles.items()})
        return json.dumps(doc) if doc else ""
    lines = []
    for b in policy["labelled"]:
        inner = (f'  policy = "{b["policy"]}"\n' if b["policy"] else "") + \
            f"  capabilities = {json.dumps(b['capabilities'])}\n"
        lines.append(f'{b["kind"]} "{b["name"]}" {{\n{inner}}}')
    lines += [f'{k} {{\n  policy = "{v}"\n}}' for k, v in singles.items()]
    return "\n".join(lines)


def glob_matches(pattern: str, name: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), name, re.DOTALL) is not None


def grants(policies_, kind):
    table: dict[str, set] = {}
    for policy in policies_:
        for b in policy["labelled"]:
            if b["kind"] != kind:
                continue
            short = {"namespace": NS_SHORTHAND, "node_pool": POOL_SHORTHAND, "host_volume": VOLUME_SHORTHAND}[kind]
            caps = set(b["capabilities"]) | short[b["policy"]]
            if kind == "namespace":
                caps |= {extra for cap in caps for extra in IMPLIED.get(cap, ())}
            table.setdefault(b["name"], set()).update(caps)
    return {name: ({"deny"} if "deny" in caps else caps) for name, caps in table.items()}


def grant_for(table, name):
    if name in table and "*" not in name:
        return table[name]
    matching = [p for p in table if "*" in p and glob_matches(p, name)]
    if not matching:
        return None
    best = min(len(name) - len(p) + p.count("*") for p in matching)
    return table[max(p for p in matching if len(name) - len(p) + p.count("*") == best)]


def level(policies_, block_name):
    said = {p["single"][block_name] for p in policies_ if block_name in p["single"]
            and (p["single"][block_name] != "list" or block_name == "plugin")
            and not (p["single"][block_name] == "scale" and block_name == "plugin")}
    return next((lvl for lvl in ("deny", "write", "read", "list") if lvl in said), "")


@settings(max_examples=400, deadline=None)
@given(policies, request_names, st.sampled_from(NS_OPS), st.sampled_from(["read", "write", "delete"]),
       st.sampled_from(["mount-readonly", "mount-readwrite"]))
def test_the_double_decides_as_the_documented_rules(drawn, name, ns_op, pool_op, volume_op):
    acl = new_acl(False, [parse(render(p)) for p in drawn])
    table = grants(drawn, "namespace")
    found = grant_for(table, name)
    expected = found is not None and ns_op in found
    if name == "*":
        expected = expected or any(ns_op in caps for caps in table.values())
    assert acl.allow_namespace_operation(name, ns_op) is expected
    expected_any = bool(found) and "deny" not in found
    if name == "*":
        expected_any = expected_any or any(caps and "deny" not in caps for caps in table.values())
    assert acl.allow_namespace(name) is expected_any
    for kind, op, allow_op, allow_any in (("node_pool", pool_op, acl.allow_node_pool_operation, acl.allow_node_pool),
                                          ("host_volume", volume_op, acl.allow_host_volume_operation,
                                           acl.allow_host_volume)):
        found = grant_for(grants(drawn, kind), name)
        assert allow_op(name, op) is (found is not None and op in found)
        assert allow_any(name) is (bool(found) and "deny" not in found)
    levels = {b: level(drawn, b) for b in SINGLE}
    assert (acl.allow_agent_read(), acl.allow_agent_write()) == (levels["agent"] in ("read", "write"),
                                                                 levels["agent"] == "write")
    assert (acl.allow_node_read(), acl.allow_node_write()) == (levels["node"] in ("read", "write"),
                                                               levels["node"] == "write")
    assert (acl.allow_operator_read(), acl.allow_operator_write()) == (levels["operator"] in ("read", "write"),
                                                                       levels["operator"] == "write")
    assert (acl.allow_quota_read(), acl.allow_quota_write()) == (levels["quota"] in ("read", "write"),
                                                                 levels["quota"] == "write")
    assert (acl.allow_plugin_read(), acl.allow_plugin_list()) == (levels["plugin"] == "read",
                                                                  levels["plugin"] in ("list", "read"))
    assert not acl.is_management()


TOKENS = ["namespace", "node_pool", "host_volume", "agent", "node", "operator", "quota", "plugin", "sentinel",
          "variables", "path", "policy", "capabilities", '"read"', '"deny"', '"a*"', '"x"', "{", "}", "[", "]", "=",
          ",", ":", '"\\500"', "1", "true", "null", '""', "\n", "#", '"list-jobs"']


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=14).map(" ".join), st.booleans())
def test_any_text_is_a_policy_or_nomads_error_never_a_crash(text, strict):
    try:
        parse(text, strict)
    except PolicyError as exc:
        assert str(exc) and "Traceback" not in str(exc)
