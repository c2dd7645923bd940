"""Property, continued from test_acl_property.py: variables, operator and sentinel decisions for
random policies and requests, the double (:mod:`pytest_schedpki.scheduler.acl`) against a reference
written here from Nomad's rules (acl/acl.go ``NewACL``, ``AllowVariableOperation``,
``matchingVariablesCapabilitySet``, ``AllowVariableSearch``, ``AllowOperatorOperation``,
``AllowSentinelOperation``; acl/policy.go ``expandVariablesCapabilities``, ``expand*Policy``):

5. A variables ``path`` grants its capabilities; with ``deny`` among them exactly ``[deny]``;
   ``read`` without ``list`` also grants ``list``. Grants for the same namespace name and path add
   up across blocks and policies (no deny override here), and they are kept even when the
   namespace itself is denied. A namespace or path with ``*`` makes a wildcard entry, matched on
   ``namespace + "\\x00" + path`` with ``*`` = any run of characters.
6. A request (namespace, path, op, claim) uses the exact entry if there is one; else, when the claim
   is for that namespace and the path is ``nomad/jobs``, ``nomad/jobs/<job>``,
   ``nomad/jobs/<job>/<group>`` or ``nomad/jobs/<job>/<group>/<task>``, it may read and list;
   else the closest wildcard as for namespaces (smallest ``len(key) - len(pattern) + number of *``,
   a tie to the greatest pattern); else nothing. Search in a namespace: any entry whose key starts
   with it (``*``: any entry at all).
7. Operator and sentinel: the highest shorthand over the policies (deny > write > read); a block
   grants its capabilities followed by its shorthand's (operator read = license-read,
   keyring-read; write = snapshot-save, license-read, keyring-rotate, keyring-read,
   keyring-delete; sentinel read = sentinel-read; write = sentinel-read, sentinel-submit,
   sentinel-delete; deny = deny), added up in policy order until a ``deny`` makes the set exactly
   ``{deny}`` for good. An operation is allowed with ``write``, or when it is in the set (so
   ``deny`` itself "is allowed" once denied, as Nomad's ``Check`` says).
"""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_schedpki.scheduler.acl.evaluate import new_acl
from pytest_schedpki.scheduler.acl.policy import parse

VAR_CAPS = ["list", "read", "write", "destroy", "deny"]
OPERATOR_CAPS = ["deny", "snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete"]
SENTINEL_CAPS = ["deny", "sentinel-read", "sentinel-submit", "sentinel-delete"]
EXPAND = {"operator": {"deny": ["deny"], "read": ["license-read", "keyring-read"],
                       "write": ["snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete"]},
          "sentinel": {"deny": ["deny"], "read": ["sentinel-read"],
                       "write": ["sentinel-read", "sentinel-submit", "sentinel-delete"]}}

JOB_PATHS = ["nomad/jobs", "nomad/jobs/a", "nomad/jobs/a/b", "nomad/jobs/a/b/a", "nomad/jobs/*"]
paths = st.one_of(st.text("ab/*", min_size=1, max_size=4).filter(lambda p: not p.startswith("/")),
                  st.sampled_from(JOB_PATHS))
request_paths = st.one_of(st.text("ab/", max_size=4), st.sampled_from(JOB_PATHS[:4]))
namespace_blocks = st.fixed_dictionaries({
    "name": st.text("ab*", min_size=1, max_size=2), "policy": st.sampled_from(["", "deny", "read"]),
    "paths": st.lists(st.tuples(paths, st.lists(st.sampled_from(VAR_CAPS), max_size=3)), min_size=1, max_size=3)})
single = st.one_of(st.none(), st.fixed_dictionaries({"policy": st.sampled_from(["", "deny", "read", "write"]),
                                                     "caps": st.lists(st.integers(0, 5), max_size=3)}))
policies = st.lists(st.fixed_dictionaries({"namespaces": st.lists(namespace_blocks, max_size=3),
                                           "operator": single, "sentinel": single}), max_size=3)
claims = st.one_of(st.none(), st.fixed_dictionaries({
    "Namespace": st.sampled_from(["a", "b"]), "Job": st.sampled_from(["a", "b"]),
    "Group": st.sampled_from(["a", "b"]), "Task": st.sampled_from(["a", "b"])}))


def _caps(kind, block):
    valid = OPERATOR_CAPS if kind == "operator" else SENTINEL_CAPS
    return [valid[i % len(valid)] for i in block["caps"]]


def render(policy) -> str:
    out = []
    for ns in policy["namespaces"]:
        body = "".join(f'    path "{p}" {{ capabilities = [{", ".join(map(repr, caps))}] }}\n'.replace("'", '"')
                       for p, caps in ns["paths"])
        shorthand = f'  policy = "{ns["policy"]}"\n' if ns["policy"] else ""
        out.append(f'namespace "{ns["name"]}" {{\n{shorthand}  variables {{\n{body}  }}\n}}')
    for kind in ("operator", "sentinel"):
        block = policy[kind]
        if block is not None:
            shorthand = f'policy = "{block["policy"]}" ' if block["policy"] else ""
            caps = ", ".join(f'"{c}"' for c in _caps(kind, block))
            out.append(f"{kind} {{ {shorthand}capabilities = [{caps}] }}")
    return "\n".join(out)


def glob_matches(pattern: str, name: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), name, re.DOTALL) is not None


def variable_tables(drawn):
    exact, wild = {}, {}
    for policy in drawn:
        for ns in policy["namespaces"]:
            for path, caps in ns["paths"]:
                granted = {"deny"} if "deny" in caps else set(caps) | ({"list"} if "read" in caps else set())
                table = wild if "*" in ns["name"] or "*" in path else exact
                table.setdefault(ns["name"] + "\x00" + path, set()).update(granted)
    return exact, wild


def variable_grant(exact, wild, ns, path, claim):
    key = ns + "\x00" + path
    if key in exact:
        return exact[key]
    if claim is not None and ns == claim["Namespace"]:
        job, group, task = claim["Job"], claim["Group"], claim["Task"]
        if path in ("nomad/jobs", f"nomad/jobs/{job}", f"nomad/jobs/{job}/{group}",
                    f"nomad/jobs/{job}/{group}/{task}"):
            return {"read", "list"}
    matching = [p for p in wild if glob_matches(p, key)]
    if not matching:
        return set()
    best = min(len(key) - len(p) + p.count("*") for p in matching)
    return wild[max(p for p in matching if len(key) - len(p) + p.count("*") == best)]


def operations(drawn, kind):
    level, granted = "", set()
    for policy in drawn:
        block = policy[kind]
        if block is None:
            continue
        for candidate in ("deny", "write", "read"):
            if candidate in (level, block["policy"]):
                level = candidate
                break
        if "deny" in granted:
            continue
        for cap in _caps(kind, block) + EXPAND[kind].get(block["policy"], []):
            if cap == "deny":
                granted = {"deny"}
                break
            granted.add(cap)
    return level, granted


@settings(max_examples=400, deadline=None)
@given(policies, st.sampled_from(["a", "b", "ab", "*", ""]), request_paths,
       st.sampled_from(VAR_CAPS), claims, st.sampled_from(OPERATOR_CAPS), st.sampled_from(SENTINEL_CAPS))
def test_variables_operator_and_sentinel_as_the_rules_say(drawn, ns, path, op, claim, operator_op, sentinel_op):
    acl = new_acl(False, [parse(render(p)) for p in drawn])
    exact, wild = variable_tables(drawn)
    assert acl.allow_variable_operation(ns, path, op, claim) is (op in variable_grant(exact, wild, ns, path, claim))
    keys = [*exact, *wild]
    expected_search = bool(keys) if ns == "*" else any(k.startswith(ns) for k in keys)
    assert acl.allow_variable_search(ns) is expected_search
    level, granted = operations(drawn, "operator")
    assert acl.allow_operator_operation(operator_op) is (level == "write" or operator_op in granted)
    level, granted = operations(drawn, "sentinel")
    assert acl.allow_sentinel_operation(sentinel_op) is (level == "write" or sentinel_op in granted)
