"""A downstream suite testing Nomad SSO configuration (a JWT auth method for CI jobs, an OIDC method
for people, and their binding rules) with a real client, nomadpy, and the `schedpki` fixture."""

from urllib.parse import parse_qs, urlsplit

import nomadpy
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pytest_schedpki.sso_testing import LoginError


@pytest.fixture
def nomad(schedpki):
    return nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))


# --- README: SSO with a JWT auth method --------------------------------------------------------------
def test_ci_jobs_get_the_deploy_policy(schedpki, nomad):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # the CI system's signing key
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    nomad.acl_policies.upsert(nomadpy.ACLPolicy(name="deploy", rules='namespace "web" { policy = "write" }'))
    nomad.acl_auth_methods.create(nomadpy.ACLAuthMethod(
        name="ci", type="JWT", token_locality="global", max_token_ttl=3600 * 10**9,
        config=nomadpy.ACLAuthMethodConfig(jwt_validation_pub_keys=[pem], bound_audiences=["nomad"],
                                           claim_mappings={"project_path": "project"})))
    nomad.acl_binding_rules.create(nomadpy.ACLBindingRule(
        auth_method="ci", selector='value.project == "acme/web"', bind_type="policy", bind_name="deploy"))

    job_jwt = schedpki.scheduler.jwt("ci", {"project_path": "acme/web"}, key=key)
    token, _ = nomad.acl_auth.login("ci", job_jwt)
    assert (token.type, token.policies) == ("client", ["deploy"])
    schedpki.scheduler.assert_token(token.secret_id, policies=["deploy"], global_=True)

    other = schedpki.scheduler.jwt("ci", {"project_path": "acme/docs"}, key=key)
    with pytest.raises(nomadpy.UnexpectedResponseError, match="no role or policy bindings matched"):
        nomad.acl_auth.login("ci", other)


# --- README: SSO with an OIDC auth method ----------------------------------------------------------
def test_engineers_log_in_through_oidc(schedpki, nomad):
    schedpki.factories.scheduler.policy("eng")
    schedpki.factories.scheduler.oidc_auth_method("okta", builtin_idp=True,
                                                   Config={"ListClaimMappings": {"groups": "groups"}})
    schedpki.factories.scheduler.binding_rule("okta", "policy", "eng", selector='"engineering" in list.groups')
    schedpki.scheduler.set_oidc_user("alice", {"email": "alice@example.com", "groups": ["engineering"]})

    redirect = "http://localhost:4649/oidc/callback"
    url, _ = nomad.acl_auth.get_auth_url("okta", redirect, client_nonce="nonce-1")
    browser = requests.get(url.auth_url, allow_redirects=False, timeout=30)  # the IdP answers with a code
    callback = parse_qs(urlsplit(browser.headers["Location"]).query)
    token, _ = nomad.acl_auth.complete_auth("okta", "nonce-1", callback["state"][0], callback["code"][0],
                                            redirect_uri=redirect)
    assert (token.name, token.policies) == ("OIDC-okta", ["eng"])

    # or the whole flow in one call, with the claims the test chooses:
    with pytest.raises(LoginError, match="no role or policy bindings matched"):
        schedpki.scheduler.oidc_login("okta", {"groups": ["sales"]}, user="bob")
