"""AppRole secret IDs (upstream ``path_role.go`` secret-ID handlers, ``path_tidy_user_id.go``).

* ``role/:name/secret-id`` (generate; LIST: the accessors, 404 when none) and
  ``role/:name/custom-secret-id`` (the caller's ``secret_id``): ``metadata`` (a JSON object text
  or ``k=v,...``), ``cidr_list``, ``token_bound_cidrs``, ``num_uses`` and ``ttl`` (seconds or Go
  duration; 0 = the role's). Errors: 404 ``role "<name>" does not exist``; 400 ``bind_secret_id is
  not set on the role``, ``ttl cannot be
  longer than the role's secret_id_ttl``, ``num_uses cannot be negative``, ``num_uses cannot be
  higher than the role's secret_id_num_uses``; 500 multierror for CIDRs outside the role's and
  ``failed to store secret_id: SecretID is already registered``;
* ``secret-id/lookup`` (204 when unknown), ``secret-id/destroy`` (204); both 400 ``missing
  secret_id`` without one;
  ``secret-id-accessor/lookup`` (404 with ``data.error`` when unknown), ``secret-id-accessor/destroy``
  (500 multierror when unknown);
* ``tidy/secret-id``: removes expired secret IDs; 202 with OpenBao's warning.
"""

from __future__ import annotations

import datetime
import uuid
from typing import TYPE_CHECKING

from pytest_schedpki.golang.time import GoTime
from pytest_schedpki.secrets.framework.fields import COMMA_STRING_SLICE, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import (
    LogicalError,
    LogicalResponse,
    internal_error,
    not_found,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .model import Role, SecretId, parse_cidrs, parse_metadata, parse_token_cidrs, subset
from .roles import ROLE_NAME

if TYPE_CHECKING:  # pragma: no cover
    from .backend import ApproleBackend

TIDY_WARNING = ("Tidy operation successfully started. Any information from the operation will be printed to "
                "OpenBao's server logs.")


def _stamp(when: datetime.datetime) -> str:
    return GoTime.from_datetime(when).rfc3339nano()


def _backend(req: LogicalRequest) -> ApproleBackend:
    return req.mount.backend  # type: ignore[union-attr,return-value]


def _role(req: LogicalRequest) -> Role:
    role = _backend(req).state.roles.get(req.data.get("role_name").lower())
    if role is None:
        raise LogicalError(404, [f"role \"{req.data.get('role_name')}\" does not exist"])
    return role


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(f'"{i}"' for i in items) + "]"


def _create(req: LogicalRequest, secret: str) -> LogicalResponse:
    backend = _backend(req)
    role = _role(req)
    if not role.bind_secret_id:
        raise user_error("bind_secret_id is not set on the role")
    ttl, num_uses = req.data.get("ttl"), req.data.get("num_uses")
    if role.secret_id_ttl and ttl > role.secret_id_ttl:
        raise user_error("ttl cannot be longer than the role's secret_id_ttl")
    if num_uses < 0:
        raise user_error("num_uses cannot be negative")
    if role.secret_id_num_uses and num_uses > role.secret_id_num_uses:
        raise user_error("num_uses cannot be higher than the role's secret_id_num_uses")
    cidrs = parse_cidrs(req.raw.get("cidr_list"))
    if cidrs and role.secret_id_bound_cidrs and not subset(cidrs, role.secret_id_bound_cidrs):
        raise internal_error("failed to verify subset relationship between CIDR blocks on the role "
                             f"{_go_list(role.secret_id_bound_cidrs)} and CIDR blocks on the secret ID "
                             f"{_go_list(cidrs)}: %!w(<nil>)")
    token_cidrs = parse_token_cidrs(req.raw.get("token_bound_cidrs"), on_secret_id=True)
    metadata = parse_metadata(req.data.get("metadata"))
    state = backend.state
    if state.secret_in_use(secret):
        raise internal_error("failed to store secret_id: SecretID is already registered")
    now = backend.now()
    ttl = ttl or role.secret_id_ttl
    entry = SecretId(secret_id=secret, accessor=str(uuid.uuid4()), created=now, updated=now,
                     expires=now + datetime.timedelta(seconds=ttl) if ttl else None, ttl=ttl,
                     num_uses=num_uses or role.secret_id_num_uses, cidr_list=cidrs, token_bound_cidrs=token_cidrs,
                     metadata=metadata)
    state.secret_ids.setdefault(role.name, {})[entry.accessor] = entry
    return LogicalResponse(data={"secret_id": entry.secret_id, "secret_id_accessor": entry.accessor,
                                 "secret_id_num_uses": entry.num_uses, "secret_id_ttl": entry.ttl})


def generate(req: LogicalRequest) -> LogicalResponse:
    return _create(req, str(uuid.uuid4()))


def custom(req: LogicalRequest) -> LogicalResponse:
    return _create(req, req.data.get("secret_id"))


def list_accessors(req: LogicalRequest) -> LogicalResponse:
    role = _role(req)
    accessors = list(_backend(req).state.secret_ids.get(role.name, {}))
    if not accessors:
        raise not_found()
    return LogicalResponse(data={"keys": accessors})


def _live(req: LogicalRequest, entry: SecretId | None) -> SecretId | None:
    return entry if entry is not None and not entry.expired(_backend(req).now()) else None


def _secret_id(req: LogicalRequest) -> str:
    if not req.data.get("secret_id"):
        raise user_error("missing secret_id")
    return req.data.get("secret_id")


def lookup(req: LogicalRequest) -> LogicalResponse:
    role = _role(req)
    _secret_id(req)
    entry = _live(req, _backend(req).state.find_secret(role.name, req.data.get("secret_id")))
    if entry is None:
        return LogicalResponse(status=204)
    return LogicalResponse(data=entry.describe(_stamp))


def destroy(req: LogicalRequest) -> LogicalResponse:
    role = _role(req)
    _secret_id(req)
    state = _backend(req).state
    entry = state.find_secret(role.name, req.data.get("secret_id"))
    if entry is not None:
        state.secret_ids[role.name].pop(entry.accessor, None)
    return LogicalResponse(status=204)


def _missing_accessor(req: LogicalRequest) -> str:
    return f"failed to find accessor entry for secret_id_accessor: \"{req.data.get('secret_id_accessor')}\""


def accessor_lookup(req: LogicalRequest) -> LogicalResponse:
    role = _role(req)
    entry = _live(req, _backend(req).state.secret_ids.get(role.name, {}).get(req.data.get("secret_id_accessor")))
    if entry is None:
        return LogicalResponse(data={"error": _missing_accessor(req)}, status=404)
    return LogicalResponse(data=entry.describe(_stamp))


def accessor_destroy(req: LogicalRequest) -> LogicalResponse:
    role = _role(req)
    ids = _backend(req).state.secret_ids.get(role.name, {})
    if ids.pop(req.data.get("secret_id_accessor"), None) is None:
        raise internal_error(_missing_accessor(req))
    return LogicalResponse(status=204)


def tidy(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    now = backend.now()
    for ids in backend.state.secret_ids.values():
        for accessor in [a for a, s in ids.items() if s.expired(now)]:
            del ids[accessor]
    return LogicalResponse(status=202, warnings=[TIDY_WARNING], keeps_request_id=True)


_GENERATE = {"role_name": Field(STRING), "metadata": Field(STRING), "cidr_list": Field(COMMA_STRING_SLICE),
             "token_bound_cidrs": Field(COMMA_STRING_SLICE), "num_uses": Field(INT), "ttl": Field(DURATION)}


def paths(backend: ApproleBackend) -> list[Path]:
    """The secret-ID routes and ``tidy/secret-id``."""
    base = f"role/{ROLE_NAME}"
    return [
        Path(f"{base}/secret-id/?", _GENERATE, {"update": generate, "list": list_accessors}),
        Path(f"{base}/custom-secret-id", {**_GENERATE, "secret_id": Field(STRING)}, {"update": custom}),
        Path(f"{base}/secret-id/lookup/?", {"role_name": Field(STRING), "secret_id": Field(STRING)}, {"update": lookup}),
        Path(f"{base}/secret-id/destroy/?", {"role_name": Field(STRING), "secret_id": Field(STRING)},
             {"update": destroy, "delete": destroy}),
        Path(f"{base}/secret-id-accessor/lookup/?", {"role_name": Field(STRING), "secret_id_accessor": Field(STRING)},
             {"update": accessor_lookup}),
        Path(f"{base}/secret-id-accessor/destroy/?", {"role_name": Field(STRING), "secret_id_accessor": Field(STRING)},
             {"update": accessor_destroy, "delete": accessor_destroy}),
        Path("tidy/secret-id", {}, {"update": tidy}),
    ]
