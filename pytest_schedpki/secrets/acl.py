"""Which token may do what: OpenBao's ACL policies and their evaluation.

* The ``root`` policy allows everything; the built-in ``default`` policy grants a token its own
  token endpoints and a few sys helpers (the same rules as OpenBao's default policy).
* Policy paths are exact, or globs: a trailing ``*`` matches any suffix, ``+`` one path segment.
  When several patterns match, the most specific wins by OpenBao's priority rules (the first
  wildcard later in the pattern; no trailing ``*``; fewer ``+`` segments; longer; lexically larger).
  The same pattern in several of a token's policies merges its capabilities; ``deny`` wins.
* Operations map to capabilities: read, list, update (``create`` when the path's existence check
  says the item does not exist yet), delete, patch; root-protected paths also need ``sudo``.
"""

from __future__ import annotations

import datetime
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import acl_parameters
from .auth.token.store import rfc3339_nano
from .policy_parser import parse_policy

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping

    from .auth.token.store import Token

DEFAULT_POLICY = """path "auth/token/lookup-self" {
    capabilities = ["read"]
}
path "auth/token/renew-self" {
    capabilities = ["update"]
}
path "auth/token/revoke-self" {
    capabilities = ["update"]
}
path "sys/capabilities-self" {
    capabilities = ["update"]
}
path "sys/internal/ui/resultant-acl" {
    capabilities = ["read"]
}
path "sys/leases/renew" {
    capabilities = ["update"]
}
path "sys/leases/lookup" {
    capabilities = ["update"]
}
path "cubbyhole/*" {
    capabilities = ["create", "read", "update", "delete", "list"]
}
path "sys/wrapping/wrap" {
    capabilities = ["update"]
}
path "sys/wrapping/lookup" {
    capabilities = ["update"]
}
path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}
path "sys/tools/hash" {
    capabilities = ["update"]
}
path "sys/tools/hash/*" {
    capabilities = ["update"]
}
"""


@dataclass(frozen=True)
class Policy:
    """A stored ACL policy: its ``name``, source ``text``, parsed ``rules`` ({pattern: capabilities}),
    ``modified`` time, ``version`` (bumped on every write) and ``parameters`` ({pattern: [ParameterRule]},
    see :mod:`.acl_parameters`)."""

    name: str
    text: str
    rules: dict
    modified: datetime.datetime
    version: int = 1
    parameters: dict = field(default_factory=dict)

    def describe(self) -> dict:
        """``data`` of ``GET sys/policies/acl/:name``. The built-in ``root`` policy is never stored
        upstream: no ``modified`` and version 0."""
        data = {"allow_slashes_in_identity_templates": False, "allow_wildcards_in_identity_templates": False,
                "cas_required": False, "modified": rfc3339_nano(self.modified), "name": self.name,
                "policy": self.text, "version": self.version}
        if self.name == "root":
            del data["modified"]
            data["version"] = 0
        return data


RESPONSE_WRAPPING_POLICY = """path "sys/wrapping/unwrap" { capabilities = ["update"] }
path "sys/wrapping/lookup" { capabilities = ["update", "read"] }
"""


def default_policies(now: datetime.datetime) -> dict[str, Policy]:
    """The policies every server starts with (``root`` has no rules: it allows everything;
    ``response-wrapping`` is what wrapping tokens carry)."""
    return {
        "default": Policy("default", DEFAULT_POLICY, parse_policy(DEFAULT_POLICY), now),
        "response-wrapping": Policy("response-wrapping", RESPONSE_WRAPPING_POLICY,
                                    parse_policy(RESPONSE_WRAPPING_POLICY), now),
        "root": Policy("root", "", {}, now),
    }


def _matches(pattern: str, path: str) -> bool:
    glob = pattern.endswith("*")
    body = pattern[:-1] if glob else pattern
    if "+" not in body:
        return path.startswith(body) if glob else path == body
    pattern_parts = body.split("/")
    path_parts = path.split("/")
    if glob:
        if len(path_parts) < len(pattern_parts):
            return False
        head = path_parts[: len(pattern_parts) - 1]
        tail = "/".join(path_parts[len(pattern_parts) - 1:])
        if not tail.startswith(pattern_parts[-1]) and pattern_parts[-1] != "+":
            return False
        if pattern_parts[-1] == "+" and (not path_parts[len(pattern_parts) - 1] and len(path_parts) == len(pattern_parts)):
            return False
        return all(p == "+" and s != "" or p == s for p, s in zip(pattern_parts[:-1], head, strict=True))
    if len(pattern_parts) != len(path_parts):
        return False
    return all(p == "+" and s != "" or p == s for p, s in zip(pattern_parts, path_parts, strict=True))


def _priority(pattern: str) -> tuple:
    """Sort key: a higher key is a more specific pattern (OpenBao's priority rules)."""
    positions = [i for i, ch in enumerate(pattern) if ch in "+*"]
    first_wildcard = positions[0] if positions else len(pattern) + 1
    return (first_wildcard, not pattern.endswith("*"), -pattern.count("+"), len(pattern), pattern)


def _deciding_pattern(patterns: Iterable[str], path: str) -> str | None:
    """The pattern whose rule decides ``path``: the exact path, else the most specific matching glob."""
    patterns = set(patterns)
    if path in patterns and "*" not in path and "+" not in path:
        return path
    candidates = [p for p in patterns if ("*" in p or "+" in p) and _matches(p, path)]
    return max(candidates, key=_priority) if candidates else None


_DECIDED: dict[tuple, tuple[tuple[Policy, ...], frozenset[str]]] = {}  # see capabilities()
_DECIDED_MAX = 4096
_DECIDED_LOCK = threading.Lock()


def capabilities(policies: list[Policy], path: str) -> set[str]:
    """The capabilities the given policies grant on ``path`` (relative to ``/v1/``).

    Kept per (these policy objects, path), at most :data:`_DECIDED_MAX` answers: a stored policy is
    never changed in place (a write stores a new ``Policy``), and an entry holds its policies, so the
    ids in its key cannot be reused while it exists."""
    key = (*map(id, policies), path)
    kept = _DECIDED.get(key)
    if kept is not None:
        return set(kept[1])
    caps = _capabilities(policies, path)
    with _DECIDED_LOCK:
        if len(_DECIDED) >= _DECIDED_MAX:
            _DECIDED.clear()
        _DECIDED[key] = (tuple(policies), frozenset(caps))
    return caps


def _capabilities(policies: list[Policy], path: str) -> set[str]:
    merged: dict[str, set[str]] = {}
    for policy in policies:
        for pattern, caps in policy.rules.items():
            merged.setdefault(pattern, set()).update(caps)
    best = _deciding_pattern(merged, path)
    if best is None:
        return set()
    caps = merged[best]
    return {"deny"} if "deny" in caps else set(caps)


def parameters_allowed(policies: list[Policy], path: str, data: Mapping[str, Any]) -> bool:
    """Whether the parameter constraints of the rule deciding ``path`` let a request with ``data``
    through (:mod:`.acl_parameters`); ``True`` when that rule sets none."""
    if not any(policy.parameters for policy in policies):
        return True  # the common case: no rule of these policies constrains parameters
    best = _deciding_pattern((p for policy in policies for p in policy.rules), path)
    if best is None:
        return True
    rules = [rule for policy in policies for rule in policy.parameters.get(best, ())]
    return not rules or acl_parameters.allows(acl_parameters.merge(rules), data)


def has_mount_access(policies_by_name: Mapping[str, Policy], token: Token, mount_path: str) -> bool:
    """Whether ``token`` may use anything under ``mount_path`` (``"secret/"``): root, or a rule of one
    of its policies, not only ``deny``, on a path inside the mount or a glob reaching into it
    (OpenBao's ``ACL.HasMountAccess``, used by ``sys/internal/ui/mounts/:path``)."""
    if token.is_root:
        return True
    for name in token.policies:
        policy = policies_by_name.get(name)
        if policy is None:
            continue
        for pattern, caps in policy.rules.items():
            if not set(caps) - {"deny"}:
                continue
            literal = pattern.split("+", 1)[0].rstrip("*") if ("*" in pattern or "+" in pattern) else pattern
            if literal.startswith(mount_path) or (literal != pattern and mount_path.startswith(literal)):
                return True
    return False


def check_capability(policies_by_name: Mapping[str, Policy], token: Token, path: str, operation: str, sudo: bool,
                     data: Mapping[str, Any] | None = None) -> bool:
    """Whether ``token`` may run ``operation`` (read, list, update, create, delete, patch) on
    ``path``; ``policies_by_name`` are the service's stored policies; ``sudo`` says the path is
    root-protected and also needs the ``sudo`` capability; ``data``: the request's parameters, checked
    against the rule's allowed/denied/required parameters for reads, creates, updates and patches."""
    if token.is_root:
        return True
    policies = [policies_by_name[name] for name in token.policies if name in policies_by_name]
    caps = capabilities(policies, path)
    if "deny" in caps:
        return False
    if sudo and "sudo" not in caps:
        return False
    if operation not in caps:
        return False
    if data is not None and operation in acl_parameters.PARAMETER_OPERATIONS:
        return parameters_allowed(policies, path, data)
    return True
