"""``X-Vault-Namespace``: OpenBao serves namespaces, a dev server starts with none but the root one.

Three rules, in the order OpenBao applies them (``internal/http/handler.go``, ``handler``):

* :func:`echo_namespace`: a request whose header is not empty gets it back, as sent, on its answer
  (``nw.Header().Set(consts.NamespaceHeaderName, nsHeader)``), whatever the answer;
* :func:`check_restricted`: a request to one of the ``sys/`` APIs only the root namespace serves
  (:data:`RESTRICTED_SYS_APIS`, or a path below one) that names any namespace, ``root`` included, is
  400 ``operation unavailable in namespaces`` before anything else is read (method, body, token,
  seal);
* :func:`check_namespace` (the logical request): ``root``, ``root/``, ``/`` and an empty header mean
  the root namespace (the name is case-sensitive: ``ROOT`` is not found); ``sys/leader`` and
  ``sys/seal-status`` are served in any namespace; every other path in another namespace is 404
  ``namespace not found``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework.logical import LogicalError

ROOT_NAMES = ("", "/", "root", "root/")
SERVED_ANYWHERE = ("sys/leader", "sys/seal-status")
#: ``restrictedSysAPIsNonLogical`` (internal/http/handler.go): matched by whole path segments
#: (``pathmanager.HasPathSegments``): ``sys/health`` and ``sys/health/x``, not ``sys/healthz``
RESTRICTED_SYS_APIS = ("raw", "generate-recovery-token", "init", "seal", "step-down", "unseal", "health",
                       "rekey-recovery-key", "rekey", "storage", "generate-root", "metrics", "pprof", "in-flight-req")
_UNAVAILABLE = "operation unavailable in namespaces"


def _header(environ: dict[str, Any]) -> str:
    """The request's ``X-Vault-Namespace`` as Go's ``Header.Get`` reads it (first value, no
    surrounding blanks; ``""`` when absent)."""
    return environ.get("HTTP_X_VAULT_NAMESPACE", "").strip(" \t")


def check_restricted(environ: dict[str, Any], path: str) -> None:
    """Raise 400 ``operation unavailable in namespaces`` for a request naming any namespace whose
    decoded ``path`` (as sent, before cleaning) is ``/v1/sys/<api>`` or below it, ``<api>`` one of
    :data:`RESTRICTED_SYS_APIS`."""
    if not path.startswith("/v1/sys/") or not _header(environ):
        return
    rest = path[len("/v1/sys/"):]
    if any(rest == api or rest.startswith(api + "/") for api in RESTRICTED_SYS_APIS):
        raise LogicalError(400, [_UNAVAILABLE])


def echo_namespace(environ: dict[str, Any], start_response: Callable) -> Callable:
    """``start_response``, adding ``X-Vault-Namespace: <the request's header>`` to the answer when
    the request sent a non-empty one (the same callable otherwise)."""
    namespace = _header(environ)
    if not namespace:
        return start_response

    def start(status: str, headers: list, exc_info: Any = None):
        headers = [(k, v) for k, v in headers if k.lower() != "x-vault-namespace"]
        return start_response(status, [*headers, ("X-Vault-Namespace", namespace)], exc_info)
    return start


def check_namespace(header: str | None, rel: str) -> None:
    """Raise the upstream answer for a request in namespace ``header`` to path ``rel`` (after
    ``/v1/``); return quietly for the root namespace and the paths served in any namespace."""
    if header is None or header.strip() in ROOT_NAMES:
        return
    if rel.strip("/") in SERVED_ANYWHERE:
        return
    raise LogicalError(404, ["namespace not found"])
