"""The SSO user surface: factories (binding rules, policies, roles, built-in-IdP methods), seeds,
``schedpki.scheduler.jwt()``/``login_jwt()``/``oidc_login()``, ``assert_token`` and the
``/_schedpki/oidc/users`` control endpoint. Login behaviour itself follows Nomad's ``ACL.Login`` and
``ACL.OIDCCompleteAuth`` (pinned in tests/scheduler/test_login_*.py)."""

import pytest
import requests
from freezegun import freeze_time

from pytest_schedpki.errors import SeedError
from pytest_schedpki.scheduler.model import SchedulerError
from pytest_schedpki.sso_testing import LoginError


def test_factories_and_jwt_login(schedpki):
    f = schedpki.factories.scheduler
    f.jwt_auth_method("ci", builtin_idp=True, Config={"ClaimMappings": {"project": "project"}})
    f.policy("deploy")
    f.policy("read")
    role = f.role("readers", ["read"])
    rule = f.binding_rule("ci", "policy", "deploy", selector='value.project == "web"')
    f.binding_rule("ci", "role", "readers")
    assert rule["BindName"] == "deploy" and rule["CreateIndex"] > 0
    token = schedpki.scheduler.login_jwt("ci", {"project": "web"})
    schedpki.scheduler.assert_token(token, policies=["deploy"], roles=["readers"], type="client", global_=True)
    assert token["Roles"] == [{"ID": role["ID"], "Name": "readers"}]
    assert [t.AccessorID for t in schedpki.scheduler.login_tokens()] == [token["AccessorID"]]
    with pytest.raises(AssertionError, match=r"expected \{'policies': \['other'\]\}"):
        schedpki.scheduler.assert_token(token, policies=["other"])


def test_login_refusals_carry_nomads_answer(schedpki):
    schedpki.factories.scheduler.jwt_auth_method("ci", builtin_idp=True)
    with pytest.raises(LoginError) as err:
        schedpki.scheduler.login_jwt("ci", {})
    assert (err.value.status, err.value.text) == (400, "no role or policy bindings matched")
    with pytest.raises(SchedulerError) as bad:
        schedpki.factories.scheduler.binding_rule("nope", "management")
    assert (bad.value.status, bad.value.text) == (400, "ACL auth method nope not found")


def test_jwt_defaults_follow_the_doubles_clock(schedpki):
    schedpki.factories.scheduler.jwt_auth_method("ci", builtin_idp=True)
    schedpki.factories.scheduler.binding_rule("ci", "management")
    with freeze_time("2031-05-01 12:00:00"):
        token = schedpki.scheduler.jwt("ci", {"sub": "runner"})
        assert schedpki.scheduler.login("ci", token)["Type"] == "management"
    with freeze_time("2031-05-01 12:10:00"), pytest.raises(LoginError) as err:
        schedpki.scheduler.login("ci", token)
    assert err.value.status == 401 and err.value.text.endswith("token is expired")


def test_oidc_login_through_the_builtin_provider(schedpki):
    f = schedpki.factories.scheduler
    f.oidc_auth_method("okta", builtin_idp=True, Config={"ListClaimMappings": {"groups": "groups"}})
    f.policy("eng")
    f.binding_rule("okta", "policy", "eng", selector='"engineering" in list.groups')
    token = schedpki.scheduler.oidc_login("okta", {"groups": ["engineering"]})
    schedpki.scheduler.assert_token(token, policies=["eng"], type="client")
    assert token["Name"] == "OIDC-okta"
    with pytest.raises(LoginError) as err:
        schedpki.scheduler.oidc_login("okta", {"groups": ["sales"]}, user="bob")
    assert (err.value.status, err.value.text) == (400, "no role or policy bindings matched")


def test_seed_sections_and_control_endpoint(schedpki):
    url = schedpki.scheduler.url
    schedpki.seed({"scheduler": {
        "policies": [{"Name": "eng", "Rules": ""}],
        "roles": [{"Name": "devs", "Policies": ["eng"]}],
        "auth_methods": [{"Name": "okta", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
                          "Config": {"OIDCDiscoveryURL": url + "/idp", "OIDCClientID": "nomad",
                                     "ListClaimMappings": {"groups": "groups"}}}],
        "binding_rules": [{"AuthMethod": "okta", "BindType": "role", "BindName": "devs",
                           "Selector": '"eng" in list.groups'}],
        "oidc_users": {"carol": {"groups": ["eng"]}},
    }})
    schedpki.scheduler.assert_token(schedpki.scheduler.oidc_login("okta"), roles=["devs"])
    r = requests.post(url + "/_schedpki/oidc/users", json={"name": "dave", "claims": {"groups": []}}, timeout=30)
    assert r.status_code == 200 and r.json()["default"] == "dave"
    with pytest.raises(LoginError):
        schedpki.scheduler.oidc_login("okta")
    with pytest.raises(SeedError, match=r"scheduler.binding_rules\[0\]"):
        schedpki.seed({"scheduler": {"binding_rules": [{"AuthMethod": "okta", "BindType": "Policy",
                                                        "BindName": "x"}]}})


def test_login_tokens_reset_between_tests(schedpki):
    assert schedpki.scheduler.login_tokens() == []
    assert schedpki.scheduler.state.idp.default_user == "alice"


def test_the_journal_never_keeps_login_credentials(schedpki):
    f = schedpki.factories.scheduler
    f.jwt_auth_method("ci", builtin_idp=True)
    f.oidc_auth_method("okta", builtin_idp=True)
    f.binding_rule("ci", "management")
    f.binding_rule("okta", "management")
    jwt = schedpki.scheduler.jwt("ci", {})
    secret = schedpki.scheduler.login("ci", jwt)["SecretID"]
    secret2 = schedpki.scheduler.oidc_login("okta", {"groups": []})["SecretID"]
    text = repr([e for e in schedpki.journal.entries()])
    for credential in (jwt, secret, secret2):
        assert credential not in text
    login = next(e for e in schedpki.journal.entries() if e.path == "/v1/acl/login")
    assert (login.body["LoginToken"], login.response["SecretID"]) == ("<redacted>", "<redacted>")
    exchange = next(e for e in schedpki.journal.entries() if e.path == "/idp/token")
    assert "code=%3Credacted%3E" in exchange.body or "code=<redacted>" in exchange.body
