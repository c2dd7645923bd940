"""A downstream suite testing code that gets certificates from Vault/OpenBao, using only the public
surface of pytest-schedpki and real clients (hvac, requests)."""

import datetime

import hvac
import pytest
import requests
from cryptography import x509
from freezegun import freeze_time

PKI = "../fixtures/pki.yaml"


# --- README: real client and certificate assertions -----------------------------------------------
@pytest.mark.schedpki(seed=PKI)
def test_issue_with_hvac(schedpki):
    client = hvac.Client(url=schedpki.secrets.url, token="web-issuer-token")
    response = client.secrets.pki.generate_certificate("web", "api.example.com", mount_point="pki_int")
    serial = response["data"]["serial_number"]
    record = schedpki.certs.assert_issued(common_name="api.example.com", role="web", mount="pki_int")
    assert record.serial_number == serial and record.issuer_name == "int"
    chain = schedpki.certs.verify_chain(record)
    assert [c.subject.rfc4514_string() for c in chain] == [
        "CN=api.example.com", "CN=Example Intermediate CA", "CN=Example Root CA"]


@pytest.mark.schedpki(seed=PKI)
def test_policy_denies_other_roles(schedpki):
    client = hvac.Client(url=schedpki.secrets.url, token="web-issuer-token")
    with pytest.raises(hvac.exceptions.Forbidden):
        client.secrets.pki.generate_certificate("short-lived", "x.example.com", mount_point="pki_int")
    with pytest.raises(hvac.exceptions.InvalidRequest, match="common name evil.org not allowed by this role"):
        client.secrets.pki.generate_certificate("web", "evil.org", mount_point="pki_int")


# --- README: revocation and CRLs ------------------------------------------------------------------
@pytest.mark.schedpki(seed=PKI)
def test_revocation_shows_on_the_crl(schedpki):
    root = hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)
    issued = root.secrets.pki.generate_certificate("web", "old.example.com", mount_point="pki_int")["data"]
    root.secrets.pki.generate_certificate("web", "new.example.com", mount_point="pki_int")
    root.secrets.pki.revoke_certificate(issued["serial_number"], mount_point="pki_int")
    schedpki.certs.assert_revoked(common_name="old.example.com")
    schedpki.certs.assert_not_revoked(common_name="new.example.com")
    crl = schedpki.certs.crl("pki_int")
    assert [format(e.serial_number, "x") for e in crl] == [issued["serial_number"].replace(":", "").lstrip("0")]
    pem = root.secrets.pki.read_crl(mount_point="pki_int")
    assert x509.load_pem_x509_crl(pem.encode()).get_revoked_certificate_by_serial_number(crl[0].serial_number)


# --- README: time -------------------------------------------------------------------------------
@pytest.mark.schedpki(seed=PKI)
def test_certificates_follow_freezegun(schedpki):
    with freeze_time("2031-05-01T12:00:00Z"):
        requests.post(f"{schedpki.secrets.url}/v1/pki_int/issue/short-lived", headers={"X-Vault-Token": "root"},
                      json={"common_name": "job.example.com"}).raise_for_status()
    record = schedpki.certs.assert_issued(common_name="job.example.com")
    assert record.certificate.not_valid_after_utc == datetime.datetime(2031, 5, 1, 12, 5, tzinfo=datetime.timezone.utc)
    schedpki.certs.verify_chain(record, at=datetime.datetime(2031, 5, 1, 12, 1, tzinfo=datetime.timezone.utc))
    with pytest.raises(AssertionError, match="is not valid at"):
        schedpki.certs.verify_chain(record, at=datetime.datetime(2031, 5, 1, 12, 6, tzinfo=datetime.timezone.utc))


# --- README: outages ------------------------------------------------------------------------------
def test_sealed_vault(schedpki):
    schedpki.seal()
    client = hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)
    assert client.sys.read_health_status(method="GET").status_code == 503
    with pytest.raises(hvac.exceptions.VaultDown):
        client.secrets.pki.list_roles()


def test_hanging_request_until_released(schedpki):
    import threading

    from pytest_schedpki import Fault

    hang = schedpki.faults.add(Fault(service="secrets", path="/v1/sys/health", hang=True, times=1))
    answers = []
    worker = threading.Thread(target=lambda: answers.append(requests.get(f"{schedpki.secrets.url}/v1/sys/health").status_code))
    worker.start()
    worker.join(0.2)
    assert answers == []                                            # still hanging
    hang.release()
    worker.join(5)
    assert answers == [200]


# --- README: factories ----------------------------------------------------------------------------
def test_factories(schedpki):
    schedpki.factories.secrets.root_issuer("pki", issuer_name="root")
    schedpki.factories.secrets.role("svc", mount="pki", allowed_domains=["svc.internal"], max_ttl="1h")
    token = schedpki.factories.secrets.token(policies={"svc": 'path "pki/issue/svc" { capabilities = ["update"] }'})
    client = hvac.Client(url=schedpki.secrets.url, token=token["client_token"])
    client.secrets.pki.generate_certificate("svc", "db.svc.internal", extra_params={"ttl": "10m"})
    schedpki.certs.assert_issued(common_name="db.svc.internal", role="svc", issuer="root")
