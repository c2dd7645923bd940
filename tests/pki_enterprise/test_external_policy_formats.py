"""The output parameters of ``external-policy/sign`` and ``external-policy/sign-intermediate`` (Vault
Enterprise CIEPS, emulated): ``format``, ``private_key_format`` and ``remove_roots_from_chain`` shape
the answer as for the non-external counterparts; the CSR's key never leaves the caller."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtensionOID
from ent_helpers import cert_of, make_csr, simple_policy

from pytest_schedpki.secrets.engines.pki.enterprise.external_policy import set_external_policy

CA_EXT = [x509.Extension(ExtensionOID.BASIC_CONSTRAINTS, True, x509.BasicConstraints(ca=True, path_length=0))]


@pytest.fixture(params=["sign", "sign-intermediate"])
def segment(request, ent):
    ica = request.param == "sign-intermediate"
    set_external_policy(ent.backend, simple_policy(cn="Issuing CA" if ica else None, dns=[] if ica else None,
                                                   extensions=CA_EXT if ica else None))
    return request.param


def test_format_der(ent, segment):
    csr, key = make_csr("fmt.example.com")
    r = ent.post(f"pki/external-policy/{segment}", {"csr": csr, "format": "der", "private_key_format": "pkcs8"})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    cert = x509.load_der_x509_certificate(base64.b64decode(data["certificate"]))
    assert cert.public_key() == key.public_key()
    root = x509.load_der_x509_certificate(base64.b64decode(data["issuing_ca"]))
    cert.verify_directly_issued_by(root)
    assert "private_key" not in data and "private_key_format" not in data


def test_format_pem_bundle_and_remove_roots_from_chain(ent, segment):
    csr, _ = make_csr("bundle.example.com")
    r = ent.post(f"pki/issuer/root-b/external-policy/{segment}/team", {"csr": csr, "format": "pem_bundle",
                                                                        "remove_roots_from_chain": True})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["certificate"].count("-----BEGIN CERTIFICATE-----") == 2  # the certificate, then its issuer
    cert_of(data["certificate"]).verify_directly_issued_by(ent.issuer("root-b").certificate)
    if segment == "sign":  # a leaf's chain is its issuers: here only the root, which the parameter removes
        kept = ent.post(f"pki/external-policy/{segment}", {"csr": csr}).json()["data"]
        assert "ca_chain" not in data and kept["ca_chain"] == [kept["issuing_ca"]]


def test_bad_format_is_refused_before_the_service(ent, segment):
    csr, _ = make_csr("bad.example.com")
    r = ent.post(f"pki/external-policy/{segment}", {"csr": csr, "format": "p12"})
    assert r.status_code == 400
    assert r.json() == {"errors": ['the "format" path parameter must be "pem", "der", or "pem_bundle"']}
