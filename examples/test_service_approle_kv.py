"""A downstream suite testing a service that logs in with AppRole, reads its configuration from KV and
gets its TLS certificate from PKI - the path of a real service, against the double instead of a
`bao server -dev` container."""

import hvac
import pytest

PKI = "../fixtures/pki.yaml"
SERVICE = "../fixtures/service.yaml"


# --- the application code under test ---------------------------------------------------------------
def start_service(vault_url, role_id, secret_id):
    client = hvac.Client(url=vault_url)
    client.auth.approle.login(role_id, secret_id)
    config = client.secrets.kv.v2.read_secret_version(
        "web/config", raise_on_deleted_version=True)["data"]["data"]
    cert = client.secrets.pki.generate_certificate(
        "web", config["hostname"], mount_point="pki_int")["data"]
    client.auth.token.renew_self()
    return config, cert


# --- README: AppRole login, KV configuration and a certificate ----------------------------------------
@pytest.mark.schedpki(seed=[PKI, SERVICE])
def test_service_logs_in_reads_config_and_gets_a_certificate(schedpki):
    config, cert = start_service(schedpki.secrets.url, "web-role-id", "web-secret-id")
    assert config["db_host"] == "db.example.com"
    schedpki.kv.assert_read("web/config")
    record = schedpki.certs.assert_issued(common_name="api.example.com", role="web", mount="pki_int")
    assert record.serial_number == cert["serial_number"]
    login = schedpki.journal.find(path="/v1/auth/approle/login")[0]
    assert login.body["secret_id"] == "<redacted>"


# --- README: credentials from factories, a rotated secret -------------------------------------------
@pytest.mark.schedpki(seed=PKI)
def test_service_reads_the_current_version_and_its_secret_id_is_used_once(schedpki):
    secrets = schedpki.factories.secrets
    secrets.kv_secret("web/config", {"hostname": "old.example.com"})
    secrets.kv_secret("web/config", {"hostname": "www.example.com"})
    secrets.policy("web-config", 'path "secret/data/web/*" { capabilities = ["read"] }')
    creds = secrets.approle("web", token_policies=["web-issuer", "web-config"], secret_id_num_uses=1)
    config, _ = start_service(schedpki.secrets.url, creds["role_id"], creds["secret_id"])
    assert config["hostname"] == "www.example.com"
    assert schedpki.kv.assert_read("web/config").version == 2
    with pytest.raises(hvac.exceptions.InvalidRequest, match="invalid role or secret ID"):
        start_service(schedpki.secrets.url, creds["role_id"], creds["secret_id"])
