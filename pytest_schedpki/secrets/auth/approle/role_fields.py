"""The per-field role endpoints of AppRole (upstream ``path_role.go``): ``role/:name/<field>`` reads
``{field: value}``, updates that one field (400 ``missing <field>`` without it) and deletes it back
to its default.

Fields and their paths: ``policies`` (``token_policies``; the deprecated ``policies`` name is echoed
when it was used), ``period`` (``token_period``, likewise), ``secret-id-num-uses``,
``secret-id-ttl``, ``token-num-uses``, ``token-ttl``, ``token-max-ttl``, ``secret-id-bound-cidrs``,
``token-bound-cidrs`` (both read ``null`` when empty), ``local-secret-ids`` (read only). For a role
that does not exist a read is 404 ``{"errors":[]}`` and a write 404 ``unsupported path``, as the live
server answers. Writes check with their own texts: ``secret_id_num_uses cannot be negative``,
``token_ttl should not be greater than token_max_ttl``, ``token_max_ttl should be greater than or
equal to token_ttl`` (400); ``token-num-uses`` takes any number, as upstream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.fields import COMMA_STRING_SLICE, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, not_found, unsupported_path, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .model import Role, parse_cidrs, parse_token_cidrs
from .roles import ROLE_NAME

if TYPE_CHECKING:  # pragma: no cover
    from .backend import ApproleBackend

# path segment -> (attribute, which is also the parameter name; framework type; default)
_SIMPLE: dict[str, tuple[str, str, Any]] = {
    "secret-id-num-uses": ("secret_id_num_uses", INT, 0),
    "secret-id-ttl": ("secret_id_ttl", DURATION, 0),
    "token-num-uses": ("token_num_uses", INT, 0),
    "token-ttl": ("token_ttl", DURATION, 0),
    "token-max-ttl": ("token_max_ttl", DURATION, 0),
}


def _no_check(role: Role) -> None:
    """``token-num-uses`` and ``secret-id-ttl``: the live server takes any value here."""


def _num_uses(role: Role) -> None:
    if role.secret_id_num_uses < 0:
        raise user_error("secret_id_num_uses cannot be negative")


def _token_ttl(role: Role) -> None:
    if role.token_max_ttl and role.token_ttl > role.token_max_ttl:
        raise user_error("token_ttl should not be greater than token_max_ttl")


def _token_max_ttl(role: Role) -> None:
    if role.token_max_ttl and role.token_ttl > role.token_max_ttl:
        raise user_error("token_max_ttl should be greater than or equal to token_ttl")


# the checks of each path's write (their texts differ from role/:name's, measured on OpenBao 2.7.2)
_CHECKS = {"secret-id-num-uses": _num_uses, "secret-id-ttl": _no_check, "token-num-uses": _no_check,
           "token-ttl": _token_ttl, "token-max-ttl": _token_max_ttl}


def _role(req: LogicalRequest, writing: bool) -> Role:
    role = req.mount.backend.state.roles.get(req.data.get("role_name").lower())  # type: ignore[union-attr]
    if role is None:
        raise unsupported_path() if writing else not_found()
    return role


def _simple(segment: str) -> dict[str, Any]:
    attribute, _, default = _SIMPLE[segment]

    def read(req: LogicalRequest) -> LogicalResponse:
        return LogicalResponse(data={attribute: getattr(_role(req, False), attribute)})

    def update(req: LogicalRequest) -> LogicalResponse:
        role = _role(req, True)
        if not req.data.sent(attribute):
            raise user_error(f"missing {attribute}")
        setattr(role, attribute, req.data.get(attribute))
        _CHECKS[segment](role)
        return LogicalResponse(status=204)

    def delete(req: LogicalRequest) -> LogicalResponse:
        setattr(_role(req, True), attribute, default)
        return LogicalResponse(status=204)

    return {"read": read, "update": update, "delete": delete}


def _read_policies(req: LogicalRequest) -> LogicalResponse:
    role = _role(req, False)
    data: dict[str, Any] = {"token_policies": list(role.token_policies)}
    if role.legacy_policies:
        data["policies"] = list(role.token_policies)
    return LogicalResponse(data=data)


def _write_policies(req: LogicalRequest) -> LogicalResponse:
    role = _role(req, True)
    if req.data.sent("token_policies"):
        role.token_policies, role.legacy_policies = list(dict.fromkeys(req.data.get("token_policies"))), False
    elif req.data.sent("policies"):
        role.token_policies, role.legacy_policies = list(dict.fromkeys(req.data.get("policies"))), True
    else:
        raise user_error("missing token_policies")
    return LogicalResponse(status=204)


def _delete_policies(req: LogicalRequest) -> LogicalResponse:
    role = _role(req, True)
    role.token_policies, role.legacy_policies = [], False
    return LogicalResponse(status=204)


def _read_period(req: LogicalRequest) -> LogicalResponse:
    role = _role(req, False)
    data: dict[str, Any] = {"token_period": role.token_period}
    if role.legacy_period:
        data["period"] = role.token_period
    return LogicalResponse(data=data)


def _write_period(req: LogicalRequest) -> LogicalResponse:
    role = _role(req, True)
    if req.data.sent("token_period"):
        role.token_period, role.legacy_period = req.data.get("token_period"), False
    elif req.data.sent("period"):
        role.token_period, role.legacy_period = req.data.get("period"), True
    else:
        raise user_error("missing token_period")
    return LogicalResponse(status=204)


def _delete_period(req: LogicalRequest) -> LogicalResponse:
    role = _role(req, True)
    role.token_period, role.legacy_period = 0, False
    return LogicalResponse(status=204)


def _cidrs(attribute: str, parse) -> dict[str, Any]:
    def read(req: LogicalRequest) -> LogicalResponse:
        return LogicalResponse(data={attribute: list(getattr(_role(req, False), attribute) or []) or None})

    def update(req: LogicalRequest) -> LogicalResponse:
        role = _role(req, True)
        if not req.data.sent(attribute):
            raise user_error(f"missing {attribute}")
        blocks = parse(req.raw.get(attribute))
        setattr(role, attribute, (blocks or None) if attribute == "secret_id_bound_cidrs" else blocks)
        return LogicalResponse(status=204)

    def delete(req: LogicalRequest) -> LogicalResponse:
        role = _role(req, True)
        setattr(role, attribute, None if attribute == "secret_id_bound_cidrs" else [])
        return LogicalResponse(status=204)

    return {"read": read, "update": update, "delete": delete}


def _read_local(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data={"local_secret_ids": _role(req, False).local_secret_ids})


def paths(backend: ApproleBackend) -> list[Path]:
    """The per-field routes (declared before ``role/:name``)."""
    base = f"role/{ROLE_NAME}"
    name = {"role_name": Field(STRING)}
    routes = [Path(f"{base}/{segment}", {**name, attribute: Field(kind)}, _simple(segment))
              for segment, (attribute, kind, _) in _SIMPLE.items()]
    routes += [
        Path(f"{base}/policies", {**name, "policies": Field(COMMA_STRING_SLICE), "token_policies": Field(COMMA_STRING_SLICE)},
             {"read": _read_policies, "update": _write_policies, "delete": _delete_policies}),
        Path(f"{base}/period", {**name, "period": Field(DURATION), "token_period": Field(DURATION)},
             {"read": _read_period, "update": _write_period, "delete": _delete_period}),
        Path(f"{base}/secret-id-bound-cidrs", {**name, "secret_id_bound_cidrs": Field(COMMA_STRING_SLICE)},
             _cidrs("secret_id_bound_cidrs", parse_cidrs)),
        Path(f"{base}/token-bound-cidrs", {**name, "token_bound_cidrs": Field(COMMA_STRING_SLICE)},
             _cidrs("token_bound_cidrs", parse_token_cidrs)),
        Path(f"{base}/local-secret-ids", name, {"read": _read_local}),
    ]
    return routes
