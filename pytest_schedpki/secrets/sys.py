"""The system and token endpoints real clients call around the PKI engine.

``sys/health``, ``sys/seal-status``, ``sys/mounts`` (list, enable, read, disable, ``tune``),
``sys/internal/ui/mounts/:path``, ``auth/token/create``, ``auth/token/lookup-self`` and
``auth/token/renew-self``, answered as OpenBao 2.7's dev server does.
"""

from __future__ import annotations

from .fields import (
    ANY,
    BOOL,
    COMMA_STRING_SLICE,
    DURATION,
    INT,
    MAP,
    STRING,
    ConversionError,
    Field,
    duration_seconds,
)
from .router import LogicalRequest, Path, Router
from .service import SYSTEM_DEFAULT_LEASE_TTL, VERSION
from .sys_capabilities import CAPABILITIES_PATHS
from .sys_leases import LEASE_PATHS
from .sys_seal import SEAL_PATHS
from .sys_status import STATUS_PATHS
from .sys_wrapping import WRAPPING_PATHS
from .token_paths import TOKEN_PATHS
from .token_roles import role_limits, role_paths, role_policies
from .token_ttl import creation_ttl
from .wire import LogicalError, LogicalResponse, not_found, user_error


def _health(req: LogicalRequest) -> LogicalResponse:
    service = req.service
    if service.sealed:  # a sealed node reports itself standby, without cluster identity
        body = {"initialized": True, "sealed": True, "standby": True, "replication_performance_mode": "unknown",
                "replication_dr_mode": "unknown", "server_time_utc": int(service.clock.now().timestamp()),
                "version": VERSION}
        return LogicalResponse(data=body, bare=True, status=503)
    body = {
        "initialized": True,
        "sealed": False,
        "standby": False,
        "replication_performance_mode": "disabled",
        "replication_dr_mode": "disabled",
        "server_time_utc": int(service.clock.now().timestamp()),
        "version": VERSION,
        "cluster_name": service.cluster_name,
        "cluster_id": service.cluster_id,
    }
    return LogicalResponse(data=body, bare=True)


def _seal_status(req: LogicalRequest) -> LogicalResponse:
    service = req.service
    body = {
        "type": "shamir", "initialized": True, "sealed": service.sealed, "t": 1, "n": 1, "progress": 0,
        "nonce": "", "recovery_seal": False, "version": VERSION, "commit_date": "2026-10-26T20:32:27Z",
        "migration": False, "storage_type": "inmem",
    }
    if not service.sealed:  # the cluster identity is known only while unsealed
        body.update(cluster_name=service.cluster_name, cluster_id=service.cluster_id)
    return LogicalResponse(data=body, bare=True)


def _list_mounts(req: LogicalRequest) -> LogicalResponse:
    data = {path: mount.describe() for path, mount in sorted(req.service.mounts.items())}
    return LogicalResponse(data=data, extra_top=data)


def _ttl_value(config: dict, key: str) -> int:
    try:
        return duration_seconds(config.get(key)) if config.get(key) not in (None, "", "system") else 0
    except ConversionError as exc:
        raise user_error(str(exc)) from None


def _enable_mount(req: LogicalRequest) -> LogicalResponse:
    config = req.data.get("config") or {}
    engine_type = req.data.get("type")
    if not engine_type:
        raise user_error("backend type must be specified as a string")
    default_ttl = _ttl_value(config, "default_lease_ttl")
    if default_ttl > SYSTEM_DEFAULT_LEASE_TTL:
        raise user_error(f"given default lease TTL greater than system max lease TTL of {SYSTEM_DEFAULT_LEASE_TTL}")
    req.service.enable_mount(
        req.data.get("path"), type=engine_type, description=req.data.get("description"),
        default_lease_ttl=_ttl_value(config, "default_lease_ttl"), max_lease_ttl=_ttl_value(config, "max_lease_ttl"),
        options=req.data.get("options") or {},
    )
    return LogicalResponse(status=204)


def _lookup_mount(req: LogicalRequest):
    found = req.service.mounts.get(req.data.get("path").strip("/") + "/")
    if found is None:
        raise user_error(f"No secret engine mount at {req.data.get('path').strip('/')}/")
    return found


def _read_mount(req: LogicalRequest) -> LogicalResponse:
    data = _lookup_mount(req).describe()
    return LogicalResponse(data=data, extra_top=data)


def _disable_mount(req: LogicalRequest) -> LogicalResponse:
    req.service.disable_mount(req.data.get("path"))
    return LogicalResponse(status=204)


def _tune_mount(req: LogicalRequest):
    found = req.service.mounts.get(req.data.get("path").strip("/") + "/")
    if found is None:
        raise user_error(f'cannot fetch sysview for path "{req.data.get("path").strip("/")}/"')
    return found


def _read_tune(req: LogicalRequest) -> LogicalResponse:
    mount = _tune_mount(req)
    data = {"default_lease_ttl": mount.effective_default_ttl(), "description": mount.description,
            "force_no_cache": False, "max_lease_ttl": mount.effective_max_ttl()}
    return LogicalResponse(data=data, extra_top=data)


def _write_tune(req: LogicalRequest) -> LogicalResponse:
    mount = _tune_mount(req)
    default_ttl, max_ttl = mount.default_lease_ttl, mount.max_lease_ttl
    for key in ("default_lease_ttl", "max_lease_ttl"):
        raw = req.raw.get(key)
        if raw is None or raw == "":
            continue
        value = 0 if raw == "system" else _ttl_value({key: raw}, key)
        if key == "default_lease_ttl":
            default_ttl = value
        else:
            max_ttl = value
    effective_max = max_ttl or SYSTEM_DEFAULT_LEASE_TTL
    if default_ttl and default_ttl > effective_max:
        raise user_error(f"backend max lease TTL of {effective_max} would be less than backend default lease TTL of {default_ttl}")
    mount.default_lease_ttl, mount.max_lease_ttl = default_ttl, max_ttl
    if req.data.sent("description"):
        mount.description = req.data.get("description")
    return LogicalResponse(status=204)


def _ui_mount(req: LogicalRequest) -> LogicalResponse:
    found = req.service.find_mount(req.data.get("path").strip("/"))
    if found is None:
        raise not_found()
    mount = found[0]
    return LogicalResponse(data={"path": mount.path, "type": mount.type, "options": mount.options or None,
                                 "description": mount.description, "accessor": mount.accessor,
                                 "config": mount.describe()["config"], "local": mount.local,
                                 "seal_wrap": mount.seal_wrap, "external_entropy_access": False,
                                 "uuid": mount.uuid, "plugin_version": "", "running_plugin_version": "",
                                 "running_sha256": ""})


_MOUNT_FIELDS = {
    "path": Field(STRING), "type": Field(STRING), "description": Field(STRING), "config": Field(MAP),
    "options": Field(MAP), "local": Field(BOOL), "seal_wrap": Field(BOOL), "plugin_name": Field(STRING),
    "external_entropy_access": Field(BOOL), "plugin_version": Field(STRING),
}
_TUNE_FIELDS = {"path": Field(STRING), "default_lease_ttl": Field(ANY), "max_lease_ttl": Field(ANY),
                "description": Field(STRING), "options": Field(MAP), "audit_non_hmac_request_keys": Field(ANY),
                "audit_non_hmac_response_keys": Field(ANY), "listing_visibility": Field(STRING),
                "passthrough_request_headers": Field(ANY), "allowed_response_headers": Field(ANY),
                "token_type": Field(STRING), "force_no_cache": Field(BOOL)}

def _policy_names(req: LogicalRequest) -> list[str]:
    """Policy names sorted, ``root`` last (OpenBao appends it after listing the stored ones)."""
    names = sorted(p for p in req.service.policies if p not in ("response-wrapping", "root"))
    return [*names, "root"] if "root" in req.service.policies else names


def _list_policies(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data={"keys": _policy_names(req)})


def _list_policies_legacy(req: LogicalRequest) -> LogicalResponse:
    """``sys/policy``: ``keys`` and ``policies``, in ``data`` and at the top level."""
    names = _policy_names(req)
    data = {"keys": names, "policies": list(names)}
    return LogicalResponse(data=data, extra_top=data)


def _read_policy(req: LogicalRequest) -> LogicalResponse:
    policy = req.service.policies.get(req.data.get("name").lower())
    if policy is None:
        raise not_found()
    return LogicalResponse(data=policy.describe())


def _read_policy_legacy(req: LogicalRequest) -> LogicalResponse:
    """``sys/policy/:name``: the text under ``rules``, in ``data`` and at the top level."""
    policy = req.service.policies.get(req.data.get("name").lower())
    if policy is None or policy.name == "response-wrapping":
        raise not_found()
    data = policy.describe()
    data["rules"] = data.pop("policy")
    return LogicalResponse(data=data, extra_top=data)


def _write_policy_legacy(req: LogicalRequest) -> LogicalResponse:
    text = req.data.get("policy") or req.data.get("rules")
    req.service.put_policy(req.data.get("name"), text)
    return LogicalResponse(status=204)


def _write_policy(req: LogicalRequest) -> LogicalResponse:
    req.service.put_policy(req.data.get("name"), req.data.get("policy"))
    return LogicalResponse(status=204)


def _delete_policy(req: LogicalRequest) -> LogicalResponse:
    req.service.delete_policy(req.data.get("name"))
    return LogicalResponse(status=204)


def _unwrap(req: LogicalRequest) -> LogicalResponse:
    token_id = req.data.get("token") or (req.token.id if req.token else "")
    wrapped = req.service.unwrap(token_id)
    if wrapped is None:
        raise user_error("wrapping token is not valid or does not exist")
    return wrapped


def _wrap_lookup(req: LogicalRequest) -> LogicalResponse:
    token_id = req.data.get("token") or (req.token.id if req.token else "")
    info = req.service.wrapping_info(token_id)
    if info is None:
        raise user_error("wrapping token is not valid or does not exist")
    return LogicalResponse(data=info)


_POLICY_FIELDS = {"name": Field(STRING), "policy": Field(STRING), "cas": Field(INT), "expiration": Field(ANY)}

SYS_ROUTER = Router([
    *STATUS_PATHS,
    *LEASE_PATHS,
    *WRAPPING_PATHS,
    *CAPABILITIES_PATHS,
    *SEAL_PATHS,
    Path("health", {"standbyok": Field(BOOL), "perfstandbyok": Field(BOOL), "sealedcode": Field(INT),
                    "uninitcode": Field(INT), "standbycode": Field(INT), "activecode": Field(INT)},
         {"read": _health}, unauthenticated=True),
    Path("seal-status", {}, {"read": _seal_status}, unauthenticated=True),
    Path("mounts/?", {}, {"read": _list_mounts}),
    Path("mounts/(?P<path>.+?)/tune", _TUNE_FIELDS, {"read": _read_tune, "update": _write_tune}),
    Path("mounts/(?P<path>.+)", _MOUNT_FIELDS, {"update": _enable_mount, "read": _read_mount, "delete": _disable_mount}),
    Path("policies/acl/?", {}, {"list": _list_policies}),
    Path("policies/acl/(?P<name>[^/]+)", _POLICY_FIELDS, {"read": _read_policy, "update": _write_policy, "delete": _delete_policy}),
    Path("policy/?", {}, {"read": _list_policies_legacy, "list": _list_policies_legacy}),
    Path("policy/(?P<name>[^/]+)", {**_POLICY_FIELDS, "rules": Field(STRING)}, {"read": _read_policy_legacy, "update": _write_policy_legacy, "delete": _delete_policy}),
    Path("wrapping/unwrap", {"token": Field(STRING)}, {"update": _unwrap}),
    Path("wrapping/lookup", {"token": Field(STRING)}, {"update": _wrap_lookup, "read": _wrap_lookup}),
    Path("internal/ui/mounts/(?P<path>.+)", {"path": Field(STRING)}, {"read": _ui_mount}),
])


# -- auth/token -----------------------------------------------------------------------------------------
def _token_create(req: LogicalRequest, role=None) -> LogicalResponse:
    """``auth/token/create``, ``create-orphan`` and (with ``role``) ``create/:role_name``: TTL,
    period and explicit max from :func:`~.token_ttl.creation_ttl`, capping warnings included."""
    parent = req.token
    policies = req.data.get("policies") if req.data.sent("policies") else None
    if parent is not None and not parent.is_root and policies:
        missing = [p for p in policies if p not in parent.policies and p != "default"]
        if missing:
            raise user_error("child policies must be subset of parent")
    ttl = _token_ttl(req.raw.get("ttl"))
    explicit_max_ttl = _token_ttl(req.raw.get("explicit_max_ttl"))
    period = req.data.get("period")
    orphan = bool(req.data.get("no_parent")) or req.path == "create-orphan"
    renewable = req.data.get("renewable") if req.data.sent("renewable") else True
    no_default_policy = req.data.get("no_default_policy")
    path = "auth/token/" + ("create-orphan" if req.path == "create-orphan" else "create")
    ttl_period, ttl_max = period, explicit_max_ttl  # the role's limits count, the token keeps its own
    if role is not None:
        policies = role_policies(role, policies)
        orphan = orphan or role.orphan
        renewable = renewable and role.renewable
        ttl_period, ttl_max = role_limits(role, period, explicit_max_ttl)
        no_default_policy = no_default_policy or role.no_default_policy
        path = f"auth/token/create/{role.name}" + (f"/{role.path_suffix}" if role.path_suffix else "")
    if not policies and parent is not None:
        policies = list(parent.policies)  # an orphan still starts from its creator's policies
    chosen = policies or []
    ttl, warnings = creation_ttl(ttl, ttl_period, ttl_max, "root" in chosen)
    token = req.service.tokens.create(
        req.service.clock.now(), policies=policies, ttl=ttl, display_name=req.data.get("display_name"),
        meta=req.data.get("meta") or None, num_uses=req.data.get("num_uses"), renewable=renewable,
        token_id=req.data.get("id") or None, no_default_policy=no_default_policy,
        parent=None if orphan else parent, explicit_max_ttl=explicit_max_ttl, period=period, path=path,
        ttl_decided=True, role=role.name if role is not None else "",
    )
    warnings += [f'Policy "{name}" does not exist' for name in sorted(token.policies)
                 if name not in req.service.policies]
    return LogicalResponse(data=None, auth=token.auth_block(), warnings=warnings)


def _token_ttl(value) -> int:
    """Token TTLs are parsed by the token store itself: its errors carry no field prefix."""
    try:
        return duration_seconds(value)
    except ConversionError as exc:
        raise LogicalError(400, [str(exc)]) from None


_CREATE_FIELDS = {
    "id": Field(STRING), "policies": Field(COMMA_STRING_SLICE), "meta": Field(MAP),
    "no_parent": Field(BOOL), "no_default_policy": Field(BOOL), "renewable": Field(BOOL),
    "ttl": Field(ANY), "explicit_max_ttl": Field(ANY), "display_name": Field(STRING),
    "num_uses": Field(INT), "period": Field(DURATION), "type": Field(STRING), "entity_alias": Field(STRING),
}

TOKEN_ROUTER = Router([
    Path("create", _CREATE_FIELDS, {"update": _token_create}),
    Path("create-orphan", _CREATE_FIELDS, {"update": _token_create}),
    *role_paths(_CREATE_FIELDS),
    *TOKEN_PATHS,
])

__all__ = ["SYS_ROUTER", "TOKEN_ROUTER"]
