import hvac
import pytest
from cryptography import x509


@pytest.mark.schedpki(seed="pki.yaml")
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
