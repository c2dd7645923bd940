import pytest
from service_app import start_service


@pytest.mark.schedpki(seed=["pki.yaml", "service.yaml"])
def test_service_logs_in_reads_config_and_gets_a_certificate(schedpki):
    config, cert = start_service(schedpki.secrets.url, "web-role-id", "web-secret-id")
    assert config["db_host"] == "db.example.com"
    schedpki.kv.assert_read("web/config")
    record = schedpki.certs.assert_issued(common_name="api.example.com", role="web", mount="pki_int")
    assert record.serial_number == cert["serial_number"]
    login = schedpki.journal.find(path="/v1/auth/approle/login")[0]
    assert login.body["secret_id"] == "<redacted>"
