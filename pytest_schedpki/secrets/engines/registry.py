"""The secrets engine types the service can mount, by ``type`` (``sys/mounts/:path`` ``type``).

The service looks engines up here and never imports an engine's package itself; an engine never
imports the service (it receives an :class:`~pytest_schedpki.secrets.framework.engine.EngineHost`).
A new engine (KV next) is one sub-package of ``secrets/engines/`` plus one line in :data:`ENGINES`.
"""

from __future__ import annotations

from pytest_schedpki.secrets.framework.engine import Engine, EngineFactory, EngineHost, MountInfo


def _pki(host: EngineHost, mount: MountInfo) -> Engine:
    # lazy for start-up time: the PKI engine loads cryptography (~20 ms), which
    # ``schedpki serve --no-seed`` does not need until a PKI mount exists
    from .pki.backend import PkiBackend

    return PkiBackend(host, mount)


ENGINES: dict[str, EngineFactory] = {"pki": _pki}


def register_engine(type: str, factory: EngineFactory) -> None:
    """Make engine ``type`` mountable: ``factory(host, mount)`` builds one mount's engine."""
    ENGINES[type] = factory
