"""The application's own tests, written against the schedpki double (a user's suite)."""

import datetime

import hvac
import pytest
from app import CertificateClient, load_config, save_config
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from freezegun import freeze_time

from pytest_schedpki import Fault


@pytest.fixture
def certs(schedpki):
    return CertificateClient(schedpki.secrets.url, schedpki.secrets.token)


def test_issue_certificate(certs, schedpki):
    issued = certs.issue("api.example.com")
    cert = x509.load_pem_x509_certificate(issued["certificate"].encode())
    assert cert.subject.rfc4514_string() == "CN=api.example.com"
    assert schedpki.certs.assert_issued(common_name="api.example.com", role="web").serial_number == issued["serial_number"]


def test_sign_csr(certs):
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "worker.example.com")])).sign(key, hashes.SHA256())
    signed = certs.sign(csr.public_bytes(serialization.Encoding.PEM).decode(), "worker.example.com")
    cert = x509.load_pem_x509_certificate(signed["certificate"].encode())
    assert cert.public_key().public_numbers() == key.public_key().public_numbers()


def test_revoke(certs):
    issued = certs.issue("old.example.com")
    certs.revoke(issued["serial_number"])
    assert certs.revoked_at(issued["serial_number"]) > 0


def test_read_role(certs):
    assert certs.allowed_domains() == ["example.com"]


def test_other_domains_are_refused(certs):
    with pytest.raises(hvac.exceptions.InvalidRequest, match="common name evil.org not allowed by this role"):
        certs.issue("evil.org")


def test_config_from_kv(schedpki):
    assert load_config(schedpki.secrets.url, schedpki.secrets.token)["hostname"] == "api.example.com"


def test_config_written_and_read_back(schedpki):
    save_config(schedpki.secrets.url, schedpki.secrets.token, "app/feature", {"enabled": "yes"})
    assert load_config(schedpki.secrets.url, schedpki.secrets.token, "app/feature") == {"enabled": "yes"}


def test_config_read_is_recorded(schedpki):
    load_config(schedpki.secrets.url, schedpki.secrets.token)
    schedpki.kv.assert_read("app/config", mount="kv")


def test_issue_is_in_the_journal(certs, schedpki):
    certs.issue("logged.example.com")
    schedpki.journal.assert_request_made("POST", "/v1/pki/issue/web", status=200)


def test_certificate_dates_follow_frozen_time(certs):
    with freeze_time("2031-05-01T12:00:00Z"):
        issued = certs.issue("job.example.com")
    cert = x509.load_pem_x509_certificate(issued["certificate"].encode())
    assert cert.not_valid_after_utc == datetime.datetime(2031, 5, 1, 13, 0, tzinfo=datetime.timezone.utc)


def test_role_from_a_factory(schedpki):
    schedpki.factories.secrets.role("internal", mount="pki", allowed_domains=["svc.internal"], allow_subdomains=True,
                                    key_type="ec")
    client = CertificateClient(schedpki.secrets.url, schedpki.secrets.token, role="internal")
    assert client.issue("db.svc.internal")["serial_number"]


def test_issue_retries_an_outage(certs, schedpki):
    outage = schedpki.faults.add(Fault(service="secrets", path="/v1/pki/issue/web", status=503, times=1))
    assert certs.issue_with_retry("api.example.com")["serial_number"]
    assert outage.hits == 1


def test_certificate_lives_two_hours(certs):
    cert = x509.load_pem_x509_certificate(certs.issue("api.example.com")["certificate"].encode())
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=2)  # the role says 1h


def test_database_host(schedpki):
    assert load_config(schedpki.secrets.url, schedpki.secrets.token)["db_host"] == "db.internal"  # the seed says db.example.com
