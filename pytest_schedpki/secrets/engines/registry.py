"""The secrets engine types the service can mount, by ``type`` (``sys/mounts/:path`` ``type``).

The service looks engines up here and never imports an engine's package itself; an engine never
imports the service (it receives an :class:`~pytest_schedpki.secrets.framework.engine.EngineHost`).
A new engine is one sub-package of ``secrets/engines/`` plus one line in :data:`ENGINES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from pytest_schedpki.process.collector import paused
from pytest_schedpki.secrets.framework.engine import Engine, EngineFactory, EngineHost, MountInfo


def _pki(host: EngineHost, mount: MountInfo) -> Engine:
    # lazy for start-up time: the PKI engine loads cryptography (~20 ms), which
    # ``schedpki serve --no-seed`` does not need until a PKI mount exists; imported with the
    # collector paused (long-lived objects only: see process/collector.py)
    with paused():
        from .pki.backend import PkiBackend

    return PkiBackend(host, mount)


def _kv(host: EngineHost, mount: MountInfo) -> Engine:
    with paused():
        from .kv.backend import KvBackend

    return KvBackend(host, mount)


def _kv_mount(type: str, options: dict | None) -> tuple[str, dict]:
    from .kv.backend import normalise_mount

    return normalise_mount(type, options)


ENGINES: dict[str, EngineFactory] = {"pki": _pki, "kv": _kv, "kv-v2": _kv, "generic": _kv}  # generic: KV v1

MOUNT_NORMALISERS: dict[str, Callable[[str, dict | None], tuple[str, dict]]] = {
    "kv": _kv_mount, "kv-v2": _kv_mount, "generic": _kv_mount}
"""``normalise(type, options) -> (type, options)``: how an engine type stores a new mount (``kv-v2``
is stored as ``kv`` with ``options.version "2"``); raises LogicalError for options it refuses."""


_CODE = {"pki": ".pki.backend", "kv": ".kv.backend"}  # the module a first mount of the type imports


def load_engine_code(type: str) -> None:
    """Import the code of engine ``type`` without mounting anything, so that the first
    ``sys/mounts/:path`` of that type does not pay for the import (the PKI engine and cryptography's
    X.509 layer take tens of milliseconds). Unknown or registered-at-run-time types: no-op."""
    module = _CODE.get(type)
    if module is not None:
        with paused():
            importlib.import_module(module, __package__)


def register_engine(type: str, factory: EngineFactory) -> None:
    """Make engine ``type`` mountable: ``factory(host, mount)`` builds one mount's engine."""
    ENGINES[type] = factory
