"""ACL policies, roles and the tokens login creates: state and Nomad's RPC rules.

Follows ``nomad/acl_endpoint.go`` (``UpsertPolicies``, ``DeletePolicies``, ``GetPolicy``,
``ListPolicies``, ``UpsertRoles``, ``DeleteRoles``, ``GetRoleByID``/``ByName``, ``ListRoles``,
``ResolveToken``/``GetToken``/``ListTokens`` and ``upsertTokens``). Policies and roles live in the
authoritative region only (no replication lag; docs/divergences.md). Works for a
:class:`~pytest_schedpki.scheduler.state.SchedulerState` under its lock.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import replace

from ..model import SchedulerError
from ..replication import Replica
from ..tokens import ACLToken, new_token
from ..views import QueryResult
from .objects import Policy, Role, policy_hash, role_hash, token_hash, validate_policy, validate_role
from .token_table import put_token
from .tokens import authenticate

PERMISSION_DENIED = "Permission denied"


class ACLObjectStore:
    """Policies (by name), roles (by ID) and their table indexes; tokens stay in the state."""

    def __init__(self, state):
        self.state = state
        self.reset()

    def reset(self) -> None:
        self.policies: dict[str, Policy] = {}
        self.roles: dict[str, Role] = {}
        self.policy_table = self.role_table = self.token_table = 0
        self.one_time: dict = {}  # AccessorID -> one_time.OneTimeToken
        self.bootstrap_index: int | None = None  # the reset index once bootstrapped
        self.reset_file: int | None = None  # what <data_dir>/acl-bootstrap-reset holds
        # the local region's view of the token table (AccessorID -> token) under the replication knobs
        main = self.state._replica
        self.token_replica = Replica(self.state.clock, False)
        self.token_replica.lag, self.token_replica.lag_reads, self.token_replica.paused = (
            main.lag, main.lag_reads, main.paused)

    def dump(self) -> tuple:
        return (dict(self.policies), dict(self.roles), self.policy_table, self.role_table, self.token_table,
                dict(self.one_time), self.bootstrap_index, self.reset_file, self.token_replica.dump())

    def load(self, values: tuple) -> None:
        (policies, roles, self.policy_table, self.role_table, self.token_table, one_time, self.bootstrap_index,
         self.reset_file, replica) = values
        self.token_replica.load(replica)
        self.policies, self.roles, self.one_time = dict(policies), dict(roles), dict(one_time)

    # -- token helpers --------------------------------------------------------------------------------
    def token_policies(self, token: ACLToken | None) -> set[str]:
        """Policy names a client token holds, directly or through its roles."""
        if token is None:
            return set()
        names = set(token.Policies or ())
        for role_id in token.Roles or ():
            role = self.roles.get(role_id)
            if role is not None:
                names.update(role.Policies)
        return names

    # -- policies -------------------------------------------------------------------------------------
    def upsert_policy(self, policy: Policy, secret: str | None = None, check_token: bool = False) -> int:
        """``ACL.UpsertPolicies`` for one policy: 403 unless management (with ``check_token``), then
        ``400 policy 0 invalid: ...``; an existing name is overwritten (CreateIndex kept). Returns
        the raft index."""
        s = self.state
        with s._lock:
            if check_token:
                s._check_rpc_write(secret)
            problem = validate_policy(policy)
            if problem:
                raise SchedulerError(400, f"policy 0 invalid: {problem}")
            s._raft += 1
            policy = replace(policy, Hash=policy_hash(policy))
            old = self.policies.get(policy.Name)
            self.policies[policy.Name] = replace(policy, CreateIndex=old.CreateIndex if old else s._raft,
                                                 ModifyIndex=s._raft)
            self.policy_table = s._raft
            s._cond.notify_all()
            return s._raft

    def delete_policy(self, name: str, secret: str | None = None, check_token: bool = False) -> int:
        """``ACL.DeletePolicies``: an unknown name succeeds too and still moves the policy table's index
        (``DeleteACLPolicies``). Roles keep their links to a deleted policy; it grants nothing. Returns
        the raft index."""
        s = self.state
        with s._lock:
            if check_token:
                s._check_rpc_write(secret)
            s._raft += 1
            self.policies.pop(name, None)
            self.policy_table = s._raft  # DeleteACLPolicies writes the table index whether or not the name existed
            s._cond.notify_all()
            return s._raft

    def query_policy(self, name: str, secret: str | None, min_index: int = 0, wait_ns: int = 0) -> QueryResult:
        """``ACL.GetPolicy``: management, or a token holding the policy (directly or via a role),
        or anyone for ``anonymous``; else 403. Value None when missing (404)."""
        s = self.state
        with s._lock:
            s._check_acl()
            token = authenticate(s, secret)
            if name != "anonymous" and (token is None or token.Type != "management") and \
                    name not in self.token_policies(token):
                raise SchedulerError(403, PERMISSION_DENIED)

        def run() -> QueryResult:
            p = self.policies.get(name)
            return QueryResult(self.policy_table if p is None else p.ModifyIndex, p)
        return s._blocking(run, None, min_index, wait_ns)

    def query_policies(self, secret: str | None, min_index: int = 0, wait_ns: int = 0) -> QueryResult:
        """``ACL.ListPolicies``: management sees all, other tokens their own (sorted by name)."""
        s = self.state
        with s._lock:
            s._check_acl()
            token = authenticate(s, secret)

        def run() -> QueryResult:
            mine = None if token is not None and token.Type == "management" else self.token_policies(token)
            names = [n for n in sorted(self.policies) if mine is None or n in mine]
            return QueryResult(max(1, self.policy_table), [self.policies[n] for n in names])
        return s._blocking(run, None, min_index, wait_ns)

    # -- roles ----------------------------------------------------------------------------------------
    def upsert_role(self, role: Role, secret: str | None = None, check_token: bool = False) -> tuple[int, Role]:
        """``ACL.UpsertRoles`` for one role (``reference §4``): 403, ``400 role 0 invalid: ...``,
        ``400 role with name <n> already exists``, ``400 cannot find role <id>``,
        ``400 cannot find policy <name>``; duplicate policy links dropped. Returns (index, role)."""
        s = self.state
        with s._lock:
            if check_token:
                s._check_rpc_write(secret)
            problem = validate_role(role)
            if problem:
                raise SchedulerError(400, f"role 0 invalid: {problem}")
            by_name = next((r for r in self.roles.values() if r.Name == role.Name), None)
            if not role.ID:
                if by_name is not None:
                    raise SchedulerError(400, f"role with name {role.Name} already exists")
                role = replace(role, ID=str(uuid.uuid4()))
                old = None
            else:
                old = self.roles.get(role.ID)
                if old is None:
                    raise SchedulerError(400, f"cannot find role {role.ID}")
                if by_name is not None and by_name.ID != role.ID:
                    raise SchedulerError(400, f"role with name {role.Name} already exists")
            for name in role.Policies:
                if name not in self.policies:
                    raise SchedulerError(400, f"cannot find policy {name}")
            role = replace(role, Policies=tuple(dict.fromkeys(role.Policies)))
            role = replace(role, Hash=role_hash(role))
            s._raft += 1
            self.roles[role.ID] = replace(role, CreateIndex=old.CreateIndex if old else s._raft, ModifyIndex=s._raft)
            self.role_table = s._raft
            s._cond.notify_all()
            return s._raft, self.roles[role.ID]

    def delete_role(self, role_id: str, secret: str | None = None, check_token: bool = False) -> int:
        """``ACL.DeleteRolesByID``: an unknown ID consumes an index and is ``500 ACL role not found``."""
        s = self.state
        with s._lock:
            if check_token:
                s._check_rpc_write(secret)
            s._raft += 1
            if self.roles.pop(role_id, None) is None:
                raise SchedulerError(500, "ACL role not found")
            self.role_table = s._raft
            s._cond.notify_all()
            return s._raft

    def role_by_name(self, name: str) -> Role | None:
        """The role called ``name`` (what the binder looks up), or None."""
        return next((r for r in self.roles.values() if r.Name == name), None)

    def query_role(self, key: str, by_name: bool, secret: str | None, min_index: int = 0,
                   wait_ns: int = 0) -> QueryResult:
        """``ACL.GetRoleByID``/``GetRoleByName``: management or a token linked to the role (else 403);
        value None when missing (404 ``ACL role not found``)."""
        s = self.state
        with s._lock:
            s._check_acl()
            token = authenticate(s, secret)
            if token is None:  # anonymous: requestACLToken finds no token (ErrTokenNotFound)
                raise SchedulerError(403, "ACL token not found")

        def run() -> QueryResult:
            role = self.role_by_name(key) if by_name else self.roles.get(key)
            return QueryResult(self.role_table if role is None else role.ModifyIndex, role)
        result = s._blocking(run, None, min_index, wait_ns)
        role = result.value
        management = token is not None and token.Type == "management"
        if not management and (token is None or role is None or role.ID not in (token.Roles or ())):
            raise SchedulerError(403, PERMISSION_DENIED)
        return result

    def query_roles(self, secret: str | None, min_index: int = 0, wait_ns: int = 0) -> QueryResult:
        """``ACL.ListRoles``: management sees all, other tokens their own roles (sorted by ID)."""
        s = self.state
        with s._lock:
            s._check_acl()
            token = authenticate(s, secret)

        def run() -> QueryResult:
            mine = None if token is not None and token.Type == "management" else set(token.Roles or ()) if token else set()
            ids = [i for i in sorted(self.roles) if mine is None or i in mine]
            return QueryResult(max(1, self.role_table), [self.roles[i] for i in ids])
        return s._blocking(run, None, min_index, wait_ns)

    def role_names(self) -> dict[str, str]:
        return {r.ID: r.Name for r in self.roles.values()}

    # -- tokens ---------------------------------------------------------------------------------------
    def create_login_token(self, name: str, management: bool, policies: list[str], role_ids: list[str],
                           global_: bool, ttl_ns: int) -> tuple[int, ACLToken]:
        """``ACL.upsertTokens`` for a login: a new token (UUID accessor and secret), CreateTime now,
        ExpirationTime = CreateTime + ``ttl_ns`` exactly; role links de-duplicated. Returns
        (raft index, token)."""
        s = self.state
        with s._lock:
            now = s.clock.now()
            expires = now + datetime.timedelta(microseconds=ttl_ns // 1000) if ttl_ns else None
            s._raft += 1
            token = new_token(s._tokens, None, "management" if management else "client", name, expires, global_,
                              None, now, s._raft)
            token = replace(token, Policies=None if management else tuple(policies),
                            Roles=None if management else tuple(dict.fromkeys(role_ids)), ExpirationTTL=ttl_ns)
            token = replace(token, Hash=token_hash(token))
            put_token(s, token)
            s._cond.notify_all()
            return s._raft, token
