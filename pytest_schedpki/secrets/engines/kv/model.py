"""State of one KV mount (upstream: openbao ``builtin/logical/kv``, ``types.pb.go`` records).

Version 2 keeps, per key path, a :class:`KeyMetadata` (settings, times, and a :class:`Version`
record per live version) and the data of each version. Times are aware UTC datetimes from the
double's clock; a version is *deleted* once its ``deletion_time`` has passed (a soft delete sets it
to now, ``delete_version_after`` to creation + that many seconds), so freezegun or the manual clock
moving past it deletes the version exactly as time does on a real server.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_schedpki.golang.time import GoTime

DEFAULT_MAX_VERSIONS = 10  # the engine's default when neither the key nor the config sets one
UINT32 = 1 << 32


def timestamp(when: datetime.datetime | None) -> str:
    """RFC 3339 with nanoseconds as the engine prints times; ``""`` for "never"."""
    return GoTime.from_datetime(when).rfc3339nano() if when is not None else ""


@dataclass
class Version:
    """One version of a key: ``created``, ``deletion`` (``None``: not scheduled), ``destroyed``."""

    created: datetime.datetime
    deletion: datetime.datetime | None = None
    destroyed: bool = False

    def deleted(self, now: datetime.datetime) -> bool:
        """Whether the version reads as deleted at ``now``."""
        return self.deletion is not None and self.deletion <= now

    def describe(self, version: int | None = None, custom: dict | None = None) -> dict[str, Any]:
        """The version's metadata block (``data``/``subkeys`` responses pass ``version``)."""
        out: dict[str, Any] = {"created_time": timestamp(self.created), "deletion_time": timestamp(self.deletion),
                               "destroyed": self.destroyed}
        if version is not None:
            out["version"] = version
            out["custom_metadata"] = custom
        return out


@dataclass
class KeyMetadata:
    """The metadata of one key: settings (``max_versions`` 0 = the config's; ``delete_version_after``
    seconds, 0 = the config's), versions by number, and bookkeeping counters."""

    created: datetime.datetime
    updated: datetime.datetime
    versions: dict[int, Version] = field(default_factory=dict)
    current_version: int = 0
    oldest_version: int = 0
    max_versions: int = 0
    cas_required: bool = False
    delete_version_after: int = 0
    custom_metadata: dict[str, str] | None = None
    metadata_version: int = 0


@dataclass
class KvConfig:
    """The mount's ``config``: ``max_versions`` (0 = 10), ``cas_required``, ``delete_version_after``
    (seconds, 0 = never), ``metadata_cas_required``."""

    max_versions: int = 0
    cas_required: bool = False
    delete_version_after: int = 0
    metadata_cas_required: bool = False


@dataclass
class KvState:
    """Everything a KV mount stores: version-1 values and version-2 keys, metadata and config.

    Copies are cheap (the service snapshots a mount before every write): the dicts are copied, the
    records in them are shared. Hence the rule of this engine: stored values (``v1``, ``data``) are
    never changed in place (a write stores a new dict), and a key's metadata is changed only through
    :meth:`editable`, which swaps in a private copy first; ``config`` is replaced, not changed.
    """

    v1: dict[str, dict[str, Any]] = field(default_factory=dict)
    config: KvConfig = field(default_factory=KvConfig)
    metadata: dict[str, KeyMetadata] = field(default_factory=dict)
    data: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)

    def copy(self) -> KvState:
        """A copy sharing the (never mutated) records; O(number of keys) dict copies."""
        return KvState(v1=dict(self.v1), config=replace(self.config), metadata=dict(self.metadata),
                       data=dict(self.data))

    def editable(self, key: str) -> KeyMetadata | None:
        """The metadata of ``key`` as a private copy (versions included), stored in place of the
        shared one, or ``None`` when the key does not exist."""
        meta = self.metadata.get(key)
        if meta is None:
            return None
        mine = replace(meta, versions={n: replace(v) for n, v in meta.versions.items()},
                       custom_metadata=dict(meta.custom_metadata) if meta.custom_metadata is not None else None)
        self.metadata[key] = mine
        return mine


def list_children(keys: Any, prefix: str) -> list[str]:
    """The immediate children of ``prefix`` among ``keys``: names, and folders with a trailing ``/``,
    sorted (OpenBao's storage ``List``)."""
    found: set[str] = set()
    for key in keys:
        if not key.startswith(prefix) or key == prefix:
            continue
        rest = key[len(prefix):]
        head, slash, _ = rest.partition("/")
        found.add(head + "/" if slash else head)
    return sorted(found)
