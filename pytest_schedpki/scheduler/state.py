"""The scheduler's state: authoritative auth methods, ACL tokens, and the local region's view; the SSO
tables hang off it (``binding_rules``, ``acl`` for policies and roles, ``idp``, ``oidc``: see :mod:`.sso`).

Index model (Nomad's raft, ``reference §9``): one raft index for the authoritative region, shared by
every applied write (bootstrap token = 1, tokens, auth-method upserts and deletes). Every applied
write consumes exactly one index - a no-op upsert and a delete of an unknown name too - while
requests rejected by decoding, auth or validation consume none. The ``acl_auth_methods`` table
index moves only on a real change or a successful delete.

Regions: writes always go to the authoritative region; reads are answered from the local region
(``region``, default = ``authoritative_region``) through a :class:`~.replication.Replica` whose
lag knobs (time, reads, pause) decide when writes become visible there. ``?region=`` may name the
authoritative region (the read is then answered there); any other name is ``No path to region``.

Blocking queries wait on a condition with a **real** deadline (``clock.real_monotonic``), wake on
every write and, on a live clock, when the next pending write becomes visible; a frozen or manual
clock never makes them spin.

Thread-safe: every public method takes the state's lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType

from ..golang.duration import to_nanoseconds
from ..golang.time import GoTime
from .aclstore.admin import TokenAdmin
from .aclstore.store import ACLObjectStore
from .assertion import client_assertion_error
from .blocking import block_until
from .decode import DecodeError, decode_method
from .encode import python_body
from .model import AuthMethod, SchedulerError, canonicalize, merge, validate, with_hash
from .replication import Replica, ReplicationKnobs
from .sso.idp import IdentityProvider
from .sso.store import BindingRuleStore, OIDCRequests
from .tokens import allows_management
from .views import QueryResult, RegionView, WriteResult, stamp_write

PERMISSION_DENIED = "Permission denied"
NO_LEADER = "No cluster leader"
ACL_DISABLED = "ACL support disabled"


class SchedulerState(TokenAdmin, ReplicationKnobs):
    """Nomad's ACL auth-method state for one double (see the module doc).

    ``clock`` supplies ``now()`` (aware UTC datetimes) and ``mode`` (follow/manual/real);
    ``management_token`` is the bootstrap management token's SecretID; ``token_min_ttl`` and
    ``token_max_ttl`` bound ``MaxTokenTTL`` and token expirations (seconds, ``timedelta`` or Go duration
    text; Nomad's defaults 1m and 24h, both inclusive). ``bootstrap=False`` starts (and resets to) a
    fresh cluster: no management token, ``PUT /v1/acl/bootstrap`` not yet done.
    """

    def __init__(self, clock, management_token: str = "root", authoritative_region: str = "global",
                 region: str | None = None, token_min_ttl=60, token_max_ttl=86_400, bootstrap: bool = True):
        self.clock = clock
        self.management_token = management_token
        self.bootstrapped = bool(bootstrap)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._initial = (authoritative_region, region or authoritative_region,
                         to_nanoseconds(token_min_ttl, "token_min_ttl"), to_nanoseconds(token_max_ttl, "token_max_ttl"))
        self._replica = Replica(clock, False)
        self.binding_rules = BindingRuleStore(self)
        self.acl = ACLObjectStore(self)
        self.idp = IdentityProvider(clock)
        self.oidc = OIDCRequests(clock)
        self.restore(None)

    # -- snapshots ------------------------------------------------------------------------------
    _FIELDS = ("_authoritative", "_local", "_min_ttl", "_max_ttl", "_raft", "_methods", "_table", "_tokens",
               "_leader_lost_at", "_acl_enabled")

    def snapshot(self) -> tuple:
        """An opaque, cheap copy of the whole state (records are immutable and shared)."""
        with self._lock:
            mine = tuple(dict(v) if isinstance(v, dict) else v for v in (getattr(self, f) for f in self._FIELDS))
            sso = (self.binding_rules.dump(), self.acl.dump(), self.idp.dump(), self.oidc.dump())
            return mine, self._replica.dump(), sso

    def restore(self, snapshot: tuple | None) -> None:
        """Return to ``snapshot``; ``None`` = empty state holding only the bootstrap management token
        (raft index 1), the constructor's regions and TTL bounds, a leader, and no replication lag."""
        with self._lock:
            if snapshot is None:
                auth, local, min_ttl, max_ttl = self._initial
                for name, value in zip(self._FIELDS, (auth, local, min_ttl, max_ttl, 0, {}, 0, {}, None, True),
                                       strict=True):
                    setattr(self, name, value)
                self._replica = Replica(self.clock, self._federated())
                self.binding_rules.reset()
                self.acl.reset()
                self.idp.reset()
                self.oidc.reset()
                if self.bootstrapped:  # the ready management token, as if bootstrapped with it (raft index 1)
                    self._add_token_locked(self.management_token, "management", "Bootstrap Token", None, True, None)
                    self.acl.bootstrap_index = self.acl.token_table = 1
            else:
                mine, replica, (rules, acl, idp, oidc) = snapshot
                for name, value in zip(self._FIELDS, mine, strict=True):
                    setattr(self, name, dict(value) if isinstance(value, dict) else value)
                self._replica.load(replica)
                self.binding_rules.load(rules)
                self.acl.load(acl)
                self.idp.load(idp)
                self.oidc.load(oidc)
            self._cond.notify_all()

    # -- configuration --------------------------------------------------------------------------
    @property
    def authoritative_region(self) -> str:
        """The region every write goes to (Nomad's ``authoritative_region``)."""
        return self._authoritative

    @property
    def region(self) -> str:
        """The local region: where HTTP requests arrive and reads are answered."""
        return self._local

    @property
    def known_regions(self) -> frozenset[str]:
        """Regions a ``?region=`` read may name; anything else is ``500 No path to region``."""
        return frozenset((self._authoritative, self._local))

    @property
    def last_index(self) -> int:
        """The authoritative region's latest raft index."""
        return self._raft

    def set_regions(self, authoritative_region: str | None = None, region: str | None = None) -> None:
        """Rename the authoritative and/or local region (None keeps a value).

        Pending writes are applied first. A local region that differs from the authoritative one
        starts as a fresh replica: one replication pass copies every method with local index 1.
        """
        with self._lock:
            self._replica.advance(force=True)
            self._authoritative = authoritative_region or self._authoritative
            self._local = region or self._local
            self.binding_rules.replica.advance(force=True)
            self._replica.rebuild(self._methods, self._table, self._federated())
            self.binding_rules.replica.rebuild(self.binding_rules.rules, self.binding_rules.table, self._federated())
            self.acl.token_replica.advance(force=True)  # a mirror of the token table in either setup
            self.acl.token_replica.rebuild({t.AccessorID: t for t in self._tokens.values()}, self.acl.token_table,
                                           False)
            self._cond.notify_all()

    def set_token_ttl_bounds(self, min_ttl=None, max_ttl=None) -> None:
        """ACL ``token_min_expiration_ttl``/``token_max_expiration_ttl`` (seconds, timedelta or Go text)."""
        with self._lock:
            if min_ttl is not None:
                self._min_ttl = to_nanoseconds(min_ttl, "min_ttl")
            if max_ttl is not None:
                self._max_ttl = to_nanoseconds(max_ttl, "max_ttl")

    def set_leader(self, leader: bool) -> None:
        """Give the local region a leader or take it away.

        Without one: reads without ``?stale`` and writes in a single-region setup answer
        ``500 No cluster leader``; ``?stale`` reads are served with ``X-Nomad-KnownLeader: false``
        and ``X-Nomad-LastContact`` = milliseconds since the loss; replication stops. In a
        federated setup writes still reach the authoritative region.
        """
        with self._lock:
            if leader:
                self._leader_lost_at = None
            elif self._leader_lost_at is None:
                self._leader_lost_at = self.clock.now()
            for replica in self._replicas():
                replica.halted = not leader
                replica.advance()
            self._cond.notify_all()

    @property
    def leader(self) -> bool:
        """Whether the local region has a leader (see :meth:`set_leader`)."""
        return self._leader_lost_at is None

    def set_acl_enabled(self, enabled: bool) -> None:
        """Turn the agent's ACL system on (the default) or off. Off, every auth-method endpoint
        answers ``400 ACL support disabled`` (after body decoding for writes); the Python API
        still works."""
        with self._lock:
            self._acl_enabled = bool(enabled)

    def _check_acl(self) -> None:
        if not self._acl_enabled:
            raise SchedulerError(400, ACL_DISABLED)

    def _federated(self) -> bool:
        return self._local != self._authoritative

    def _authorize_management(self, secret: str | None, region: str) -> None:
        """403 ``Permission denied`` unless ``secret`` is a live management token valid in ``region``."""
        token = self._tokens.get(secret) if secret else None
        if not allows_management(token, region, self._local, self.clock.now()):
            raise SchedulerError(403, PERMISSION_DENIED)

    def _check_rpc_write(self, secret: str | None) -> None:
        """What a write RPC checks before touching state: ACLs on (400), a leader to forward to in a
        single region (500 ``No cluster leader``), a management token for the authoritative region."""
        self._check_acl()
        if not self.leader and not self._federated():
            raise SchedulerError(500, NO_LEADER)
        self._authorize_management(secret, self._authoritative)

    # -- writes (authoritative region) ----------------------------------------------------------
    def upsert_auth_method(self, method: Mapping | AuthMethod) -> AuthMethod:
        """Create or update an auth method with the HTTP rules; returns the stored (unredacted) record.

        ``method`` is a mapping with Nomad's field names exactly as an HTTP body (e.g.
        ``{"Name": "okta", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
        "Config": {...}}``; MaxTokenTTL a Go duration string or nanoseconds) or an
        :class:`AuthMethod`. No token is needed. Raises :class:`SchedulerError` with the upstream
        status and text (400 decode, validation and default-conflict errors).
        """
        try:
            request = decode_method(python_body(method))
        except DecodeError as exc:
            raise SchedulerError(400, str(exc)) from None
        return self.apply_upsert(request).method

    def apply_upsert(self, request: AuthMethod, secret: str | None = None, check_token: bool = False) -> WriteResult:
        """``ACL.UpsertAuthMethods`` for one decoded request: with ``check_token`` (the HTTP path)
        the RPC checks first (ACLs on, a leader, a management token valid in the authoritative
        region, else 400/500/403), then merge, canonicalize, validate, default uniqueness, client
        assertion, hash, raft apply. Raises SchedulerError."""
        with self._lock:
            if check_token:
                self._check_rpc_write(secret)
            existing = self._methods.get(request.Name)
            now = self.clock.now()
            method = canonicalize(merge(request, existing), GoTime.from_datetime(now))
            problem = validate(method, self._min_ttl, self._max_ttl)
            if problem:
                raise SchedulerError(400, f"auth method 0 invalid: {problem}")
            if method.Default:
                current = next((m for _, m in sorted(self._methods.items()) if m.Default), None)
                if current is not None and current.Name != method.Name:
                    raise SchedulerError(400, f"default method already exists: {current.Name}")
            assertion = method.Config.OIDCClientAssertion
            if assertion is not None and assertion.KeySource:
                err = client_assertion_error(method.Config, now)
                if err:
                    raise SchedulerError(400, f"invalid OIDCClientAssertion: failed to build client_assertion jwt: {err}")
            method = with_hash(method)
            self._raft += 1
            index = self._raft
            stamped = stamp_write(method, existing, index)
            if stamped is not None:
                self._methods[method.Name] = stamped
                self._table = index
                self._replica.commit(method.Name, stamped, index)
            self._cond.notify_all()
            return WriteResult(index, self._methods[request.Name])

    def delete_auth_method(self, name: str, secret: str | None = None, check_token: bool = False) -> int:
        """``ACL.DeleteAuthMethods`` for one name; returns the raft index of the delete.

        Raises SchedulerError(500, ``ACL auth method not found``) for an unknown name - after
        consuming a raft index, as upstream does - and, with ``check_token`` (the HTTP path), the
        RPC checks' 400/500/403 first.
        """
        with self._lock:
            if check_token:
                self._check_rpc_write(secret)
            self._raft += 1
            if name not in self._methods:
                raise SchedulerError(500, "ACL auth method not found")
            del self._methods[name]
            self._table = self._raft
            self._replica.commit(name, None, self._raft)
            self._cond.notify_all()
            return self._raft

    # -- reads ----------------------------------------------------------------------------------
    def get_auth_method(self, name: str, region: str | None = None) -> AuthMethod | None:
        """The stored (unredacted) method as ``region``'s reads see it (default: the local region),
        or None. Raises SchedulerError(500, ``No path to region``) for an unknown region."""
        with self._lock:
            return self._view(region)[0].get(name)

    def list_auth_methods(self, region: str | None = None) -> list[AuthMethod]:
        """``region``'s methods (default: the local region) sorted by Name in byte order.
        Raises SchedulerError(500, ``No path to region``) for an unknown region."""
        with self._lock:
            methods = self._view(region)[0]
            return [methods[n] for n in sorted(methods)]

    def query_list(self, region: str | None = None, min_index: int = 0, wait_ns: int = 0,
                   stale: bool = False) -> QueryResult:
        """``ACL.ListAuthMethods``: index max(1, table index), value the sorted methods. With
        ``min_index`` > 0 it blocks while the index is <= ``min_index``, for ``wait_ns`` (ns; <= 0 or
        above 300s means 300s) plus up to 1/16 jitter. Raises SchedulerError(500) for an unknown
        region or no leader."""
        def run() -> QueryResult:
            methods, table = self._view(region)
            return QueryResult(max(1, table), [methods[n] for n in sorted(methods)])
        with self._lock:
            self._route_read(region, stale)
        return self._blocking(run, region, min_index, wait_ns)

    def query_get(self, name: str, region: str | None = None, secret: str | None = None, min_index: int = 0,
                  wait_ns: int = 0, stale: bool = False) -> QueryResult:
        """``ACL.GetAuthMethod``: index = the method's ModifyIndex (the table index when missing),
        value the method or None. Region and leader errors (500) come first, then the token:
        a management token valid in the target region (else 403). Blocks like :meth:`query_list`."""
        def run() -> QueryResult:
            methods, table = self._view(region)
            method = methods.get(name)
            return QueryResult(table if method is None else method.ModifyIndex, method)
        with self._lock:
            self._route_read(region, stale)
            self._authorize_management(secret, region or self._local)
        return self._blocking(run, region, min_index, wait_ns)

    def _route_read(self, region: str | None, stale: bool) -> None:
        self._check_acl()
        self._view(region)
        local = not region or region == self._local
        if local and not stale and not self.leader:
            raise SchedulerError(500, NO_LEADER)

    def _view(self, region: str | None) -> tuple[dict, int]:
        if not region or region == self._local:
            self._advance_locked()
            return self._replica.methods, self._replica.table_index
        if region == self._authoritative:
            return self._methods, self._table
        raise SchedulerError(500, "No path to region")

    def _blocking(self, run: Callable[[], QueryResult], region, min_index: int, wait_ns: int) -> QueryResult:
        with self._cond:
            result = block_until(self._cond, run, min_index, wait_ns, self._next_visibility_in)
            local = not region or region == self._local
            if local:  # counts for an ``after_reads`` lag: wake the waiters only if a write became visible
                for replica in self._replicas():
                    replica.note_read()
                self._advance_locked()
            if local and not self.leader:
                lost = (self.clock.now() - self._leader_lost_at).total_seconds()
                return replace(result, known_leader=False, last_contact_ms=max(int(lost * 1000), 0))
            return result

    def _advance_locked(self) -> None:
        """Apply the pending writes that became visible in every replicated table (lag expired,
        enough reads) and wake the parked blocking queries only then: a read that changes nothing
        wakes nobody."""
        advanced = False
        for replica in self._replicas():
            if replica.pending:  # Replica.advance() returns False at once without pending writes
                advanced = replica.advance() or advanced
        if advanced:
            self._cond.notify_all()

    def authoritative_view(self) -> RegionView:
        """The authoritative region's methods and indexes (what writes see)."""
        with self._lock:
            return RegionView(self._authoritative, MappingProxyType(dict(self._methods)), self._table, self._raft)

    def replicated_view(self) -> RegionView:
        """The local region's methods and indexes (what reads see), after applying visible writes."""
        with self._lock:
            self._advance_locked()
            r = self._replica
            raft = r.raft_index if self._federated() else self._raft
            return RegionView(self._local, MappingProxyType(dict(r.methods)), r.table_index, raft, len(r.pending))
