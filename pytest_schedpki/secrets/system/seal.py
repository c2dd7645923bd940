"""``sys/seal`` and ``sys/unseal`` as on a dev server: one unseal key (shares 1, threshold 1).

The key is :attr:`SecretsService.unseal_key` (32 random bytes; ``schedpki serve`` prints it in
base64, as ``bao server -dev`` does). ``PUT sys/seal`` (root-protected) seals: every path but
``sys/health``, ``seal-status``, ``leader``, ``init`` and ``unseal`` then answers 503
``Vault is sealed``. ``PUT sys/unseal`` (no token needed) takes ``key`` in hex or base64, or
``reset: true``, and answers the seal status. ``PUT sys/step-down`` answers 204 (no standby to step
down to; no token needed, sealed or not). Errors (400), in OpenBao's order: no key ->
``'key' must be specified in request body as JSON, or 'reset' set to true``; neither hex nor
base64 -> ``'key' must be a valid hex or base64 string``; shorter than 16 / longer than 33 bytes ->
``invalid key: key is shorter than minimum 16 bytes`` / ``... longer than maximum 33 bytes``; a
wrong key -> ``unable to retrieve stored keys: invalid key: failed to decrypt keys from storage:
cipher: message authentication failed``.
"""

from __future__ import annotations

import base64
import binascii
import hmac

from ..framework.fields import BOOL, STRING, Field
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from ..service import VERSION

WRONG_KEY = ("unable to retrieve stored keys: invalid key: failed to decrypt keys from storage: "
             "cipher: message authentication failed")


def _decode(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        pass
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise user_error("'key' must be a valid hex or base64 string") from None


def _seal(req: LogicalRequest) -> LogicalResponse:
    req.service.sealed = True
    return LogicalResponse(status=204)


def _seal_read(req: LogicalRequest) -> LogicalResponse:
    raise LogicalError(405, [])


def _step_down(req: LogicalRequest) -> LogicalResponse:
    """``handleSysStepDown`` on a dev server, which has no standby to hand over to: 204, whatever the
    token (none, unknown or without policy) and whether sealed or not."""
    return LogicalResponse(status=204)


def _unseal(req: LogicalRequest) -> LogicalResponse:
    service = req.service
    if req.data.get("reset"):
        return seal_status(req)
    text = req.data.get("key")
    if not text:
        raise user_error("'key' must be specified in request body as JSON, or 'reset' set to true")
    key = _decode(text)
    if len(key) < 16:
        raise user_error("invalid key: key is shorter than minimum 16 bytes")
    if len(key) > 33:
        raise user_error("invalid key: key is longer than maximum 33 bytes")
    if service.sealed:
        if not hmac.compare_digest(key, service.unseal_key):
            raise user_error(WRONG_KEY)
        service.sealed = False
    return seal_status(req)


SEAL_PATHS = [
    Path("seal", {}, {"update": _seal, "read": _seal_read}, sudo=True),
    Path("unseal", {"key": Field(STRING), "reset": Field(BOOL), "migrate": Field(BOOL)}, {"update": _unseal},
         unauthenticated=True),
    Path("step-down", {}, {"update": _step_down, "read": _seal_read, "delete": _seal_read}, unauthenticated=True),
]

#: paths a sealed server still answers (relative to /v1/)
SERVED_WHILE_SEALED = ("sys/health", "sys/seal-status", "sys/leader", "sys/init", "sys/unseal", "sys/step-down")


def seal_status(req: LogicalRequest) -> LogicalResponse:
    service = req.service
    body = {
        "type": "shamir", "initialized": True, "sealed": service.sealed, "t": 1, "n": 1, "progress": 0,
        "nonce": "", "recovery_seal": False, "version": VERSION, "commit_date": "2026-10-26T20:32:27Z",
        "migration": False, "storage_type": "inmem",
    }
    if not service.sealed:  # the cluster identity is known only while unsealed
        body.update(cluster_name=service.cluster_name, cluster_id=service.cluster_id)
    return LogicalResponse(data=body, bare=True)
