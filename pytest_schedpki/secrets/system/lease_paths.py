"""``sys/leases/*``: look up, list, renew and revoke the leases secrets were issued with
(OpenBao ``vault/logical_system.go``); the leases themselves are in :mod:`.leases`.

* ``PUT sys/leases/lookup`` ``{lease_id}`` -> the lease (``id``, ``path``, ``issue_time``,
  ``expire_time``, ``ttl``, ``renewable``, ``last_renewal``); 400 ``lease_id must be specified`` /
  ``invalid lease``; ``LIST sys/leases/lookup/<prefix>/`` -> the next segments (404 when none);
* ``PUT sys/leases/renew`` -> 400 ``lease not found`` or, for certificates, ``lease is not renewable``;
* ``PUT sys/leases/revoke`` (or ``revoke/<id>``) -> 204 (also for unknown ids; 202 with
  ``sync=false``); ``revoke-prefix/<prefix>`` and ``revoke-force/<prefix>`` -> 204.
"""

from __future__ import annotations

from ..framework.fields import BOOL, DURATION, STRING, Field
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from ..leases import revoke_lease, revoke_prefix


def _lease_id(req: LogicalRequest) -> str:
    lease_id = req.data.get("url_lease_id") or req.data.get("lease_id")
    if not lease_id:
        raise user_error("lease_id must be specified")
    return lease_id


def _lookup(req: LogicalRequest) -> LogicalResponse:
    lease = req.service.tokens.leases.get(_lease_id(req))
    if lease is None:
        raise user_error("invalid lease")
    return LogicalResponse(data=lease.lookup_data(req.service.clock.now()))


def _list(req: LogicalRequest) -> LogicalResponse:
    prefix = (req.data.get("prefix") if "prefix" in req.data.schema else "").strip("/")  # the root: every mount
    prefix = prefix + "/" if prefix else ""
    keys: list[str] = []
    for lease_id in sorted(req.service.tokens.leases):
        if lease_id.startswith(prefix):
            rest = lease_id[len(prefix):]
            key = rest.split("/", 1)[0] + ("/" if "/" in rest else "")
            if key not in keys:
                keys.append(key)
    if not keys:
        raise LogicalError(404, [])
    return LogicalResponse(data={"keys": keys})


def _renew(req: LogicalRequest) -> LogicalResponse:
    if req.service.tokens.leases.get(_lease_id(req)) is None:
        raise user_error("lease not found")
    raise user_error("lease is not renewable")


def _revoke(req: LogicalRequest) -> LogicalResponse:
    revoke_lease(req.service, _lease_id(req))
    if req.data.sent("sync") and not req.data.get("sync"):
        return LogicalResponse(status=202, raw=(b"", "application/json"))
    return LogicalResponse(status=204)


def _revoke_prefix(req: LogicalRequest) -> LogicalResponse:
    revoke_prefix(req.service, req.data.get("prefix"))
    return LogicalResponse(status=204)


_LEASE = {"lease_id": Field(STRING), "url_lease_id": Field(STRING), "increment": Field(DURATION),
          "sync": Field(BOOL, True)}
_PREFIX = {"prefix": Field(STRING), "sync": Field(BOOL, True)}

LEASE_PATHS = [
    Path("leases/lookup/?", {"lease_id": Field(STRING), "url_lease_id": Field(STRING)}, {"update": _lookup, "list": _list}),
    Path("leases/lookup/(?P<prefix>.+?)/?", {"prefix": Field(STRING)}, {"list": _list}),
    Path("leases/renew(?:/(?P<url_lease_id>.+))?", _LEASE, {"update": _renew}),
    Path("leases/revoke(?:/(?P<url_lease_id>.+))?", _LEASE, {"update": _revoke}),
    Path("leases/revoke-prefix/(?P<prefix>.+)", _PREFIX, {"update": _revoke_prefix}, sudo=True),
    Path("leases/revoke-force/(?P<prefix>.+)", {"prefix": Field(STRING)}, {"update": _revoke_prefix}, sudo=True),
]
