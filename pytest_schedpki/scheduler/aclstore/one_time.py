"""One-time tokens (``nomad/acl_endpoint.go`` ``UpsertOneTimeToken``, ``ExchangeOneTimeToken``,
``ExpireOneTimeTokens``; ``nomad/state/state_store.go`` and the ``one_time_token`` table).

* upsert: any live ACL token asks for one for itself; it lives 10 minutes on the double's clock
  (``ExpiresAt``), one per accessor (a second request replaces the first: the table's ``id`` index
  on AccessorID is unique). No token, or an unknown one: ``403 Permission denied``; an expired one
  is still found (``ACLTokenBySecretID`` does not check expiry) and gets a one-time token.
* exchange: the one-time secret for the ACL token that asked for it (with its SecretID), then the
  one-time token is deleted. Unknown, expired or already used, or the ACL token since deleted:
  ``403 Permission denied``. No token is needed on the request.
* ACLs off: ``400 ACL support disabled``. Expired one-time tokens are dropped when the next one is
  written (Nomad's garbage collector does it on a timer), so memory stays bounded by the tokens.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass

from ..model import SchedulerError
from .tokens import PERMISSION_DENIED, by_accessor, live_roles

LIFETIME = datetime.timedelta(minutes=10)


@dataclass(frozen=True)
class OneTimeToken:
    """A one-time token (``structs.OneTimeToken``); ``ExpiresAt`` an aware UTC datetime."""

    OneTimeSecretID: str
    AccessorID: str
    ExpiresAt: datetime.datetime
    CreateIndex: int
    ModifyIndex: int


def upsert_one_time_token(state, secret: str | None) -> tuple[int, OneTimeToken]:
    """``ACL.UpsertOneTimeToken`` for the caller's token; returns (raft index, one-time token)."""
    with state._lock:
        state._check_acl()
        if not state.leader and not state._federated():
            raise SchedulerError(500, "No cluster leader")
        token = state._tokens.get(secret) if secret else None
        if token is None:
            raise SchedulerError(403, PERMISSION_DENIED)
        now = state.clock.now()
        table = state.acl.one_time
        for key in [k for k, v in table.items() if v.ExpiresAt < now]:
            del table[key]
        state._raft += 1
        ott = OneTimeToken(str(uuid.uuid4()), token.AccessorID, now + LIFETIME, state._raft, state._raft)
        table[token.AccessorID] = ott
        state._cond.notify_all()
        return state._raft, ott


def exchange_one_time_token(state, one_time_secret: str):
    """``ACL.ExchangeOneTimeToken``: returns (raft index, the ACL token); the one-time token is gone."""
    with state._lock:
        state._check_acl()
        if not state.leader and not state._federated():
            raise SchedulerError(500, "No cluster leader")
        table = state.acl.one_time
        ott = next((o for o in table.values() if o.OneTimeSecretID == one_time_secret), None)
        if ott is None or ott.ExpiresAt < state.clock.now():
            raise SchedulerError(403, PERMISSION_DENIED)
        token = by_accessor(state, ott.AccessorID)
        if token is None:
            raise SchedulerError(403, PERMISSION_DENIED)
        state._raft += 1
        del table[ott.AccessorID]
        state._cond.notify_all()
        return state._raft, live_roles(state, token)
