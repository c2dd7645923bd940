"""``auth/token/create``, ``create-orphan`` and ``create/:role_name``: how a token is made (OpenBao's
``vault/token_store.go``, ``handleCreateCommon``).

The privilege rules of a plain creation live in :func:`~..auth.token.store.plan_child`, the TTLs
through a role in :func:`.token_ttl.creation_ttl`, a role's policies and limits in :mod:`.token_roles`;
a taken id is refused by :meth:`~..auth.token.store.TokenStore.create`.
"""

from __future__ import annotations

from ..acl import capabilities
from ..auth.token.store import TokenRuleError, display_name, plan_child
from ..framework.fields import (
    ANY,
    BOOL,
    COMMA_STRING_SLICE,
    INT,
    MAP,
    STRING,
    ConversionError,
    Field,
    duration_seconds,
)
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from .token_roles import role_limits, role_policies
from .token_ttl import creation_ttl


def token_create(req: LogicalRequest, role=None) -> LogicalResponse:
    """``auth/token/create``, ``create-orphan`` and (with ``role``) ``create/:role_name``.

    Without a role, the privilege rules and the TTL (capping warnings included) come from
    :func:`~.auth.token.store.plan_child`; through a role, the role's policies, orphan flag, limits
    and path apply (:mod:`.token_roles`) and the TTL from :func:`~.token_ttl.creation_ttl`. A taken
    id is refused by :meth:`~.auth.token.store.TokenStore.create` either way.
    """
    parent = req.token
    orphan_path = req.path.rstrip("/") == "create-orphan"
    period = _token_ttl(req.raw.get("period"))
    explicit_max_ttl = _token_ttl(req.raw.get("explicit_max_ttl"))
    renewable = req.data.get("renewable") if req.data.sent("renewable") else True
    policies = req.data.get("policies") if req.data.sent("policies") else None
    try:
        if role is None:
            plan = plan_child(
                parent, _has_sudo(req), token_id=req.data.get("id") or "", policies=policies,
                no_parent=bool(req.data.get("no_parent")), orphan_path=orphan_path,
                no_default_policy=bool(req.data.get("no_default_policy")), ttl=_token_ttl(req.raw.get("ttl")),
                explicit_max_ttl=explicit_max_ttl, period=period,
                num_uses=req.data.get("num_uses") or 0, token_type=req.data.get("type") or "",
                entity_alias=req.data.get("entity_alias") or "", known_policies=req.service.policies,
            )
            token = req.service.tokens.create(
                req.service.clock.now(), policies=list(plan.policies), exact_policies=True, ttl=plan.ttl,
                ttl_decided=True, display_name=display_name(req.data.get("display_name")),
                meta=req.data.get("meta") or None, num_uses=req.data.get("num_uses"), renewable=renewable,
                token_id=req.data.get("id") or None, parent=None if plan.orphan else parent,
                explicit_max_ttl=plan.explicit_max_ttl, period=period,
                path="auth/token/" + ("create-orphan" if orphan_path else "create"),
            )
            warnings = list(plan.warnings)
        else:
            token, warnings = _token_create_with_role(req, role, policies, period, explicit_max_ttl, renewable)
    except TokenRuleError as exc:
        raise user_error(exc.message) from None
    return LogicalResponse(data=None, auth=token.auth_block(), warnings=warnings)


def _token_create_with_role(req: LogicalRequest, role, policies, period: int, explicit_max_ttl: int,
                            renewable: bool):
    """A token made through token role ``role``: its allowed policies, orphan flag, limits and path."""
    parent = req.token
    if req.data.get("id") and not _has_sudo(req):
        raise TokenRuleError("root or sudo privileges required to specify token id")
    policies = role_policies(role, policies)
    orphan = bool(req.data.get("no_parent")) or orphan_path_of(req) or role.orphan
    ttl_period, ttl_max = role_limits(role, period, explicit_max_ttl)
    path = f"auth/token/create/{role.name}" + (f"/{role.path_suffix}" if role.path_suffix else "")
    if not policies and parent is not None:
        policies = list(parent.policies)  # an orphan still starts from its creator's policies
    ttl, warnings = creation_ttl(_token_ttl(req.raw.get("ttl")), ttl_period, ttl_max, "root" in (policies or []))
    token = req.service.tokens.create(
        req.service.clock.now(), policies=policies, ttl=ttl, display_name=display_name(req.data.get("display_name")),
        meta=req.data.get("meta") or None, num_uses=req.data.get("num_uses"), renewable=renewable and role.renewable,
        token_id=req.data.get("id") or None, no_default_policy=req.data.get("no_default_policy") or role.no_default_policy,
        parent=None if orphan else parent, explicit_max_ttl=explicit_max_ttl, period=period, path=path,
        ttl_decided=True, role=role.name,
    )
    warnings += [f'Policy "{name}" does not exist' for name in sorted(token.policies)
                 if name not in req.service.policies and name != "root"]
    return token, warnings


def orphan_path_of(req: LogicalRequest) -> bool:
    """Whether the request came to ``create-orphan``."""
    return req.path.rstrip("/") == "create-orphan"


def _has_sudo(req: LogicalRequest) -> bool:
    """Whether the caller is root or holds ``sudo`` on the request's own path (OpenBao's
    ``SudoPrivilege(mount point + path)``)."""
    token = req.token
    if token is None:
        return False
    if token.is_root:
        return True
    path = "auth/token/" + req.path.strip("/")
    policies = [req.service.policies[n] for n in token.policies if n in req.service.policies]
    return "sudo" in capabilities(policies, path)


def _token_ttl(value) -> int:
    """Token TTLs are parsed by the token store itself: its errors carry no field prefix."""
    try:
        return duration_seconds(value)
    except ConversionError as exc:
        raise LogicalError(400, [str(exc)]) from None


CREATE_FIELDS = {
    "id": Field(STRING), "policies": Field(COMMA_STRING_SLICE), "meta": Field(MAP),
    "no_parent": Field(BOOL), "no_default_policy": Field(BOOL), "renewable": Field(BOOL),
    "ttl": Field(ANY), "explicit_max_ttl": Field(ANY), "display_name": Field(STRING),
    "num_uses": Field(INT), "period": Field(ANY), "type": Field(STRING), "entity_alias": Field(STRING),
}



def _create_with_role(req: LogicalRequest) -> LogicalResponse:
    name = req.data.get("role_name")
    role = req.service.tokens.roles.get(name)
    if role is None:
        raise user_error(f"unknown role {name}")
    return token_create(req, role)


TOKEN_CREATE_PATHS = [
    Path("create", CREATE_FIELDS, {"update": token_create}),
    Path("create-orphan", CREATE_FIELDS, {"update": token_create}),
    Path("create/(?P<role_name>[^/]+)", {**CREATE_FIELDS, "role_name": Field(STRING)}, {"update": _create_with_role}),
]
