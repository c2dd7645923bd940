"""OIDC login against the built-in identity provider: Nomad's ``ACL.OIDCAuthURL`` and
``ACL.OIDCCompleteAuth`` (nomad/acl_endpoint.go) over hashicorp/cap ``oidc.Provider.AuthURL`` /
``Exchange`` / ``UserInfo``; reference nomad-acl-sso.md §10."""

import datetime
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from freezegun import freeze_time
from sched_helpers import assert_plain

REDIRECT = "http://localhost:4649/oidc/callback"


def oidc_method(s, name="okta", **config):
    body = {"Name": name, "Type": "OIDC", "TokenLocality": "global", "MaxTokenTTL": "30m",
            "Config": {"OIDCDiscoveryURL": s.url + "/idp", "OIDCClientID": "nomad", "OIDCClientSecret": "s3cret",
                       "BoundAudiences": ["nomad"], "AllowedRedirectURIs": [REDIRECT],
                       "ClaimMappings": {"email": "email"}, "ListClaimMappings": {"groups": "groups"}, **config}}
    s.create(body)


@pytest.fixture
def s(sched):
    oidc_method(sched)
    sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
    r = sched.put("/v1/acl/binding-rule", json={"AuthMethod": "okta", "BindType": "policy", "BindName": "eng",
                                                "Selector": '"engineering" in list.groups'})
    assert r.status_code == 200, r.text
    sched.state.idp.set_user("alice", {"email": "alice@example.com", "groups": ["engineering"]})
    return sched


def auth_url(s, nonce="n-1", redirect=REDIRECT, method="okta"):
    return s.post("/v1/acl/oidc/auth-url", json={"AuthMethodName": method, "RedirectURI": redirect,
                                                 "ClientNonce": nonce}, token=None)


def browser(url, **params):
    """What the user's browser does: GET the authorization URL, read the redirect's code and state."""
    r = requests.get(url, params=params, allow_redirects=False, timeout=30)
    assert r.status_code == 302, r.text
    query = parse_qs(urlsplit(r.headers["Location"]).query)
    return query["code"][0], query["state"][0]


def complete(s, code, state, nonce="n-1", method="okta"):
    return s.post("/v1/acl/oidc/complete-auth", json={"AuthMethodName": method, "ClientNonce": nonce,
                                                      "State": state, "Code": code, "RedirectURI": REDIRECT}, token=None)


def test_auth_url_points_at_the_providers_authorize_endpoint(s):
    r = auth_url(s)
    assert r.status_code == 200, r.text
    assert "X-Nomad-Index" not in r.headers
    url = r.json()["AuthURL"]
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == s.url + "/idp/authorize"
    assert list(parse_qs(parts.query)) == ["client_id", "nonce", "redirect_uri", "response_type", "scope", "state"]
    q = parse_qs(parts.query)
    assert (q["client_id"], q["nonce"], q["response_type"], q["scope"]) == (["nomad"], ["n-1"], ["code"], ["openid"])
    assert q["state"][0].startswith("st_")
    assert auth_url(s).json()["AuthURL"] == url  # the same nonce reuses the cached request


def test_full_flow_gives_a_token_with_the_bound_policies(s):
    code, state = browser(auth_url(s).json()["AuthURL"])
    r = complete(s, code, state)
    assert r.status_code == 200, r.text
    assert r.headers["X-Nomad-Index"] == "0"
    t = r.json()
    assert (t["Name"], t["Type"], t["Policies"], t["Global"], t["ExpirationTTL"]) == (
        "OIDC-okta", "client", ["eng"], True, "30m0s")
    assert s.get("/v1/acl/token/self", token=t["SecretID"]).json()["Policies"] == ["eng"]


def test_login_hint_picks_another_user(s):
    s.state.idp.set_user("bob", {"groups": ["sales"]}, default=False)
    code, state = browser(auth_url(s).json()["AuthURL"], login_hint="bob")
    assert_plain(complete(s, code, state), 400, "no role or policy bindings matched")


def test_pkce_and_scopes(sched):
    oidc_method(sched, OIDCEnablePKCE=True, OIDCScopes=["groups"])
    sched.put("/v1/acl/binding-rule", json={"AuthMethod": "okta", "BindType": "management"})
    url = auth_url(sched).json()["AuthURL"]
    q = parse_qs(urlsplit(url).query)
    assert (q["scope"], q["code_challenge_method"], len(q["code_challenge"][0])) == (["openid groups"], ["S256"], 43)
    code, state = browser(url)
    assert complete(sched, code, state).json()["Type"] == "management"


def test_auth_url_errors(s, sched):
    r = sched.post("/v1/acl/oidc/auth-url", json={}, token=None)
    assert_plain(r, 400, "invalid OIDC auth-url request: 3 errors occurred:\n\t* missing auth method name\n\t"
                         "* missing client nonce\n\t* missing redirect URI\n\n")
    assert_plain(auth_url(s, method="nope"), 400, 'auth-method "nope" not found')
    assert_plain(auth_url(s, redirect="https://evil.example.com/cb"), 500,
                 "failed to generate auth URL: Provider.AuthURL: Provider.validRedirect: redirect URI "
                 "https://evil.example.com/cb: unauthorized redirect_uri")
    assert auth_url(s, nonce="n-2", redirect="http://localhost:9999/oidc/callback").status_code == 200  # port ignored
    assert_plain(s.get("/v1/acl/oidc/auth-url"), 405, "Invalid method")


def test_a_jwt_method_fails_in_provider_setup(s):
    s.create({"Name": "ci", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
              "Config": {"JWKSURL": "http://127.0.0.1:1/jwks"}})
    r = auth_url(s, method="ci")
    assert r.status_code == 500 and r.text.startswith("failed to generate OIDC provider: ")


def test_issuer_mismatch_in_discovery(sched):
    oidc_method(sched, OIDCDiscoveryURL=sched.url + "/idp/")
    r = auth_url(sched)
    assert_plain(r, 500, "failed to generate OIDC provider: NewProvider: unable to create provider: oidc: issuer did "
                         f'not match the issuer returned by provider, expected "{sched.url}/idp/" got "{sched.url}/idp"')


def test_complete_auth_errors(s):
    r = s.post("/v1/acl/oidc/complete-auth", json={"RedirectURI": REDIRECT}, token=None)
    assert_plain(r, 400, "invalid OIDC complete-auth request: 4 errors occurred:\n\t* missing auth method name\n\t"
                         "* missing client nonce\n\t* missing state\n\t* missing code\n\n")
    assert_plain(complete(s, "c", "st_x", nonce="unknown"), 500, "no OIDC request found for client nonce")
    code, _ = browser(auth_url(s).json()["AuthURL"])
    assert_plain(complete(s, code, "st_wrong"), 500,
                 "failed to exchange token with provider: Provider.Exchange: authentication request state and "
                 "authorization state are not equal: invalid parameter")
    assert_plain(complete(s, code, "st_wrong"), 500, "no OIDC request found for client nonce")  # consumed


def test_a_reused_code_is_refused_by_the_provider(s):
    code, state = browser(auth_url(s).json()["AuthURL"])
    assert complete(s, code, state).status_code == 200
    _, state2 = browser(auth_url(s, nonce="n-2").json()["AuthURL"])
    r = complete(s, code, state2, nonce="n-2")
    assert_plain(r, 500, 'failed to exchange token with provider: Provider.Exchange: unable to exchange auth code '
                         'with provider: oauth2: "invalid_grant"')


def test_an_auth_request_expires_after_60_seconds_on_the_doubles_clock(s):
    t0 = datetime.datetime(2030, 1, 1, 12, tzinfo=datetime.timezone.utc)
    with freeze_time(t0) as frozen:
        code, state = browser(auth_url(s).json()["AuthURL"])
        frozen.tick(datetime.timedelta(seconds=61))
        assert_plain(complete(s, code, state), 500, "failed to exchange token with provider: Provider.Exchange: "
                                                    "authentication request is expired: invalid parameter")


def test_bound_audiences_must_meet_the_id_token(sched):
    oidc_method(sched, BoundAudiences=["other"])
    sched.put("/v1/acl/binding-rule", json={"AuthMethod": "okta", "BindType": "management"})
    code, state = browser(auth_url(sched).json()["AuthURL"])
    r = complete(sched, code, state)
    assert r.status_code == 500
    assert r.text == ("failed to exchange token with provider: Provider.Exchange: id_token failed verification: "
                      "Provider.VerifyIDToken: invalid id_token audiences: verifyAudiences: invalid id_token "
                      "audiences: invalid audience")


def test_provider_documents(sched):
    doc = requests.get(sched.url + "/idp/.well-known/openid-configuration", timeout=30).json()
    assert doc["issuer"] == sched.url + "/idp" and doc["jwks_uri"] == sched.url + "/idp/jwks"
    keys = requests.get(doc["jwks_uri"], timeout=30).json()["keys"]
    assert [(k["kty"], k["kid"], k["alg"]) for k in keys] == [("RSA", "schedpki-idp", "RS256")]
