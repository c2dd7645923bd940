"""The X.509 building blocks (pytest_schedpki.secrets.engines.pki.codecs.x509) used by both CA and leaf paths."""

from __future__ import annotations

import base64
import datetime
import json
import pathlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pytest_schedpki.secrets.engines.pki.codecs import x509 as pkix
from pytest_schedpki.secrets.framework.logical import LogicalError

NOW = datetime.datetime(2030, 6, 1, 12, 0, tzinfo=datetime.timezone.utc)
GOLDEN = pathlib.Path(__file__).parents[1] / "pki_leaf" / "data" / "openbao_pki_golden_subset.json"


def _ca(key_type: str = "ec", bits: int = 0, **kw):
    key = pkix.generate_key(key_type, bits)[0]
    cert = pkix.sign_certificate(issuer_cert=None, issuer_key=key, public_key=key.public_key(),
                                 subject=pkix.build_subject(common_name="CA"), serial=pkix.new_serial(),
                                 not_before=NOW, not_after=NOW + datetime.timedelta(days=1), is_ca=True, **kw)
    return cert, key


def test_generate_key_defaults_and_errors():
    key, kind, bits = pkix.generate_key("ec", 0)
    assert (kind, bits, key.curve.name) == ("ec", 256, "secp256r1")
    key, kind, bits = pkix.generate_key("ec", 521)
    assert (pkix.key_type_of(key.public_key()), bits) == (("ec", 521), 521)
    key, kind, bits = pkix.generate_key("ed25519", 4096)
    assert (kind, bits, isinstance(key, ed25519.Ed25519PrivateKey)) == ("ed25519", 0, True)
    key, kind, bits = pkix.generate_key("rsa", 0)
    assert (kind, bits, key.key_size) == ("rsa", 2048, 2048)
    for args, message in ((("ec", 2048), "unsupported bit length for EC key: 2048"), (("dsa", 0), "unknown key type dsa"),
                          (("rsa", 1024), "RSA keys < 2048 bits are unsafe and not supported: got 1024"),
                          (("rsa", 2049), "unsupported bit length for RSA key: 2049")):
        with pytest.raises(LogicalError) as info:
            pkix.generate_key(*args)
        assert (info.value.status, info.value.errors) == (400, [message])


def test_serials_are_positive_and_at_most_159_bits():
    serials = [pkix.new_serial() for _ in range(200)]
    assert all(0 < s < 2**159 for s in serials) and len(set(serials)) == 200
    assert max(s.bit_length() for s in serials) >= 155


def test_leaf_profile_and_hashes():
    ca, ca_key = _ca("ec", 384)
    assert isinstance(ca.signature_hash_algorithm, hashes.SHA384)
    leaf_key = pkix.generate_key("ec", 256)[0]
    leaf = pkix.sign_certificate(
        issuer_cert=ca, issuer_key=ca_key, public_key=leaf_key.public_key(),
        subject=pkix.build_subject(common_name="a.example.com", organization=["Acme"]), serial=7,
        not_before=NOW, not_after=NOW + datetime.timedelta(hours=1),
        sans=[x509.UniformResourceIdentifier("spiffe://x"), x509.DNSName("a.example.com")],
        key_usage=["DigitalSignature", "KeyAgreement", "KeyEncipherment"], ext_key_usage=["ClientAuth", "ServerAuth"],
        ext_key_usage_oids=["1.2.3.4", "not-an-oid"], aia={"issuing_certificates": ["http://ca"], "ocsp_servers": ["http://o"],
                                                            "crl_distribution_points": ["http://crl"]})
    leaf.verify_directly_issued_by(ca)
    assert [e.oid._name for e in leaf.extensions] == ["keyUsage", "extendedKeyUsage", "subjectKeyIdentifier",
                                                      "authorityKeyIdentifier", "authorityInfoAccess", "subjectAltName",
                                                      "cRLDistributionPoints"]
    ku = leaf.extensions.get_extension_for_class(x509.KeyUsage)
    assert ku.critical and ku.value.digital_signature and ku.value.key_agreement and ku.value.key_encipherment
    assert list(leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH, x509.ObjectIdentifier("1.2.3.4")]
    assert list(leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value) == [
        x509.DNSName("a.example.com"), x509.UniformResourceIdentifier("spiffe://x")]
    aki = leaf.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    aia = [(d.access_method._name, d.access_location.value)
           for d in leaf.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value]
    assert aia == [("OCSP", "http://o"), ("caIssuers", "http://ca")]
    assert isinstance(leaf.signature_hash_algorithm, hashes.SHA384)  # curve of the signing key
    assert leaf.issuer == ca.subject and leaf.serial_number == 7
    assert leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0]._type.name == "PrintableString"
    nameless = pkix.sign_certificate(issuer_cert=ca, issuer_key=ca_key, public_key=leaf_key.public_key(),
                                     subject=x509.Name([]), serial=8, not_before=NOW, not_after=NOW + datetime.timedelta(1),
                                     sans=[x509.DNSName("x")])
    assert nameless.extensions.get_extension_for_class(x509.SubjectAlternativeName).critical


def test_rsa_signature_bits_pss_and_ed25519():
    cert, key = _ca("rsa", 2048, signature_bits=512, use_pss=True)
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA512)
    assert isinstance(cert.signature_algorithm_parameters, padding.PSS)
    cert.verify_directly_issued_by(cert)
    cert, _ = _ca("ed25519")
    assert cert.signature_hash_algorithm is None
    cert, _ = _ca("ec", 256, max_path_length=0, key_usage=["DigitalSignature", "KeyEncipherment"])
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0
    ku = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature and ku.key_cert_sign and ku.crl_sign and not ku.key_encipherment


def test_output_encodings():
    cert, key = _ca("rsa")
    pem = pkix.pem_of(cert)
    assert pem.startswith("-----BEGIN CERTIFICATE-----\n") and pem.endswith("-----END CERTIFICATE-----")
    assert x509.load_der_x509_certificate(base64.b64decode(pkix.der_b64(cert))) == cert
    assert pkix.private_key_pem(key).startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert pkix.private_key_pem(key, pkcs8=True).startswith("-----BEGIN PRIVATE KEY-----")
    ec_key = pkix.generate_key("ec", 256)[0]
    assert pkix.private_key_pem(ec_key).startswith("-----BEGIN EC PRIVATE KEY-----")
    assert not pkix.private_key_pem(ec_key).endswith("\n")
    ed = pkix.generate_key("ed25519", 0)[0]
    assert pkix.private_key_pem(ed).startswith("-----BEGIN PRIVATE KEY-----")
    der = base64.b64decode(pkix.private_key_der_b64(ec_key))
    assert serialization.load_der_private_key(der, None).private_numbers() == ec_key.private_numbers()
    assert pkix.private_key_type(ed) == "ed25519"


def test_parse_csr_errors_match_golden():
    golden = {c["name"]: c for c in json.loads(GOLDEN.read_text())}
    garbage = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----"
    with pytest.raises(LogicalError) as info:
        pkix.parse_csr(garbage)
    expected = ("certificate request could not be parsed: asn1: structure error: tags don't match (16 vs {class:0 tag:0 "
                "length:0 isCompound:false}) {optional:false explicit:false application:false private:false "
                "defaultValue:<nil> tag:<nil> stringType:0 timeType:0 set:false omitEmpty:false} certificateRequest @2")
    assert info.value.errors == [expected]
    assert golden["sign.web.garbage_csr"]["response_generalised"]["errors"] == [expected]
    with pytest.raises(LogicalError) as info:
        pkix.parse_csr("hello")
    assert (info.value.status, info.value.errors) == (400, ["csr contains no data"])
    assert pkix.go_asn1_error(b"") == "asn1: syntax error: sequence truncated"
    assert pkix.go_asn1_error(b"\x30\x05\x01") == "asn1: syntax error: data truncated"
    assert pkix.go_asn1_error(b"\x30\x80") == "asn1: syntax error: indefinite length found (not DER)"
    for der in (b"\x30\x00", b"\x30\x02\x30\x00", b"\x30\x05\x30\x03\x02\x01\x00"):  # all observed on bao
        assert pkix.go_asn1_error(der) == "asn1: syntax error: sequence truncated"
    # a certificate pasted as a CSR (observed: the [0] version where an INTEGER is expected)
    ca, _ = _ca("ec")
    with pytest.raises(LogicalError) as info:
        pkix.parse_csr(pkix.pem_of(ca))
    assert info.value.errors == [
        "certificate request could not be parsed: asn1: structure error: tags don't match (2 vs {class:2 tag:0 length:3 "
        "isCompound:true}) {optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> "
        "stringType:0 timeType:0 set:false omitEmpty:false} int @2"]


def test_csr_and_crl_builders():
    key = pkix.generate_key("ec", 384)[0]
    csr = pkix.build_csr(key, pkix.build_subject(common_name="int"), [x509.DNSName("int.example.com"),
                                                                      pkix.other_name("1.2.3.4", "v")],
                         add_basic_constraints=True, signature_bits=256)
    parsed = pkix.parse_csr(pkix.csr_pem(csr))
    assert parsed.is_signature_valid and isinstance(parsed.signature_hash_algorithm, hashes.SHA384)
    assert list(parsed.extensions.get_extension_for_class(x509.SubjectAlternativeName).value) == [
        x509.OtherName(x509.ObjectIdentifier("1.2.3.4"), b"\x0c\x01v"), x509.DNSName("int.example.com")]
    assert parsed.extensions.get_extension_for_class(x509.BasicConstraints).critical
    ca, ca_key = _ca("ec")
    crl = pkix.build_crl(ca, ca_key, [(5, NOW), (3, NOW)], 9, NOW, NOW + datetime.timedelta(hours=72))
    assert crl.is_signature_valid(ca.public_key()) and len(crl) == 2 and crl.issuer == ca.subject
    assert crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number == 9
    assert all(len(entry.extensions) == 0 for entry in crl)
    assert pkix.crl_pem(crl).endswith("-----END X509 CRL-----") and x509.load_der_x509_crl(pkix.crl_der(crl)) == crl


def test_pem_bundle_decoding():
    cert, key = _ca("ec")
    pem = pkix.pem_of(cert)
    assert [k for k, _ in pkix.pem_sequence(pkix.private_key_pem(key) + "\n" + pem + "\n")] == ["EC PRIVATE KEY",
                                                                                               "CERTIFICATE"]
    for bad, index in (("x" * 80, 1), (pem + "\ntrailing", 2)):
        with pytest.raises(ValueError, match=f"error when parsing block {index}: invalid PEM data"):
            pkix.pem_sequence(bad)
    assert pkix.parse_pem_certificates("junk\n" + pem + "\n" + pem) == [cert, cert]
    assert isinstance(pkix.load_private_key(pkix.private_key_pem(key).encode()), ec.EllipticCurvePrivateKey)
