"""Binding-rule state: the authoritative ``acl_binding_rules`` table and the local region's replica.

Works for a :class:`~pytest_schedpki.scheduler.state.SchedulerState` (its lock, raft index, token
checks, blocking queries and replication knobs): every public method takes the state's lock.
Follows ``nomad/acl_endpoint.go`` ``UpsertBindingRules``/``DeleteBindingRules``/
``GetBindingRule``/``ListBindingRules`` and ``nomad/state/state_store_acl_binding_rules.go``.
"""

from __future__ import annotations

import datetime
import secrets
from dataclasses import replace

from ..model import SchedulerError
from ..replication import Replica
from ..views import QueryResult, WriteResult, stamp_write
from .rules import BindingRule, canonicalize, time_of, validate, with_hash

CACHE_TTL = datetime.timedelta(minutes=6)  # an OIDC request's life in the server's cache
CACHE_MAX = 1000


class BindingRuleStore:
    """The binding rules of one scheduler state (see the module doc)."""

    FIELDS = ("rules", "table")

    def __init__(self, state):
        self.state = state
        self.reset()

    def reset(self) -> None:
        """Empty table; a fresh replica sharing the auth methods replica's local raft index."""
        s = self.state
        self.rules: dict[str, BindingRule] = {}
        self.table = 0
        main = s._replica
        self.replica = Replica(s.clock, main.federated, raft_owner=main)
        self.replica.lag, self.replica.lag_reads, self.replica.paused = main.lag, main.lag_reads, main.paused

    def dump(self) -> tuple:
        return dict(self.rules), self.table, self.replica.dump()

    def load(self, values: tuple) -> None:
        rules, self.table, replica = values
        self.rules = dict(rules)
        self.replica.raft_owner = self.state._replica
        self.replica.load(replica)

    # -- writes ---------------------------------------------------------------------------------------
    def upsert(self, request: BindingRule, secret: str | None = None, check_token: bool = False) -> WriteResult:
        """``ACL.UpsertBindingRules`` for one rule (``reference §3.2``): with ``check_token`` the RPC
        checks (400 ACLs off, 500 no leader, 403 not management); an ID not stored gives
        ``400 cannot find binding rule <id>``; BindName, BindType and AuthMethod are merged from the
        stored rule (Description and Selector are not), a changed AuthMethod is ``400 cannot update
        auth method for binding rule, create a new rule instead``; then Validate (``400 binding rule 0 invalid: ...``),
        the auth method (``400 ACL auth method <name> not found``), canonicalize, hash and the raft
        apply (a rule with an unchanged Hash keeps its indexes and times). ``WriteResult.method`` is
        the stored rule."""
        s = self.state
        with s._lock:
            if check_token:
                s._check_rpc_write(secret)
            existing = None
            if request.ID:
                existing = self.rules.get(request.ID)
                if existing is None:
                    raise SchedulerError(400, f"cannot find binding rule {request.ID}")
                request = replace(request, CreateTime=existing.CreateTime,
                                  BindName=request.BindName or existing.BindName,
                                  BindType=request.BindType or existing.BindType,
                                  AuthMethod=request.AuthMethod or existing.AuthMethod)
                if request.AuthMethod != existing.AuthMethod:
                    raise SchedulerError(400, "cannot update auth method for binding rule, create a new rule instead")
            problem = validate(request)
            if problem:
                raise SchedulerError(400, f"binding rule 0 invalid: {problem}")
            if request.AuthMethod not in s._methods:
                raise SchedulerError(400, f"ACL auth method {request.AuthMethod} not found")
            rule = with_hash(canonicalize(request, time_of(s.clock.now())))
            s._raft += 1
            index = s._raft
            stamped = stamp_write(rule, existing, index)
            if stamped is not None:
                self.rules[rule.ID] = stamped
                self.table = index
                self.replica.commit(rule.ID, stamped, index)
            s._cond.notify_all()
            return WriteResult(index, self.rules[rule.ID])

    def delete(self, rule_id: str, secret: str | None = None, check_token: bool = False) -> int:
        """``ACL.DeleteBindingRules`` for one ID; returns the raft index. An unknown ID consumes an
        index and raises ``500 ACL binding rule not found``."""
        s = self.state
        with s._lock:
            if check_token:
                s._check_rpc_write(secret)
            s._raft += 1
            if rule_id not in self.rules:
                raise SchedulerError(500, "ACL binding rule not found")
            del self.rules[rule_id]
            self.table = s._raft
            self.replica.commit(rule_id, None, s._raft)
            s._cond.notify_all()
            return s._raft

    # -- reads ----------------------------------------------------------------------------------------
    def view(self, region: str | None) -> tuple[dict[str, BindingRule], int]:
        """``region``'s rules and table index (local: the replica; authoritative: the table)."""
        s = self.state
        if not region or region == s._local:
            if self.replica.advance():  # a lagged write became visible: wake the parked queries
                s._cond.notify_all()
            return self.replica.methods, self.replica.table_index
        if region == s._authoritative:
            return self.rules, self.table
        raise SchedulerError(500, "No path to region")

    def for_method(self, method: str, region: str | None = None) -> list[BindingRule]:
        """The rules of auth method ``method`` in ascending ID order (what login binds with)."""
        with self.state._lock:
            rules = self.view(region)[0]
            return [rules[i] for i in sorted(rules) if rules[i].AuthMethod == method]

    def query_list(self, region: str | None = None, secret: str | None = None, min_index: int = 0,
                   wait_ns: int = 0, stale: bool = False) -> QueryResult:
        """``ACL.ListBindingRules``: management only (403), index max(1, table index), the rules in
        ascending ID order; blocking like the auth-method list."""
        s = self.state

        def run() -> QueryResult:
            rules, table = self.view(region)
            return QueryResult(max(1, table), [rules[i] for i in sorted(rules)])
        with s._lock:
            s._route_read(region, stale)
            s._authorize_management(secret, region or s._local)
        return s._blocking(run, region, min_index, wait_ns)

    def query_get(self, rule_id: str, region: str | None = None, secret: str | None = None, min_index: int = 0,
                  wait_ns: int = 0, stale: bool = False) -> QueryResult:
        """``ACL.GetBindingRule``: management only (403); index = the rule's ModifyIndex, or the table
        index when missing (value None: HTTP answers ``404 ACL binding rule not found``)."""
        s = self.state

        def run() -> QueryResult:
            rules, table = self.view(region)
            rule = rules.get(rule_id)
            return QueryResult(table if rule is None else rule.ModifyIndex, rule)
        with s._lock:
            s._route_read(region, stale)
            s._authorize_management(secret, region or s._local)
        return s._blocking(run, region, min_index, wait_ns)


class OIDCRequests:
    """The server's OIDC request cache (ClientNonce -> request), part of the scheduler state."""

    def __init__(self, clock):
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        """Forget every cached request."""
        self.entries: dict[str, dict] = {}

    def dump(self) -> dict:
        """A copy of the cache (ClientNonce -> entry dict), for a snapshot."""
        return dict(self.entries)

    def load(self, entries: dict) -> None:
        """Restore a cache :meth:`dump` gave."""
        self.entries = dict(entries)

    def get_or_create(self, nonce: str, method, redirect: str) -> dict:
        """The cached request for ``nonce`` (entries older than ``CACHE_TTL`` dropped first), else a new one
        with its ``state``, ``redirect``, times and PKCE ``verifier`` (empty unless the method enables
        PKCE); raises ``SchedulerError(500, "error storing OIDC request: too many auth requests")`` at
        ``CACHE_MAX`` entries (Nomad's OIDC request cache)."""
        now = self.clock.now()
        self.entries = {k: v for k, v in self.entries.items() if now - v["stored"] < CACHE_TTL}
        if nonce in self.entries:
            return self.entries[nonce]
        if len(self.entries) >= CACHE_MAX:
            raise SchedulerError(500, "error storing OIDC request: too many auth requests")
        verifier = secrets.token_urlsafe(48)[:64] if method.Config.OIDCEnablePKCE else ""
        entry = {"state": "st_" + secrets.token_urlsafe(15), "redirect": redirect, "created": now, "stored": now,
                 "verifier": verifier}
        self.entries[nonce] = entry
        return entry
