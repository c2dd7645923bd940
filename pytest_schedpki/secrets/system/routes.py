"""The system and token endpoints real clients call around the PKI engine.

``sys/health``, ``sys/seal-status``, ``sys/mounts`` (list, enable, read, disable, ``tune``), ``sys/remount``,
``sys/internal/ui/mounts/:path``, ``auth/token/create``, ``auth/token/lookup-self`` and
``auth/token/renew-self``, answered as OpenBao 2.7's dev server does.
"""

from __future__ import annotations

import re

from ...golang.duration import go_quote
from ..acl import has_mount_access
from ..framework.fields import (
    ANY,
    BOOL,
    COMMA_STRING_SLICE,
    INT,
    KV_PAIRS,
    MAP,
    STRING,
    Field,
)
from ..framework.logical import LogicalError, LogicalResponse, not_found, user_error
from ..framework.router import LogicalRequest, Path, Router
from .capabilities import CAPABILITIES_PATHS
from .health import health_body
from .lease_paths import LEASE_PATHS
from .mounts.remount import REMOUNT_PATHS
from .mounts.ttl_config import enable_ttls, tune_ttls
from .seal import SEAL_PATHS, seal_status
from .status import STATUS_PATHS, header_token
from .token_create import TOKEN_CREATE_PATHS
from .token_paths import TOKEN_PATHS
from .token_roles import role_paths
from .wrapping import WRAPPING_PATHS


def _health(req: LogicalRequest) -> LogicalResponse:
    """The logical ``sys/health`` (seeds and fixtures; over HTTP :mod:`.health` answers first)."""
    return LogicalResponse(data=health_body(req.service), bare=True, status=503 if req.service.sealed else 200)


def _list_mounts(req: LogicalRequest) -> LogicalResponse:
    data = {path: mount.describe() for path, mount in sorted(req.service.mounts.items())}
    return LogicalResponse(data=data, extra_top=data)


def _enable_mount(req: LogicalRequest) -> LogicalResponse:
    config = req.data.get("config") or {}
    default_ttl, max_ttl = enable_ttls(config, "mount")  # upstream reads the TTLs before the type
    engine_type = req.data.get("type")
    if not engine_type:
        raise user_error("backend type must be specified as a string")
    req.service.enable_mount(
        req.data.get("path"), type=engine_type, description=req.data.get("description"),
        default_lease_ttl=default_ttl, max_lease_ttl=max_ttl, options=req.data.get("options") or {},
    )
    return LogicalResponse(status=204)


def _lookup_mount(req: LogicalRequest):
    """``handleReadMount``: the mount serving the path (``MatchingMountEntry``, the longest prefix:
    ``sys/mounts/pki/roles/x`` reads ``pki/``); 400 ``No secret engine mount at <path>/``."""
    path = req.data.get("path").strip("/") + "/"
    found = req.service.find_mount(path)
    if found is None:
        raise user_error(f"No secret engine mount at {path}")
    return found[0]


def _read_mount(req: LogicalRequest) -> LogicalResponse:
    data = _lookup_mount(req).describe()
    return LogicalResponse(data=data, extra_top=data)


def _disable_mount(req: LogicalRequest) -> LogicalResponse:
    req.service.disable_mount(req.data.get("path"))
    return LogicalResponse(status=204)


def _tune_mount(req: LogicalRequest, writing: bool = False):
    """The secrets mount a tune names; 400 when there is none (a read: ``cannot fetch sysview for
    path "x/"``, a write: ``tune of path "x/" failed: no mount entry found``, as upstream words them)."""
    path = req.data.get("path").strip("/") + "/"
    found = req.service.mounts.get(path)
    if found is None:
        if writing:
            raise user_error(f'tune of path "{path}" failed: no mount entry found')
        raise user_error(f'cannot fetch sysview for path "{path}"')
    return found


def _read_tune(req: LogicalRequest) -> LogicalResponse:
    mount = _tune_mount(req)
    data = {"default_lease_ttl": mount.effective_default_ttl(), "description": mount.description,
            "force_no_cache": False, "max_lease_ttl": mount.effective_max_ttl()}
    if mount.listing_visibility:
        data["listing_visibility"] = mount.listing_visibility
    data.update({name: list(values) for name, values in mount.tune_lists.items() if values})
    if mount.options:
        data["options"] = dict(mount.options)
    return LogicalResponse(data=data, extra_top=data)


def _write_tune(req: LogicalRequest) -> LogicalResponse:
    mount = _tune_mount(req, writing=True)
    default_ttl, max_ttl = tune_ttls(req.data.get("default_lease_ttl"), req.data.get("max_lease_ttl"),
                                     (mount.default_lease_ttl, mount.max_lease_ttl))
    lists = {name: req.data.get(name) for name in TUNE_LISTS if req.data.sent(name)}
    visibility = mount.listing_visibility
    if req.data.sent("listing_visibility"):  # handleTuneWriteCommon, after the TTLs and the description
        visibility = req.data.get("listing_visibility")
        if visibility not in ("", "hidden", "unauth"):
            raise user_error(f"invalid listing_visibility {visibility}")
    if req.data.sent("token_type"):
        raise user_error("'token_type' can only be modified on auth mounts")
    options = req.data.get("options")  # TypeKVPairs; null or empty changes nothing
    warning = _tune_options(mount, options) if options else None
    mount.default_lease_ttl, mount.max_lease_ttl, mount.listing_visibility = default_ttl, max_ttl, visibility
    mount.tune_lists = {**mount.tune_lists, **lists}
    if req.data.sent("description"):
        mount.description = req.data.get("description")
    return LogicalResponse(warnings=[warning]) if warning else LogicalResponse(status=204)


def _version_number(text) -> int:
    try:
        return int(str(text))
    except ValueError:
        return 0


def _tune_options(mount, options: dict) -> str | None:
    """Merge ``options`` into the mount's; a new ``version`` upgrades the engine (KV 1 -> 2).

    As OpenBao's ``handleTuneWriteCommon``: 400 ``invalid version provided: <n>`` (not 1 or 2; text
    that is no number counts as 0), 400 ``cannot downgrade mount from version <old>``; an accepted
    change answers 200 with the warning ``Upgrading mount from version <old> to version 0. This
    mount will be unavailable for a brief period and will resume service shortly.`` (sic: the live
    server prints 0 as the new version). Returns that warning, or ``None``.
    """
    merged = dict(mount.options)
    warning = None
    for key, value in options.items():
        merged[key] = value if key != "version" or value is None else str(value)
    new = merged.get("version")
    old = mount.options.get("version")
    if "version" in options and new != old:
        if new and not re.fullmatch(r"[+-]?[0-9]+", new):  # parseutil.ParseInt ("" is 0)
            raise user_error(f"unable to parse options: strconv.ParseInt: parsing {go_quote(new)}: invalid syntax")
        new_number, old_number = _version_number(new), _version_number(old or 0)
        if new_number not in (1, 2):
            raise user_error(f"invalid version provided: {new_number}")
        if new_number < old_number:
            raise user_error(f"cannot downgrade mount from version {old_number}")
        warning = (f"Upgrading mount from version {old_number} to version 0. This mount will be unavailable "
                   "for a brief period and will resume service shortly.")
        upgrade = getattr(mount.backend, "upgrade", None)
        if upgrade is not None and new_number == 2 and old_number < 2:
            upgrade()
    mount.options = merged
    return warning


def _ui_mount(req: LogicalRequest) -> LogicalResponse:
    """The mount serving a path, as ``sys/mounts/:path`` describes it plus its ``path`` (the CLI's
    ``bao kv`` reads ``options.version`` here)."""
    path = req.data.get("path").strip("/")
    found = req.service.find_mount(path)
    # any valid token may ask; OpenBao answers 403 unless the token may use something in the mount
    # (also to the root token for a path that is not mounted)
    if found is None or not has_mount_access(req.service.policies, req.token, found[0].path):
        raise LogicalError(403, ["preflight capability check returned 403, please ensure client's policies grant "
                                 f'access to path "{path}/"'])
    mount = found[0]
    return LogicalResponse(data={**mount.describe(), "path": mount.path})


_MOUNT_FIELDS = {
    "path": Field(STRING), "type": Field(STRING), "description": Field(STRING), "config": Field(MAP),
    "options": Field(MAP), "local": Field(BOOL), "seal_wrap": Field(BOOL), "plugin_name": Field(STRING),
    "external_entropy_access": Field(BOOL), "plugin_version": Field(STRING),
}
TUNE_LISTS = ("audit_non_hmac_request_keys", "audit_non_hmac_response_keys", "passthrough_request_headers",
              "allowed_response_headers")  # comma lists kept as given (empty entries too), shown when not empty
_TUNE_FIELDS = {"path": Field(STRING), "default_lease_ttl": Field(STRING), "max_lease_ttl": Field(STRING),
                "description": Field(STRING), "options": Field(KV_PAIRS), "listing_visibility": Field(STRING),
                **{name: Field(COMMA_STRING_SLICE) for name in TUNE_LISTS},
                "token_type": Field(STRING), "force_no_cache": Field(BOOL)}


def _storage_order(names: list[str]) -> list[str]:
    """Keys as ``logical.ScanView`` walks a storage view: each folder's entries in byte order, its
    keys emitted at once and its sub-folders pushed on a stack (the last one is walked first)."""
    out: list[str] = []
    stack = [""]
    while stack:
        folder = stack.pop()
        entries = sorted({name[len(folder):].split("/", 1)[0] + ("/" if "/" in name[len(folder):] else "")
                          for name in names if name.startswith(folder)}, key=lambda e: e.encode())
        for entry in entries:
            (stack if entry.endswith("/") else out).append(folder + entry)
    return out


def _policy_names(req: LogicalRequest, prefix: str = "") -> list[str]:
    """``ListPoliciesWithPrefix(prefix, recursive)``: the stored policies whose names start with
    ``prefix`` (lower-cased and trimmed), in storage order; ``root`` last for the whole list."""
    prefix = prefix.strip().lower()
    stored = [p for p in req.service.policies if p not in ("response-wrapping", "root") and p.startswith(prefix)]
    names = _storage_order(stored)
    return [*names, "root"] if not prefix and "root" in req.service.policies else names


def _list_policies(req: LogicalRequest) -> LogicalResponse | None:
    """``LIST sys/policies/acl[/<prefix>/]``; no name under the prefix: None (404 ``{"errors":[]}``)."""
    names = _policy_names(req, req.data.get("name") or "" if "name" in req.data.schema else "")
    return LogicalResponse(data={"keys": names}) if names else None


def _list_policies_legacy(req: LogicalRequest) -> LogicalResponse:
    """``sys/policy[/<prefix>/]``: ``keys`` and ``policies``, in ``data`` and at the top level
    (``policies`` alone, ``null``, when no name is under the prefix)."""
    names = _policy_names(req, req.data.get("name") or "" if "name" in req.data.schema else "")
    data = {"keys": names, "policies": list(names)} if names else {"policies": None}
    return LogicalResponse(data=data, extra_top=data)


def _policy_key(req: LogicalRequest) -> str:
    """The policy a read finds: the name lower-cased and trimmed (the policy store's ``sanitizeName``),
    then as ``path.Join`` writes the store's cache key, so ``a/b/`` finds ``a/b``."""
    return req.data.get("name").strip().lower().rstrip("/")


def _read_policy(req: LogicalRequest) -> LogicalResponse:
    policy = req.service.policies.get(_policy_key(req))
    if policy is None:
        raise not_found()
    return LogicalResponse(data=policy.describe())


def _read_policy_legacy(req: LogicalRequest) -> LogicalResponse:
    """``sys/policy/:name``: the text under ``rules``, in ``data`` and at the top level."""
    policy = req.service.policies.get(_policy_key(req))
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
    """``sys/wrapping/lookup`` needs no token of its own (an unauthenticated path upstream): the
    wrapping token comes in the body or as the request's token."""
    token_id = req.data.get("token") or (req.token.id if req.token else header_token(req.headers))
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
    *REMOUNT_PATHS,
    Path("health", {"standbyok": Field(BOOL), "perfstandbyok": Field(BOOL), "sealedcode": Field(INT),
                    "uninitcode": Field(INT), "standbycode": Field(INT), "activecode": Field(INT)},
         {"read": _health}, unauthenticated=True),
    Path("seal-status", {}, {"read": seal_status}, unauthenticated=True),
    Path("mounts", {}, {"read": _list_mounts}),  # "mounts$": sys/mounts/ is an unsupported path
    Path("mounts/(?P<path>.+?)/tune", _TUNE_FIELDS, {"read": _read_tune, "update": _write_tune}),
    Path("mounts/(?P<path>.+)", _MOUNT_FIELDS, {"update": _enable_mount, "read": _read_mount, "delete": _disable_mount}),
    Path("policies/acl/?", {}, {"list": _list_policies}),
    Path("policies/acl/(?P<name>.+)", _POLICY_FIELDS, {"list": _list_policies, "read": _read_policy, "update": _write_policy, "delete": _delete_policy}),
    Path("policy/?", {}, {"read": _list_policies_legacy, "list": _list_policies_legacy}),
    Path("policy/(?P<name>.+)", {**_POLICY_FIELDS, "rules": Field(STRING)}, {"list": _list_policies_legacy, "read": _read_policy_legacy, "update": _write_policy_legacy, "delete": _delete_policy}),
    Path("wrapping/unwrap", {"token": Field(STRING)}, {"update": _unwrap}),
    Path("wrapping/lookup", {"token": Field(STRING)}, {"update": _wrap_lookup, "read": _wrap_lookup},
         unauthenticated=True),
    Path("internal/ui/mounts/(?P<path>.+)", {"path": Field(STRING)}, {"read": _ui_mount}, any_token=True),
])


# -- auth/token -----------------------------------------------------------------------------------------
TOKEN_ROUTER = Router([
    *TOKEN_CREATE_PATHS,
    *role_paths(),
    *TOKEN_PATHS,
])

__all__ = ["SYS_ROUTER", "TOKEN_ROUTER"]
