"""``auth/token/create``, ``create-orphan`` and ``create/:role_name``: how a token is made (OpenBao's
``vault/token_store.go``, ``handleCreateCommon``).

The privilege rules of a plain creation live in :func:`~..auth.token.store.plan_child`, the TTLs
through a role in :func:`.token_ttl.creation_ttl`, a role's policies and limits in :mod:`.token_roles`;
a taken id is refused by :meth:`~..auth.token.store.TokenStore.create`.
"""

from __future__ import annotations

from ..acl import capabilities
from ..auth.token.store import TokenRuleError, check_custom_id, display_name, plan_child
from ..framework.fields import (
    BOOL,
    INT,
    KV_PAIRS,
    STRING,
    STRING_SLICE,
    ConversionError,
    Field,
    duration_seconds,
)
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from .token_roles import NAME_PATTERN, role_limits, role_policies
from .token_ttl import creation_ttl, token_mount_ttls


def token_create(req: LogicalRequest, role=None) -> LogicalResponse:
    """``auth/token/create``, ``create-orphan`` and (with ``role``) ``create/:role_name``, in
    ``handleCreateCommon``'s order: a parent on its last use (400 ``parent token lookup failed: no
    parent found``), with uses left (400 ``restricted use token cannot generate child tokens``); the type, use count, alias, id privilege, policies and orphan flag
    (:func:`~.auth.token.store.plan_child`, or the role's rules); then ``explicit_max_ttl``, ``period``
    (sudo needed), ``ttl`` (else the deprecated ``lease``), each a duration string of seconds or Go
    units, negative refused (``ttl must be positive``); the TTL as ``CalculateTTL`` gives it
    (:func:`.token_ttl.creation_ttl`, capping warnings included); then the custom id's form and
    whether it is taken; last the ``Policy "x" does not exist`` warnings.
    """
    parent = req.token
    if parent.num_uses < 0:  # this request took its last use: the parent lookup no longer finds it
        raise user_error("parent token lookup failed: no parent found")
    if parent.num_uses > 0:
        raise user_error("restricted use token cannot generate child tokens")
    sudo = _has_sudo(req)
    orphan_path = orphan_path_of(req)
    token_id = req.data.get("id") or ""
    renewable = req.data.get("renewable") if req.data.sent("renewable") else True
    policies = req.data.get("policies") if req.data.sent("policies") else None
    now = req.service.clock.now()
    try:
        if role is None:
            _batch_checks(req)
            plan = plan_child(
                parent, sudo, token_id=token_id, policies=policies, no_parent=bool(req.data.get("no_parent")),
                orphan_path=orphan_path, no_default_policy=bool(req.data.get("no_default_policy")),
                num_uses=req.data.get("num_uses") or 0, token_type=req.data.get("type") or "",
                entity_alias=req.data.get("entity_alias") or "")
            chosen, orphan, path = list(plan.policies), plan.orphan, "auth/token/" + ("create-orphan" if orphan_path else "create")
        else:
            _role_type_checks(req, role)
            if token_id and not sudo:
                raise TokenRuleError("root or sudo privileges required to specify token id")
            chosen = role_policies(role, policies)
            if not chosen:
                chosen = list(parent.policies)  # an orphan still starts from its creator's policies
            orphan = role.orphan  # with a role, no_parent and the create-orphan path play no part
            path = f"auth/token/create/{role.name}" + (f"/{role.path_suffix}" if role.path_suffix else "")
        explicit_max_ttl = _duration(req, "explicit_max_ttl")
        period = _duration(req, "period")
        if period and not sudo:
            raise TokenRuleError("root or sudo privileges required to create periodic token")
        ttl = _duration(req, "ttl") if req.data.get("ttl") else _duration(req, "lease")
        ttl_period, ttl_max = role_limits(role, period, explicit_max_ttl)
        is_root = "root" in chosen
        ttl, warnings = creation_ttl(ttl, ttl_period, ttl_max, is_root, now, token_mount_ttls(req.service))
        if token_id:
            warnings += check_custom_id(token_id)
        token = req.service.tokens.create(
            now, policies=chosen, exact_policies=role is None, ttl=ttl, ttl_decided=True,
            full_display_name=display_name(req.data.get("display_name")), meta=req.data.get("meta"),
            num_uses=_num_uses(req, role), renewable=renewable and (role is None or role.renewable),
            token_id=token_id or None, no_default_policy=bool(req.data.get("no_default_policy"))
            or bool(role is not None and role.no_default_policy),
            parent=None if orphan else parent, explicit_max_ttl=explicit_max_ttl, period=period, path=path,
            role=role.name if role is not None else "",
        )
    except TokenRuleError as exc:
        raise user_error(exc.message) from None
    warnings += [f'Policy "{name}" does not exist' for name in (token.policies if role is not None else chosen)
                 if name not in req.service.policies and name != "root"]
    return LogicalResponse(data=None, auth=token.auth_block(), warnings=warnings)


def _num_uses(req: LogicalRequest, role) -> int:
    """The new token's use limit: ``num_uses``, or the role's ``token_num_uses`` when the request sets
    none or more (``handleCreateCommon``: the smaller limit wins, 0 meaning none)."""
    num_uses = req.data.get("num_uses") or 0
    if role is not None and role.num_uses and (num_uses == 0 or role.num_uses < num_uses):
        num_uses = role.num_uses
    return num_uses


def _role_type_checks(req: LogicalRequest, role) -> None:
    """Through a role: the role's ``token_type`` decides or defaults the type (``service``/``batch``
    force it, ``default-batch`` fills an empty one), which must then be valid; then the use count."""
    requested = req.data.get("type") or ""
    if role.token_type in ("service", "batch"):
        requested = role.token_type
    elif role.token_type == "default-batch" and not requested:
        requested = "batch"
    if requested not in ("", "service", "batch"):
        raise TokenRuleError("invalid 'token_type' value")
    if (req.data.get("num_uses") or 0) < 0:
        raise TokenRuleError("number of uses cannot be negative")


def _batch_checks(req: LogicalRequest) -> None:
    """``type: batch``: what a batch token cannot have (the first that applies, as upstream's switch
    takes it: a non-empty ``explicit_max_ttl``, else ``num_uses``, else a non-empty ``period``)."""
    if req.data.get("type") != "batch":
        return
    for name in ("explicit_max_ttl", "num_uses", "period"):
        value = req.data.get(name)
        if name == "num_uses":
            if value:
                raise TokenRuleError('batch tokens cannot have "num_uses" set')
            continue
        if value:
            try:
                seconds = duration_seconds(value, signed=True)
            except ConversionError:
                raise TokenRuleError(f"'{name}' value could not be parsed") from None
            if seconds:
                raise TokenRuleError(f'batch tokens cannot have "{name}" set')
            return


def _duration(req: LogicalRequest, name: str) -> int:
    """A creation duration (``TypeString``, parsed by the token store: ``ParseDurationSecond``'s own
    error text, no field prefix; a negative value: ``<name> must be positive``)."""
    try:
        seconds = duration_seconds(req.data.get(name) or "", signed=True)
    except ConversionError as exc:
        raise LogicalError(400, [str(exc)]) from None
    if seconds < 0:
        raise TokenRuleError(f"{name} must be positive")
    return seconds


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


CREATE_FIELDS = {
    "id": Field(STRING), "policies": Field(STRING_SLICE), "meta": Field(KV_PAIRS),
    "no_parent": Field(BOOL), "no_default_policy": Field(BOOL), "renewable": Field(BOOL),
    "ttl": Field(STRING), "lease": Field(STRING), "explicit_max_ttl": Field(STRING), "display_name": Field(STRING),
    "num_uses": Field(INT), "period": Field(STRING), "type": Field(STRING), "entity_alias": Field(STRING),
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
    Path(f"create/{NAME_PATTERN}", {**CREATE_FIELDS, "role_name": Field(STRING)}, {"update": _create_with_role}),
]
