"""What the scheduler state hands back: write and query results, and region views for inspection."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from .model import AuthMethod


@dataclass(frozen=True)
class WriteResult:
    """An applied write: the raft ``index`` it consumed (``X-Nomad-Index``) and the stored method."""

    index: int
    method: AuthMethod | None


@dataclass(frozen=True)
class QueryResult:
    """A read: result ``index`` (``X-Nomad-Index``), ``value`` (a method, None, or a list of methods),
    ``known_leader`` and ``last_contact_ms`` (``X-Nomad-KnownLeader``/``X-Nomad-LastContact``)."""

    index: int
    value: object
    known_leader: bool = True
    last_contact_ms: int = 0


@dataclass(frozen=True)
class RegionView:
    """One region's auth methods for inspection: ``methods`` by name, the table and raft indexes,
    and (local view only) how many authoritative writes are still ``pending``."""

    region: str
    methods: Mapping[str, AuthMethod]
    table_index: int
    raft_index: int
    pending: int = 0


def stamp_write(record, existing, index: int):
    """The indexes of an upsert, as Nomad's state store sets them (``upsertACLAuthMethodTxn``,
    ``upsertACLBindingRuleTxn``): ``record`` (an auth method or binding rule with ``Hash``) stamped
    with raft ``index`` - ``CreateIndex``/``CreateTime`` kept from ``existing`` when there is one,
    ``ModifyIndex`` = ``index`` - or ``None`` when ``existing`` has the same ``Hash``: a no-op
    upsert that keeps its ModifyIndex and replicates nothing."""
    if existing is not None and existing.Hash == record.Hash:
        return None
    if existing is not None:
        return replace(record, CreateIndex=existing.CreateIndex, CreateTime=existing.CreateTime, ModifyIndex=index)
    return replace(record, CreateIndex=index, ModifyIndex=index)
