"""Every read of the scheduler's state the page makes, in one place: the ACL objects' store is moving
(``state.acl`` today), so only these functions change with it. Each takes the state's lock and returns
records (never a live container), without counting as a read of the replicated view (a page refresh
must not let a lagged write through)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..scheduler.state import SchedulerState


def auth_methods(state: SchedulerState) -> list[Any]:
    """The authoritative region's auth methods (stored records, secrets included), by name."""
    with state._lock:
        view = state.authoritative_view()
        return [view.methods[name] for name in sorted(view.methods)]


def binding_rules(state: SchedulerState) -> list[Any]:
    """The authoritative region's binding rules, by ID."""
    with state._lock:
        rules = state.binding_rules.rules
        return [rules[key] for key in sorted(rules)]


def policies(state: SchedulerState) -> list[Any]:
    """The ACL policies, by name."""
    with state._lock:
        return [state.acl.policies[name] for name in sorted(state.acl.policies)]


def roles(state: SchedulerState) -> list[Any]:
    """The ACL roles, by name."""
    with state._lock:
        return sorted(state.acl.roles.values(), key=lambda role: role.Name)


def tokens(state: SchedulerState) -> list[Any]:
    """The ACL tokens (records with their SecretID: callers must drop it), by creation."""
    with state._lock:
        return sorted(state._tokens.values(), key=lambda token: (token.CreateIndex, token.AccessorID))


def role_names(state: SchedulerState) -> dict[str, str]:
    """Role ID -> name."""
    with state._lock:
        return state.acl.role_names()


def replication(state: SchedulerState) -> dict[str, Any]:
    """Regions, indexes and lag: ``{"authoritative_region", "region", "authoritative": {"table_index",
    "raft_index"}, "local": {"table_index", "raft_index", "pending"}, "binding_rules": {"pending"},
    "lag": {...lag_settings}}`` (the local view as last applied: pending writes are not applied here)."""
    with state._lock:
        replica = state._replica
        federated = state._federated()
        return {
            "authoritative_region": state.authoritative_region,
            "region": state.region,
            "authoritative": {"table_index": state._table, "raft_index": state._raft},
            "local": {"table_index": replica.table_index,
                      "raft_index": replica.raft_index if federated else state._raft,
                      "pending": len(replica.pending)},
            "binding_rules": {"pending": len(state.binding_rules.replica.pending)},
            "lag": state.lag_settings(),
        }
