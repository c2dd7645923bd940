"""intermediate/generate/:type, intermediate/set-signed and the issuers/import paths.

The CSR is signed with :func:`pytest_schedpki.secrets.engines.pki.codecs.x509.sign_certificate` (``root/sign-intermediate``
belongs to the issue/sign side) using the root mount's key, then imported back with set-signed.
"""

from __future__ import annotations

import datetime

import pytest
from ca_helpers import AIA_WARNING, Pki, cert_of, errors
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

from pytest_schedpki.secrets.engines.pki.codecs import x509 as pkix

INT_AIA = AIA_WARNING + (" Since this certificate is an intermediate, it might be useful to regenerate this certificate "
                         "after fixing this problem for the root mount.")


def _sign_csr(root_pki, csr_pem: str) -> x509.Certificate:
    """What root/sign-intermediate would do: a CA certificate for the CSR's key, signed by the root."""
    state = root_pki.state
    issuer = state.issuers[state.default_issuer_id]
    csr = pkix.parse_csr(csr_pem)
    now = datetime.datetime.now(datetime.timezone.utc)
    return pkix.sign_certificate(issuer_cert=issuer.certificate, issuer_key=state.keys[issuer.key_id].private_key,
                                 public_key=csr.public_key(), subject=csr.subject, serial=pkix.new_serial(),
                                 not_before=now - datetime.timedelta(seconds=30), not_after=now + datetime.timedelta(hours=24),
                                 is_ca=True)


@pytest.fixture
def pki_int(double):

    name = "pki_int_ca"
    double.secrets.enable_mount(name, max_lease_ttl=43800 * 3600)
    yield Pki(double, name)
    double.secrets.disable_mount(name)


def test_generate_csr(pki_int):
    resp = pki_int.ok("POST", "intermediate/generate/internal", {"common_name": "Example Intermediate CA",
                                                                 "key_type": "ec", "key_bits": 256})
    assert sorted(resp["data"]) == ["csr", "key_id"] and resp["warnings"] == [INT_AIA]
    csr = x509.load_pem_x509_csr(resp["data"]["csr"].encode())
    assert not resp["data"]["csr"].endswith("\n") and csr.is_signature_valid
    assert csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "Example Intermediate CA"
    assert isinstance(csr.signature_hash_algorithm, hashes.SHA256)
    # a CN that is no hostname gives no SAN; no BasicConstraints unless asked
    assert len(csr.extensions) == 0
    assert pki_int.ok("LIST", "keys")["data"]["keys"] == [resp["data"]["key_id"]]
    assert pki_int.call("LIST", "issuers").status_code == 404

    exported = pki_int.ok("POST", "intermediate/generate/exported", {
        "common_name": "int.example.com", "key_type": "ec", "key_name": "ky", "ou": "Eng", "organization": "Acme",
        "add_basic_constraints": True, "format": "pem_bundle"})["data"]
    assert sorted(exported) == ["csr", "key_id", "private_key", "private_key_type"]
    assert exported["csr"].startswith(exported["private_key"] + "\n-----BEGIN CERTIFICATE REQUEST-----")
    csr = x509.load_pem_x509_csr(exported["csr"].split("\n", exported["private_key"].count("\n") + 1)[-1].encode())
    assert csr.subject.rfc4514_string() == "CN=int.example.com,OU=Eng,O=Acme"
    assert list(csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value) == [x509.DNSName("int.example.com")]
    bc = csr.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca and bc.value.path_length is None
    existing = pki_int.ok("POST", "intermediate/generate/existing", {"common_name": "again", "key_ref": "ky"})["data"]
    assert existing["key_id"] == exported["key_id"]
    bad = pki_int.call("POST", "intermediate/generate/bogus", {"common_name": "x"})
    assert errors(bad) == ['the "exported" path parameter must be "internal", "existing", exported" or "kms"']


def test_set_signed_chain_verifies(pki, pki_int):
    root = pki.root(common_name="Example Root CA", issuer_name="root-a")
    gen = pki_int.ok("POST", "issuers/generate/intermediate/internal", {"common_name": "Example Intermediate CA",
                                                                        "key_type": "ec"})["data"]
    int_cert = _sign_csr(pki, gen["csr"])
    bundle = pkix.pem_of(int_cert) + "\n" + root["certificate"]
    resp = pki_int.ok("POST", "intermediate/set-signed", {"certificate": bundle})
    data = resp["data"]
    assert resp["warnings"] == [AIA_WARNING]
    assert (data["existing_issuers"], data["existing_keys"], data["imported_keys"]) == (None, None, None)
    assert len(data["imported_issuers"]) == 2
    int_id, root_id = data["imported_issuers"]
    assert data["mapping"] == {int_id: gen["key_id"], root_id: ""}
    listed = pki_int.ok("LIST", "issuers")["data"]["key_info"]
    assert listed[int_id]["is_default"] and listed[root_id]["key_id"] == "" and listed[int_id]["issuer_name"] == ""
    read = pki_int.ok("GET", "issuer/default")["data"]
    assert read["issuer_id"] == int_id and read["revocation_signature_algorithm"] == ""
    assert read["ca_chain"] == [pkix.pem_of(int_cert) + "\n", root["certificate"] + "\n"]
    chain = pki_int.call("GET", "ca_chain", token=None)
    assert chain.headers["Content-Type"] == "application/pkix-cert"
    assert not chain.text.endswith("\n")
    got_int, got_root = [x509.load_der_x509_certificate(der) for _, der in pkix.pem_blocks(chain.text)]
    assert (got_int, got_root) == (int_cert, cert_of(root["certificate"]))
    got_int.verify_directly_issued_by(got_root)
    got_root.verify_directly_issued_by(got_root)
    assert not pki_int.state.certs  # imported issuers are not added to the certificate store
    again = pki_int.ok("POST", "issuers/import/cert", {"pem_bundle": bundle})["data"]
    assert again["imported_issuers"] is None and again["existing_issuers"] == [int_id, root_id]


def test_import_errors_and_bundle_with_key(pki, pki_int):
    cases = [
        ({"certificate": ""}, "'pem_bundle' and 'certificate' parameters were empty"),
        ({"certificate": "short"}, "provided data for import was too short; perhaps a path was passed to the API rather "
                                   "than the contents of a PEM file"),
        ({"certificate": "x" * 100}, "error when parsing block 1: invalid PEM data"),
    ]
    for body, message in cases:
        resp = pki_int.call("POST", "intermediate/set-signed", body)
        assert (resp.status_code, errors(resp)) == (400, [message])
    exported = pki.root(kind="exported", common_name="Ext")
    bundle = exported["private_key"] + "\n" + exported["certificate"]
    refused = pki_int.call("POST", "issuers/import/cert", {"pem_bundle": bundle})
    assert errors(refused) == ["private keys found in the PEM bundle but not allowed by the path; use /issuers/import/bundle"]
    trailing = pki_int.call("POST", "intermediate/set-signed", {"certificate": exported["certificate"] + "\nxxxx"})
    assert errors(trailing) == ["error when parsing block 2: invalid PEM data"]
    imported = pki_int.ok("POST", "issuers/import/bundle", {"pem_bundle": bundle})["data"]
    (issuer_id,), (key_id,) = imported["imported_issuers"], imported["imported_keys"]
    assert imported["mapping"] == {issuer_id: key_id}
    assert pki_int.ok("GET", "config/issuers")["data"]["default"] == issuer_id
    key = serialization.load_pem_private_key(exported["private_key"].encode(), None)
    assert pki_int.state.keys[key_id].private_key.private_numbers() == key.private_numbers()
    not_ca = pkix.sign_certificate(issuer_cert=None, issuer_key=key, public_key=key.public_key(),
                                   subject=pkix.build_subject(common_name="not a ca"), serial=pkix.new_serial(),
                                   not_before=datetime.datetime.now(datetime.timezone.utc),
                                   not_after=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
    resp = pki_int.call("POST", "config/ca", {"pem_bundle": pkix.pem_of(not_ca)})
    assert errors(resp)[0].startswith("Error parsing issuer 0: Refusing to import non-CA certificate\n-----BEGIN CERTIFICATE")
