"""The token store's lifecycle paths: lookup, renewal and revocation, by token or by accessor.

``auth/token/lookup`` (403 ``bad token``), ``lookup-accessor`` (the token's data with ``id``
blanked), ``renew``, ``renew-self`` and ``renew-accessor`` (TTL from :mod:`.token_ttl`),
``revoke`` (the token, its descendants and their leases), ``revoke-self``, ``revoke-accessor``,
``revoke-orphan`` (children become orphans) and ``LIST accessors``, answered as OpenBao 2.7 does.
"""

from __future__ import annotations

from ..acl import capabilities
from ..auth.token.store import Token
from ..framework.fields import DURATION, STRING, Field
from ..framework.logical import LogicalError, LogicalResponse, multierror_text, user_error
from ..framework.router import LogicalRequest, Path
from ..leases import revoke_token_leases
from .token_roles import role_limits
from .token_ttl import mount_ttls, renewal_ttl, token_mount_ttls


def _now(req: LogicalRequest):
    return req.service.clock.now()


def _lookup(req: LogicalRequest) -> LogicalResponse:
    token_id = req.data.get("token")
    token = req.token if not token_id else req.service.tokens.lookup(token_id, _now(req), tainted=True)
    if token is None:
        raise LogicalError(403, ["bad token"])
    return LogicalResponse(data=token.lookup_data(_now(req)))


def _lookup_self(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=req.token.lookup_data(_now(req)))


def _by_accessor(req: LogicalRequest, tainted: bool = False) -> Token:
    accessor = req.data.get("accessor")
    if not accessor:
        raise user_error(multierror_text("missing accessor"))
    token = req.service.tokens.by_accessor(accessor, _now(req), tainted)
    if token is None:
        raise user_error(multierror_text("invalid accessor"))
    return token


def _lookup_accessor(req: LogicalRequest) -> LogicalResponse:
    data = _by_accessor(req, tainted=True).lookup_data(_now(req))
    data["id"] = ""
    return LogicalResponse(data=data)


def _login_renewal(req: LogicalRequest, token: Token) -> tuple[int, int, tuple[int, int]] | None:
    """For a token an auth method's login made (``path`` ``auth/<mount>/login``), what that method's
    renew handler answers (``backend.login_renewal(token)``: ``(ttl, period, max_ttl)`` in seconds) and
    its mount's lease TTLs with the method's max folded in: ``(ttl, period, (default, max))``, the
    inputs of ``CalculateTTL``. ``None`` for the token store's own tokens."""
    if not token.path.startswith("auth/") or not token.path.endswith("/login"):
        return None
    mount = req.service.auth_mounts.get(token.path[len("auth/"):-len("login")])
    renewal = getattr(getattr(mount, "backend", None), "login_renewal", None)
    if renewal is None:
        return None
    ttl, period, backend_max = renewal(token)
    return ttl, period, mount_ttls(mount, backend_max)


def renew(req: LogicalRequest, token: Token, blank_id: bool = False) -> LogicalResponse:
    """Renew ``token`` by the request's ``increment`` (seconds; none: the TTL its lease was last
    given, ``CalculateTTL``'s backend TTL, so a renewal without increment keeps an earlier
    increment); 400 ``lease is not renewable``."""
    if not token.renewable:
        raise user_error("lease is not renewable")
    now = _now(req)
    login = _login_renewal(req, token)
    if login is not None:  # a login token: its auth method decides (RenewToken -> the backend's renew)
        backend_ttl, period, mount_ttls = login
        explicit_max_ttl = token.explicit_max_ttl
    else:
        period, explicit_max_ttl = role_limits(req.service.tokens.roles.get(token.role) if token.role else None,
                                               token.period, token.explicit_max_ttl)
        backend_ttl, mount_ttls = token.lease_ttl or token.ttl, token_mount_ttls(req.service)
    ttl, warnings = renewal_ttl(req.data.get("increment"), backend_ttl, period, explicit_max_ttl,
                                token.creation_time, now, mount_ttls)
    token = req.service.tokens.renewed(token, ttl, now)
    auth = token.auth_block(lease_duration=ttl)
    if blank_id:
        auth["client_token"] = ""
    return LogicalResponse(data=None, auth=auth, warnings=warnings)


def _renew_self(req: LogicalRequest) -> LogicalResponse:
    if req.token.num_uses < 0:  # its last use is this request: handleRenewSelf's lookup no longer finds it
        raise user_error("token not found")
    return renew(req, req.token)


def _renew(req: LogicalRequest) -> LogicalResponse:
    token_id = req.data.get("token")
    if not token_id:
        raise user_error("missing token ID")
    token = req.service.tokens.lookup(token_id, _now(req))
    if token is None:
        raise user_error("token not found")
    return renew(req, token)


def _renew_accessor(req: LogicalRequest) -> LogicalResponse:
    token = _by_accessor(req)
    if not token.renewable:  # upstream's renewal by accessor words it as a bare invalid request
        raise user_error(multierror_text("invalid request"))
    return renew(req, token, blank_id=True)


def revoke(req: LogicalRequest, token_id: str, orphan_children: bool = False) -> None:
    """Revoke a token (and, unless ``orphan_children``, its descendants) with their leases."""
    removed = req.service.tokens.revoke(token_id, orphan_children=orphan_children)
    revoke_token_leases(req.service, {t.id for t in removed})


def _revoke(req: LogicalRequest) -> LogicalResponse:
    token_id = req.data.get("token")
    if not token_id:
        raise user_error("missing token ID")
    revoke(req, token_id)
    return LogicalResponse(status=204)


def _revoke_self(req: LogicalRequest) -> LogicalResponse:
    revoke(req, req.token.id)
    return LogicalResponse(status=204)


def _sudo(req: LogicalRequest, path: str) -> bool:
    """OpenBao's ``SudoPrivilege``: whether the request's token holds ``sudo`` on ``path`` (root does)."""
    token = req.token
    if token is None:
        return False
    if token.is_root:
        return True
    policies = [req.service.policies[name] for name in token.policies if name in req.service.policies]
    caps = capabilities(policies, path)
    return "sudo" in caps and "deny" not in caps


def _revoke_orphan(req: LogicalRequest) -> LogicalResponse:
    """``handleRevokeOrphan``: the token's sudo is checked by the handler (the path is not
    root-protected; only ``revoke-orphan/*`` is), then the token must exist."""
    token_id = req.data.get("token")
    if not token_id:
        raise user_error("missing token ID")
    if not _sudo(req, "auth/token/revoke-orphan"):
        raise user_error("root or sudo privileges required to revoke and orphan")
    if req.service.tokens.lookup(token_id, _now(req)) is None:
        raise user_error("token to revoke not found")
    revoke(req, token_id, orphan_children=True)
    return LogicalResponse(status=204)


def _revoke_accessor(req: LogicalRequest) -> LogicalResponse:
    accessor = req.data.get("accessor")
    if not accessor:
        raise user_error(multierror_text("missing accessor"))
    token = req.service.tokens.by_accessor(accessor, _now(req))
    if token is None:
        return LogicalResponse(data=None, warnings=["No token found with this accessor"])
    revoke(req, token.id)
    return LogicalResponse(status=204)


def _list_accessors(req: LogicalRequest) -> LogicalResponse:
    now = _now(req)
    keys = [t.accessor for t in req.service.tokens.tokens.values() if req.service.tokens.lookup(t.id, now)]
    return LogicalResponse(data={"keys": keys})


_TOKEN = {"token": Field(STRING)}
_ACCESSOR = {"accessor": Field(STRING)}
_INCREMENT = {"increment": Field(DURATION)}

TOKEN_PATHS = [
    Path("lookup-self", _TOKEN, {"read": _lookup_self, "update": _lookup_self}),
    Path("lookup", _TOKEN, {"read": _lookup, "update": _lookup}),
    Path("lookup-accessor", _ACCESSOR, {"update": _lookup_accessor}),
    Path("renew-self", {**_TOKEN, **_INCREMENT}, {"update": _renew_self}),
    Path("renew", {**_TOKEN, **_INCREMENT}, {"update": _renew}),
    Path("renew-accessor", {**_ACCESSOR, **_INCREMENT}, {"update": _renew_accessor}),
    Path("revoke", _TOKEN, {"update": _revoke}),
    Path("revoke-self", {}, {"update": _revoke_self}),
    Path("revoke-orphan", _TOKEN, {"update": _revoke_orphan}),
    Path("revoke-accessor", _ACCESSOR, {"update": _revoke_accessor}),
    Path("accessors/?", {}, {"list": _list_accessors}, sudo=True),
]

__all__ = ["TOKEN_PATHS", "renew", "revoke"]
