"""Nomad ACL policy rules parsed and validated as ``acl.Parse`` does (``acl/policy.go``).

:func:`parse` takes a policy's ``Rules`` (HCL, or JSON when it starts with ``{``) and returns a
:class:`Policy` (blocks as dicts with Go's field names, ``Capabilities`` expanded as Nomad expands
them), or raises :class:`PolicyError` whose ``str()`` is Nomad's text, e.g.
``Failed to parse ACL Policy: At 2:20: ...`` (HCL1's syntax and decoding errors, :mod:`.hcl_decode`),
``Failed to parse ACL Policy: invalid acl policy: runtime error: index out of range [0] with length 0``
(where Nomad's decoding panics, e.g. ``namespace {}``), ``Invalid policy: <rules>`` (no block),
``Invalid namespace name: &acl.NamespacePolicy{...}``, ``Invalid namespace policy: ...``,
``Invalid namespace capability 'foo': ...``, ``Invalid variable policy: no variable paths in
namespace dev``, ``Invalid missing variable path in namespace dev``, ``Invalid variable path
"/a" in namespace dev: cannot start with a leading '/'`` + a backquote (sic), ``Invalid variable
capability 'x' in namespace dev``, ``Invalid node pool name 'a%'``, ``Invalid node pool policy 'x' for
'a'``, ``Invalid node pool capability 'x' for 'a'``, ``Invalid host volume name|policy: ...``,
``Invalid host volume capability 'x': ...``, ``Invalid or duplicate policy keys: a, b`` (``strict``
only), ``Invalid agent|node|operator|sentinel|quota|plugin policy: &acl.AgentPolicy{Policy:"x"}``,
``Invalid operator|sentinel capability 'x'``. The checks run in Nomad's order; the first fails.

``strict`` is ``acl.PolicyParseStrict`` (policy writes: unknown top-level keys and repeated blocks
refused); evaluation parses leniently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...golang.duration import go_quote
from ...hcl import hcl1, hcl1_json
from . import capabilities as caps
from .gosyntax import go_sharp_v
from .hcl_decode import NIL_DEREFERENCE, DecodeError, Field, GoPanic, Struct, decode, filter_fold, go_index

PATH = Struct("acl.VariablesPathPolicy", (Field("PathSpec", "key"), Field("Capabilities", "[]string")))
VARIABLES = Struct("acl.VariablesPolicy", (Field("Paths", ("slice", PATH), "path"),))
NAMESPACE = Struct("acl.NamespacePolicy", (Field("Name", "key"), Field("Policy", "string"),
                                           Field("Capabilities", "[]string"),
                                           Field("Variables", ("ptr", VARIABLES), "variables")))
NODE_POOL = Struct("acl.NodePoolPolicy", (Field("Name", "key"), Field("Policy", "string"),
                                          Field("Capabilities", "[]string")))
HOST_VOLUME = Struct("acl.HostVolumePolicy", (Field("Name", "key"), Field("Policy", "string"),
                                              Field("Capabilities", "[]string")))
AGENT = Struct("acl.AgentPolicy", (Field("Policy", "string"),))
NODE = Struct("acl.NodePolicy", (Field("Policy", "string"),))
OPERATOR = Struct("acl.OperatorPolicy", (Field("Policy", "string"), Field("Capabilities", "[]string")))
SENTINEL = Struct("acl.SentinelPolicy", (Field("Policy", "string"), Field("Capabilities", "[]string")))
QUOTA = Struct("acl.QuotaPolicy", (Field("Policy", "string"),))
PLUGIN = Struct("acl.PluginPolicy", (Field("Policy", "string"),))
POLICY = Struct("acl.Policy", (
    Field("Namespaces", ("slice", NAMESPACE), "namespace"), Field("NodePools", ("slice", NODE_POOL), "node_pool"),
    Field("HostVolumes", ("slice", HOST_VOLUME), "host_volume"), Field("Agent", ("ptr", AGENT), "agent"),
    Field("Node", ("ptr", NODE), "node"), Field("Operator", ("ptr", OPERATOR), "operator"),
    Field("Sentinel", ("ptr", SENTINEL), "sentinel"), Field("Quota", ("ptr", QUOTA), "quota"),
    Field("Plugin", ("ptr", PLUGIN), "plugin"), Field("ExtraKeysHCL", "unusedKeys")))

VALID_NAMESPACE = re.compile(r"[a-zA-Z0-9\-*]{1,128}")
VALID_NODE_POOL = re.compile(r"[a-zA-Z0-9\-_*]{1,128}")
VALID_VOLUME = re.compile(r"[a-zA-Z0-9\-*]{1,128}")
_BLOCKS = ("Namespaces", "NodePools", "HostVolumes", "Agent", "Node", "Operator", "Sentinel", "Quota", "Plugin")


class PolicyError(ValueError):
    """Rules Nomad refuses; ``str()`` is ``acl.Parse``'s error text."""


@dataclass(frozen=True)
class Policy:
    """A parsed policy (``acl.Policy``): ``Namespaces``, ``NodePools``, ``HostVolumes`` are lists of
    blocks (``{"Name", "Policy", "Capabilities"}``; a namespace also ``Variables``: ``None`` or
    ``{"Paths": [{"PathSpec", "Capabilities"}]}``); ``Agent`` ... ``Plugin`` a block or ``None``;
    ``Raw`` the rules text."""

    Namespaces: list = field(default_factory=list)
    NodePools: list = field(default_factory=list)
    HostVolumes: list = field(default_factory=list)
    Agent: dict | None = None
    Node: dict | None = None
    Operator: dict | None = None
    Sentinel: dict | None = None
    Quota: dict | None = None
    Plugin: dict | None = None
    Raw: str = ""
    ExtraKeysHCL: list | None = None  # the unused keys left after the repairs (None: the decoder set none)


def _remove_one(keys: list[str], key: str) -> None:
    """``Policy.removeExtraKey``: one occurrence, compared exactly."""
    if key in keys:
        keys.remove(key)


def _repair(root: hcl1.ObjectList, p: dict) -> None:
    """``hclDecode``'s second pass: an unlabelled namespace, node pool, host volume or variables path
    gets an empty name (the decoder labelled it with its first inner key), and the block keys repeated
    after the first leave the unused keys."""
    extra = p["ExtraKeysHCL"] if p.get("ExtraKeysHCL") is not None else []  # removing from nil is a no-op
    for i, item in enumerate(filter_fold(root.items, "namespace")):
        if not item.keys:
            go_index(p["Namespaces"], i)["Name"] = ""
        if i > 0:
            _remove_one(extra, "namespace")
        if not (isinstance(item.val, hcl1.ObjectList) and item.val.token is not None):
            continue
        variables = filter_fold(item.val.items, "variables")
        if not variables or not (isinstance(variables[0].val, hcl1.ObjectList) and variables[0].val.token):
            continue
        for j, path in enumerate(filter_fold(variables[0].val.items, "path")):
            if not path.keys:
                ns_vars = go_index(p["Namespaces"], i)["Variables"]
                if ns_vars is None:
                    raise GoPanic(NIL_DEREFERENCE)
                go_index(ns_vars["Paths"], j)["PathSpec"] = ""
    for key, name in (("node_pool", "NodePools"), ("host_volume", "HostVolumes")):
        for i, item in enumerate(filter_fold(root.items, key)):
            if not item.keys:
                go_index(p[name], i)["Name"] = ""
            if i > 0:
                _remove_one(extra, key)


def _decode(rules: str) -> dict:
    try:
        root = hcl1_json.parse(rules, nomad=True) if rules.lstrip().startswith("{") \
            else hcl1.parse(rules, nomad=True)
        p = decode(root, POLICY)
        _repair(root, p)
    except (hcl1.HclError, DecodeError) as exc:
        raise PolicyError(f"Failed to parse ACL Policy: {exc}") from None
    except GoPanic as exc:
        raise PolicyError(f"Failed to parse ACL Policy: invalid acl policy: {exc}") from None
    except RecursionError:  # blocks or lists nested deeper than Python can walk (Go's parser has no limit)
        raise PolicyError("Failed to parse ACL Policy: nested too deeply") from None
    return p


def _check_namespace(ns: dict) -> None:
    shown = go_sharp_v(NAMESPACE, ns)
    if not VALID_NAMESPACE.fullmatch(ns["Name"]):
        raise PolicyError(f"Invalid namespace name: {shown}")
    if ns["Policy"] and ns["Policy"] not in caps.POLICY_VALUES:
        raise PolicyError(f"Invalid namespace policy: {shown}")
    for cap in ns["Capabilities"] or ():
        if cap not in caps.NAMESPACE_CAPABILITIES:
            raise PolicyError(f"Invalid namespace capability '{cap}': {shown}")
    listed = list(ns["Capabilities"] or ())
    if ns["Policy"]:
        listed += caps.expand_namespace_policy(ns["Policy"])
    ns["Capabilities"] = caps.expand_namespace_capabilities(listed) if listed or ns["Capabilities"] is not None \
        else None
    if ns["Variables"] is not None:
        paths = ns["Variables"]["Paths"]
        if not paths:
            raise PolicyError(f"Invalid variable policy: no variable paths in namespace {ns['Name']}")
        for path in paths:
            spec = path["PathSpec"]
            if spec == "":
                raise PolicyError(f"Invalid missing variable path in namespace {ns['Name']}")
            if spec.startswith("/"):
                raise PolicyError(f"Invalid variable path {go_quote(spec)} in namespace {ns['Name']}: "
                                  "cannot start with a leading '/'`")
            for cap in path["Capabilities"] or ():
                if cap not in caps.VARIABLES_CAPABILITIES:
                    raise PolicyError(f"Invalid variable capability '{cap}' in namespace {ns['Name']}")
            path["Capabilities"] = caps.expand_variables_capabilities(list(path["Capabilities"] or ()))


def _check_labelled(p: dict, extra: list[str]) -> None:
    for ns in p["Namespaces"] or ():
        _check_namespace(ns)
        _remove_one(extra, ns["Name"])
    for pool in p["NodePools"] or ():
        name, policy = pool["Name"], pool["Policy"]
        if not VALID_NODE_POOL.fullmatch(name):
            raise PolicyError(f"Invalid node pool name '{name}'")
        if policy and policy not in caps.POLICY_VALUES:
            raise PolicyError(f"Invalid node pool policy '{policy}' for '{name}'")
        for cap in pool["Capabilities"] or ():
            if cap not in caps.NODE_POOL_CAPABILITIES:
                raise PolicyError(f"Invalid node pool capability '{cap}' for '{name}'")
        if policy:
            pool["Capabilities"] = list(pool["Capabilities"] or ()) + list(caps.expand_node_pool_policy(policy))
        _remove_one(extra, name)
    for volume in p["HostVolumes"] or ():
        shown = go_sharp_v(HOST_VOLUME, volume)
        if not VALID_VOLUME.fullmatch(volume["Name"]):
            raise PolicyError(f"Invalid host volume name: {shown}")
        if volume["Policy"] and volume["Policy"] not in caps.POLICY_VALUES:
            raise PolicyError(f"Invalid host volume policy: {shown}")
        for cap in volume["Capabilities"] or ():
            if cap not in caps.HOST_VOLUME_CAPABILITIES:
                raise PolicyError(f"Invalid host volume capability '{cap}': {shown}")
        if volume["Policy"]:
            volume["Capabilities"] = list(volume["Capabilities"] or ()) + list(
                caps.expand_host_volume_policy(volume["Policy"]))
        _remove_one(extra, volume["Name"])


def _check_with_capabilities(block: dict | None, schema: Struct, word: str, valid: frozenset, expand) -> None:
    if block is None:
        return
    if block["Policy"] and block["Policy"] not in caps.POLICY_VALUES:
        raise PolicyError(f"Invalid {word} policy: {go_sharp_v(schema, block)}")
    for cap in block["Capabilities"] or ():
        if cap not in valid:
            raise PolicyError(f"Invalid {word} capability '{cap}'")
    if block["Policy"]:
        block["Capabilities"] = list(block["Capabilities"] or ()) + list(expand(block["Policy"]))


def parse(rules: str, strict: bool = True) -> Policy:
    """``acl.Parse(rules, strict)``: empty rules are an empty policy; otherwise the rules must hold a
    block and pass every check (see the module docstring for the texts). Raises
    :class:`PolicyError`."""
    if rules == "":
        return Policy(Raw=rules)
    p = _decode(rules)
    if all(not p[name] for name in _BLOCKS[:3]) and all(p[name] is None for name in _BLOCKS[3:]):
        raise PolicyError(f"Invalid policy: {rules}")
    kept = p.pop("ExtraKeysHCL", None)
    extra: list[str] = kept if kept is not None else []
    _check_labelled(p, extra)
    if extra and strict:
        raise PolicyError(f"Invalid or duplicate policy keys: {', '.join(extra)}")
    for name, schema, word in (("Agent", AGENT, "agent"), ("Node", NODE, "node")):
        if p[name] is not None and p[name]["Policy"] not in caps.POLICY_VALUES:
            raise PolicyError(f"Invalid {word} policy: {go_sharp_v(schema, p[name])}")
    _check_with_capabilities(p["Operator"], OPERATOR, "operator", caps.OPERATOR_CAPABILITIES,
                             caps.expand_operator_policy)
    _check_with_capabilities(p["Sentinel"], SENTINEL, "sentinel", caps.SENTINEL_CAPABILITIES,
                             caps.expand_sentinel_policy)
    if p["Quota"] is not None and p["Quota"]["Policy"] not in caps.POLICY_VALUES:
        raise PolicyError(f"Invalid quota policy: {go_sharp_v(QUOTA, p['Quota'])}")
    if p["Plugin"] is not None and p["Plugin"]["Policy"] not in caps.PLUGIN_POLICY_VALUES:
        raise PolicyError(f"Invalid plugin policy: {go_sharp_v(PLUGIN, p['Plugin'])}")
    blocks: dict[str, Any] = {name: p[name] for name in _BLOCKS}
    for name in _BLOCKS[:3]:
        blocks[name] = blocks[name] or []
    return Policy(**blocks, Raw=rules, ExtraKeysHCL=kept)
