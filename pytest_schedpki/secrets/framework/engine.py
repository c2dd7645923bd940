"""What a secrets engine sees of the service that mounts it, and what the service needs of an engine.

The service (``secrets/service.py``) creates engines through the registry
(``secrets/engines/registry.py``) and hands each one an :class:`EngineHost` and a
:class:`MountInfo`; an engine never imports the service. The types below are structural
(``typing.Protocol``): :class:`~pytest_schedpki.secrets.service.SecretsService` and
:class:`~pytest_schedpki.secrets.service.Mount` satisfy them without naming them.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from .router import Router


class HostClock(Protocol):
    """The double's clock (``clock.now()``: an aware UTC datetime)."""

    def now(self) -> datetime.datetime: ...


class EngineHost(Protocol):
    """The parts of the secrets service an engine may use.

    * ``clock``: every time the engine exposes (NotBefore, CRL dates, TTL clamping) comes from it;
    * ``lock``: the service's re-entrant lock, held around every request (an engine may release it
      while it waits on something outside the double, e.g. a policy webhook);
    * ``enterprise``: whether Vault Enterprise's extras are emulated (read at request time).
    """

    clock: HostClock
    lock: AbstractContextManager[Any]
    enterprise: bool


class MountInfo(Protocol):
    """The mount an engine serves: its ``path`` (``"pki/"``) and TTL defaults in seconds."""

    path: str

    def effective_default_ttl(self) -> int: ...

    def effective_max_ttl(self) -> int: ...


class Engine(Protocol):
    """One mounted engine: its ``router`` (mount-relative paths) and opaque snapshots of its state."""

    router: Router

    def snapshot(self) -> Any: ...

    def restore(self, snapshot: Any) -> None: ...


class MountWrite:
    """One write request's transaction on a mount's engine (OpenBao runs a request's storage writes
    in one transaction): :meth:`end` with ``rollback=True`` leaves no trace of it.

    An engine with ``begin_write()`` / ``end_write(savepoint, rollback)`` (the PKI engine: an undo
    log, O(changes)) is asked for a savepoint; any other engine is snapshot before the write and
    restored on rollback (O(its state))."""

    __slots__ = ("engine", "savepoint", "native")

    def __init__(self, engine: Engine):
        self.engine = engine
        self.native = hasattr(engine, "begin_write")
        self.savepoint = engine.begin_write() if self.native else engine.snapshot()  # type: ignore[attr-defined]

    def end(self, rollback: bool) -> None:
        """Commit (``rollback=False``) or undo the write. Call exactly once."""
        if self.native:
            self.engine.end_write(self.savepoint, rollback)  # type: ignore[attr-defined]
        elif rollback:
            self.engine.restore(self.savepoint)


EngineFactory = Callable[[EngineHost, MountInfo], Engine]
"""``factory(host, mount) -> Engine``: how the registry builds an engine for a new mount."""
