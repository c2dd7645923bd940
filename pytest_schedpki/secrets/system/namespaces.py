"""``X-Vault-Namespace``: OpenBao serves namespaces, a dev server starts with none but the root one.

:func:`check_namespace` answers a request naming another namespace as OpenBao 2.7 does (before any
token check): ``sys/health`` and ``sys/init`` -> 400 ``operation unavailable in namespaces``;
``sys/leader`` and ``sys/seal-status`` are served as usual; everything else -> 404
``namespace not found``. ``root``, ``root/``, ``/`` and an empty header mean the root namespace
(the name is case-sensitive: ``ROOT`` is not found).
"""

from __future__ import annotations

from ..framework.logical import LogicalError

ROOT_NAMES = ("", "/", "root", "root/")
ROOT_ONLY = ("sys/health", "sys/init")
SERVED_ANYWHERE = ("sys/leader", "sys/seal-status")


def check_namespace(header: str | None, rel: str) -> None:
    """Raise the upstream answer for a request in namespace ``header`` to path ``rel`` (after
    ``/v1/``); return quietly for the root namespace and the paths served in any namespace."""
    if header is None or header.strip() in ROOT_NAMES:
        return
    path = rel.strip("/")
    if path in SERVED_ANYWHERE:
        return
    if path in ROOT_ONLY:
        raise LogicalError(400, ["operation unavailable in namespaces"])
    raise LogicalError(404, ["namespace not found"])
