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


class Remembered:
    """``encode(record, *extra)`` (a record's JSON text) remembered per record object and ``extra``,
    at most ``size`` entries (all dropped when full).

    Only for records that are never changed in place: frozen dataclasses holding strings, numbers,
    tuples, frozen maps, ``GoTime`` or ``datetime`` values. The stores replace a record on every write
    (``dataclasses.replace``), so the text of a stored object never goes stale, and each entry holds
    its record, so the ``id`` it is keyed by cannot be reused by another object while it is there.
    Thread-safe as far as it matters: two threads may both encode a record, with the same text."""

    def __init__(self, encode, size: int = 4096):
        self._encode = encode
        self._size = size
        self._entries: dict[tuple, tuple[object, str]] = {}

    def __call__(self, record, *extra) -> str:
        key = (id(record), *extra)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is record:
            return entry[1]
        text = self._encode(record, *extra)
        if len(self._entries) >= self._size:
            self._entries.clear()
        self._entries[key] = (record, text)
        return text
