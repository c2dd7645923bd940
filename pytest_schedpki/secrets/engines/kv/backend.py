"""One KV mount's engine: the version-1 or version-2 path table, chosen by the mount's
``options.version``, and the in-place upgrade from 1 to 2.

Mount options as OpenBao keeps them: ``type: kv`` without a version stores ``options: {}`` and
serves version 1; ``options.version`` ``"1"``/``"2"`` (a number is kept as its text); ``kv-v2``
mounts as ``type: kv`` with ``options.version: "2"``; any other version fails the mount with 400
``nil backend of type "kv" returned from factory`` (see :func:`normalise_mount`).

Version 2 answers any path outside its table (``<mount>/foo``) with 404, ``data: null`` and the
warning ``Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API
endpoints to use. If using the OpenBao CLI, use 'bao kv <verb>' for this operation.``
"""

from __future__ import annotations

import datetime
import itertools
from dataclasses import dataclass
from typing import Any

from pytest_schedpki.secrets.framework.engine import EngineHost, MountInfo
from pytest_schedpki.secrets.framework.logical import LogicalResponse, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path, Router

from . import v1, v2_data, v2_metadata
from .model import KeyMetadata, KvState, Version

_CLI_VERB = {"read": "get", "update": "put", "delete": "delete", "list": "list", "patch": "patch"}
INVALID_PATH = ("Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API "
                "endpoints to use. If using the OpenBao CLI, use 'bao kv {verb}' for this operation.")


@dataclass(frozen=True)
class KvEvent:
    """One thing a KV mount did for a request: ``action`` (``read``, ``write``, ``delete``,
    ``undelete``, ``destroy``, ``delete-metadata``), the key ``path``, the ``version`` (``None`` on
    version 1) and the double's ``time``."""

    action: str
    path: str
    version: int | None
    time: datetime.datetime
    seq: int = 0  # order across mounts


_SEQUENCE = itertools.count(1)


def mount_version(options: dict[str, Any] | None) -> int:
    """The KV version ``options`` select: 1 (no version, ``"1"``) or 2; 0 when invalid."""
    raw = (options or {}).get("version")
    if raw in (None, ""):
        return 1
    return {"1": 1, "2": 2}.get(str(raw), 0)


def normalise_mount(type: str, options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The ``(type, options)`` a KV mount is stored with (``kv-v2`` -> ``kv`` + version ``"2"``;
    versions as text; ``generic``, the old name of KV version 1, keeps its type). Raises 400 ``nil
    backend of type "kv" returned from factory`` for a version other than 1 or 2, and ``secrets
    engine "generic" does not allow setting a version`` for any ``options.version`` of a ``generic``
    mount (OpenBao ``vault/logical_system.go``, ``handleMount``)."""
    if type == "generic":
        if "version" in (options or {}):
            raise user_error('secrets engine "generic" does not allow setting a version')
        return "generic", dict(options or {})
    options = {k: str(v) if k == "version" and v is not None else v for k, v in (options or {}).items()}
    if type == "kv-v2":
        options["version"] = "2"
    if mount_version(options) == 0:
        raise user_error('nil backend of type "kv" returned from factory')
    return "kv", options


def _invalid_path(req: LogicalRequest) -> LogicalResponse:
    verb = _CLI_VERB.get(req.operation, req.operation)
    return LogicalResponse(data=None, status=404, warnings=[INVALID_PATH.format(verb=verb)])


class KvBackend:
    """One KV mount: ``state`` (:class:`KvState`), ``events`` (what tests did, see :class:`KvEvent`)
    and ``router`` (the table of the mount's current version)."""

    def __init__(self, service: EngineHost, mount: MountInfo):
        self.service = service
        self.mount = mount
        self.state = KvState()
        self.events: list[KvEvent] = []
        self._v1 = Router(v1.paths(self))
        fallback = Path(".*", {}, {op: _invalid_path for op in _CLI_VERB}, takes_arbitrary_input=True)
        self._v2 = Router([*v2_data.paths(self), *v2_metadata.paths(self), fallback])
        self._built = {k: v for k, v in vars(self).items() if k not in ("state", "events")}

    def renew(self) -> None:
        """Be the engine as it was built again (state and events aside, which :meth:`restore` sets):
        attributes a test set on it since are dropped. A reset reuses the engine of an unchanged mount
        this way instead of building it and its two route tables again (as the PKI engine's
        ``renew``)."""
        built, state, events = self._built, self.state, self.events
        vars(self).clear()
        vars(self).update(built)
        self._built, self.state, self.events = built, state, events

    @property
    def version(self) -> int:
        """1 or 2, from the mount's options (read at request time: a tune can upgrade it)."""
        return mount_version(getattr(self.mount, "options", None)) or 1

    @property
    def router(self) -> Router:  # type: ignore[override]
        return self._v2 if self.version == 2 else self._v1

    def now(self) -> datetime.datetime:
        """The double's clock (aware UTC datetime)."""
        return self.service.clock.now()

    def journal_event(self, action: str, path: str, version: int | None) -> None:
        """Record what a request did to a key (read by ``schedpki.kv`` inspection helpers)."""
        self.events.append(KvEvent(action, path, version, self.now(), next(_SEQUENCE)))

    def upgrade(self) -> None:
        """Version 1 -> 2 in place: every value becomes version 1 of its key (OpenBao's upgrade)."""
        now = self.now()
        for key, value in sorted(self.state.v1.items()):
            meta = KeyMetadata(created=now, updated=now, current_version=1, oldest_version=1,
                               versions={1: Version(created=now)})
            self.state.metadata[key] = meta
            self.state.data[(key, 1)] = dict(value)
        self.state.v1 = {}

    def snapshot(self) -> Any:
        return (self.state.copy(), list(self.events))

    def restore(self, snapshot: Any) -> None:
        if snapshot is None:
            self.state, self.events = KvState(), []
        else:
            self.state, self.events = snapshot[0].copy(), list(snapshot[1])


def factory(host: EngineHost, mount: MountInfo) -> KvBackend:
    """The registry's factory for ``kv`` mounts."""
    return KvBackend(host, mount)



