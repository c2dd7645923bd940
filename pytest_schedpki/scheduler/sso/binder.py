"""Binding rules -> policies, roles or management: Nomad's ``lib/auth/binder.go`` ``Binder.Bind``
(``reference §8``).

Rules are taken in ascending ID order; those whose selector matches bind in turn. A bind name with
``${`` is HIL-interpolated over the mapped claim values **lower-cased**; for ``role``/``policy`` the
result must match ``^[a-zA-Z0-9-]{1,128}$``. A missing role or policy is skipped; ``management``
drops everything bound so far and stops. Errors raise :class:`BindError` (plain errors: 500).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from . import bexpr
from .claims import ClaimError, interpolate

VALID_BIND_NAME = re.compile(r"[a-zA-Z0-9-]{1,128}")


class BindError(Exception):
    """A bind name that cannot be computed; ``str()`` is Nomad's text."""


@dataclass
class Bindings:
    """What login grants: policy names (not de-duplicated), role IDs, or management."""

    management: bool = False
    policies: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)

    def none(self) -> bool:
        return not (self.management or self.policies or self.roles)


def bind(rules, datum: dict, variables: dict[str, str], find_role, find_policy) -> Bindings:
    """Evaluate ``rules`` (ascending ID) against ``datum``; ``find_role(name)`` gives a role ID or None,
    ``find_policy(name)`` whether a policy exists. Raises :class:`BindError`."""
    lowered = {k: v.lower() for k, v in variables.items()}
    out = Bindings()
    for rule in sorted(rules, key=lambda r: r.ID):
        if not bexpr.matches(rule.Selector, datum):
            continue
        name = rule.BindName
        if "${" in name:
            try:
                name = interpolate(name, lowered)
            except ClaimError as exc:
                raise BindError(f"cannot compute {json.dumps(rule.BindType)} bind name for bind target: {exc}") from None
        if rule.BindType in ("role", "policy") and not VALID_BIND_NAME.fullmatch(name):
            raise BindError(f"computed {json.dumps(rule.BindType)} bind name for bind target is invalid: "
                            f"{json.dumps(name, ensure_ascii=False)}")
        if rule.BindType == "role":
            role_id = find_role(name)
            if role_id is not None:
                out.roles.append(role_id)
        elif rule.BindType == "policy":
            if find_policy(name):
                out.policies.append(name)
        elif rule.BindType == "management":
            return Bindings(management=True)
    return out
