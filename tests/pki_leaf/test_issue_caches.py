"""What issue/sign remember between requests (a role's profile, an issuer's key id, a parsed CSR and its
signature verdict) never outlives what it was derived from: a rewritten role, a reset to the baseline,
another CSR text, a refused input."""

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pki_leaf_helpers import cert_of, make_csr

EC_ROLE = {"allowed_domains": ["example.com"], "allow_subdomains": True, "allow_bare_domains": True,
           "key_type": "ec", "key_bits": 256, "max_ttl": "720h"}


def _ous(cert):
    return [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)]


def _eku(cert):
    return list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


def _issue(bao, role="ec", cn="a.example.com"):
    r = bao.post(f"pki/issue/{role}", {"common_name": cn})
    assert r.status_code == 200, r.text
    return cert_of(r.json()["data"]["certificate"])


def test_a_rewritten_role_signs_with_its_new_subject_usages_and_policies(bao):
    assert _ous(_issue(bao)) == [] and _eku(_issue(bao)) == [ExtendedKeyUsageOID.SERVER_AUTH,
                                                              ExtendedKeyUsageOID.CLIENT_AUTH]
    r = bao.post("pki/roles/ec", {**EC_ROLE, "ou": ["Ops", "Ops", "Dev"], "organization": ["Example"],
                                  "ext_key_usage": ["TimeStamping"], "client_flag": False,
                                  "policy_identifiers": ["1.2.3.4"]})
    assert r.status_code in (200, 204), r.text
    cert = _issue(bao)
    assert sorted(_ous(cert)) == ["Dev", "Ops"]  # one multi-valued RDN (a DER SET: sorted), "Ops" once
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["Example"]
    assert _eku(cert) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.TIME_STAMPING]
    policies = cert.extensions.get_extension_for_class(x509.CertificatePolicies).value
    assert [p.policy_identifier.dotted_string for p in policies] == ["1.2.3.4"]
    assert bao.post("pki/roles/ec", EC_ROLE).status_code in (200, 204)
    cert = _issue(bao)
    assert _ous(cert) == [] and _eku(cert) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.CertificatePolicies)


def test_a_reset_brings_back_the_baseline_role_and_its_profile(bao):
    assert bao.post("pki/roles/ec", {**EC_ROLE, "ou": ["Changed"]}).status_code in (200, 204)
    assert _ous(_issue(bao)) == ["Changed"]
    bao.double.reset()
    assert _ous(_issue(bao)) == []


def test_leaves_of_two_issuers_carry_each_issuers_key_id(bao):
    def aki(cert):
        return cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier

    def ski(cert):
        return cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest

    for name in ("root-a", "root-b", "root-a"):
        issuer = next(i for i in bao.state().issuers.values() if i.issuer_name == name).certificate
        r = bao.post(f"pki/issuer/{name}/issue/ec", {"common_name": "k.example.com"})
        assert r.status_code == 200, r.text
        assert aki(cert_of(r.json()["data"]["certificate"])) == ski(issuer)


def test_one_csr_signed_again_gets_each_requests_own_certificate(bao):
    key = ec.generate_private_key(ec.SECP256R1())
    csr = make_csr("c.example.com", dns=["d.example.com"], key=key)
    serials = set()
    for role, cn in (("ec", "c.example.com"), ("ec", "e.example.com"), ("web", "f.example.com")):
        r = bao.post(f"pki/sign/{role}", {"csr": csr, "common_name": cn})
        if role == "web":  # an RSA role refuses the EC key, the second time as the first
            assert r.status_code == 400 and r.json()["errors"] == ["role requires keys of type rsa"]
            continue
        assert r.status_code == 200, r.text
        cert = cert_of(r.json()["data"]["certificate"])
        assert cert.public_key() == key.public_key()
        serials.add(cert.serial_number)
    assert len(serials) == 2


def test_a_csr_with_a_bad_signature_or_no_data_is_refused_every_time(bao):
    csr = make_csr("c.example.com")
    der = bytearray(x509.load_pem_x509_csr(csr.encode()).public_bytes(serialization.Encoding.DER))
    der[-5] ^= 0x01  # inside the signature
    body = base64.encodebytes(bytes(der)).decode()
    tampered = f"-----BEGIN CERTIFICATE REQUEST-----\n{body}-----END CERTIFICATE REQUEST-----\n"
    for _ in range(2):
        r = bao.post("pki/sign/ec", {"csr": tampered})
        assert r.status_code == 400 and r.json()["errors"] == ["request signature invalid"]
        r = bao.post("pki/sign/ec", {"csr": "no pem here"})
        assert r.status_code == 400 and r.json()["errors"] == ["csr contains no data"]
    assert bao.post("pki/sign/ec", {"csr": csr}).status_code == 200


def test_a_role_with_an_eku_oid_go_cannot_marshal_is_refused_every_time(bao):
    assert bao.post("pki/roles/ec", {**EC_ROLE, "ext_key_usage_oids": ["0"]}).status_code in (200, 204)
    for _ in range(2):
        r = bao.post("pki/issue/ec", {"common_name": "a.example.com"})
        assert r.status_code == 500
        assert r.json()["errors"] == ["1 error occurred:\n\t* unable to create certificate: asn1: structure error: "
                                      "invalid object identifier\n\n"]
