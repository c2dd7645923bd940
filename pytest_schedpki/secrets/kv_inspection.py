"""``schedpki.kv``: what a test wrote to and read from the KV mounts, without HTTP.

Every KV mount records one :class:`~pytest_schedpki.secrets.engines.kv.backend.KvEvent` per key it
read, wrote, deleted, undeleted or destroyed for a request (version 2 also records the version;
the values themselves are not recorded). The pytest plugin resets the double before each test, so
the events are the test's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .service import SecretsService


@dataclass(frozen=True)
class KvAccess:
    """One event with its mount: ``mount`` (``"secret"``), ``action``, ``path``, ``version``, ``time``."""

    mount: str
    action: str
    path: str
    version: int | None
    time: Any


class KvInspector:
    """Read-only views on the KV mounts of a :class:`~pytest_schedpki.secrets.service.SecretsService`."""

    def __init__(self, service: SecretsService):
        self.service = service

    def _kv_backends(self):
        for path, mount in sorted(self.service.mounts.items()):
            if mount.type == "kv":
                yield path.rstrip("/"), mount.backend

    def events(self, mount: str | None = None, action: str | None = None, path: str | None = None) -> list[KvAccess]:
        """Events of every KV mount (or ``mount``), oldest first, filtered by ``action`` (``read``,
        ``write``, ``delete``, ``undelete``, ``destroy``, ``delete-metadata``) and key ``path``."""
        with self.service.lock:
            events = sorted(((name, e) for name, backend in self._kv_backends()
                             if mount is None or name == mount.strip("/") for e in backend.events),
                            key=lambda item: item[1].seq)
        found = [KvAccess(name, e.action, e.path, e.version, e.time) for name, e in events]
        return [e for e in found if (action is None or e.action == action) and (path is None or e.path == path)]

    def reads(self, mount: str | None = None) -> list[str]:
        """The key paths read (``mount/path``), in order, repeats kept."""
        return [f"{e.mount}/{e.path}" for e in self.events(mount, "read")]

    def writes(self, mount: str | None = None) -> list[str]:
        """The key paths written (``mount/path``), in order, repeats kept."""
        return [f"{e.mount}/{e.path}" for e in self.events(mount, "write")]

    def assert_read(self, path: str, mount: str = "secret") -> KvAccess:
        """The last read of ``path`` on ``mount``; AssertionError listing what was read otherwise."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this helper's source
        found = self.events(mount, "read", path)
        if not found:
            raise AssertionError(f"{mount}/{path} was not read; reads: {self.reads() or 'none'}")
        return found[-1]

    def assert_not_read(self, path: str, mount: str = "secret") -> None:
        """AssertionError when ``path`` on ``mount`` was read."""
        __tracebackhide__ = True
        if self.events(mount, "read", path):
            raise AssertionError(f"{mount}/{path} was read")

    def value(self, path: str, mount: str = "secret", version: int = 0) -> dict[str, Any] | None:
        """The stored value of ``path`` (version 2: ``version``, 0 = current; ``None`` when missing,
        deleted or destroyed). Records no event."""
        with self.service.lock:
            backend = self.service.mount(mount).backend
            if backend.version == 1:
                value = backend.state.v1.get(path)
                return dict(value) if value is not None else None
            meta = backend.state.metadata.get(path)
            if meta is None:
                return None
            number = version or meta.current_version
            record = meta.versions.get(number)
            if record is None or record.destroyed or record.deleted(backend.now()):
                return None
            return dict(backend.state.data[(path, number)])
