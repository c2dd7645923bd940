"""Hostile requests at the SSO routes (Hypothesis): binding rules, policies, roles, tokens, JWT login
and OIDC. Every answer has Nomad's shape (status, plain-text errors, JSON successes), never a
traceback; an error escaping a handler fails the example; a refused write leaves the binding-rule,
policy and role tables as they were (Nomad's RPCs validate before the raft apply)."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st
from robust_helpers import PLAIN, RawClient, hostile_bodies, json_values, quote_path, robust

from pytest_schedpki.factories import Factories

PATHS = ["/v1/acl/binding-rule", "/v1/acl/binding-rules", "/v1/acl/binding-rule/{rule}", "/v1/acl/binding-rule/",
         "/v1/acl/policy/eng", "/v1/acl/policy/", "/v1/acl/policies", "/v1/acl/policy/self", "/v1/acl/role",
         "/v1/acl/roles", "/v1/acl/role/{role}", "/v1/acl/role/name/devs", "/v1/acl/role/x/y/z", "/v1/acl/token/self",
         "/v1/acl/tokens", "/v1/acl/token/{accessor}", "/v1/acl/token", "/v1/acl/bootstrap", "/v1/acl/token/onetime",
         "/v1/acl/token/onetime/exchange", "/v1/acl/token/", "/v1/acl/login", "/v1/acl/oidc/auth-url",
         "/v1/acl/oidc/complete-auth", "/idp/authorize", "/idp/token", "/idp/userinfo", "/idp/jwks"]
SELECTORS = ['value.team == "eng"', "", "value.team ==", '"a" in list.groups', "(((", "not not value.x is empty",
             "value.x matches \"(\"", "`raw` in list.g", "\\", '"/value/x" == 1']
KEYS = ["ID", "AuthMethod", "Selector", "BindType", "BindName", "Name", "Rules", "Policies", "AuthMethodName",
        "LoginToken", "ClientNonce", "RedirectURI", "State", "Code", "Type", "Global", "ExpirationTTL",
        "ExpirationTime", "CreateTime", "AccessorID", "SecretID", "Roles", "BootstrapSecret", "OneTimeSecretID"]
TOKEN_VALUES = {"Type": ["client", "management", "", "Client"], "Global": [True, False, "yes"],
                "ExpirationTTL": ["1h", "-5m", "30s", "99999h", "x", 3.6e12, -1, None],
                "ExpirationTime": ["2030-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "nope", 5],
                "CreateTime": ["2030-01-01T00:00:00Z", "not a time", 7],
                "AccessorID": ["", "x", "00000000-0000-4000-8000-000000000000"],
                "SecretID": ["root", "client-secret", "11111111-1111-4111-8111-111111111111", ""],
                "Roles": [[{"Name": "devs"}], [{"ID": "nope"}], [{"Name": 1}], "devs", [None]],
                "BootstrapSecret": ["", "x", "22222222-2222-4222-8222-222222222222"],
                "OneTimeSecretID": ["", "x", "33333333-3333-4333-8333-333333333333"]}


@pytest.fixture(scope="module")
def sso(double):
    f = Factories(double.scheduler, double.secrets, double.scheduler_url).scheduler
    f.jwt_auth_method("ci", builtin_idp=True, Config={"ClaimMappings": {"team": "team"}})
    f.oidc_auth_method("okta", builtin_idp=True)
    f.policy("eng")
    role = f.role("devs", ["eng"])
    rule = f.binding_rule("ci", "policy", "${value.team}", selector='value.team != ""')
    f.token(type="client", secret_id="client-secret")
    double.save_baseline()
    return {"role": role["ID"], "rule": rule["ID"]}


def _tables(state):
    return (dict(state.binding_rules.rules), dict(state.acl.policies), dict(state.acl.roles), dict(state._tokens),
            dict(state.acl.one_time), state.acl.bootstrap_index)


def _body(draw, sso_state) -> bytes | None:
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return None
    if choice == 1:
        return draw(hostile_bodies(KEYS))
    body: dict = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=6, unique=True)):
        if key == "Selector":
            body[key] = draw(st.sampled_from(SELECTORS) | st.text(max_size=20))
        elif key == "BindType":
            body[key] = draw(st.sampled_from(["role", "policy", "management", "", "Policy"]))
        elif key in ("AuthMethod", "AuthMethodName"):
            body[key] = draw(st.sampled_from(["ci", "okta", "nope", ""]))
        elif key == "LoginToken":
            token = sso_state.idp.id_token("x", "nomad", {"team": draw(st.sampled_from(["eng", "Has Space", ""]))})
            body[key] = draw(st.sampled_from([token, token[:-3], "a.b.c", ""]) | st.text(max_size=30))
        elif key in TOKEN_VALUES:
            body[key] = draw(st.sampled_from(TOKEN_VALUES[key]))
        elif key == "Policies":
            body[key] = draw(st.sampled_from([[{"Name": "eng"}], [], ["eng"], [{"Name": 3}], None]))
        else:
            body[key] = draw(st.sampled_from(["eng", "devs", "", "${value.team}", "n-1"]) | json_values)
    return json.dumps(body).encode()


@robust(300)
@given(data=st.data())
def test_sso_routes_answer_as_nomad(double, sso, data):
    draw = data.draw
    double.reset()
    state = double.scheduler
    accessor = state.get_token("root").AccessorID
    method = draw(st.sampled_from(["GET", "PUT", "POST", "DELETE", "PATCH"]), label="method")
    path = draw(st.sampled_from(PATHS), label="path").format(rule=sso["rule"], role=sso["role"], accessor=accessor)
    body = _body(draw, state) if method in ("PUT", "POST") else None
    token = draw(st.sampled_from(["root", "root", "client-secret", "bogus", None]))
    headers = {"X-Nomad-Token": token} if token else {}
    query = {"index": "1", "wait": "10ms"} if method == "GET" and draw(st.booleans()) else {}
    target = quote_path(path) + ("?" + urllib.parse.urlencode(query) if query else "")
    before = _tables(state)
    client = RawClient(double.scheduler_url)
    try:
        reply = client.request(method, target, headers, body)
    finally:
        client.close()
    context = f"{method} {target} {body!r:.300} -> {reply.status} {reply.text()[:300]!r}"
    errors = double.pop_handler_errors()
    assert not errors, "\n".join(map(str, errors))
    assert b"traceback (most recent call last)" not in reply.body.lower(), context
    assert reply.status in {200, 302, 400, 401, 403, 404, 405, 500}, context
    if path.startswith("/idp/"):
        return
    if reply.status == 200:
        assert reply.content_type == "application/json" or reply.body == b"", context
    else:
        assert reply.content_type == PLAIN or (reply.status == 404 and reply.body == b""), context
        if method in ("PUT", "POST") and reply.status != 500:
            assert _tables(state) == before, f"refused write changed state: {context}"
