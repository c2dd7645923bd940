"""Output of issue: format x private_key_format matrix, chains, remove_roots_from_chain, leases, storage."""

import base64
import datetime
import re

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pki_leaf_helpers import T0, cert_of, issuer_cert

UTC = datetime.timezone.utc
MERGE = {"Content-Type": "application/merge-patch+json"}
DATA_KEYS = {"ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "private_key", "private_key_type",
             "serial_number"}

@pytest.mark.parametrize("fmt", ["pem", "der", "pem_bundle"])
@pytest.mark.parametrize("pkf", ["der", "pkcs8", "bogus", "pem"])
def test_format_matrix_ec(bao, fmt, pkf):
    data = bao.post("pki/issue/ec", {"common_name": "f.example.com", "format": fmt, "private_key_format": pkf,
                                     "ttl": "1h"}).json()["data"]
    pkcs8 = pkf == "pkcs8"
    root = issuer_cert(bao)
    if fmt == "der":
        cert = x509.load_der_x509_certificate(base64.b64decode(data["certificate"]))
        assert x509.load_der_x509_certificate(base64.b64decode(data["issuing_ca"])) == root
        assert [x509.load_der_x509_certificate(base64.b64decode(c)) for c in data["ca_chain"]] == [root]
        der = base64.b64decode(data["private_key"])
        key = serialization.load_der_private_key(der, None)
        assert der == key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8 if pkcs8
                                        else serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption())
    else:
        header = "-----BEGIN PRIVATE KEY-----" if pkcs8 else "-----BEGIN EC PRIVATE KEY-----"
        assert data["private_key"].startswith(header) and not data["private_key"].endswith("\n")
        key = serialization.load_pem_private_key(data["private_key"].encode(), None)
        assert cert_of(data["issuing_ca"]) == root and [cert_of(c) for c in data["ca_chain"]] == [root]
        if fmt == "pem_bundle":
            blocks = re.findall(r"-----BEGIN ([A-Z ]+)-----", data["certificate"])
            assert blocks == ["EC PRIVATE KEY", "CERTIFICATE", "CERTIFICATE"]  # the bundle key stays SEC1
            certs = x509.load_pem_x509_certificates(data["certificate"].encode())
            cert = certs[0]
            assert certs[1] == root
        else:
            assert re.findall(r"-----BEGIN ([A-Z ]+)-----", data["certificate"]) == ["CERTIFICATE"]
            cert = cert_of(data["certificate"])
    assert isinstance(key, ec.EllipticCurvePrivateKey) and data["private_key_type"] == "ec"
    assert key.public_key() == cert.public_key()


def test_rsa_pkcs8_and_der(bao):
    data = bao.post("pki/issue/web", {"common_name": "f.example.com", "private_key_format": "pkcs8"}).json()["data"]
    assert data["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    data = bao.post("pki/issue/web", {"common_name": "f.example.com", "format": "der"}).json()["data"]
    key = serialization.load_der_private_key(base64.b64decode(data["private_key"]), None)
    assert base64.b64decode(data["private_key"]) == key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption())


def test_remove_roots_from_chain(bao):
    data = bao.post("pki/issue/ec", {"common_name": "a.example.com", "remove_roots_from_chain": True}).json()["data"]
    assert "ca_chain" not in data and cert_of(data["issuing_ca"]) == issuer_cert(bao)


def test_intermediate_mount_chain(bao):
    state = bao.state("pki_int")
    intermediate = state.issuers[state.default_issuer_id].certificate
    root = issuer_cert(bao)
    data = bao.post("pki_int/issue/svc", {"common_name": "a.svc.example.com"}).json()
    assert data["warnings"] == ['TTL "768h0m0s" is longer than permitted maxTTL "24h0m0s", so maxTTL is being used']
    data = data["data"]
    assert [cert_of(c) for c in data["ca_chain"]] == [intermediate, root]
    leaf = cert_of(data["certificate"])
    leaf.verify_directly_issued_by(intermediate)
    intermediate.verify_directly_issued_by(root)
    data = bao.post("pki_int/issue/svc", {"common_name": "a.svc.example.com", "remove_roots_from_chain": True}).json()["data"]
    assert [cert_of(c) for c in data["ca_chain"]] == [intermediate]
    data = bao.post("pki_int/issue/svc", {"common_name": "a.svc.example.com", "format": "pem_bundle"}).json()["data"]
    assert re.findall(r"-----BEGIN ([A-Z ]+)-----", data["certificate"]) == [
        "EC PRIVATE KEY", "CERTIFICATE", "CERTIFICATE", "CERTIFICATE"]


def test_generate_lease(bao):
    body = bao.post("pki/issue/lease", {"common_name": "l.example.com"}).json()
    assert re.fullmatch(r"pki/issue/lease/[A-Za-z0-9]{24}", body["lease_id"])
    assert body["lease_duration"] == 3600 and body["renewable"] is False
    body = bao.post("pki/issuer/root-b/issue/lease", {"common_name": "l.example.com"}).json()
    assert re.fullmatch(r"pki/issuer/root-b/issue/lease/[A-Za-z0-9]{24}", body["lease_id"])


def test_store_and_no_store(bao):
    data = bao.post("pki/issue/web", {"common_name": "s.example.com"}).json()["data"]
    record = bao.state().certs[data["serial_number"]]
    assert record.role == "web" and record.issued_at == T0 and record.pem == data["certificate"]
    assert record.issuer_id == bao.state().default_issuer_id and record.private_key_pem == data["private_key"]
    assert bao.get(f"pki/cert/{data['serial_number']}").status_code == 200
    data = bao.post("pki/issue/nostore", {"common_name": "ns.example.com"}).json()["data"]
    kept = bao.state().certs[data["serial_number"]]  # kept for test inspection only, never served
    assert kept.stored is False and kept.role == "nostore"
    assert bao.get(f"pki/cert/{data['serial_number']}").status_code == 404
    assert data["serial_number"] not in bao.call("LIST", "pki/certs").json()["data"]["keys"]


def test_delta_crl_urls_do_not_break_issuance(bao):
    """With config/urls delta_crl_distribution_points set, leaves carry one FreshestCRL extension
    (regression: it used to be added twice and issuance failed with a 500)."""
    assert bao.post("pki/config/urls", {"delta_crl_distribution_points": ["http://crl.example.com/delta"]}).status_code == 200
    r = bao.post("pki/issue/web", {"common_name": "d.example.com"})
    assert r.status_code == 200, r.text
    ext = cert_of(r.json()["data"]["certificate"]).extensions.get_extension_for_class(x509.FreshestCRL).value
    assert [p.full_name[0].value for p in ext] == ["http://crl.example.com/delta"]
