"""The scheduler as a Hypothesis rule-based state machine, driven over HTTP against a model.

Rules: create/update auth methods (valid, invalid, default conflicts, no-op updates), deletes of
known and unknown names, writes with a non-management token, reads and lists (local region, so
they see the replicated view), replication pause and sync. Invariants after every step: the raft
index moved by exactly the writes Nomad applies, one default method at most, CreateIndex <=
ModifyIndex <= table index <= raft index, and the replicated view equals the authoritative one
whenever replication is not paused (in particular right after a sync), else the state at the
pause."""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from robust_helpers import RawClient, check_scheduler_reply, robust, seed_scheduler

NAMES = st.sampled_from(["okta", "jwt-default", "m1", "m2", "m3", "Long-" + "x" * 100])
VALID_TTLS = ["1h", "10m", "24h", "90m"]
INVALID_TTLS = ["1s", "48h"]  # outside Nomad's default token TTL bounds [1m, 24h]


def _body(name: str, kind: str, default: bool, ttl: str, audience: str) -> dict:
    config = ({"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "client", "BoundAudiences": [audience],
               "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"]} if kind == "OIDC" else
              {"JWKSURL": "https://idp.example.com/jwks", "BoundAudiences": [audience]})
    return {"Name": name, "Type": kind, "TokenLocality": "local" if kind == "OIDC" else "global", "MaxTokenTTL": ttl,
            "Default": default, "Config": config}


class SchedulerMachine(RuleBasedStateMachine):
    double = None  # set by the test

    def __init__(self):
        super().__init__()
        self.double.reset()
        self.client = RawClient(self.double.scheduler_url)
        view = self.double.scheduler.authoritative_view()
        self.index = view.raft_index
        self.methods = {n: {"default": m.Default, "modify": m.ModifyIndex, "create": m.CreateIndex, "body": None}
                        for n, m in view.methods.items()}
        self.paused_at: dict | None = None  # the methods visible locally while replication is paused

    def teardown(self):
        self.client.close()

    # -- helpers -------------------------------------------------------------------------------
    def send(self, method: str, path: str, body: dict | None = None, token: str = "root"):
        reply = self.client.request(method, path, {"X-Nomad-Token": token},
                                    json.dumps(body).encode() if body is not None else None)
        check_scheduler_reply(reply, method, f"{method} {path} {body}")
        errors = self.double.pop_handler_errors()
        assert not errors, "\n".join(map(str, errors))
        return reply

    def visible(self) -> dict:
        return self.paused_at if self.paused_at is not None else self.methods

    # -- rules ---------------------------------------------------------------------------------
    @rule(name=NAMES, kind=st.sampled_from(["OIDC", "JWT"]), default=st.booleans(),
          ttl=st.sampled_from(VALID_TTLS + INVALID_TTLS), audience=st.sampled_from(["a", "b"]),
          on_named_path=st.booleans())
    def upsert(self, name, kind, default, ttl, audience, on_named_path):
        body = _body(name, kind, default, ttl, audience)
        reply = self.send("PUT", "/v1/acl/auth-method/" + name if on_named_path else "/v1/acl/auth-method", body)
        other_default = next((n for n, m in sorted(self.methods.items()) if m["default"] and n != name), None)
        if ttl in INVALID_TTLS:
            assert reply.status == 400 and reply.text().startswith("auth method 0 invalid:"), reply.text()
            return
        if default and other_default:
            assert (reply.status, reply.text()) == (400, f"default method already exists: {other_default}")
            return
        assert reply.status == 200, reply.text()
        self.index += 1
        assert reply.headers["x-nomad-index"] == str(self.index)
        stored = json.loads(reply.body)
        previous = self.methods.get(name)
        if previous is None:
            assert stored["CreateIndex"] == stored["ModifyIndex"] == self.index
            self.methods[name] = {"default": default, "create": self.index, "modify": self.index, "body": body}
        else:
            unchanged = previous["body"] == body
            assert stored["CreateIndex"] == previous["create"]
            assert stored["ModifyIndex"] == (previous["modify"] if unchanged else self.index), (previous, stored)
            self.methods[name] = {"default": default, "create": previous["create"],
                                  "modify": stored["ModifyIndex"], "body": body}
        assert stored["Default"] is default and stored["Name"] == name

    @rule(name=NAMES)
    def delete(self, name):
        reply = self.send("DELETE", "/v1/acl/auth-method/" + name)
        self.index += 1  # Nomad applies the delete raft entry even for an unknown name
        if name in self.methods:
            assert reply.status == 200 and reply.headers["x-nomad-index"] == str(self.index), reply.text()
            del self.methods[name]
        else:
            assert (reply.status, reply.text()) == (500, "ACL auth method not found")

    @rule(name=NAMES, token=st.sampled_from(["client-secret", "bogus", ""]), delete=st.booleans())
    def write_without_management_token(self, name, token, delete):
        if delete:
            reply = self.send("DELETE", "/v1/acl/auth-method/" + name, token=token)
        else:
            reply = self.send("PUT", "/v1/acl/auth-method", _body(name, "JWT", False, "1h", "a"), token=token)
        assert (reply.status, reply.text()) == (403, "Permission denied")

    @rule(name=NAMES)
    def read(self, name):
        reply = self.send("GET", "/v1/acl/auth-method/" + name)
        expected = self.visible().get(name)
        if expected is None:
            assert (reply.status, reply.text()) == (404, "ACL auth-method not found")
        else:
            assert reply.status == 200 and json.loads(reply.body)["ModifyIndex"] == expected["modify"]
            assert reply.headers["x-nomad-index"] == str(expected["modify"])

    @rule()
    def list_methods(self):
        reply = self.send("GET", "/v1/acl/auth-methods")
        assert reply.status == 200
        stubs = json.loads(reply.body)
        assert [s["Name"] for s in stubs] == sorted(self.visible(), key=lambda n: n.encode())
        assert [s["Default"] for s in stubs] == [self.visible()[s["Name"]]["default"] for s in stubs]

    @precondition(lambda self: self.paused_at is None)
    @rule()
    def pause(self):
        self.double.scheduler.pause_replication()
        self.paused_at = {n: dict(m) for n, m in self.methods.items()}

    @rule()
    def sync(self):
        self.double.scheduler.sync()
        self.paused_at = None
        auth, local = self.double.scheduler.authoritative_view(), self.double.scheduler.replicated_view()
        assert dict(local.methods) == dict(auth.methods) and local.pending == 0

    # -- invariants ------------------------------------------------------------------------------
    @invariant()
    def indexes_move_only_with_applied_writes(self):
        view = self.double.scheduler.authoritative_view()
        assert view.raft_index == self.index == self.double.scheduler.last_index
        for method in view.methods.values():
            assert method.CreateIndex <= method.ModifyIndex <= view.table_index <= view.raft_index

    @invariant()
    def one_default_method_at_most(self):
        view = self.double.scheduler.authoritative_view()
        assert sum(1 for m in view.methods.values() if m.Default) <= 1
        assert set(view.methods) == set(self.methods)

    @invariant()
    def replicated_view_converges(self):
        auth, local = self.double.scheduler.authoritative_view(), self.double.scheduler.replicated_view()
        if self.paused_at is None:
            assert dict(local.methods) == dict(auth.methods) and local.pending == 0
        else:
            assert {n: m.ModifyIndex for n, m in local.methods.items()} == {
                n: m["modify"] for n, m in self.paused_at.items()}


PARTS = 4  # 200 runs as 4 tests of 50: progress shows on long runs and xdist spreads them


@pytest.mark.parametrize("part", range(PARTS))
def test_scheduler_state_machine(double, part):
    double.scheduler.restore(None)  # each part starts from an empty double and its own baseline
    double.secrets.restore(None)
    seed_scheduler(double)
    SchedulerMachine.double = double
    run_state_machine_as_test(SchedulerMachine, settings=robust(200 // PARTS, stateful_step_count=30))
