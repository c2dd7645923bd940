"""Contract: nomadpy 0.2 (a port of Nomad's Go ``api``) driving the SSO surface: ``ACLBindingRules``
(list/create/update/get/delete), ``ACLPolicies``, ``ACLRoles``, ``ACLTokens.self/info/list`` and
``ACLAuth.login/get_auth_url/complete_auth``. Expected values follow Nomad's ``ACL.UpsertBindingRules``,
``ACL.Login``, ``ACL.OIDCAuthURL``/``OIDCCompleteAuth`` (reference/nomad-acl-sso.md); no real Nomad here."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import nomadpy
import pytest
import requests


@pytest.fixture
def client(schedpki):
    return nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))


@pytest.fixture
def jwt_method(schedpki):
    schedpki.factories.scheduler.jwt_auth_method("ci", builtin_idp=True,
                                                 Config={"ClaimMappings": {"team": "team"}})
    return "ci"


def test_binding_rule_lifecycle(client, jwt_method):
    created, wm = client.acl_binding_rules.create(nomadpy.ACLBindingRule(
        auth_method="ci", selector='value.team == "eng"', bind_type="policy", bind_name="eng", description="d"))
    assert created.id and created.create_index == created.modify_index == wm.last_index
    stubs, qm = client.acl_binding_rules.list()
    assert [(s.id, s.auth_method) for s in stubs] == [(created.id, "ci")] and qm.last_index == wm.last_index
    created.bind_name = "ops"
    updated, wm2 = client.acl_binding_rules.update(created)
    assert (updated.bind_name, updated.create_index, updated.modify_index) == ("ops", created.create_index,
                                                                               wm2.last_index)
    got, _ = client.acl_binding_rules.get(created.id)
    assert got.bind_name == "ops" and got.selector == 'value.team == "eng"'
    client.acl_binding_rules.delete(created.id)
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        client.acl_binding_rules.get(created.id)
    assert (err.value.status_code, err.value.body) == (404, "ACL binding rule not found")
    with pytest.raises(ValueError, match="missing ACL binding rule ID"):
        client.acl_binding_rules.get("")


def test_policies_roles_and_login(schedpki, client, jwt_method):
    client.acl_policies.upsert(nomadpy.ACLPolicy(name="eng", rules=""))
    role, _ = client.acl_roles.create(nomadpy.ACLRole(name="devs", policies=[nomadpy.ACLRolePolicyLink(name="eng")]))
    by_name, _ = client.acl_roles.get_by_name("devs")
    assert by_name.id == role.id and [p.name for p in by_name.policies] == ["eng"]
    client.acl_binding_rules.create(nomadpy.ACLBindingRule(auth_method="ci", bind_type="role", bind_name="devs"))
    token, wm = client.acl_auth.login("ci", schedpki.scheduler.jwt("ci", {"team": "eng"}))
    assert wm.last_index == 0  # ACL.Login never sets the reply index
    assert (token.type, token.policies, [r.name for r in token.roles]) == ("client", [], ["devs"])
    assert token.expiration_ttl == 3600 * 10**9 and token.global_ is True
    as_user = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=token.secret_id))
    me, _ = as_user.acl_tokens.self()
    assert me.accessor_id == token.accessor_id
    policy, _ = as_user.acl_policies.info("eng")
    assert policy.name == "eng"
    with pytest.raises(nomadpy.UnexpectedResponseError, match="403"):
        as_user.acl_binding_rules.list()
    listed, _ = client.acl_tokens.list()
    assert token.accessor_id in [t.accessor_id for t in listed]


def test_login_refusal_is_a_401_with_nomads_text(schedpki, client, jwt_method):
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        client.acl_auth.login("ci", "not-a-jwt")
    assert err.value.status_code == 401
    assert err.value.body.startswith("unable to validate provided token: unable to verify signature of JWT token: ")


def test_oidc_flow(schedpki, client):
    schedpki.factories.scheduler.oidc_auth_method("okta", builtin_idp=True)
    schedpki.factories.scheduler.binding_rule("okta", "management")
    redirect = "http://localhost:4649/oidc/callback"
    url, _ = client.acl_auth.get_auth_url("okta", redirect, "nonce-1")
    location = requests.get(url.auth_url, allow_redirects=False, timeout=30).headers["Location"]
    q = parse_qs(urlsplit(location).query)
    token, wm = client.acl_auth.complete_auth("okta", "nonce-1", q["state"][0], q["code"][0], redirect_uri=redirect)
    assert (token.type, token.name, wm.last_index) == ("management", "OIDC-okta", 0)
