"""The page's data views: what each shows, and what it leaves out."""

import requests

from pytest_schedpki.journal import Journal
from pytest_schedpki.ui.double_views import HIDDEN_VALUE

NOMAD = {"X-Nomad-Token": "root"}
ROOT = {"X-Vault-Token": "root"}


def _api(schedpki, view: str, **params) -> dict:
    r = requests.get(f"{schedpki.scheduler.url}/_schedpki/ui/api/{view}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _method(name: str) -> dict:
    return {"Name": name, "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
            "Config": {"OIDCDiscoveryURL": "http://idp.example", "OIDCClientID": "c", "OIDCClientSecret": "cs-1",
                       "BoundAudiences": ["c"], "AllowedRedirectURIs": ["http://localhost/cb"]}}


def test_the_journal_view_has_durations_filters_and_hides_kv_bodies(schedpki):
    url = schedpki.secrets.url
    assert requests.post(f"{url}/v1/sys/mounts/kv", json={"type": "kv"}, headers=ROOT).status_code == 204
    assert requests.post(f"{url}/v1/kv/app", json={"note": "kv-body-value"}, headers=ROOT).status_code == 204
    requests.get(f"{url}/v1/sys/health")
    requests.get(f"{schedpki.scheduler.url}/v1/acl/auth-methods", headers=NOMAD)
    journal = _api(schedpki, "double")["journal"]
    assert [(e["service"], e["method"], e["path"]) for e in journal["entries"]] == [
        ("scheduler", "GET", "/v1/acl/auth-methods"), ("secrets", "GET", "/v1/sys/health"),
        ("secrets", "POST", "/v1/kv/app"), ("secrets", "POST", "/v1/sys/mounts/kv")]
    assert all(e["duration_ms"] > 0 for e in journal["entries"])
    assert journal["entries"][2]["body"] == HIDDEN_VALUE and "kv-body-value" not in str(journal)
    assert journal["entries"][3]["body"] == {"type": "kv"}  # other bodies stay
    assert [e["token_kind"] for e in journal["entries"]] == ["management", "none", "root", "root"]
    only = _api(schedpki, "double", service="secrets", path="/v1/sys/", status="200")["journal"]["entries"]
    assert [e["path"] for e in only] == ["/v1/sys/health"]
    bad = _api(schedpki, "double", status="x")["journal"]
    assert bad["entries"] == [] and bad["error"] == "status 'x' is not a number"


def test_journal_newest_decodes_only_what_it_returns():
    journal = Journal()
    for i in range(50):
        journal.record("secrets", "GET", f"/v1/p{i}", {}, "root", b"", 200 if i % 2 else 404, b"{}", duration=0.5)
    found = journal.newest(3, status=404)
    assert [e.path for e in found] == ["/v1/p48", "/v1/p46", "/v1/p44"] and found[0].duration == 0.5
    assert [e.path for e in journal.newest(2, path="p1")] == ["/v1/p19", "/v1/p18"]
    assert len(journal) == 50 and journal.recorded == 50
    journal.clear()
    assert len(journal) == 0 and journal.recorded == 51  # a clear is a change too


def test_the_scheduler_view_redacts_as_nomad_and_shows_replication(schedpki):
    base = schedpki.scheduler.url
    assert requests.post(f"{base}/v1/acl/auth-method", json=_method("first"), headers=NOMAD).status_code == 200
    assert requests.post(f"{base}/_schedpki/lag", json={"paused": True}).status_code == 200
    assert requests.post(f"{base}/v1/acl/auth-method", json=_method("second"), headers=NOMAD).status_code == 200
    view = _api(schedpki, "scheduler")
    assert [m["Name"] for m in view["auth_methods"]] == ["first", "second"]  # the authoritative region's
    assert {m["Config"]["OIDCClientSecret"] for m in view["auth_methods"]} == {"redacted"}
    replication = view["replication"]
    assert replication["lag"]["paused"] is True and replication["local"]["pending"] == 1
    assert replication["authoritative"]["table_index"] > replication["local"]["table_index"]
    assert all("SecretID" not in t for t in view["tokens"]) and view["tokens"][0]["Name"] == "Bootstrap Token"
    requests.post(f"{base}/_schedpki/sync")
    assert _api(schedpki, "scheduler")["replication"]["local"]["pending"] == 0


def test_the_secrets_view_lists_tokens_by_accessor_and_faults_with_hits(schedpki):
    url = schedpki.secrets.url
    made = requests.post(f"{url}/v1/auth/token/create", json={"policies": ["default"], "ttl": "1h"}, headers=ROOT).json()
    view = _api(schedpki, "secrets")
    mine = [t for t in view["tokens"] if t["accessor"] == made["auth"]["accessor"]]
    assert len(mine) == 1 and mine[0]["policies"] == ["default"] and 3500 < mine[0]["ttl"] <= 3600
    assert made["auth"]["client_token"] not in str(view)
    requests.post(f"{url}/_schedpki/faults", json={"path": "/v1/sys/health", "status": 500, "times": 1})
    requests.get(f"{url}/v1/sys/health")
    requests.get(f"{url}/v1/sys/health")
    faults = _api(schedpki, "double")["faults"]
    assert [(f["path"], f["hits"], f["matched"], f["exhausted"]) for f in faults] == [("/v1/sys/health", 1, 1, True)]


def test_seeds_loaded_are_listed(schedpki):
    requests.post(f"{schedpki.secrets.url}/_schedpki/seed", json={"secrets": {"mounts": [{"path": "seeded"}]}})
    seeds = _api(schedpki, "double")["seeds"]
    assert seeds[-1] == "mapping: secrets", seeds


def test_the_pki_view_shows_acme_accounts_and_orders_without_keys(schedpki):
    from pytest_schedpki.acme import AcmeClient

    schedpki.factories.secrets.mount("pki")
    schedpki.factories.secrets.root_issuer("pki")
    schedpki.factories.secrets.role("web", "pki", allowed_domains="example.com", allow_subdomains=True)
    client = AcmeClient(schedpki.enable_acme("pki"))
    assert client.new_account(contact=["mailto:ops@example.com"]).status == 201
    assert client.new_order(["api.example.com"]).status == 201
    (mount,) = [m for m in _api(schedpki, "secrets")["pki"] if m["mount"] == "pki"]
    (account,) = mount["acme"]["accounts"]
    assert (account["status"], account["contact"], account["directory"]) == ("valid", ["mailto:ops@example.com"],
                                                                            "acme/")
    (order,) = mount["acme"]["orders"]
    assert (order["identifiers"], order["authorizations"], order["serial_number"]) == (
        ["api.example.com"], ["pending"], "")
    text = str(mount["acme"])
    assert "-----BEGIN" not in text and '"d"' not in text and "'d'" not in text  # no key material
