"""The CA-side calls of hvac 2.4 (``client.secrets.pki``) against the double."""

from __future__ import annotations

import datetime

import hvac
import pytest
from ca_helpers import cert_of
from cryptography import x509

from pytest_schedpki.secrets.engines.pki.codecs import x509 as pkix


@pytest.fixture
def client(double, pki):
    return hvac.Client(url=double.secrets_url, token="root")


def test_hvac_ca_lifecycle(client, pki):
    mp = pki.mount
    root = client.secrets.pki.generate_root("internal", "Example Root CA", extra_params={"key_type": "ec", "ttl": "87600h",
                                                                                     "issuer_name": "root-a"},
                                            mount_point=mp)
    root_pem = root["data"]["certificate"]
    assert client.secrets.pki.read_ca_certificate(mount_point=mp) == root_pem
    assert client.secrets.pki.read_ca_certificate_chain(mount_point=mp) == root_pem
    crl = x509.load_pem_x509_crl(client.secrets.pki.read_crl(mount_point=mp).encode())
    assert crl.issuer == cert_of(root_pem).subject
    assert client.secrets.pki.rotate_crl(mount_point=mp)["data"] == {"success": True}
    urls = client.secrets.pki.set_urls({"issuing_certificates": ["http://x/ca"]}, mount_point=mp)
    assert urls["data"]["issuing_certificates"] == ["http://x/ca"]
    assert client.secrets.pki.read_urls(mount_point=mp)["data"]["issuing_certificates"] == ["http://x/ca"]
    assert client.secrets.pki.set_crl_configuration(expiry="48h", mount_point=mp)["data"]["expiry"] == "48h"
    assert client.secrets.pki.read_crl_configuration(mount_point=mp)["data"]["expiry"] == "48h"
    issuers = client.secrets.pki.list_issuers(mount_point=mp)["data"]
    assert issuers["keys"] == [root["data"]["issuer_id"]]
    read = client.secrets.pki.read_issuer("root-a", mount_point=mp)["data"]
    assert read["certificate"] == root_pem + "\n"
    updated = client.secrets.pki.update_issuer("root-a", extra_params={"issuer_name": "renamed"}, mount_point=mp)
    assert updated["data"]["issuer_name"] == "renamed"

    csr = client.secrets.pki.generate_intermediate("internal", "Example Intermediate", extra_params={"key_type": "ec"},
                                                   mount_point=mp)["data"]["csr"]
    state = pki.state
    issuer = state.issuers[state.default_issuer_id]
    request = pkix.parse_csr(csr)
    now = datetime.datetime.now(datetime.timezone.utc)
    signed = pkix.sign_certificate(issuer_cert=issuer.certificate, issuer_key=state.keys[issuer.key_id].private_key,
                                   public_key=request.public_key(), subject=request.subject, serial=pkix.new_serial(),
                                   not_before=now, not_after=now + datetime.timedelta(hours=1), is_ca=True)
    result = client.secrets.pki.set_signed_intermediate(pkix.pem_of(signed), mount_point=mp)["data"]
    assert len(result["imported_issuers"]) == 1 and result["existing_issuers"] is None
    again = client.secrets.pki.submit_ca_information(pkix.pem_of(signed), mount_point=mp)["data"]
    assert again["existing_issuers"] == result["imported_issuers"]
    client.secrets.pki.delete_issuer(result["imported_issuers"][0], mount_point=mp)
    assert client.secrets.pki.list_issuers(mount_point=mp)["data"]["keys"] == [root["data"]["issuer_id"]]
    client.secrets.pki.delete_root(mount_point=mp)
    with pytest.raises(hvac.exceptions.InvalidPath):
        client.secrets.pki.list_issuers(mount_point=mp)
