"""Nomad's ACL policy words: the ``policy = "..."`` shorthands, the capabilities each block accepts and
what a shorthand expands to (``acl/policy.go``: the ``Policy*`` and ``*Capability*`` constants,
``isPolicyValid``, ``PluginPolicy.isValid``, ``is*CapabilityValid`` and ``expand*``).

Expansions are tuples in Nomad's order (a parsed policy's ``Capabilities`` lists them in that order,
duplicates kept: the evaluation makes them a set).
"""

from __future__ import annotations

DENY, READ, LIST, WRITE, SCALE = "deny", "read", "list", "write", "scale"

#: ``isPolicyValid``: the shorthands of namespace, node pool, host volume, agent, node, operator,
#: sentinel and quota blocks (an empty ``policy`` is refused in agent, node and quota blocks).
POLICY_VALUES = (DENY, READ, WRITE, SCALE)
#: ``PluginPolicy.isValid``: the plugin block takes ``list`` and not ``scale``.
PLUGIN_POLICY_VALUES = (DENY, READ, LIST, WRITE)

_NS_READ = ("list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling",
            "list-scaling-policies", "read-scaling-policy", "host-volume-read")
_NS_WRITE = _NS_READ + ("scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs", "alloc-exec",
                        "alloc-lifecycle", "csi-mount-volume", "csi-write-volume", "submit-recommendation",
                        "host-volume-create")
_NS_SCALE = ("list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job", "read-job",
             "submit-recommendation")

#: ``isNamespaceCapabilityValid`` (``sentinel-override`` and ``submit-recommendation`` are
#: Enterprise capabilities Nomad accepts everywhere).
NAMESPACE_CAPABILITIES = frozenset(_NS_WRITE + _NS_SCALE + (
    "deny", "alloc-node-exec", "sentinel-override", "csi-register-plugin", "host-volume-register",
    "host-volume-write", "host-volume-delete", "register-job", "revert-job", "deregister-job", "purge-job",
    "evaluate-job", "plan-job", "tag-job-version", "stable-job", "fail-deployment", "pause-deployment",
    "promote-deployment", "unblock-deployment", "cancel-deployment", "set-alloc-health-deployment",
    "gc-allocation", "pause-allocation", "force-periodic-job", "delete-service-registration"))
#: ``isPathCapabilityValid``: a ``variables { path "..." {} }`` block.
VARIABLES_CAPABILITIES = frozenset({"list", "read", "write", "destroy", "deny"})
#: ``isNodePoolCapabilityValid``.
NODE_POOL_CAPABILITIES = frozenset({"delete", "deny", "read", "write"})
#: ``isHostVolumeCapabilityValid``.
HOST_VOLUME_CAPABILITIES = frozenset({"deny", "mount-readonly", "mount-readwrite"})
#: ``isOperatorCapabilityValid``.
OPERATOR_CAPABILITIES = frozenset({"deny", "snapshot-save", "license-read", "keyring-rotate", "keyring-read",
                                   "keyring-delete"})
#: ``isSentinelCapabilityValid``.
SENTINEL_CAPABILITIES = frozenset({"deny", "sentinel-read", "sentinel-submit", "sentinel-delete"})


def expand_namespace_policy(policy: str) -> tuple[str, ...]:
    """``expandNamespacePolicy``: deny -> (deny), read, write (read's plus the job, alloc, CSI and
    host-volume-create capabilities), scale; anything else -> ()."""
    return {DENY: ("deny",), READ: _NS_READ, WRITE: _NS_WRITE, SCALE: _NS_SCALE}.get(policy, ())


def expand_namespace_capabilities(capabilities: list[str]) -> list[str]:
    """``expandNamespaceCapabilities``: the host-volume capabilities imply others, appended after the
    list (host-volume-write -> register, create, delete, read; -register -> create, read;
    -create -> read)."""
    implied = {"host-volume-write": ("host-volume-register", "host-volume-create", "host-volume-delete",
                                     "host-volume-read"),
               "host-volume-register": ("host-volume-create", "host-volume-read"),
               "host-volume-create": ("host-volume-read",)}
    return capabilities + [extra for cap in capabilities for extra in implied.get(cap, ())]


def expand_node_pool_policy(policy: str) -> tuple[str, ...]:
    """``expandNodePoolPolicy``: deny, read, write -> (delete, read, write); else ()."""
    return {DENY: ("deny",), READ: ("read",), WRITE: ("delete", "read", "write")}.get(policy, ())


def expand_host_volume_policy(policy: str) -> tuple[str, ...]:
    """``expandHostVolumePolicy``: deny, read -> mount-readonly, write -> both mounts; else ()."""
    return {DENY: ("deny",), READ: ("mount-readonly",),
            WRITE: ("mount-readonly", "mount-readwrite")}.get(policy, ())


def expand_operator_policy(policy: str) -> tuple[str, ...]:
    """``expandOperatorPolicy``: read -> license-read, keyring-read; write -> all five; else ()."""
    return {DENY: ("deny",), READ: ("license-read", "keyring-read"),
            WRITE: ("snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete")
            }.get(policy, ())


def expand_sentinel_policy(policy: str) -> tuple[str, ...]:
    """``expandSentinelPolicy``: read -> sentinel-read; write -> read, submit, delete; else ()."""
    return {DENY: ("deny",), READ: ("sentinel-read",),
            WRITE: ("sentinel-read", "sentinel-submit", "sentinel-delete")}.get(policy, ())


def expand_variables_capabilities(capabilities: list[str]) -> list[str]:
    """``expandVariablesCapabilities``: a ``deny`` makes the list ``[deny]``; ``read`` without
    ``list`` adds ``list``."""
    if "deny" in capabilities:
        return ["deny"]
    if "read" in capabilities and "list" not in capabilities:
        return capabilities + ["list"]
    return capabilities
