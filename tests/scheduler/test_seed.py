"""The ``scheduler:`` seed section: tokens and auth methods, with errors naming the entry."""

import datetime

import pytest
import yaml

from pytest_schedpki.errors import SeedError
from pytest_schedpki.scheduler.seed import apply_scheduler_seed

SEED = """
tokens:
  - secret_id: ops-secret
    type: management
    name: ops
  - type: client
    accessor_id: acc-client
  - secret_id: old
    type: management
    expiration_time: 2001-01-01T00:00:00Z
auth_methods:
  - Name: okta
    Type: OIDC
    TokenLocality: global
    MaxTokenTTL: 1h
    Default: true
    CreateTime: 2020-01-01T00:00:00Z
    Config:
      OIDCDiscoveryURL: https://idp.example.com
      OIDCClientID: nomad
      OIDCClientSecret: s3cr3t
      BoundAudiences: [nomad]
      ClaimMappings: {email: email}
  - name: jwt                      # keys match case-insensitively, as in an HTTP body
    type: JWT
    tokenlocality: local
    maxtokenttl: 30m
    config: {JWKSURL: "https://idp.example.com/jwks"}
"""


def test_seed_creates_tokens_and_methods(sched):
    apply_scheduler_seed(sched.state, yaml.safe_load(SEED), "seed.yaml")
    ops = sched.state.get_token("ops-secret")
    assert (ops.Type, ops.Name, ops.CreateIndex) == ("management", "ops", 2)
    assert sched.state.get_token("old").ExpirationTime == datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)
    okta = sched.get("/v1/acl/auth-method/okta", token="ops-secret").json()
    assert (okta["MaxTokenTTL"], okta["Default"], okta["CreateTime"], okta["ModifyIndex"]) == ("1h0m0s", True, "2020-01-01T00:00:00Z", 5)
    assert [m["Name"] for m in sched.get("/v1/acl/auth-methods").json()] == ["jwt", "okta"]
    assert sched.get("/v1/acl/auth-method/okta", token="old").status_code == 403


@pytest.mark.parametrize("section, entry, problem", [
    ({"auth_methods": [{"Name": "bad_name", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
                        "Config": {"OIDCDiscoveryURL": "u", "OIDCClientID": "c"}}]},
     "scheduler.auth_methods[0]", "auth method 0 invalid: 1 error occurred:\n\t* invalid name 'bad_name'\n\n"),
    ({"auth_methods": [{"Name": "a", "MaxTokenTTL": "soon"}]}, "scheduler.auth_methods[0]",
     'time: invalid duration "soon"'),
    ({"auth_methods": [{"Name": "ok", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
                        "Config": {"JWKSURL": "j"}, "Default": True},
                       {"Name": "second", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
                        "Config": {"JWKSURL": "j"}, "Default": True}]},
     "scheduler.auth_methods[1]", "default method already exists: ok"),
    ({"auth_methods": ["okta"]}, "scheduler.auth_methods[0]", "expected a mapping, got str"),
    ({"auth_methods": {"Name": "x"}}, "scheduler.auth_methods", "expected a list, got dict"),
    ({"tokens": [{"type": "root"}]}, "scheduler.tokens[0]", "token type must be 'management' or 'client', got 'root'"),
    ({"tokens": [{"name": "x"}]}, "scheduler.tokens[0].type", "missing; expected 'management' or 'client'"),
    ({"tokens": [{"type": "client", "secret": "x"}]}, "scheduler.tokens[0]",
     "unknown key(s) secret; expected: accessor_id, expiration_time, global, name, policies, roles, secret_id, type"),
    ({"tokens": [{"type": "client", "secret_id": "root"}]}, "scheduler.tokens[0]",
     "an ACL token with SecretID 'root' already exists"),
    ({"tokens": [{"type": "client", "secret_id": 5}]}, "scheduler.tokens[0].secret_id", "expected a string, got int"),
    ({"tokens": [{"type": "client", "expiration_time": "tomorrow"}]}, "scheduler.tokens[0].expiration_time",
     'parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"'),
    ({"methods": []}, "scheduler.methods", "unknown key; expected one of: bootstrap, tokens, policies, roles, auth_methods, binding_rules, oidc_users"),
])
def test_seed_errors_name_the_entry(sched, section, entry, problem):
    with pytest.raises(SeedError) as exc:
        apply_scheduler_seed(sched.state, section, "seed.yaml")
    assert (exc.value.source, exc.value.entry, exc.value.problem) == ("seed.yaml", entry, problem)


def test_seed_section_must_be_a_mapping(sched):
    with pytest.raises(SeedError, match="seed.yaml: scheduler: expected a mapping, got list"):
        apply_scheduler_seed(sched.state, [], "seed.yaml")
