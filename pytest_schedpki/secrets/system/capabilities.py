"""``sys/capabilities-self``, ``sys/capabilities`` and ``sys/capabilities-accessor``: what a token
may do on paths (OpenBao ``vault/logical_system.go``, ``handleCapabilities`` and
``handleCapabilitiesAccessor``; ``Core.Capabilities``).

Body: ``paths`` (list or comma string), or, only when ``paths`` names none, the deprecated ``path``
(also a comma list); plus ``token`` (a non-string counts as none) or ``accessor``. Answer:
``{<path>: [capabilities]}`` in ``data`` and at the top level; with exactly one path also
``capabilities``. ``root`` for root tokens, ``deny`` when nothing is granted, else the granted
capabilities sorted. Errors, in upstream's order: no token -> 500 ``no token found`` (multierror);
no path -> 400 ``paths must be supplied``; then path by path: an empty one -> 400 ``missing path``,
an unknown token -> 400 ``invalid token`` (both multierror); ``capabilities-accessor``: 400
``missing accessor``, then ``invalid accessor`` (multierror).
"""

from __future__ import annotations

from ..acl import capabilities
from ..auth.token.store import Token
from ..framework.fields import COMMA_STRING_SLICE, STRING, Field, JsonNumber
from ..framework.logical import LogicalError, LogicalResponse, multierror_text, user_error
from ..framework.router import LogicalRequest, Path


def _capabilities_of(req: LogicalRequest, token: Token, path: str) -> list[str]:
    if token.is_root:
        return ["root"]
    policies = [req.service.policies[n] for n in token.policies if n in req.service.policies]
    caps = capabilities(policies, path.strip("/"))
    if not caps or "deny" in caps:
        return ["deny"]
    return sorted(caps)


def _paths(req: LogicalRequest) -> list[str]:
    paths = list(req.data.get("paths") or [])
    if not paths:  # the deprecated field, read only when paths names none
        paths = list(req.data.get("path") or [])
    if not paths:
        raise user_error("paths must be supplied")
    return paths


def _answer(req: LogicalRequest, token_id: str) -> LogicalResponse:
    paths = _paths(req)
    data = {}
    for path in paths:
        if path == "":
            raise user_error(multierror_text("missing path"))
        token = req.service.tokens.lookup(token_id, req.service.clock.now())
        if token is None:
            raise user_error(multierror_text("invalid token"))
        data[path] = _capabilities_of(req, token, path)
    if len(paths) == 1:
        data["capabilities"] = data[paths[0]]
    return LogicalResponse(data=data, extra_top=data)


def _self(req: LogicalRequest) -> LogicalResponse:
    return _answer(req, req.token.id)


def _of_token(req: LogicalRequest) -> LogicalResponse:
    token_id = req.raw.get("token")
    if not isinstance(token_id, str) or isinstance(token_id, JsonNumber) or not token_id:
        raise LogicalError(500, [multierror_text("no token found")])
    return _answer(req, token_id)


def _of_accessor(req: LogicalRequest) -> LogicalResponse:
    accessor = req.data.get("accessor")
    if not accessor:
        raise user_error("missing accessor")
    token = req.service.tokens.by_accessor(accessor, req.service.clock.now())
    if token is None:
        raise user_error(multierror_text("invalid accessor"))
    return _answer(req, token.id)


_PATHS = {"paths": Field(COMMA_STRING_SLICE), "path": Field(COMMA_STRING_SLICE)}

CAPABILITIES_PATHS = [
    Path("capabilities-self", {**_PATHS, "token": Field(STRING)}, {"update": _self}),
    Path("capabilities", {**_PATHS, "token": Field(STRING)}, {"update": _of_token}),
    Path("capabilities-accessor", {**_PATHS, "accessor": Field(STRING)}, {"update": _of_accessor}),
]
