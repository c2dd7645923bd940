"""``sys/wrapping/wrap`` and ``sys/wrapping/rewrap`` (OpenBao ``vault/logical_system.go``).

``wrap`` answers its request body as ``data``, so the HTTP layer wraps it; without
``X-Vault-Wrap-TTL`` it is 400 ``endpoint requires response wrapping to be used``. ``rewrap`` moves
a wrapped response behind a new token (same TTL and ``creation_path``) and invalidates the old one;
an unknown token is 400 ``wrapping token is not valid or does not exist``.

:func:`check_wrapping_token` is OpenBao's ``validateWrappingToken``, which the HTTP layer runs for
``sys/wrapping/lookup``, ``rewrap`` and ``unwrap`` before the request's own token is checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..framework.fields import STRING, Field, JsonNumber
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from ..leases import expire_due

if TYPE_CHECKING:  # pragma: no cover
    from ..service import SecretsService

WRAPPING_TOKEN_PATHS = frozenset({"sys/wrapping/lookup", "sys/wrapping/rewrap", "sys/wrapping/unwrap"})


def check_wrapping_token(service: SecretsService, raw: Any, token_id: str | None) -> None:
    """``sys/wrapping/lookup``, ``rewrap`` and ``unwrap`` check the wrapping token before the request's
    token is (``validateWrappingToken``): the body's ``token`` when given, else the request's token.
    403 ``error validating wrapping token: could not decode token in request body`` (not a string),
    ``... empty token in request body``, ``... token is empty`` (neither); 400 ``wrapping token is not
    valid or does not exist`` when it is not a live wrapping token (used, expired, unknown, or an
    ordinary token)."""
    body_token = raw.get("token") if isinstance(raw, dict) else None
    if body_token is not None:
        if not isinstance(body_token, str) or isinstance(body_token, JsonNumber):
            raise LogicalError(403, ["error validating wrapping token: could not decode token in request body"])
        if body_token == "":
            raise LogicalError(403, ["error validating wrapping token: empty token in request body"])
        wrapping = body_token
    else:
        wrapping = token_id or ""
    if not wrapping:
        raise LogicalError(403, ["error validating wrapping token: token is empty"])
    with service.lock:
        expire_due(service)
        valid = wrapping in service.wrapped and service.tokens.lookup(wrapping, service.clock.now()) is not None
    if not valid:
        raise user_error("wrapping token is not valid or does not exist")


def _wrap(req: LogicalRequest) -> LogicalResponse:
    if not any(k.lower() == "x-vault-wrap-ttl" and v for k, v in req.headers.items()):
        raise user_error("endpoint requires response wrapping to be used")
    return LogicalResponse(data=dict(req.raw))


def _rewrap(req: LogicalRequest) -> LogicalResponse:
    token_id = req.data.get("token") or (req.token.id if req.token else "")
    service = req.service
    info = service.wrapping_info(token_id)
    if info is None:
        raise user_error("wrapping token is not valid or does not exist")
    wrapped = service.unwrap(token_id)
    wrap_info = service.wrap(wrapped, info["creation_ttl"], info["creation_path"])
    return LogicalResponse(data=None, wrap_info=wrap_info)


WRAPPING_PATHS = [
    Path("wrapping/wrap", {}, {"update": _wrap}, takes_arbitrary_input=True),
    Path("wrapping/rewrap", {"token": Field(STRING)}, {"update": _rewrap}),
]
