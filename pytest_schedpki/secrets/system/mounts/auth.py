"""``sys/auth``: the auth methods of the secrets service (OpenBao's ``handleAuthTable``,
``handleEnableAuth``, ``handleDisableAuth`` and the auth tune handlers).

* ``GET sys/auth``: every method by path, the built-in ``token/`` first, in the shape of
  ``sys/mounts`` (data repeated at the top level) with ``config.token_type`` ``default-service``;
* ``POST sys/auth/:path`` (``type`` required: 400 ``backend type must be specified as a string``;
  400 ``plugin not found in the catalog: <type>``; 400 ``path is already in use at <p>/``; 400
  ``token credential backend cannot be instantiated``), ``GET`` (one method; 400 ``No auth engine
  at <p>/``), ``DELETE`` (204; revokes the tokens the method's logins created; 400 ``token
  credential backend cannot be disabled`` for ``token/``);
* ``sys/auth/:path/tune``: read (effective TTLs in seconds; 400 ``cannot fetch sysview for path
  "auth/<p>/"``) and write (``default_lease_ttl``, ``max_lease_ttl``, ``description``; 400 ``tune of
  path "auth/<p>/" failed: no mount entry found``; 400 ``backend max lease TTL of <n> would be less
  than backend default lease TTL of <n>``).

The paths are root-protected upstream (``auth/*`` needs ``sudo`` in a policy).
"""

from __future__ import annotations

from typing import Any

from ...framework.fields import ANY, BOOL, MAP, STRING, Field
from ...framework.logical import LogicalResponse, user_error
from ...framework.router import LogicalRequest, Path, Router
from ...service import Mount
from .ttl_config import enable_ttls, tune_ttls


def describe_auth(mount: Mount, builtin: bool = False) -> dict[str, Any]:
    """One method as ``GET sys/auth`` lists it (the token method has ``options: null`` and no
    ``deprecation_status``, as upstream)."""
    data = mount.describe()
    data["config"] = {**data["config"], "token_type": "default-service"}
    if builtin:
        data["options"] = None
        data.pop("deprecation_status", None)
    return data


def _list(req: LogicalRequest) -> LogicalResponse:
    service = req.service
    data = {"token/": describe_auth(service.token_auth, builtin=True)}
    data.update({path: describe_auth(m) for path, m in sorted(service.auth_mounts.items())})
    return LogicalResponse(data=data, extra_top=data)


def _enable(req: LogicalRequest) -> LogicalResponse:
    config = req.data.get("config") or {}
    default_ttl, max_ttl = enable_ttls(config, "auth")  # upstream reads the TTLs before the type
    kind = req.data.get("type")
    if not kind:
        raise user_error("backend type must be specified as a string")
    req.service.enable_auth(req.data.get("path"), type=kind, description=req.data.get("description"),
                            default_lease_ttl=default_ttl, max_lease_ttl=max_ttl,
                            options=req.data.get("options") or {})
    return LogicalResponse(status=204)


def _find(req: LogicalRequest) -> Mount:
    path = req.data.get("path").strip("/") + "/"
    if path == "token/":
        return req.service.token_auth
    mount = req.service.auth_mounts.get(path)
    if mount is None:
        raise user_error(f"No auth engine at {path}")
    return mount


def _read(req: LogicalRequest) -> LogicalResponse:
    mount = _find(req)
    data = describe_auth(mount, builtin=mount is req.service.token_auth)
    return LogicalResponse(data=data, extra_top=data)


def _disable(req: LogicalRequest) -> LogicalResponse:
    if req.data.get("path").strip("/") == "token":
        raise user_error("token credential backend cannot be disabled")
    req.service.disable_auth(req.data.get("path"))
    return LogicalResponse(status=204)


def _tune_target(req: LogicalRequest, missing: str) -> Mount:
    path = req.data.get("path").strip("/") + "/"
    mount = req.service.token_auth if path == "token/" else req.service.auth_mounts.get(path)
    if mount is None:
        raise user_error(missing.format(path=f"auth/{path}"))
    return mount


def _read_tune(req: LogicalRequest) -> LogicalResponse:
    mount = _tune_target(req, 'cannot fetch sysview for path "{path}"')
    data = {"default_lease_ttl": mount.effective_default_ttl(), "description": mount.description,
            "force_no_cache": False, "max_lease_ttl": mount.effective_max_ttl(), "token_type": "default-service"}
    if mount.options:
        data["options"] = dict(mount.options)
    return LogicalResponse(data=data, extra_top=data)


def _write_tune(req: LogicalRequest) -> LogicalResponse:
    mount = _tune_target(req, 'tune of path "{path}" failed: no mount entry found')
    default_ttl, max_ttl = tune_ttls(req.data.get("default_lease_ttl"), req.data.get("max_lease_ttl"),
                                     (mount.default_lease_ttl, mount.max_lease_ttl))
    mount.default_lease_ttl, mount.max_lease_ttl = default_ttl, max_ttl
    if req.data.sent("description"):
        mount.description = req.data.get("description")
    return LogicalResponse(status=204)


_ENABLE_FIELDS = {"path": Field(STRING), "type": Field(STRING), "description": Field(STRING), "config": Field(MAP),
                  "options": Field(MAP), "local": Field(BOOL), "seal_wrap": Field(BOOL), "plugin_name": Field(STRING),
                  "plugin_version": Field(STRING), "external_entropy_access": Field(BOOL)}
_TUNE_FIELDS = {"path": Field(STRING), "default_lease_ttl": Field(STRING), "max_lease_ttl": Field(STRING),
                "description": Field(STRING), "options": Field(MAP), "token_type": Field(STRING),
                "listing_visibility": Field(STRING), "audit_non_hmac_request_keys": Field(ANY),
                "audit_non_hmac_response_keys": Field(ANY), "passthrough_request_headers": Field(ANY),
                "allowed_response_headers": Field(ANY)}

SYS_AUTH_ROUTER = Router([
    Path("auth", {}, {"read": _list}),  # "auth$": sys/auth/ is an unsupported path
    Path("auth/(?P<path>.+?)/tune", _TUNE_FIELDS, {"read": _read_tune, "update": _write_tune}, sudo=True),
    Path("auth/(?P<path>.+)", _ENABLE_FIELDS, {"update": _enable, "read": _read, "delete": _disable}, sudo=True),
])
"""The ``sys/auth`` routes (paths relative to ``sys/``)."""
