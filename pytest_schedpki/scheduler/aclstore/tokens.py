"""ACL token writes and reads as Nomad's RPC layer decides them (``nomad/acl_endpoint.go``:
``UpsertTokens``/``upsertTokens``, ``DeleteTokens``, ``GetToken``, ``ListTokens``, ``WhoAmI``;
``nomad/structs/acl.go``: ``ACLToken.Canonicalize``, ``Validate``, ``SetHash``;
``nomad/state/state_store.go``: ``UpsertACLTokens``, ``DeleteACLTokens``, ``fixTokenRoleLinks``).

Every function works on a :class:`~pytest_schedpki.scheduler.state.SchedulerState` and takes its
lock. Errors are :class:`~..model.SchedulerError` with Nomad's status and text:

* ACLs off: ``400 ACL support disabled``; writes without a leader (single region): ``500 No cluster leader``;
* writes, list: an unknown or expired token ``403 Permission denied``, a client token likewise;
* read by accessor and ``token/self``: an unknown token ``403 Permission denied``, an expired one
  ``500 ACL token expired`` (``GetToken``/``WhoAmI`` return ``Authenticate``'s error as is, and the
  agent maps only ``Permission denied``/``ACL token not found`` to 403);
* upsert: ``400 cannot find token <accessor>``, ``400 token 0 invalid: <multierror>``,
  ``400 cannot find role <id or name>``; delete: ``400 Cannot delete nonexistent tokens: <accessor>``.

Tokens are stored with their role links as IDs (``upsertTokens`` drops the names); a read by
accessor or secret shows each live role's current name and leaves out deleted roles, the list
shows the stored links (``Name`` ``""``, deleted roles kept), as Nomad's list iterates the raw table.
"""

from __future__ import annotations

import datetime
import re
import uuid
from dataclasses import dataclass, replace

from ...golang.duration import format_duration
from ..model import SchedulerError, multierror_text
from ..tokens import ACLToken
from ..views import QueryResult
from .objects import token_hash
from .token_table import drop_token, put_token, token_view

PERMISSION_DENIED = "Permission denied"
TOKEN_EXPIRED = "ACL token expired"
MAX_TOKEN_NAME_LENGTH = 256
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_uuid(text: str) -> bool:
    """Nomad's ``helper.IsUUID``: 36 characters, hex groups 8-4-4-4-12 (either case)."""
    return len(text) == 36 and _UUID.fullmatch(text) is not None


@dataclass
class TokenRequest:
    """An ``ACLToken`` as a write request carries it (decoded body). Times are aware UTC datetimes or
    None (Go's zero ``CreateTime`` / nil ``ExpirationTime``); ``ExpirationTTL`` nanoseconds; ``Roles``
    links ``{"ID", "Name"}``; ``Policies`` None when absent."""

    AccessorID: str = ""
    SecretID: str = ""
    Name: str = ""
    Type: str = ""
    Policies: list | None = None
    Roles: list | None = None
    Global: bool = False
    CreateTime: datetime.datetime | None = None
    ExpirationTime: datetime.datetime | None = None
    ExpirationTTL: int = 0


def _ns(delta: datetime.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def _after_ttl(start: datetime.datetime, ttl_ns: int) -> datetime.datetime:
    return start + datetime.timedelta(microseconds=ttl_ns // 1_000)


def canonicalize(t: TokenRequest, now: datetime.datetime) -> None:
    """``ACLToken.Canonicalize``: a new token gets both IDs and ``CreateTime``; an uploaded one
    (IDs given, no CreateTime) gets ``CreateTime``; either derives ``ExpirationTime`` from the TTL."""
    if not t.AccessorID:
        t.AccessorID, t.SecretID, t.CreateTime = str(uuid.uuid4()), str(uuid.uuid4()), now
    elif t.CreateTime is not None:
        return
    else:
        t.CreateTime = now
    if t.ExpirationTime is None and t.ExpirationTTL:
        t.ExpirationTime = _after_ttl(t.CreateTime, t.ExpirationTTL)


def validate(t: TokenRequest, min_ttl: int, max_ttl: int, existing: ACLToken | None) -> str | None:
    """``ACLToken.Validate`` (TTL bounds in ns): the multierror text, or None."""
    errors = []
    if len(t.Name.encode("utf-8")) > MAX_TOKEN_NAME_LENGTH:
        errors.append("token name too long")
    if t.Type == "client":
        if not t.Policies and not t.Roles:
            errors.append("client token missing policies or roles")
    elif t.Type == "management":
        if t.Policies or t.Roles:
            errors.append("management token cannot be associated with policies or roles")
    else:
        errors.append("token type must be client or management")
    if existing is None:
        if t.ExpirationTTL < 0:
            errors.append(f"token expiration TTL '{format_duration(t.ExpirationTTL)}' should not be negative")
        if t.ExpirationTime is not None:
            created = t.CreateTime or t.ExpirationTime
            if created > t.ExpirationTime:
                errors.append("expiration time cannot be before create time")
            expires_in = _ns(t.ExpirationTime - created)
            if expires_in > max_ttl:
                errors.append(f"expiration time cannot be more than {format_duration(max_ttl)} in the future "
                              f"(was {format_duration(expires_in)})")
            elif expires_in < min_ttl:
                errors.append(f"expiration time cannot be less than {format_duration(min_ttl)} in the future "
                              f"(was {format_duration(expires_in)})")
    else:
        if existing.Global != t.Global:
            errors.append("cannot toggle global mode")
        if existing.ExpirationTTL != t.ExpirationTTL:
            errors.append("cannot update expiration TTL")
        if t.ExpirationTime is not None and existing.ExpirationTime != t.ExpirationTime:
            errors.append("cannot update expiration time")
    return multierror_text(errors) if errors else None


# -- authentication -------------------------------------------------------------------------------
def authenticate(state, secret: str | None, expired_error: bool = False) -> ACLToken | None:
    """``Authenticate``: the live token for ``secret`` (None = anonymous). An unknown secret is
    ``403 Permission denied``; an expired one too, or with ``expired_error`` (``GetToken``,
    ``WhoAmI``) ``500 ACL token expired``."""
    if not secret:
        return None
    token = state._tokens.get(secret)
    if token is None:
        raise SchedulerError(403, PERMISSION_DENIED)
    if token.expired(state.clock.now()):
        raise SchedulerError(500, TOKEN_EXPIRED) if expired_error else SchedulerError(403, PERMISSION_DENIED)
    return token


def require_management(state, secret: str | None) -> ACLToken:
    """ACLs on, then a live management token (``IsManagement``), else the errors above."""
    state._check_acl()
    token = authenticate(state, secret)
    if token is None or token.Type != "management":
        raise SchedulerError(403, PERMISSION_DENIED)
    return token


def by_accessor(state, accessor: str) -> ACLToken | None:
    """The stored token with this AccessorID, or None."""
    return next((t for t in state._tokens.values() if t.AccessorID == accessor), None)


def live_roles(state, token: ACLToken) -> ACLToken:
    """``fixTokenRoleLinks``: the token as a read by accessor or secret shows it (deleted roles left out)."""
    if not token.Roles:
        return token
    kept = tuple(r for r in token.Roles if r in state.acl.roles)
    return token if kept == token.Roles else replace(token, Roles=kept or None)


# -- writes ---------------------------------------------------------------------------------------
def _resolve_role_links(state, links: list) -> tuple[str, ...] | None:
    ids: list[str] = []
    for link in links:
        role_id, name = link.get("ID", ""), link.get("Name", "")
        role = state.acl.roles.get(role_id) if role_id else state.acl.role_by_name(name)
        if role is None:
            raise SchedulerError(400, f"cannot find role {role_id or name}")
        if role.ID not in ids:
            ids.append(role.ID)
    return tuple(ids) or None


def upsert_token(state, request: TokenRequest, secret: str | None) -> tuple[int, ACLToken]:
    """``ACL.UpsertTokens`` for one token; returns (raft index, the stored token as read back)."""
    with state._lock:
        state._check_acl()
        if not state.leader and not state._federated():
            raise SchedulerError(500, "No cluster leader")
        require_management(state, secret)
        existing = None
        if request.AccessorID:
            existing = by_accessor(state, request.AccessorID)
            if existing is None and (not is_uuid(request.AccessorID) or not is_uuid(request.SecretID)
                                     or request.Type == "management"):
                raise SchedulerError(400, f"cannot find token {request.AccessorID}")
        now = state.clock.now()
        canonicalize(request, now)
        problem = validate(request, state._min_ttl, state._max_ttl, existing)
        if problem:
            raise SchedulerError(400, f"token 0 invalid: {problem}")
        roles = _resolve_role_links(state, request.Roles or [])
        if existing is None and request.SecretID in state._tokens:
            raise SchedulerError(500, "upserting token failed: UUID lookup failed: duplicate SecretID")
        local = not request.Global and state._federated()
        index = (state._replica.raft_index if local else state._raft) + 1
        token = ACLToken(
            AccessorID=request.AccessorID,
            SecretID=existing.SecretID if existing else request.SecretID,
            Name=request.Name, Type=request.Type, Global=request.Global,
            CreateTime=existing.CreateTime if existing else request.CreateTime,
            ExpirationTime=request.ExpirationTime if request.ExpirationTime is not None or existing is None
            else existing.ExpirationTime,
            CreateIndex=existing.CreateIndex if existing else index, ModifyIndex=index,
            Policies=None if request.Policies is None else tuple(request.Policies),
            Roles=roles, ExpirationTTL=request.ExpirationTTL)
        token = store_token(state, token, local)
        state._cond.notify_all()
        return index, live_roles(state, token)


def store_token(state, token: ACLToken, local: bool) -> ACLToken:
    """The raft apply of one token write (under the lock): hash it (``SetHash``), move the region's
    raft index (the local one for a local token in a federated setup) and the token table's, store it."""
    token = replace(token, Hash=token_hash(token))
    if local:
        state._replica.raft_index = token.ModifyIndex
    else:
        state._raft = token.ModifyIndex
    return put_token(state, token)


def delete_token(state, accessor: str, secret: str | None) -> int:
    """``ACL.DeleteTokens`` for one accessor; returns the raft index."""
    with state._lock:
        state._check_acl()
        if not state.leader and not state._federated():
            raise SchedulerError(500, "No cluster leader")
        require_management(state, secret)
        token = by_accessor(state, accessor)
        if token is None:
            raise SchedulerError(400, f"Cannot delete nonexistent tokens: {accessor}")
        state._raft += 1
        drop_token(state, token, state._raft)
        state._cond.notify_all()
        return state._raft


# -- reads ----------------------------------------------------------------------------------------
def query_token(state, accessor: str, secret: str | None, min_index: int = 0, wait_ns: int = 0) -> QueryResult:
    """``ACL.GetToken``: management reads any token, another token only itself (403 otherwise, and
    403 for a missing token unless management). Value None when missing (404 ``ACL token not found``);
    index the token's ModifyIndex, else the token table's. Answered from the local region's view
    (:func:`.token_table.token_view`: a replication lag delays a new token here, not its use)."""
    with state._lock:
        state._check_acl()
        caller = authenticate(state, secret, expired_error=True)
        management = caller is not None and caller.Type == "management"

    def run() -> QueryResult:
        tokens, table = token_view(state)  # the local region's view (replication knobs)
        found = tokens.get(accessor)
        if found is None:
            if not management:
                raise SchedulerError(403, PERMISSION_DENIED)
            return QueryResult(table, None)
        if not management and found.SecretID != (secret or ""):
            raise SchedulerError(403, PERMISSION_DENIED)
        return QueryResult(found.ModifyIndex, live_roles(state, found))
    return state._blocking(run, None, min_index, wait_ns)


def whoami(state, secret: str | None) -> ACLToken | None:
    """``ACL.WhoAmI``: the caller's token (None = the anonymous token). Unknown: 403; expired: 500."""
    with state._lock:
        token = authenticate(state, secret, expired_error=True)
        return None if token is None else live_roles(state, token)
