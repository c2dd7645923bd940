"""Nothing secret reaches the page: secrets seeded through both APIs (a token's id, a custom AppRole
secret ID, an OIDC client secret, a Nomad token's SecretID, a KV value, the private keys the PKI mount
made) appear in no answer of the page - HTML, script, every JSON view, the journal of the requests that
carried them - except the KV value, in the one answer that asks for it."""

import string

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_schedpki.double import Double

from .conftest import setup_pki

ROOT = {"X-Vault-Token": "root"}
SECRET = st.text(alphabet=string.ascii_letters + string.digits, min_size=20, max_size=40)


def secret(kind: str):
    """Secrets of one kind: a marker, so two kinds never hold the same text, and 20-40 letters or digits."""
    return SECRET.map(lambda text: f"{kind}{text}")


@pytest.fixture(scope="module")
def double():
    d = Double(rsa_key_pool=0)
    d.start()
    setup_pki(d.secrets_url)
    s = requests.Session()
    s.headers.update(ROOT)
    assert s.post(f"{d.secrets_url}/v1/sys/mounts/kv", json={"type": "kv", "options": {"version": "2"}}).status_code == 204
    assert s.post(f"{d.secrets_url}/v1/sys/auth/approle", json={"type": "approle"}).status_code == 204
    assert s.post(f"{d.secrets_url}/v1/auth/approle/role/app", json={"token_policies": "default"}).status_code == 204
    d.save_baseline()
    yield d
    d.stop()


def _page_answers(d: Double) -> dict[str, str]:
    """Every answer of the page (both listeners), by URL."""
    urls = []
    for base in (d.secrets_url, d.scheduler_url):
        urls += [f"{base}/_schedpki/ui/", f"{base}/_schedpki/ui/static/ui.js"]
        urls += [f"{base}/_schedpki/ui/api/{view}" for view in ("secrets", "scheduler", "double", "certs?mount=pki",
                                                                "certs?mount=pki&sort=serial", "certs?mount=pki&q=example")]
    answers = {}
    for url in urls:
        r = requests.get(url)
        assert r.status_code == 200, (url, r.text)
        answers[url] = r.text
    serials = [c["serial"] for c in requests.get(f"{d.secrets_url}/_schedpki/ui/api/certs?mount=pki").json()["items"]]
    for serial in serials:
        url = f"{d.secrets_url}/_schedpki/ui/api/certs/pem?mount=pki&serial={serial}"
        answers[url] = requests.get(url).text
    return answers


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(token_id=secret("tok"), secret_id=secret("sid"), client_secret=secret("ocs"), nomad_secret=secret("nst"),
       kv_value=secret("kvv"))
def test_seeded_secrets_never_reach_the_page(double, token_id, secret_id, client_secret, nomad_secret, kv_value):
    d = double
    d.reset()
    url = d.secrets_url
    s = requests.Session()
    s.headers.update(ROOT)
    # a token with a chosen id, used for a request (the journal keeps its kind, never the id)
    r = s.post(f"{url}/v1/auth/token/create", json={"id": "t-" + token_id, "policies": ["default"]})
    assert r.status_code == 200, r.text
    assert requests.get(f"{url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": "t-" + token_id}).ok
    # an AppRole secret ID, and the login it allows (its client_token is a secret too)
    r = s.post(f"{url}/v1/auth/approle/role/app/custom-secret-id", json={"secret_id": secret_id})
    assert r.status_code == 200, r.text
    role_id = s.get(f"{url}/v1/auth/approle/role/app/role-id").json()["data"]["role_id"]
    login = requests.post(f"{url}/v1/auth/approle/login", json={"role_id": role_id, "secret_id": secret_id})
    assert login.status_code == 200, login.text
    client_token = login.json()["auth"]["client_token"]
    # a KV value, written and read back
    assert s.post(f"{url}/v1/kv/data/app/db", json={"data": {"note": kv_value}}).status_code == 200
    assert s.get(f"{url}/v1/kv/data/app/db").json()["data"]["data"]["note"] == kv_value
    # a certificate and its private key
    issued = s.post(f"{url}/v1/pki/issue/web", json={"common_name": "a.example"}).json()["data"]
    key_lines = [line for line in issued["private_key"].splitlines() if "-----" not in line]
    # the scheduler: an OIDC method with a client secret, a token with a chosen SecretID
    method = {"Name": "oidc", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
              "Config": {"OIDCDiscoveryURL": "http://idp.example", "OIDCClientID": "c", "OIDCClientSecret": client_secret,
                         "BoundAudiences": ["c"], "AllowedRedirectURIs": ["http://localhost/cb"]}}
    r = requests.post(f"{d.scheduler_url}/v1/acl/auth-method", json=method, headers={"X-Nomad-Token": "root"})
    assert r.status_code == 200, r.text
    d.scheduler.add_token(secret_id=nomad_secret, type="management", name="seeded")
    assert requests.get(f"{d.scheduler_url}/v1/acl/auth-methods", headers={"X-Nomad-Token": nomad_secret}).ok

    secrets = {"token id": token_id, "secret id": secret_id, "client secret": client_secret,
               "nomad secret": nomad_secret, "kv value": kv_value, "login token": client_token,
               **{f"private key line {i}": line for i, line in enumerate(key_lines)}}
    for url_, text in _page_answers(d).items():
        for name, value in secrets.items():
            assert value not in text, f"{name} in {url_}"
        assert "PRIVATE KEY" not in text or url_.endswith("ui.js"), url_
    # asked for, the KV value comes - alone
    asked = requests.get(f"{url}/_schedpki/ui/api/kv/value", params={"mount": "kv", "path": "app/db"})
    assert asked.json() == {"mount": "kv", "path": "app/db", "version": 0, "value": {"note": kv_value}}
    assert asked.headers["Cache-Control"] == "no-store"
    assert all(v not in asked.text for k, v in secrets.items() if k != "kv value")
