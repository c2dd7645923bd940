import hvac
import pytest
from service_app import start_service


@pytest.mark.schedpki(seed="pki.yaml")
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
