import base64
import datetime
from urllib.parse import quote

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509 import ocsp
from freezegun import freeze_time


def ask(schedpki, mount, leaf, issuer):
    """One OCSP query, GET form (the URL-encoded base64 of the DER request in the path, as RFC 6960
    asks: a raw ``//`` in the base64 would be a path OpenBao redirects), unauthenticated."""
    der = ocsp.OCSPRequestBuilder().add_certificate(leaf, issuer, hashes.SHA256()).build().public_bytes(
        serialization.Encoding.DER)
    r = requests.get(f"{schedpki.secrets.url}/v1/{mount}/ocsp/" + quote(base64.b64encode(der).decode(), safe=""),
                     timeout=10)
    assert r.headers["Content-Type"] == "application/ocsp-response"
    response = ocsp.load_der_ocsp_response(r.content)
    assert response.response_status == ocsp.OCSPResponseStatus.SUCCESSFUL
    issuer.public_key().verify(response.signature, response.tbs_response_bytes,  # signed by the issuer's key
                               ec.ECDSA(response.signature_hash_algorithm))
    return response


@pytest.mark.schedpki(seed="pki.yaml")
def test_ocsp_revocation_check(schedpki):
    url, root = schedpki.secrets.url, {"X-Vault-Token": schedpki.secrets.token}
    with freeze_time("2031-05-01T12:00:00Z"):
        issued = requests.post(f"{url}/v1/pki_int/issue/web", headers=root, timeout=10,
                               json={"common_name": "api.example.com"}).json()["data"]
        leaf = x509.load_pem_x509_certificate(issued["certificate"].encode())
        issuer = x509.load_pem_x509_certificate(issued["issuing_ca"].encode())
        good = ask(schedpki, "pki_int", leaf, issuer)
        assert good.certificate_status == ocsp.OCSPCertStatus.GOOD
        assert good.this_update_utc == datetime.datetime(2031, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
        assert good.next_update_utc - good.this_update_utc == datetime.timedelta(hours=12)  # config/crl ocsp_expiry
        requests.post(f"{url}/v1/pki_int/revoke", headers=root, json={"serial_number": issued["serial_number"]},
                      timeout=10).raise_for_status()
    revoked = ask(schedpki, "pki_int", leaf, issuer)
    assert revoked.certificate_status == ocsp.OCSPCertStatus.REVOKED
    assert revoked.revocation_time_utc == datetime.datetime(2031, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
    assert revoked.revocation_reason is None  # OpenBao writes no reason
