"""AppRole roles: ``role/:role_name`` (read, write, delete), ``LIST role``, ``role/:role_name/role-id``
(upstream ``path_role.go``).

A write creates the role (with a random UUID ``role_id`` unless one is given) or changes only the
sent fields. Errors, as OpenBao 2.7.2 answers them:

* 400 ``secret_id_num_uses cannot be negative``, ``'token_num_uses' cannot be negative``,
  ``invalid 'token_type' value "<t>"``, ``'token_ttl' cannot be greater than 'token_max_ttl'``;
* 500 multierror ``failed to validate CIDR blocks: invalid CIDR address: <x>`` (secret_id_bound_cidrs)
  and ``at least one constraint should be enabled on the role`` (``bind_secret_id`` false and no
  bound CIDRs);
* 500 multierror ``role_id already in use`` (another role has that ``role_id``);
* reads of an unknown role: 404 ``{"errors":[]}``; ``role-id`` write for an unknown role: 404
  multierror ``unsupported path`` (as the live server); without ``role_id``: 400 ``missing role_id``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.fields import (
    BOOL,
    COMMA_STRING_SLICE,
    DURATION,
    INT,
    STRING,
    Field,
)
from pytest_schedpki.secrets.framework.logical import (
    LogicalResponse,
    internal_error,
    not_found,
    unsupported_path,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .model import Role, parse_cidrs, parse_token_cidrs

if TYPE_CHECKING:  # pragma: no cover
    from .backend import ApproleBackend

ROLE_NAME = r"(?P<role_name>\w(?:(?:[\w.@-]+)?\w)?)"
TOKEN_TYPES = ("default", "service", "batch", "default-service", "default-batch")
_DURATIONS = ("secret_id_ttl", "token_ttl", "token_max_ttl", "token_explicit_max_ttl")
_INTS = ("secret_id_num_uses", "token_num_uses")
_BOOLS = ("bind_secret_id", "local_secret_ids", "token_no_default_policy", "token_strictly_bind_ip")


def _backend(req: LogicalRequest) -> ApproleBackend:
    return req.mount.backend  # type: ignore[union-attr,return-value]


def role_or_404(req: LogicalRequest) -> Role:
    role = _backend(req).state.roles.get(req.data.get("role_name").lower())
    if role is None:
        raise not_found()
    return role


def read_role(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=role_or_404(req).describe())


def list_roles(req: LogicalRequest) -> LogicalResponse:
    names = sorted(_backend(req).state.roles)
    if not names:
        raise not_found()
    return LogicalResponse(data={"keys": names})


def write_role(req: LogicalRequest) -> LogicalResponse:
    state = _backend(req).state
    name = req.data.get("role_name").lower()
    role = state.roles.get(name)
    if role is None:
        role = Role(name=name, role_id=req.data.get("role_id") or str(uuid.uuid4()))
    data = req.data
    for key in _BOOLS + _INTS + _DURATIONS:
        if data.sent(key):
            setattr(role, key, data.get(key))
    if data.sent("policies"):
        role.token_policies, role.legacy_policies = list(dict.fromkeys(data.get("policies"))), True
    if data.sent("token_policies"):  # the new name wins and the deprecated one is no longer echoed
        role.token_policies, role.legacy_policies = list(dict.fromkeys(data.get("token_policies"))), False
    if data.sent("period"):
        role.token_period, role.legacy_period = data.get("period"), True
    if data.sent("token_period"):
        role.token_period, role.legacy_period = data.get("token_period"), False
    if data.sent("token_type"):
        role.token_type = data.get("token_type").lower()
    if data.sent("role_id") and data.get("role_id"):
        role.role_id = data.get("role_id")
    check_limits(role)
    if data.sent("token_bound_cidrs"):
        role.token_bound_cidrs = parse_token_cidrs(req.raw.get("token_bound_cidrs"))
    if data.sent("secret_id_bound_cidrs"):
        role.secret_id_bound_cidrs = parse_cidrs(req.raw.get("secret_id_bound_cidrs")) or None
    if not role.bind_secret_id and not role.secret_id_bound_cidrs and not role.token_bound_cidrs:
        raise internal_error("at least one constraint should be enabled on the role")
    holder = state.role_by_id(role.role_id)
    if holder is not None and holder.name != name:
        raise internal_error("role_id already in use")
    state.roles[name] = role
    state.secret_ids.setdefault(name, {})
    return LogicalResponse(status=204)


def check_limits(role: Role) -> None:
    """The 400s of a role's numbers and token type (texts in the module docstring)."""
    if role.secret_id_num_uses < 0:
        raise user_error("secret_id_num_uses cannot be negative")
    if role.token_num_uses < 0:
        raise user_error("'token_num_uses' cannot be negative")
    if role.token_type not in TOKEN_TYPES:
        raise user_error(f"invalid 'token_type' value \"{role.token_type}\"")
    if role.token_max_ttl and role.token_ttl > role.token_max_ttl:
        raise user_error("'token_ttl' cannot be greater than 'token_max_ttl'")


def delete_role(req: LogicalRequest) -> LogicalResponse:
    state = _backend(req).state
    name = req.data.get("role_name").lower()
    state.roles.pop(name, None)
    state.secret_ids.pop(name, None)
    return LogicalResponse(status=204)


def read_role_id(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data={"role_id": role_or_404(req).role_id})


def write_role_id(req: LogicalRequest) -> LogicalResponse:
    role = _backend(req).state.roles.get(req.data.get("role_name").lower())
    if role is None:
        raise unsupported_path()
    if not req.data.get("role_id"):
        raise user_error("missing role_id")
    role.role_id = req.data.get("role_id")
    return LogicalResponse(status=204)


ROLE_FIELDS = {
    "role_name": Field(STRING), "role_id": Field(STRING), "bind_secret_id": Field(BOOL),
    "secret_id_bound_cidrs": Field(COMMA_STRING_SLICE), "secret_id_num_uses": Field(INT),
    "secret_id_ttl": Field(DURATION), "local_secret_ids": Field(BOOL), "policies": Field(COMMA_STRING_SLICE),
    "period": Field(DURATION), "bound_cidr_list": Field(COMMA_STRING_SLICE),
    "token_bound_cidrs": Field(COMMA_STRING_SLICE), "token_explicit_max_ttl": Field(DURATION),
    "token_max_ttl": Field(DURATION), "token_no_default_policy": Field(BOOL), "token_num_uses": Field(INT),
    "token_period": Field(DURATION), "token_policies": Field(COMMA_STRING_SLICE),
    "token_strictly_bind_ip": Field(BOOL), "token_ttl": Field(DURATION), "token_type": Field(STRING),
}


def paths(backend: ApproleBackend) -> list[Path]:
    """The role routes (declared before the secret-ID routes, which share the ``role/`` prefix)."""
    return [
        Path("role/?", {}, {"list": list_roles}),
        Path(f"role/{ROLE_NAME}/role-id", {"role_name": Field(STRING), "role_id": Field(STRING)},
             {"read": read_role_id, "update": write_role_id}),
        Path(f"role/{ROLE_NAME}", ROLE_FIELDS, {"read": read_role, "update": write_role, "delete": delete_role},
             existence=lambda b, c: c.get("role_name", "").lower() in b.state.roles),
    ]
