"""``root/sign-self-issued`` (sudo) and ``issuer/:ref/sign-self-issued`` over HTTP: how the submitted
certificate is rebuilt (Go ``CreateCertificate`` semantics), signature algorithms, AKI/SKI rules,
URLs, errors and the sudo requirement (reference section 7)."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509 import verification
from cryptography.x509.oid import ExtendedKeyUsageOID
from priv_helpers import (
    T0,
    UPN,
    cert_of,
    cn_name,
    ext,
    ext_names,
    make_csr,
    self_signed,
    truncated_sha256_ski,
    utf8_other,
)

RICH = [
    (x509.KeyUsage(True, False, False, False, False, True, True, False, False), False),
    (x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.3.4.5"), b"\x04\x02hi"), False),
    (x509.ExtendedKeyUsage([x509.ObjectIdentifier("1.2.3.9"), ExtendedKeyUsageOID.SERVER_AUTH]), True),
    (x509.SubjectAlternativeName([x509.RFC822Name("ca@example.com"), utf8_other(UPN, "a@example.com"),
                                  x509.DNSName("self.example.com")]), True),
    (x509.CertificatePolicies([x509.PolicyInformation(x509.ObjectIdentifier("1.2.3.7"), ["http://cps.example.com"])]),
     True),
    (x509.NameConstraints([x509.DNSName("example.com")], [x509.DNSName("bad.example.com")]), False),
    (x509.AuthorityInformationAccess([x509.AccessDescription(
        x509.oid.AuthorityInformationAccessOID.CA_ISSUERS, x509.UniformResourceIdentifier("http://old/ca"))]), False),
    (x509.CRLDistributionPoints([x509.DistributionPoint([x509.UniformResourceIdentifier("http://old/crl")], None,
                                                         None, None)]), False),
    (x509.FreshestCRL([x509.DistributionPoint([x509.UniformResourceIdentifier("http://old/delta")], None, None,
                                              None)]), False),
    (x509.AuthorityKeyIdentifier(b"\x01\x02", None, None), False),
]


def root_cert(api, ref="root") -> x509.Certificate:
    return cert_of(api.get(f"pki/issuer/{ref}/json").json()["data"]["certificate"])


def resign(api, cert_pem, path="pki/root/sign-self-issued", token="root", **extra):
    body = api.ok(path, {"certificate": cert_pem, **extra}, token=token)
    assert body["warnings"] is None and sorted(body["data"]) == ["certificate", "issuing_ca"]
    return cert_of(body["data"]["certificate"]), body


def test_rebuilt_as_go_re_encodes_the_template(api):
    key = ec.generate_private_key(ec.SECP256R1())
    submitted = self_signed(key, exts=RICH, path_length=2)
    before = len(api.call("LIST", "pki/certs").json()["data"]["keys"])
    new, body = resign(api, submitted)
    old, root = cert_of(submitted), root_cert(api)
    assert body["data"]["issuing_ca"] + "\n" == api.get("pki/issuer/root/json").json()["data"]["certificate"]
    assert not body["data"]["certificate"].endswith("\n")
    # kept: subject, key, serial, validity; issuer and AKI are the root's
    assert (new.subject, new.serial_number, new.not_valid_before_utc, new.not_valid_after_utc) == (
        old.subject, old.serial_number, old.not_valid_before_utc, old.not_valid_after_utc)
    assert new.public_key() == key.public_key() and new.issuer == root.subject
    new.verify_directly_issued_by(root)
    assert ext_names(new) == ["keyUsage:critical", "extendedKeyUsage:non-critical", "basicConstraints:critical",
                              "subjectKeyIdentifier:non-critical", "authorityKeyIdentifier:non-critical",
                              "subjectAltName:non-critical", "certificatePolicies:non-critical",
                              "nameConstraints:non-critical"]
    assert ext(new, x509.KeyUsage).value == ext(old, x509.KeyUsage).value
    assert list(ext(new, x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.SERVER_AUTH,
                                                           x509.ObjectIdentifier("1.2.3.9")]
    assert ext(new, x509.BasicConstraints).value == x509.BasicConstraints(ca=True, path_length=2)
    assert ext(new, x509.SubjectKeyIdentifier).value == ext(old, x509.SubjectKeyIdentifier).value
    assert ext(new, x509.AuthorityKeyIdentifier).value.key_identifier == \
        ext(root, x509.SubjectKeyIdentifier).value.digest
    assert list(ext(new, x509.SubjectAlternativeName).value) == [x509.DNSName("self.example.com"),
                                                                 x509.RFC822Name("ca@example.com")]
    assert [(p.policy_identifier.dotted_string, p.policy_qualifiers) for p in
            ext(new, x509.CertificatePolicies).value] == [("1.2.3.7", None)]
    assert ext(new, x509.NameConstraints).value == ext(old, x509.NameConstraints).value
    # the certificate is not stored
    assert len(api.call("LIST", "pki/certs").json()["data"]["keys"]) == before


def test_mount_urls_replace_the_certificates(api):
    api.ok("pki/config/urls", {"issuing_certificates": ["http://pki.example.com/ca"],
                               "crl_distribution_points": ["http://pki.example.com/crl"],
                               "ocsp_servers": ["http://ocsp.example.com"],
                               "delta_crl_distribution_points": ["http://pki.example.com/delta"]})
    new, _ = resign(api, self_signed(ec.generate_private_key(ec.SECP256R1()), exts=RICH[6:9]),
                    path="pki/issuer/default/sign-self-issued")
    aia = ext(new, x509.AuthorityInformationAccess).value
    assert [(d.access_method._name, d.access_location.value) for d in aia] == [
        ("OCSP", "http://ocsp.example.com"), ("caIssuers", "http://pki.example.com/ca")]
    assert [dp.full_name[0].value for dp in ext(new, x509.CRLDistributionPoints).value] == ["http://pki.example.com/crl"]
    assert ext(new, x509.FreshestCRL) is None


@pytest.mark.parametrize(("cert_key", "algorithm", "ref", "want"), [
    ("p384", hashes.SHA384(), "root", ("ecdsa", hashes.SHA384)),     # same key type: the certificate's algorithm
    ("rsa", hashes.SHA512(), "rsa", ("pkcs1", hashes.SHA512)),
    ("rsa-pss", hashes.SHA384(), "rsa", ("pss", hashes.SHA384)),
    ("rsa", hashes.SHA512(), "root", ("ecdsa", hashes.SHA256)),      # other key type: the issuer's default
    ("p384", hashes.SHA384(), "rsa", ("pkcs1", hashes.SHA256)),
    ("ed25519", None, "root", ("ecdsa", hashes.SHA256)),
])
def test_signature_algorithm(api, cert_key, algorithm, ref, want):
    key = {"p384": lambda: ec.generate_private_key(ec.SECP384R1()), "rsa": lambda: rsa.generate_private_key(65537, 2048),
           "rsa-pss": lambda: rsa.generate_private_key(65537, 2048),
           "ed25519": ed25519.Ed25519PrivateKey.generate}[cert_key]()
    submitted = self_signed(key, algorithm=algorithm)
    if cert_key == "rsa-pss":
        old = cert_of(submitted)
        builder = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(old.subject)
                   .public_key(key.public_key()).serial_number(old.serial_number)
                   .not_valid_before(old.not_valid_before_utc).not_valid_after(old.not_valid_after_utc)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True))
        submitted = builder.sign(key, hashes.SHA384(), rsa_padding=padding.PSS(
            padding.MGF1(hashes.SHA384()), padding.PSS.DIGEST_LENGTH)).public_bytes(serialization.Encoding.PEM).decode()
    new, _ = resign(api, submitted, path=f"pki/issuer/{ref}/sign-self-issued")
    kind, digest = want
    assert isinstance(new.signature_hash_algorithm, digest)
    params = new.signature_algorithm_parameters
    assert {"ecdsa": isinstance(params, ec.ECDSA), "pkcs1": isinstance(params, padding.PKCS1v15),
            "pss": isinstance(params, padding.PSS)}[kind]
    new.verify_directly_issued_by(root_cert(api, ref))


def test_require_matching_certificate_algorithms(api):
    rsa_ca = self_signed(rsa.generate_private_key(65537, 2048))
    assert api.error("pki/root/sign-self-issued", {"certificate": rsa_ca, "require_matching_certificate_algorithms": True},
                     status=500) == [
        "1 error occurred:\n\t* signing certificate's public key algorithm (ECDSA) does not match submitted "
        "certificate's (RSA), and require_matching_certificate_algorithms is true\n\n"]
    resign(api, rsa_ca, path="pki/issuer/rsa/sign-self-issued", require_matching_certificate_algorithms=True)
    resign(api, rsa_ca, require_matching_certificate_algorithms=False)
    assert api.error("pki/root/sign-self-issued", {"certificate": rsa_ca,
                                                   "require_matching_certificate_algorithms": "maybe"}) == [
        'Field validation failed: error converting input for field "require_matching_certificate_algorithms": '
        "'' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"]


def test_authority_and_subject_key_identifiers(api):
    key = ec.generate_private_key(ec.SECP256R1())
    root = root_cert(api)
    # the root's own subject bytes: Go keeps the template's AKI (none here, or the certificate's own)
    new, _ = resign(api, self_signed(key, subject=root.subject))
    assert ext(new, x509.AuthorityKeyIdentifier) is None
    new, _ = resign(api, self_signed(key, subject=root.subject,
                                     exts=[(x509.AuthorityKeyIdentifier(b"\x01\x02", None, None), False)]))
    assert ext(new, x509.AuthorityKeyIdentifier).value.key_identifier == b"\x01\x02"
    # the same name with another string type is another subject: the root's SKI
    new, _ = resign(api, self_signed(key, subject=cn_name("Privileged Root")))
    assert ext(new, x509.AuthorityKeyIdentifier).value.key_identifier == \
        ext(root, x509.SubjectKeyIdentifier).value.digest
    # no SKI: Go generates one (truncated SHA-256)
    new, _ = resign(api, self_signed(key, ski=False))
    assert ext(new, x509.SubjectKeyIdentifier).value.digest == truncated_sha256_ski(key.public_key())


def test_errors(api):
    key = ec.generate_private_key(ec.SECP256R1())
    ca = self_signed(key)
    der = cert_of(ca).public_bytes(serialization.Encoding.DER)
    two_in_one = "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der + der).decode() + "-----END CERTIFICATE-----\n"
    intermediate = api.ok("pki/root/sign-intermediate", {"csr": make_csr(cn="Int")})["data"]["certificate"]
    cases = [
        ({}, "certificate could not be PEM-decoded"),
        ({"certificate": "garbage"}, "certificate could not be PEM-decoded"),
        ({"certificate": "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"},
         "certificate could not be PEM-decoded"),
        ({"certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
         "error parsing certificate: x509: malformed certificate"),
        ({"certificate": make_csr(key)},
         "error parsing certificate: x509: inner and outer signature algorithm identifiers don't match"),
        ({"certificate": two_in_one}, "2 certificates found in PEM file, expected 1"),
        ({"certificate": self_signed(key, ca=None)}, "given certificate is not a CA certificate"),
        ({"certificate": self_signed(key, ca=False)}, "given certificate is not a CA certificate"),
        ({"certificate": self_signed(key, ca=None) + "\n" + ca}, "given certificate is not a CA certificate"),
        ({"certificate": intermediate}, "given certificate is not self-issued"),
        ({"certificate": ca, "issuer_ref": ""}, "missing issuer reference"),
    ]
    for body, error in cases:
        assert api.error("pki/root/sign-self-issued", body) == [error], body
    # only the first block counts
    resign(api, ca + "\n" + ca)
    resign(api, ca + "\n" + self_signed(key, ca=None))
    # the certificate is checked before the issuer
    assert api.error("pki/issuer/nope/sign-self-issued", {"certificate": "garbage"}) == [
        "certificate could not be PEM-decoded"]
    assert api.error("pki/issuer/nope/sign-self-issued", {"certificate": ca}, status=500) == [
        "1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable to find PKI issuer for "
        "reference: nope\n\n"]
    r = api.get("pki/root/sign-self-issued")
    assert r.status_code == 405 and r.json() == {"errors": ["1 error occurred:\n\t* unsupported operation\n\n"]}


def test_issuer_from_body_and_path(api):
    ca = self_signed(ec.generate_private_key(ec.SECP256R1()))
    new, _ = resign(api, ca, issuer_ref="rsa")
    assert new.issuer == cn_name("RSA Root")
    body = api.ok("pki/issuer/short/sign-self-issued", {"certificate": ca, "issuer_ref": "rsa"})
    assert cert_of(body["data"]["certificate"]).issuer == cn_name("Short Root")
    assert body["warnings"] == ["Endpoint replaced the value of these parameters with the values captured from the "
                                "endpoint's path: [issuer_ref]"]


def test_root_path_needs_sudo(api):
    ca = self_signed(ec.generate_private_key(ec.SECP256R1()))
    r = api.post("pki/root/sign-self-issued", {"certificate": ca}, token=api.nosudo_token)
    assert r.status_code == 403 and r.json() == {"errors": ["1 error occurred:\n\t* permission denied\n\n"]}
    resign(api, ca, path="pki/issuer/default/sign-self-issued", token=api.nosudo_token)
    # the other privileged paths need no sudo either
    assert api.post("pki/root/sign-intermediate", {"csr": make_csr()}, token=api.nosudo_token).status_code == 200
    assert api.post("pki/sign-verbatim", {"csr": make_csr(), "ttl": "1h"}, token=api.nosudo_token).status_code == 200
    r = api.post("pki/root/sign-self-issued", {"certificate": ca}, token=None)
    assert r.status_code == 403 and r.json() == {"errors": ["permission denied"]}


def test_cross_signed_external_root_gives_a_second_path(api):
    """Cross-signing: a leaf of an external root verifies against this mount's root through the
    re-signed external root."""
    external_key = ec.generate_private_key(ec.SECP256R1())
    external_pem = self_signed(external_key, cn="External Root", exts=[
        (x509.KeyUsage(False, False, False, False, False, True, True, False, False), True)])
    external = cert_of(external_pem)
    cross, _ = resign(api, external_pem)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(cn_name("svc.example.com")).issuer_name(external.subject)
            .public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(T0 - datetime.timedelta(minutes=1)).not_valid_after(T0 + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("svc.example.com")]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(external_key.public_key()), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), critical=False)
            .sign(external_key, hashes.SHA256()))
    verifier = (verification.PolicyBuilder().store(verification.Store([root_cert(api)]))
                .time(T0 + datetime.timedelta(minutes=5)).build_server_verifier(x509.DNSName("svc.example.com")))
    chain = verifier.verify(leaf, [cross])
    assert chain[1] == cross and chain[2] == root_cert(api) and cross.subject == external.subject
