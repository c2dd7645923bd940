"""What a set of Nomad ACL policies allows (``acl/acl.go``): :func:`new_acl` compiles parsed
policies (:func:`.policy.parse`) as ``NewACL`` does, and the :class:`ACL`'s ``allow_*`` methods are
its ``Allow*`` decisions. Pure functions: no state, no HTTP; endpoints call them.

The rules, as Nomad applies them:

* a management ACL allows everything;
* namespaces, node pools and host volumes: each name's capabilities are the union over all
  policies; a ``deny`` in any of them replaces that name's set with ``{deny}`` and nothing is added
  to it afterwards; a name with ``*`` is a wildcard. A request's name takes the exact name's set if
  one exists (even an empty or denying one), else the closest matching wildcard's (:mod:`.glob`),
  else nothing;
* variables: per ``namespace + path`` the union of the path blocks' capabilities (no deny override
  in the merge; ``deny`` expanded to ``[deny]`` at parse); a wildcard in the namespace or the path
  makes it a wildcard entry; a workload's own ``nomad/jobs[/job[/group[/task]]]`` paths read and
  list;
* agent, node, operator, quota, plugin: the highest of the policies' shorthands, ``deny`` highest of
  all, then ``write``, ``read``, ``list`` (``scale`` counts as nothing); operator and sentinel
  capabilities are a union that a ``deny`` replaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .glob import closest
from .policy import Policy

ALL_NAMESPACES = "*"


def max_privilege(a: str, b: str) -> str:
    """``maxPrivilege``: deny > write > read > list > nothing (``""``)."""
    for level in ("deny", "write", "read", "list"):
        if level in (a, b):
            return level
    return ""


def _merge(exact: dict, wildcard: dict, name: str, capabilities: list[str]) -> None:
    table = wildcard if "*" in name else exact
    current = table.setdefault(name, set())
    if "deny" in current:
        return
    for cap in capabilities:
        if cap == "deny":
            current.clear()
            current.add("deny")
            return
        current.add(cap)


def _merge_union_with_deny(current: set, capabilities: list[str]) -> None:
    if "deny" in current:
        return
    for cap in capabilities:
        if cap == "deny":
            current.clear()
            current.add("deny")
            return
        current.add(cap)


@dataclass
class ACL:
    """A compiled ACL (``acl.ACL``). Build it with :func:`new_acl`."""

    management: bool = False
    namespaces: dict[str, set[str]] = field(default_factory=dict)
    wildcard_namespaces: dict[str, set[str]] = field(default_factory=dict)
    node_pools: dict[str, set[str]] = field(default_factory=dict)
    wildcard_node_pools: dict[str, set[str]] = field(default_factory=dict)
    host_volumes: dict[str, set[str]] = field(default_factory=dict)
    wildcard_host_volumes: dict[str, set[str]] = field(default_factory=dict)
    variables: dict[str, set[str]] = field(default_factory=dict)
    wildcard_variables: dict[str, set[str]] = field(default_factory=dict)
    agent: str = ""
    node: str = ""
    operator: str = ""
    sentinel: str = ""
    quota: str = ""
    plugin: str = ""
    operator_capabilities: set[str] = field(default_factory=set)
    sentinel_capabilities: set[str] = field(default_factory=set)

    # -- namespaces ---------------------------------------------------------------------------
    def _namespace_set(self, ns: str) -> set[str] | None:
        """``matchingNamespaceCapabilitySet``: the exact name's set, else the closest wildcard's."""
        if ns in self.namespaces:
            return self.namespaces[ns]
        return closest(self.wildcard_namespaces, ns)

    def _any_namespace(self, check) -> bool:
        return any(check(c) for c in (*self.namespaces.values(), *self.wildcard_namespaces.values()))

    def allow_namespace_operation(self, ns: str, op: str) -> bool:
        """``AllowNamespaceOperation`` (``AllowNsOp``): management, or ``op`` in the namespace's
        matching set; ``ns == "*"`` also passes when any namespace grants ``op``."""
        if self.management:
            return True
        if ns == ALL_NAMESPACES and self._any_namespace(lambda c: op in c):
            return True
        found = self._namespace_set(ns)
        return found is not None and op in found

    allow_ns_op = allow_namespace_operation

    def allow_ns_op_any_of(self, ns: str, *ops: str) -> bool:
        """``AllowNsOpAnyOf`` (also ``NamespaceValidator(ops...)``): any of ``ops`` allowed."""
        return self.management or any(self.allow_namespace_operation(ns, op) for op in ops)

    def allow_namespace(self, ns: str) -> bool:
        """``AllowNamespace``: the matching set is non-empty and holds no ``deny`` (for ``*``: any
        namespace's set is)."""
        if self.management:
            return True
        if ns == ALL_NAMESPACES and self._any_namespace(lambda c: bool(c) and "deny" not in c):
            return True
        found = self._namespace_set(ns)
        return bool(found) and "deny" not in found  # type: ignore[operator]

    # -- node pools and host volumes ----------------------------------------------------------
    def _pool_set(self, pool: str) -> set[str] | None:
        return self.node_pools[pool] if pool in self.node_pools else closest(self.wildcard_node_pools, pool)

    def allow_node_pool_operation(self, pool: str, op: str) -> bool:
        """``AllowNodePoolOperation``."""
        found = self._pool_set(pool)
        return self.management or (found is not None and op in found)

    def allow_node_pool(self, pool: str) -> bool:
        """``AllowNodePool``: the matching set is non-empty and holds no ``deny``."""
        found = self._pool_set(pool)
        return self.management or (bool(found) and "deny" not in found)  # type: ignore[operator]

    def allow_node_pool_search(self) -> bool:
        """``AllowNodePoolSearch``: some node pool's set holds no ``deny`` (an empty set counts)."""
        return self.management or any("deny" not in c for c in (*self.node_pools.values(),
                                                                   *self.wildcard_node_pools.values()))

    def _volume_set(self, name: str) -> set[str] | None:
        return self.host_volumes[name] if name in self.host_volumes else closest(self.wildcard_host_volumes, name)

    def allow_host_volume_operation(self, name: str, op: str) -> bool:
        """``AllowHostVolumeOperation``."""
        found = self._volume_set(name)
        return self.management or (found is not None and op in found)

    def allow_host_volume(self, name: str) -> bool:
        """``AllowHostVolume``: the matching set is non-empty and holds no ``deny``."""
        found = self._volume_set(name)
        return self.management or (bool(found) and "deny" not in found)  # type: ignore[operator]

    # -- variables ----------------------------------------------------------------------------
    def allow_variable_operation(self, ns: str, path: str, op: str, claim: dict | None = None) -> bool:
        """``AllowVariableOperation``; ``claim`` (``{"Namespace", "Job", "Group", "Task"}``) is a
        workload identity's, whose own ``nomad/jobs/...`` paths read and list."""
        if self.management:
            return True
        key = f"{ns}\x00{path}"
        if key in self.variables:
            return op in self.variables[key]
        if claim is not None and ns == claim.get("Namespace"):
            job, group, task = claim.get("Job", ""), claim.get("Group", ""), claim.get("Task", "")
            if path in ("nomad/jobs", f"nomad/jobs/{job}", f"nomad/jobs/{job}/{group}",
                        f"nomad/jobs/{job}/{group}/{task}"):
                return op in ("read", "list")
        found = closest(self.wildcard_variables, key)
        return found is not None and op in found

    def allow_variable_search(self, ns: str) -> bool:
        """``AllowVariableSearch``: any variables entry whose key starts with ``ns`` (``*``: any)."""
        if self.management:
            return True
        keys = (*self.variables, *self.wildcard_variables)
        return bool(keys) if ns == ALL_NAMESPACES else any(k.startswith(ns) for k in keys)

    # -- the single-level blocks --------------------------------------------------------------
    def allow_agent_read(self) -> bool:
        """``AllowAgentRead``: agent read or write."""
        return self.management or self.agent in ("read", "write")

    def allow_agent_write(self) -> bool:
        """``AllowAgentWrite``: agent write."""
        return self.management or self.agent == "write"

    def allow_node_read(self) -> bool:
        """``AllowNodeRead``: node read or write (a client token's virtual server policy is deny)."""
        return self.management or self.node in ("read", "write")

    def allow_node_write(self) -> bool:
        """``AllowNodeWrite``: node write."""
        return self.management or self.node == "write"

    def allow_operator_read(self) -> bool:
        """``AllowOperatorRead``: operator read or write."""
        return self.management or self.operator in ("read", "write")

    def allow_operator_write(self) -> bool:
        """``AllowOperatorWrite``: operator write."""
        return self.management or self.operator == "write"

    def allow_operator_operation(self, op: str) -> bool:
        """``AllowOperatorOperation``: operator write, or ``op`` among the operator capabilities."""
        return self.management or self.operator == "write" or op in self.operator_capabilities

    def allow_sentinel_operation(self, op: str) -> bool:
        """``AllowSentinelOperation``: sentinel write, or ``op`` among the sentinel capabilities."""
        return self.management or self.sentinel == "write" or op in self.sentinel_capabilities

    def allow_quota_read(self) -> bool:
        """``AllowQuotaRead``: quota read or write."""
        return self.management or self.quota in ("read", "write")

    def allow_quota_write(self) -> bool:
        """``AllowQuotaWrite``: quota write."""
        return self.management or self.quota == "write"

    def allow_plugin_read(self) -> bool:
        """``AllowPluginRead``: plugin read only (``write`` does not read, as in Nomad)."""
        return self.management or self.plugin == "read"

    def allow_plugin_list(self) -> bool:
        """``AllowPluginList``: plugin list or read."""
        return self.management or self.plugin in ("list", "read")

    def is_management(self) -> bool:
        """``IsManagement``."""
        return self.management


def new_acl(management: bool, policies: list[Policy]) -> ACL:
    """``NewACL(management, policies)``: a management ACL, or the merge of ``policies`` (module
    docstring) in their order."""
    if management:
        return ACL(management=True)
    acl = ACL()
    for policy in policies:
        for ns in policy.Namespaces:
            name = ns["Name"]
            for path in (ns.get("Variables") or {}).get("Paths") or ():
                key = f"{name}\x00{path['PathSpec']}"
                table = acl.wildcard_variables if "*" in name or "*" in path["PathSpec"] else acl.variables
                table.setdefault(key, set()).update(path["Capabilities"] or ())
            _merge(acl.namespaces, acl.wildcard_namespaces, name, ns["Capabilities"] or [])
        for pool in policy.NodePools:
            _merge(acl.node_pools, acl.wildcard_node_pools, pool["Name"], pool["Capabilities"] or [])
        for volume in policy.HostVolumes:
            _merge(acl.host_volumes, acl.wildcard_host_volumes, volume["Name"], volume["Capabilities"] or [])
        for block in ("agent", "node", "quota", "plugin"):
            value = getattr(policy, block.capitalize())
            if value is not None:
                setattr(acl, block, max_privilege(getattr(acl, block), value["Policy"]))
        if policy.Operator is not None:
            acl.operator = max_privilege(acl.operator, policy.Operator["Policy"])
            _merge_union_with_deny(acl.operator_capabilities, policy.Operator["Capabilities"] or [])
        if policy.Sentinel is not None:
            acl.sentinel = max_privilege(acl.sentinel, policy.Sentinel["Policy"])
            _merge_union_with_deny(acl.sentinel_capabilities, policy.Sentinel["Capabilities"] or [])
    return acl
