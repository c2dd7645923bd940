"""AppRole inside the double: secret-ID expiry on the double's clock, tidy, the last use, what
disabling the method and resetting the double do, the remote address, the token TTL rules, the
factory and the journal's redaction of secret IDs."""

from __future__ import annotations

import datetime

import pytest
import requests

from pytest_schedpki.secrets.auth.approle.model import Role, parse_metadata
from pytest_schedpki.secrets.framework.lease_ttl import calculate_ttl
from pytest_schedpki.secrets.framework.logical import LogicalError
from pytest_schedpki.secrets.http import dispatch

ROOT = {"X-Vault-Token": "root"}
UTC = datetime.timezone.utc


def _post(schedpki, path, body, token="root"):
    headers = {"X-Vault-Token": token} if token else {}
    return requests.post(f"{schedpki.secrets.url}/v1/{path}", headers=headers, json=body)


def test_secret_id_ttl_runs_on_the_manual_clock_and_tidy_removes_it(schedpki):
    clock = schedpki.clock.use("manual", datetime.datetime(2030, 1, 1, tzinfo=UTC))
    creds = schedpki.factories.secrets.approle("web", role_id="rid", secret_id_ttl="10m")
    lookup = _post(schedpki, "auth/approle/role/web/secret-id/lookup", {"secret_id": creds["secret_id"]}).json()["data"]
    assert (lookup["creation_time"], lookup["expiration_time"]) == ("2030-01-01T00:00:00Z", "2030-01-01T00:10:00Z")
    clock.advance(599)
    assert _post(schedpki, "auth/approle/login", {"role_id": "rid", "secret_id": creds["secret_id"]}, None).status_code == 200
    clock.advance(1)
    r = _post(schedpki, "auth/approle/login", {"role_id": "rid", "secret_id": creds["secret_id"]}, None)
    assert (r.status_code, r.json()) == (400, {"errors": ["invalid role or secret ID"]})
    assert _post(schedpki, "auth/approle/role/web/secret-id/lookup", {"secret_id": creds["secret_id"]}).status_code == 204
    r = requests.request("LIST", f"{schedpki.secrets.url}/v1/auth/approle/role/web/secret-id", headers=ROOT)
    assert r.json()["data"]["keys"] == [creds["secret_id_accessor"]]  # expired, still stored until tidy
    assert _post(schedpki, "auth/approle/tidy/secret-id", {}).status_code == 202
    r = requests.request("LIST", f"{schedpki.secrets.url}/v1/auth/approle/role/web/secret-id", headers=ROOT)
    assert (r.status_code, r.json()) == (404, {"errors": []})


def test_last_use_removes_the_secret_id(schedpki):
    creds = schedpki.factories.secrets.approle("web", secret_id="s1", secret_id_num_uses=1)
    body = {"role_id": creds["role_id"], "secret_id": "s1"}
    assert _post(schedpki, "auth/approle/login", body, None).status_code == 200
    assert _post(schedpki, "auth/approle/login", body, None).json() == {"errors": ["invalid role or secret ID"]}
    assert _post(schedpki, "auth/approle/role/web/secret-id/lookup", {"secret_id": "s1"}).status_code == 204


def test_login_token_renews_and_policies_apply(schedpki):
    schedpki.factories.secrets.policy("reader", 'path "secret/data/app/*" { capabilities = ["read"] }')
    schedpki.factories.secrets.kv_secret("app/config", {"db": "x"})
    creds = schedpki.factories.secrets.approle("web", token_policies="reader", token_ttl="15m")
    auth = _post(schedpki, "auth/approle/login", {"role_id": creds["role_id"], "secret_id": creds["secret_id"]},
                 None).json()["auth"]
    token = auth["client_token"]
    assert (auth["lease_duration"], auth["policies"], auth["orphan"]) == (900, ["default", "reader"], True)
    r = requests.get(f"{schedpki.secrets.url}/v1/secret/data/app/config", headers={"X-Vault-Token": token})
    assert r.json()["data"]["data"] == {"db": "x"}
    r = requests.get(f"{schedpki.secrets.url}/v1/secret/metadata/app/config", headers={"X-Vault-Token": token})
    assert (r.status_code, r.json()) == (403, {"errors": ["1 error occurred:\n\t* permission denied\n\n"]})
    r = _post(schedpki, "auth/token/renew-self", {}, token)
    assert r.status_code == 200 and r.json()["auth"]["client_token"] == token
    lookup = requests.get(f"{schedpki.secrets.url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token}).json()
    assert (lookup["data"]["path"], lookup["data"]["display_name"]) == ("auth/approle/login", "approle")


def test_disabling_the_method_revokes_its_tokens_and_reset_removes_it(schedpki):
    creds = schedpki.factories.secrets.approle("web")
    token = _post(schedpki, "auth/approle/login", {"role_id": creds["role_id"], "secret_id": creds["secret_id"]},
                  None).json()["auth"]["client_token"]
    assert requests.delete(f"{schedpki.secrets.url}/v1/sys/auth/approle", headers=ROOT).status_code == 204
    r = requests.get(f"{schedpki.secrets.url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token})
    assert (r.status_code, r.json()) == (403, {"errors": ["permission denied"]})
    schedpki.factories.secrets.approle("web")
    schedpki.double.reset()
    assert schedpki.secrets.state.auth_mounts == {}


def test_without_http_the_remote_address_is_empty(schedpki):
    creds = schedpki.factories.secrets.approle("web", secret_id_bound_cidrs="127.0.0.0/8")
    body = {"role_id": creds["role_id"], "secret_id": creds["secret_id"]}
    with pytest.raises(LogicalError) as exc:
        dispatch(schedpki.secrets.state, "update", "auth/approle/login", body, None)
    assert exc.value.errors == ['source address "" unauthorized by CIDR restrictions on the role: %!w(<nil>)']
    assert dispatch(schedpki.secrets.state, "update", "auth/approle/login", body, None,
                    remote_addr="127.0.0.1").auth["metadata"] == {"role_name": "web"}


def _login_ttl(role: Role, default_ttl: int, max_ttl: int) -> tuple[int, list[str]]:
    """A login's TTL as login() computes it (CalculateTTL with the role's values and the mount's)."""
    now = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    mount = (default_ttl, role.token_max_ttl if 0 < role.token_max_ttl < max_ttl else max_ttl)
    return calculate_ttl(0, role.token_ttl, role.token_period, role.token_explicit_max_ttl, now, now, mount)


def test_token_ttl_rules():
    day = 86400
    assert _login_ttl(Role("r", "id"), 2764800, 2764800) == (2764800, [])
    assert _login_ttl(Role("r", "id", token_ttl=3 * day, token_max_ttl=day), 2764800, 2764800) == (
        day, ['TTL of "72h" exceeded the effective max_ttl of "24h"; TTL value is capped accordingly'])
    assert _login_ttl(Role("r", "id", token_ttl=600), 3600, 1200) == (600, [])
    assert _login_ttl(Role("r", "id"), 7200, 3600) == (
        3600, ['TTL of "2h" exceeded the effective max_ttl of "1h"; TTL value is capped accordingly'])
    assert _login_ttl(Role("r", "id", token_period=300, token_ttl=600), 3600, 3600) == (300, [])
    assert _login_ttl(Role("r", "id", token_period=7200), 3600, 3600) == (
        3600, ['period of "2h" exceeded the effective max_ttl of "1h"; period value is capped accordingly'])
    assert _login_ttl(Role("r", "id", token_ttl=600, token_explicit_max_ttl=60), 3600, 3600) == (
        60, ['TTL of "10m" exceeded the effective max_ttl of "1m"; TTL value is capped accordingly'])


def test_metadata_forms():
    assert parse_metadata('{"a": "b", "n": 1}') == {"a": "b", "n": "1"}
    assert parse_metadata("a=b, c=d") == {"a": "b", "c": "d"}
    assert parse_metadata("") == {}
    with pytest.raises(LogicalError) as exc:
        parse_metadata("a=b,oops")
    assert exc.value.errors == ["failed to parse metadata: failed to parse the input: invalid <key,value> format"]


def test_journal_redacts_secret_ids(schedpki):
    creds = schedpki.factories.secrets.approle("web", secret_id="very-secret")
    _post(schedpki, "auth/approle/login", {"role_id": creds["role_id"], "secret_id": "very-secret"}, None)
    _post(schedpki, "auth/approle/role/web/secret-id", {})
    entries = schedpki.journal.entries()
    login = next(e for e in entries if e.path.endswith("/login"))
    assert login.body == {"role_id": creds["role_id"], "secret_id": "<redacted>"}
    generated = next(e for e in entries if e.path.endswith("/secret-id"))
    assert generated.response["data"]["secret_id"] == "<redacted>"
    assert "very-secret" not in repr(entries)


def test_reset_restores_the_token_method_tuning(schedpki):
    r = requests.post(f"{schedpki.secrets.url}/v1/sys/auth/token/tune", headers=ROOT, json={"default_lease_ttl": "1h"})
    assert r.status_code == 204
    assert requests.get(f"{schedpki.secrets.url}/v1/sys/auth/token/tune", headers=ROOT).json()["data"][
        "default_lease_ttl"] == 3600
    schedpki.double.reset()
    assert requests.get(f"{schedpki.secrets.url}/v1/sys/auth/token/tune", headers=ROOT).json()["data"][
        "default_lease_ttl"] == 768 * 3600
