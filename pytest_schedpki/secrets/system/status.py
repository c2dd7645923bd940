"""What ``bao status`` and other operators' commands read: ``sys/leader``, ``sys/init``,
``sys/key-status``, ``sys/auth`` (the token method, always enabled), ``sys/internal/ui/mounts``,
and the operator paths a dev server refuses to read (``GET sys/rekey/init`` and
``sys/generate-root/attempt``: 405 ``unsupported operation``), as OpenBao 2.7's dev server answers.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..acl import has_mount_access
from ..auth.token.store import rfc3339_nano
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from ..service import VERSION


def _leader(req: LogicalRequest) -> LogicalResponse:
    """``{"ha_enabled": false}``: a dev server has no HA storage (OpenBao omits the other fields)."""
    return LogicalResponse(data={"ha_enabled": False}, bare=True)


def _init_status(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data={"initialized": True}, bare=True)


def _init(req: LogicalRequest) -> LogicalResponse:
    raise user_error("Vault is already initialized")


def _key_status(req: LogicalRequest) -> LogicalResponse:
    """The barrier key: term 1, installed when the service started; ``encryptions`` counts
    nothing here (stays 30, a fresh dev server's figure)."""
    started = _install_time(req.service)
    data = {"encryptions": 30, "install_time": rfc3339_nano(started), "term": 1}
    return LogicalResponse(data=data, extra_top=data)


def _install_time(service: Any):
    value = getattr(service, "_install_time", None)
    if value is None:
        value = service._install_time = service.clock.now()
    return value


def token_auth_mount(service: Any) -> dict[str, Any]:
    """The ``token/`` auth mount as ``sys/auth`` lists it (accessor and uuid fixed per service)."""
    ids = getattr(service, "_token_auth_ids", None)
    if ids is None:
        ids = service._token_auth_ids = (f"auth_token_{uuid.uuid4().hex[:8]}", str(uuid.uuid4()))
    return {"accessor": ids[0],
            "config": {"default_lease_ttl": 0, "force_no_cache": False, "max_lease_ttl": 0,
                       "token_type": "default-service"},
            "description": "token based credentials", "external_entropy_access": False, "local": False,
            "options": None, "plugin_version": "", "running_plugin_version": f"v{VERSION}+builtin.bao",
            "running_sha256": "", "seal_wrap": False, "type": "token", "uuid": ids[1]}


def _auth_list(req: LogicalRequest) -> LogicalResponse:
    data = {"token/": token_auth_mount(req.service)}
    return LogicalResponse(data=data, extra_top=data)


def header_token(headers: dict[str, str]) -> str:
    """The request's token (``X-Vault-Token``, else a ``Bearer`` authorization), ``""`` for none."""
    lowered = {k.lower(): v for k, v in headers.items()}
    token = lowered.get("x-vault-token", "")
    if not token and lowered.get("authorization", "").startswith("Bearer "):
        token = lowered["authorization"][len("Bearer "):].strip()
    return token


def _ui_mounts(req: LogicalRequest) -> LogicalResponse:
    """``pathInternalUIMountsRead``: no token needed; without one, only the mounts tuned
    ``listing_visibility=unauth`` are listed (type, description, options); a token sees
    the mounts it may use something in (``hasMountAccess``; root sees all); an unknown token: 403
    ``permission denied``."""
    token_id = header_token(req.headers)
    if not token_id:  # only the mounts tuned listing_visibility=unauth, with three of their fields
        secret = {path: {"description": mount.description, "options": dict(mount.options), "type": mount.type}
                  for path, mount in sorted(req.service.mounts.items()) if mount.listing_visibility == "unauth"}
        return LogicalResponse(data={"auth": {}, "secret": secret})
    token = req.service.tokens.lookup(token_id, req.service.clock.now())
    if token is None:
        raise LogicalError(403, ["permission denied"])
    policies = req.service.policies
    secret = {path: mount.describe() for path, mount in sorted(req.service.mounts.items())
              if has_mount_access(policies, token, path)}
    auth = {"token/": token_auth_mount(req.service)} if has_mount_access(policies, token, "auth/token/") else {}
    return LogicalResponse(data={"auth": auth, "secret": secret})


def _read_unsupported(req: LogicalRequest) -> LogicalResponse:
    """A dev server answers these reads with a plain (not multierror) 405."""
    raise LogicalError(405, ["unsupported operation"])


STATUS_PATHS = [
    Path("leader", {}, {"read": _leader}, unauthenticated=True),
    Path("init", {}, {"read": _init_status, "update": _init}, unauthenticated=True),
    Path("key-status", {}, {"read": _key_status}, sudo=True),
    Path("auth", {}, {"read": _auth_list}),
    Path("internal/ui/mounts", {}, {"read": _ui_mounts}, unauthenticated=True),
    Path("rekey/init", {}, {"read": _read_unsupported}),
    Path("generate-root/attempt", {}, {"read": _read_unsupported}),
]
