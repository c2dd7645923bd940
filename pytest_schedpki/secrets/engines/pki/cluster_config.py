"""``config/cluster``: the mount's own URLs (``path``, ``aia_path``; empty on a fresh mount), read by
``bao pki health-check``; ``path`` is the base of every ACME URL (``acme/``), and upstream also
templates AIA URLs with them (the double does not).

A write keeps the fields it does not send; each sent value must be an absolute URL, else 500
``invalid, non-URL path given to cluster: <value>`` (upstream's status, as a multierror), and the
answer is the whole stored record.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.fields import STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

if TYPE_CHECKING:  # pragma: no cover
    from .backend import PkiBackend

_KEY = "config_cluster"


def _record(backend: PkiBackend) -> dict[str, str]:
    return dict(backend.state.extra.get(_KEY) or {"aia_path": "", "path": ""})


def _is_url(value: str) -> bool:
    parsed = urllib.parse.urlparse(value)
    return bool(parsed.scheme and parsed.netloc) and " " not in value


def paths(backend: PkiBackend) -> list[Path]:
    def read(req: LogicalRequest) -> LogicalResponse:
        return LogicalResponse(data=_record(backend))

    def write(req: LogicalRequest) -> LogicalResponse:
        record = _record(backend)
        for key in ("path", "aia_path"):
            if req.data.sent(key):
                value = req.data.get(key)
                if not _is_url(value):
                    raise internal_error(f"invalid, non-URL {key} given to cluster: {value}")
                record[key] = value
        backend.state.extra[_KEY] = record
        return LogicalResponse(data=dict(record))

    return [Path("config/cluster", {"path": Field(STRING), "aia_path": Field(STRING)}, {"read": read, "update": write})]
