"""KV version 1: unversioned values (upstream ``passthrough.go``).

* read: the stored object as ``data``; ``lease_duration`` is the ``ttl`` (or ``lease``) inside the
  value when it parses as a duration, else the mount's default lease TTL (768h on a dev server);
  404 ``{"errors":[]}`` for an unknown key;
* write: the whole body is the value (400 ``missing data fields`` for an empty one); 204;
* delete: 204, known or not; LIST: the children of a folder, 404 when there are none;
* PATCH is not supported (405 ``unsupported operation``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.fields import STRING, ConversionError, Field, duration_seconds
from pytest_schedpki.secrets.framework.logical import LogicalResponse, not_found, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .inputs import plain
from .model import list_children

if TYPE_CHECKING:  # pragma: no cover
    from .backend import KvBackend


def _backend(req: LogicalRequest) -> KvBackend:
    return req.mount.backend  # type: ignore[union-attr,return-value]


def _lease(value: dict, default: int) -> int:
    for key in ("ttl", "lease"):
        if key in value:
            try:
                return duration_seconds(value[key])
            except ConversionError:
                return default
    return default


def read_value(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = req.data.get("path")
    value = backend.state.v1.get(key)
    if value is None:
        raise not_found()
    backend.journal_event("read", key, None)
    return LogicalResponse(data=dict(value), lease_duration=_lease(value, backend.mount.effective_default_ttl()))


def write_value(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = req.data.get("path")
    value = {k: v for k, v in plain(dict(req.raw)).items()}
    if not value:
        raise user_error("missing data fields")
    backend.state.v1[key] = value
    backend.journal_event("write", key, None)
    return LogicalResponse(status=204)


def delete_value(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    if backend.state.v1.pop(req.data.get("path"), None) is not None:
        backend.journal_event("delete", req.data.get("path"), None)
    return LogicalResponse(status=204)


def list_values(req: LogicalRequest) -> LogicalResponse:
    keys = list_children(_backend(req).state.v1, req.data.get("path"))
    if not keys:
        raise not_found()
    return LogicalResponse(data={"keys": keys})


def _exists(backend: KvBackend, captures: dict[str, str]) -> bool:
    return captures.get("path", "") in backend.state.v1


def paths(backend: KvBackend) -> list[Path]:
    """The one catch-all route of a version-1 mount (the body is the secret: any key is accepted)."""
    return [Path("(?P<path>.*)", {"path": Field(STRING)},
                 {"read": read_value, "update": write_value, "delete": delete_value, "list": list_values},
                 takes_arbitrary_input=True, existence=_exists)]
