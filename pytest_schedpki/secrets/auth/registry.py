"""The auth method types ``sys/auth/:path`` can enable, by ``type`` (besides the built-in ``token``).

Like the engines' registry: the service looks methods up here and never imports a method's package;
a method never imports the service. A new method is one sub-package of ``secrets/auth/`` plus one
line in :data:`AUTH_METHODS`.
"""

from __future__ import annotations

from pytest_schedpki.secrets.framework.engine import Engine, EngineFactory, EngineHost, MountInfo


def _approle(host: EngineHost, mount: MountInfo) -> Engine:
    from .approle.backend import ApproleBackend

    return ApproleBackend(host, mount)


AUTH_METHODS: dict[str, EngineFactory] = {"approle": _approle}
