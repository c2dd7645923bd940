"""``sys/wrapping/wrap`` and ``sys/wrapping/rewrap`` (OpenBao ``vault/logical_system.go``).

``wrap`` answers its request body as ``data``, so the HTTP layer wraps it; without
``X-Vault-Wrap-TTL`` it is 400 ``endpoint requires response wrapping to be used``. ``rewrap`` moves
a wrapped response behind a new token (same TTL and ``creation_path``) and invalidates the old one;
an unknown token is 400 ``wrapping token is not valid or does not exist``.
"""

from __future__ import annotations

from ..framework.fields import STRING, Field
from ..framework.logical import LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path


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
