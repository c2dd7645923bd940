"""ACL tokens as the auth-method endpoints see them (Nomad's ``structs.ACLToken``, reduced).

Nomad resolves the secret from ``X-Nomad-Token``; an unknown, expired, or (outside its region)
local token is an authentication error, which create/update/read/delete turn into
``403 Permission denied``, like anonymous and client tokens. The list endpoint checks nothing.
Divergence: Nomad only looks up UUID secrets (others are tried as workload-identity JWTs and
fail); the double accepts any registered string, e.g. the default bootstrap secret ``root``.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass

from ..clock import UTC

TOKEN_TYPES = ("management", "client")


@dataclass(frozen=True)
class ACLToken:
    """An ACL token. ``Type`` is ``"management"`` or ``"client"``; ``Global`` tokens are valid in
    every region, local ones only in the local region. Times are aware UTC datetimes; the indexes
    are raft indexes of the region that stored the token. ``Policies`` are policy names and
    ``Roles`` role IDs (None = Go nil, as on management tokens); ``ExpirationTTL`` nanoseconds."""

    AccessorID: str
    SecretID: str
    Name: str
    Type: str
    Global: bool
    CreateTime: datetime.datetime
    ExpirationTime: datetime.datetime | None
    CreateIndex: int
    ModifyIndex: int
    Policies: tuple[str, ...] | None = None
    Roles: tuple[str, ...] | None = None  # linked role IDs (names are read from the roles at answer time)
    ExpirationTTL: int = 0  # nanoseconds; login sets the method's MaxTokenTTL
    Hash: bytes | None = None

    def expired(self, now: datetime.datetime) -> bool:
        """Nomad's ``IsExpired``: an ExpirationTime strictly before ``now``."""
        return self.ExpirationTime is not None and self.ExpirationTime < now


def new_token(tokens: dict[str, ACLToken], secret_id: str | None, type_: str, name: str,
              expiration_time: datetime.datetime | None, global_: bool, accessor_id: str | None,
              now: datetime.datetime, index: int) -> ACLToken:
    """Build a token for ``tokens`` (SecretID -> token); random UUIDs for missing IDs.

    Raises ValueError for an unknown type or a SecretID/AccessorID already in ``tokens``.
    """
    if type_ not in TOKEN_TYPES:
        raise ValueError(f"token type must be 'management' or 'client', got {type_!r}")
    secret = secret_id or str(uuid.uuid4())
    accessor = accessor_id or str(uuid.uuid4())
    if secret in tokens:
        raise ValueError(f"an ACL token with SecretID {secret!r} already exists")
    if any(t.AccessorID == accessor for t in tokens.values()):
        raise ValueError(f"an ACL token with AccessorID {accessor!r} already exists")
    if expiration_time is not None:
        expiration_time = (expiration_time.replace(tzinfo=UTC) if expiration_time.tzinfo is None
                           else expiration_time.astimezone(UTC))
    return ACLToken(accessor, secret, name, type_, bool(global_), now, expiration_time, index, index)


def token_kind(token: ACLToken | None, now: datetime.datetime) -> str:
    """``management``, ``client``, ``expired`` or ``unknown`` (None)."""
    if token is None:
        return "unknown"
    return "expired" if token.expired(now) else token.Type


def allows_management(token: ACLToken | None, region: str, local_region: str, now: datetime.datetime) -> bool:
    """Whether ``token`` is a live management token valid in ``region``."""
    return (token is not None and token.Type == "management" and not token.expired(now)
            and (token.Global or region == local_region))
