"""``sys/capabilities-self``, ``sys/capabilities`` and ``sys/capabilities-accessor``: what a token
may do on paths (OpenBao ``vault/logical_system.go``, ``handleCapabilities``).

Body: ``paths`` (list or comma string) or the deprecated ``path``; plus ``token`` or ``accessor``.
Answer: ``{<path>: [capabilities]}`` in ``data`` and at the top level; with exactly one path also
``capabilities``. ``root`` for root tokens, ``deny`` when nothing is granted, else the granted
capabilities sorted. Errors: 400 ``paths must be supplied``; multierror 400 ``invalid token`` /
``invalid accessor``.
"""

from __future__ import annotations

from ..acl import capabilities
from ..auth.token.store import Token
from ..framework.fields import COMMA_STRING_SLICE, STRING, Field
from ..framework.logical import LogicalResponse, multierror_text, user_error
from ..framework.router import LogicalRequest, Path


def _capabilities_of(req: LogicalRequest, token: Token, path: str) -> list[str]:
    if token.is_root:
        return ["root"]
    policies = [req.service.policies[n] for n in token.policies if n in req.service.policies]
    caps = capabilities(policies, path.strip("/"))
    if not caps or "deny" in caps:
        return ["deny"]
    return sorted(caps)


def _answer(req: LogicalRequest, token: Token) -> LogicalResponse:
    paths = list(req.data.get("paths") or [])
    if req.data.get("path"):
        paths.append(req.data.get("path"))
    if not paths:
        raise user_error("paths must be supplied")
    data = {path: _capabilities_of(req, token, path) for path in paths}
    if len(paths) == 1:
        data["capabilities"] = data[paths[0]]
    return LogicalResponse(data=data, extra_top=data)


def _self(req: LogicalRequest) -> LogicalResponse:
    return _answer(req, req.token)


def _of_token(req: LogicalRequest) -> LogicalResponse:
    token = req.service.tokens.lookup(req.data.get("token"), req.service.clock.now())
    if token is None:
        raise user_error(multierror_text("invalid token"))
    return _answer(req, token)


def _of_accessor(req: LogicalRequest) -> LogicalResponse:
    token = req.service.tokens.by_accessor(req.data.get("accessor"), req.service.clock.now())
    if token is None:
        raise user_error(multierror_text("invalid accessor"))
    return _answer(req, token)


_PATHS = {"paths": Field(COMMA_STRING_SLICE), "path": Field(STRING)}

CAPABILITIES_PATHS = [
    Path("capabilities-self", {**_PATHS, "token": Field(STRING)}, {"update": _self}),
    Path("capabilities", {**_PATHS, "token": Field(STRING)}, {"update": _of_token}),
    Path("capabilities-accessor", {**_PATHS, "accessor": Field(STRING)}, {"update": _of_accessor}),
]
