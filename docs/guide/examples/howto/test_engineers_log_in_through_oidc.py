from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from pytest_schedpki.sso_testing import LoginError


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
