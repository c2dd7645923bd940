import hvac
import pytest


@pytest.mark.schedpki(seed="pki.yaml")
def test_issue_with_hvac(schedpki):
    client = hvac.Client(url=schedpki.secrets.url, token="web-issuer-token")
    response = client.secrets.pki.generate_certificate("web", "api.example.com", mount_point="pki_int")
    serial = response["data"]["serial_number"]
    record = schedpki.certs.assert_issued(common_name="api.example.com", role="web", mount="pki_int")
    assert record.serial_number == serial and record.issuer_name == "int"
    chain = schedpki.certs.verify_chain(record)
    assert [c.subject.rfc4514_string() for c in chain] == [
        "CN=api.example.com", "CN=Example Intermediate CA", "CN=Example Root CA"]
