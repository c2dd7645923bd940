"""The scheduler side as the page shows it: auth methods redacted as Nomad's API redacts them
(``Sanitize``: ``OIDCClientSecret``, the client assertion's ``ClientSecret`` and ``PemKey`` become
``"redacted"``), binding rules, ACL policies and roles, tokens by accessor (never a ``SecretID``) and
the replication state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..scheduler.aclstore.objects import policy_to_dict, role_to_dict, token_to_dict
from ..scheduler.encode import method_to_dict
from ..scheduler.model import sanitize
from ..scheduler.sso.rules import rule_to_dict
from . import scheduler_access as access

if TYPE_CHECKING:  # pragma: no cover
    from ..scheduler.state import SchedulerState


def scheduler_view(state: SchedulerState) -> dict[str, Any]:
    """``{"auth_methods": [...], "binding_rules": [...], "policies": [...], "roles": [...], "tokens":
    [...], "replication": {...}}``: each record as Nomad's API writes it, tokens as their list stub
    (AccessorID, Name, Type, Policies, Roles, Global, times, indexes; no SecretID) plus
    ``ExpirationTTL``."""
    names = access.role_names(state)
    tokens = []
    for token in access.tokens(state):
        full = token_to_dict(token, names)
        tokens.append(token_to_dict(token, names, stub=True) | {"ExpirationTTL": full["ExpirationTTL"]})
    return {
        "auth_methods": [method_to_dict(sanitize(m)) for m in access.auth_methods(state)],
        "binding_rules": [rule_to_dict(r) for r in access.binding_rules(state)],
        "policies": [policy_to_dict(p) for p in access.policies(state)],
        "roles": [role_to_dict(r) for r in access.roles(state)],
        "tokens": tokens,
        "replication": access.replication(state),
    }
