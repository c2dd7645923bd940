"""Parity: what ``bao status`` and operators read - sys/leader, sys/init, sys/key-status, sys/auth,
sys/internal/ui/mounts - and the operator paths a dev server refuses to read (405)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity


def test_leader_and_init_unauthenticated(pair):
    ex = pair.send("GET", "/v1/sys/leader", token=None).same().expect(200)
    ex.check(lambda side, resp: _equal(resp.json(), {"ha_enabled": False}))
    ex = pair.send("GET", "/v1/sys/init", token=None).same().expect(200)
    ex.check(lambda side, resp: _equal(resp.json(), {"initialized": True}))
    pair.send("PUT", "/v1/sys/init", json={"secret_shares": 1, "secret_threshold": 1}).same().expect(
        400, errors=["Vault is already initialized"])


def _equal(got, want):
    assert got == want, got


def test_key_status(pair):
    pair.send("GET", "/v1/sys/key-status", token=None).same().expect(403, errors=["permission denied"])
    ex = pair.send("GET", "/v1/sys/key-status").same(volatile=("encryptions",)).expect(200, data={"term": 1})

    def shape(side, resp):
        body = resp.json()
        assert sorted(body["data"]) == ["encryptions", "install_time", "term"]
        assert body["term"] == 1 and body["install_time"] == body["data"]["install_time"]

    ex.check(shape)


def test_auth_list_has_the_token_method(pair):
    ex = pair.send("GET", "/v1/sys/auth").same().expect(200)

    def token_method(side, resp):
        body = resp.json()
        entry = body["data"]["token/"]
        assert body["token/"] == entry and list(body["data"]) == ["token/"]
        assert entry["type"] == "token" and entry["accessor"].startswith("auth_token_")
        assert entry["config"]["token_type"] == "default-service"

    ex.check(token_method)


def test_internal_ui_mounts_lists_token_and_pki(pair):
    pair.enable_pki(max_lease_ttl=None)
    ex = pair.send("GET", "/v1/sys/internal/ui/mounts").same(types_only=True).expect(200)

    def listed(side, resp):
        data = resp.json()["data"]
        assert sorted(data) == ["auth", "secret"] and list(data["auth"]) == ["token/"]
        assert data["secret"][f"{pair.mount}/"]["type"] == "pki"

    ex.check(listed)


@pytest.mark.parametrize("path", ["sys/rekey/init", "sys/generate-root/attempt"])
def test_operator_reads_unsupported(pair, path):
    pair.send("GET", f"/v1/{path}").same().expect(405, errors=["unsupported operation"])


def test_pki_config_cluster_and_acme(pair):
    pair.enable_pki(max_lease_ttl=None)
    pair.send("GET", "/v1/{mount}/config/cluster").same().expect(200, data={"aia_path": "", "path": ""})
    pair.send("POST", "/v1/{mount}/config/cluster", json={"path": "http://a/v1/x", "aia_path": "ftp://b"}).same(
        ).expect(200, data={"aia_path": "ftp://b", "path": "http://a/v1/x"})
    for body, field in (({"path": "not a url"}, "path"), ({"aia_path": "http:/x"}, "aia_path"),
                        ({"path": ""}, "path")):
        pair.send("POST", "/v1/{mount}/config/cluster", json=body).same().expect(
            500, errors=[f"1 error occurred:\n\t* invalid, non-URL {field} given to cluster: {body[field]}\n\n"])
    pair.send("GET", "/v1/{mount}/config/cluster").same().expect(200, data={"aia_path": "ftp://b",
                                                                            "path": "http://a/v1/x"})
    pair.send("POST", "/v1/{mount}/config/cluster", json={"bogus": 1}).same().expect(
        200, warnings=["Endpoint ignored these unrecognized parameters: [bogus]"])
    pair.send("GET", "/v1/{mount}/config/acme").same().expect(200, data={
        "allow_role_ext_key_usage": False, "allowed_issuers": ["*"], "allowed_roles": ["*"],
        "default_directory_policy": "sign-verbatim", "dns_resolver": "", "eab_policy": "not-required",
        "enabled": False})
