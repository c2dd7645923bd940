"""The page and its actions refuse cross-site requests (``Origin``/``Sec-Fetch-Site``, as the control
guard does, reads of the page included), a foreign ``Host``, and (when one is set) a missing control
token; every answer forbids framing."""

import pytest
import requests

from pytest_schedpki.double import Double

from .conftest import setup_pki

# every action the page offers, as the control endpoint it calls, plus the rest of the control writes
ACTIONS = [("POST", "reset", None), ("POST", "clock", {"advance": 3600}), ("POST", "clock", {"mode": "manual"}),
           ("POST", "lag", {"paused": True}), ("POST", "sync", None), ("POST", "faults", {"path": "/v1/sys/health",
                                                                                    "status": 503}),
           ("DELETE", "faults", None), ("POST", "seed", {"secrets": {"mounts": [{"path": "evil"}]}}),
           ("POST", "baseline", None), ("POST", "seal", None), ("POST", "leader", {"leader": False})]
READS = ["", "static/ui.js", "api/secrets", "api/scheduler", "api/double", "api/certs?mount=pki",
         "api/kv/value?mount=kv&path=k"]
CROSS_SITE = [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
              {"Origin": "null"}]


@pytest.fixture(scope="module")
def double():
    d = Double(rsa_key_pool=0)
    d.start()
    setup_pki(d.secrets_url)
    assert requests.post(f"{d.secrets_url}/v1/sys/mounts/kv", json={"type": "kv"},
                         headers={"X-Vault-Token": "root"}).status_code == 204
    yield d
    d.stop()


def _state(d: Double):
    return (d.clock.mode, d.scheduler.lag_settings(), len(d.faults.all()), sorted(d.secrets.mounts), d.secrets.sealed,
            len(d.journal))


@pytest.mark.parametrize("headers", CROSS_SITE, ids=lambda h: "-".join(f"{k}={v}" for k, v in h.items()))
@pytest.mark.parametrize(("method", "action", "body"), ACTIONS, ids=lambda v: str(v))
def test_cross_site_actions_are_refused_and_change_nothing(double, method, action, body, headers):
    for base in (double.secrets_url, double.scheduler_url):
        before = _state(double)
        r = requests.request(method, f"{base}/_schedpki/{action}", json=body, headers=headers)
        assert r.status_code == 403, r.text
        assert r.json()["error"].startswith("cross-site request refused")
        assert _state(double) == before


@pytest.mark.parametrize("headers", CROSS_SITE, ids=lambda h: "-".join(f"{k}={v}" for k, v in h.items()))
@pytest.mark.parametrize("path", READS)
def test_cross_site_reads_of_the_page_are_refused(double, path, headers):
    for base in (double.secrets_url, double.scheduler_url):
        r = requests.get(f"{base}/_schedpki/ui/{path}", headers=headers)
        assert r.status_code == 403, r.text
        assert r.json()["error"].startswith("cross-site request refused")


@pytest.mark.parametrize("path", READS)
def test_same_origin_reads_pass_and_forbid_framing(double, path):
    base = double.secrets_url
    host = base.split("//", 1)[1]
    for headers in ({}, {"Sec-Fetch-Site": "same-origin"}, {"Origin": base}, {"Sec-Fetch-Site": "none"}):
        r = requests.get(f"{base}/_schedpki/ui/{path}", headers=headers)
        assert r.status_code in (200, 404), (headers, r.text)  # 404: the KV key does not exist
        assert r.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert host


def test_a_foreign_host_is_refused(double):
    r = requests.get(f"{double.secrets_url}/_schedpki/ui/api/secrets", headers={"Host": "rebind.example.com"})
    assert r.status_code == 403 and "DNS rebinding" in r.json()["error"]
    r = requests.get(f"{double.secrets_url}/_schedpki/ui/", headers={"Host": "rebind.example.com"})
    assert r.status_code == 403


def test_the_page_itself_never_acts():
    d = Double(rsa_key_pool=0)
    d.start()
    try:
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            r = requests.request(method, f"{d.secrets_url}/_schedpki/ui/api/double")
            assert r.status_code == 405 and "the page's actions are the control endpoints" in r.json()["error"]
    finally:
        d.stop()


def test_with_a_control_token_the_json_needs_it_and_the_html_does_not():
    d = Double(rsa_key_pool=0, control_token="ctl-secret")
    d.start()
    try:
        base = d.secrets_url
        page = requests.get(f"{base}/_schedpki/ui/")
        assert page.status_code == 200 and "ctl-secret" not in page.text
        assert 'data-control-token="required"' in page.text
        assert requests.get(f"{base}/_schedpki/ui/static/ui.js").status_code == 200
        r = requests.get(f"{base}/_schedpki/ui/api/secrets")
        assert r.status_code == 403 and r.json()["error"].startswith("missing or wrong control token")
        assert requests.get(f"{base}/_schedpki/ui/api/secrets", headers={"X-Schedpki-Control-Token": "nope"}).status_code == 403
        ok = requests.get(f"{base}/_schedpki/ui/api/double", headers={"X-Schedpki-Control-Token": "ctl-secret"})
        assert ok.status_code == 200 and ok.json()["control_token"] is True and "ctl-secret" not in ok.text
        # cross-site stays refused even with the token
        r = requests.post(f"{base}/_schedpki/reset", headers={"X-Schedpki-Control-Token": "ctl-secret",
                                                              "Sec-Fetch-Site": "cross-site"})
        assert r.status_code == 403
    finally:
        d.stop()


def test_etag_answers_304_until_the_state_changes(double):
    url = f"{double.secrets_url}/_schedpki/ui/api/secrets"
    first = requests.get(url)
    tag = first.headers["ETag"]
    again = requests.get(url, headers={"If-None-Match": tag})
    assert (again.status_code, again.content) == (304, b"")
    assert requests.post(f"{double.secrets_url}/v1/sys/mounts/other", json={"type": "kv"},
                         headers={"X-Vault-Token": "root"}).status_code == 204
    changed = requests.get(url, headers={"If-None-Match": tag})
    assert changed.status_code == 200 and "other/" in changed.text and changed.headers["ETag"] != tag


def test_the_control_list_names_the_page(double):
    listed = requests.get(f"{double.secrets_url}/_schedpki/").json()["endpoints"]
    assert {"methods": ["GET"], "path": "/_schedpki/ui/", "body": "-",
            "effect": "the live state page of both services and the double (JSON under /_schedpki/ui/api/)"} in listed
