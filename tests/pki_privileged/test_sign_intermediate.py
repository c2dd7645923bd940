"""``root/sign-intermediate`` and ``issuer/:ref/sign-intermediate`` over HTTP: the CA profile,
pathLen rules, CSR values, subject fields, validity, signatures, formats, storage and every error
text (reference section 6 and OpenBao 2.7.2's ``pathIssuerSignIntermediate``)."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509 import verification
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from priv_helpers import (
    AIA_WARNING,
    BEYOND,
    HOUR,
    PATH_ZERO,
    T0,
    UPN,
    cert_of,
    cn_name,
    ext,
    ext_names,
    ip,
    make_csr,
    name,
    sha1_ski,
    utf8_other,
)

KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "serial_number"]
CUSTOM = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.3.4.5"), b"\x04\x02hi")


def root_pem(api, ref="root"):
    return api.get(f"pki/issuer/{ref}/json").json()["data"]["certificate"].rstrip("\n")  # this read ends with \n


def test_profile_response_and_storage(api):
    key = ec.generate_private_key(ec.SECP256R1())
    body = api.ok("pki/root/sign-intermediate", {"csr": make_csr(key, cn="Int CSR"), "common_name": "Signed Int",
                                                   "ttl": "8760h"})
    assert body["warnings"] == [AIA_WARNING] and body["lease_id"] == "" and body["lease_duration"] == 0
    data = body["data"]
    assert sorted(data) == KEYS
    root = root_pem(api)
    assert data["issuing_ca"] == root and data["ca_chain"] == [data["certificate"], root]
    cert, root_cert = cert_of(data["certificate"]), cert_of(root)
    assert cert.subject == cn_name("Signed Int") and cert.issuer == root_cert.subject
    assert cert.public_key() == key.public_key()
    assert cert.not_valid_before_utc == T0 - datetime.timedelta(seconds=30)
    assert cert.not_valid_after_utc == T0 + datetime.timedelta(hours=8760)
    assert data["expiration"] == int(cert.not_valid_after_utc.timestamp())
    assert data["serial_number"] == ":".join(f"{b:02x}" for b in cert.serial_number.to_bytes(
        (cert.serial_number.bit_length() + 7) // 8, "big"))
    assert ext_names(cert) == ["keyUsage:critical", "basicConstraints:critical", "subjectKeyIdentifier:non-critical",
                               "authorityKeyIdentifier:non-critical"]
    ku = ext(cert, x509.KeyUsage).value
    assert (ku.key_cert_sign, ku.crl_sign, ku.digital_signature, ku.key_encipherment) == (True, True, False, False)
    assert ext(cert, x509.BasicConstraints).value == x509.BasicConstraints(ca=True, path_length=None)
    assert ext(cert, x509.SubjectKeyIdentifier).value.digest == sha1_ski(key.public_key())
    assert ext(cert, x509.AuthorityKeyIdentifier).value.key_identifier == \
        ext(root_cert, x509.SubjectKeyIdentifier).value.digest
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA256)
    cert.verify_directly_issued_by(root_cert)
    # stored in the signing mount
    stored = api.get(f"pki/cert/{data['serial_number']}").json()["data"]
    assert stored["certificate"] == data["certificate"] and stored["revocation_time"] == 0
    assert data["serial_number"] in api.call("LIST", "pki/certs").json()["data"]["keys"]


def test_issuer_from_path_and_body(api):
    csr = make_csr(cn="Int")
    by_path = api.ok("pki/issuer/rsa/sign-intermediate", {"csr": csr, "common_name": "By Path"})["data"]
    assert cert_of(by_path["certificate"]).issuer == cn_name("RSA Root")
    assert by_path["ca_chain"] == [by_path["certificate"], root_pem(api, "rsa")]
    by_id = api.ok(f"pki/issuer/{api.issuer_ids['short']}/sign-intermediate", {"csr": csr})["data"]
    assert cert_of(by_id["certificate"]).issuer == cn_name("Short Root")
    by_body = api.ok("pki/root/sign-intermediate", {"csr": csr, "issuer_ref": "rsa"})["data"]
    assert cert_of(by_body["certificate"]).issuer == cn_name("RSA Root")
    replaced = api.ok("pki/issuer/default/sign-intermediate", {"csr": csr, "issuer_ref": "rsa"})
    assert cert_of(replaced["data"]["certificate"]).issuer == cn_name("Privileged Root")
    assert replaced["warnings"][-1] == ("Endpoint replaced the value of these parameters with the values captured "
                                        "from the endpoint's path: [issuer_ref]")


def test_common_name_comes_from_the_csr_when_absent(api):
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": make_csr(cn="int.example.com")})["data"]["certificate"])
    assert cert.subject == cn_name("int.example.com")
    assert ext(cert, x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName) == ["int.example.com"]
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": make_csr(cn="int.example.com"),
                                                         "exclude_cn_from_sans": True})["data"]["certificate"])
    assert ext(cert, x509.SubjectAlternativeName) is None


@pytest.mark.parametrize(("body", "path_length", "warnings"), [
    ({}, 2, [AIA_WARNING]),                                  # inherited: the signer's 3, minus one
    ({"max_path_length": -1}, None, [AIA_WARNING]),          # explicit -1: no limit, nothing inherited
    ({"max_path_length": 7}, 7, [AIA_WARNING]),              # not checked against the signer
    ({"max_path_length": "0"}, 0, [AIA_WARNING, PATH_ZERO]),
])
def test_path_length_rules(api, body, path_length, warnings):
    resp = api.ok("pki/issuer/rsa/sign-intermediate", {"csr": make_csr(cn="PL"), **body})
    assert resp["warnings"] == warnings
    assert ext(cert_of(resp["data"]["certificate"]), x509.BasicConstraints).value.path_length == path_length


def test_path_length_limits(api):
    csr = make_csr(cn="PL")
    # a signer without pathLen gives none
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": csr})["data"]["certificate"])
    assert ext(cert, x509.BasicConstraints).value.path_length is None
    assert api.error("pki/root/sign-intermediate", {"csr": csr, "max_path_length": -2}, status=500) == [
        "1 error occurred:\n\t* error signing cert: unable to create certificate: x509: invalid MaxPathLen, must be "
        "greater or equal to -1\n\n"]
    api.ok("pki/root/generate/internal", {"common_name": "PL0", "key_type": "ec", "max_path_length": 0,
                                          "issuer_name": "pl0"})
    for body in ({}, {"max_path_length": 2}, {"max_path_length": -1}):
        assert api.error("pki/issuer/pl0/sign-intermediate", {"csr": csr, **body}) == [
            "signing certificate has a max path length of zero, and cannot issue further CA certificates"]


def test_key_usage_ext_key_usage_and_name_constraints(api):
    cert = cert_of(api.ok("pki/root/sign-intermediate", {
        "csr": make_csr(cn="Key Usage Int"), "key_usage": ["DigitalSignature", "KeyEncipherment", "bogus"],
        "ext_key_usage": ["ServerAuth", "clientauth"], "permitted_dns_domains": "example.com,.example.org"})
        ["data"]["certificate"])
    ku = ext(cert, x509.KeyUsage).value
    assert (ku.digital_signature, ku.key_cert_sign, ku.crl_sign, ku.key_encipherment) == (True, True, True, False)
    assert list(ext(cert, x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.SERVER_AUTH,
                                                             ExtendedKeyUsageOID.CLIENT_AUTH]
    constraints = ext(cert, x509.NameConstraints)
    assert constraints.critical and constraints.value.excluded_subtrees is None
    assert constraints.value.permitted_subtrees == [x509.DNSName("example.com"), x509.DNSName(".example.org")]
    assert ext_names(cert) == ["keyUsage:critical", "extendedKeyUsage:non-critical", "basicConstraints:critical",
                               "subjectKeyIdentifier:non-critical", "authorityKeyIdentifier:non-critical",
                               "nameConstraints:critical"]
    # ext_key_usage_oids is parsed upstream with the name parser: it replaces ext_key_usage with nothing
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": make_csr(cn="KU"), "ext_key_usage": ["ServerAuth"],
                                                         "ext_key_usage_oids": "1.2.3.4"})["data"]["certificate"])
    assert ext(cert, x509.ExtendedKeyUsage) is None


def test_subject_fields_and_sans_from_the_request(api):
    cert = cert_of(api.ok("pki/root/sign-intermediate", {
        "csr": make_csr(cn="ignored"), "common_name": "Req CN", "alt_names": "a.example.com,b@example.com",
        "ip_sans": "1.2.3.4", "uri_sans": "spiffe://x/y", "other_sans": f"{UPN};UTF8:u@example.com",
        "ou": "U1,U2", "organization": ["O1", "O1"], "country": "US", "locality": "L", "province": "P",
        "street_address": "S", "postal_code": "123", "serial_number": "SN1"})["data"]["certificate"])
    rdns = [[(a.oid, a.value) for a in rdn] for rdn in cert.subject.rdns]
    assert rdns[:6] == [[(NameOID.COUNTRY_NAME, "US")], [(NameOID.STATE_OR_PROVINCE_NAME, "P")],
                        [(NameOID.LOCALITY_NAME, "L")], [(NameOID.STREET_ADDRESS, "S")],
                        [(NameOID.POSTAL_CODE, "123")], [(NameOID.ORGANIZATION_NAME, "O1")]]
    # both OUs in one multi-valued RDN, as Go writes them
    assert sorted(rdns[6], key=lambda pair: pair[1]) == [(NameOID.ORGANIZATIONAL_UNIT_NAME, "U1"),
                                                         (NameOID.ORGANIZATIONAL_UNIT_NAME, "U2")]
    assert rdns[7:] == [[(NameOID.COMMON_NAME, "Req CN")], [(NameOID.SERIAL_NUMBER, "SN1")]]
    assert cert.serial_number != int.from_bytes(b"SN1", "big")
    san = ext(cert, x509.SubjectAlternativeName)
    assert not san.critical
    assert list(san.value) == [utf8_other(UPN, "u@example.com"), x509.DNSName("a.example.com"),
                               x509.RFC822Name("b@example.com"), ip("1.2.3.4"),
                               x509.UniformResourceIdentifier("spiffe://x/y")]


def test_use_csr_values(api):
    subject = name((NameOID.COUNTRY_NAME, "DE"), (NameOID.ORGANIZATION_NAME, "CSR Org"), (NameOID.COMMON_NAME, "Use CSR"))
    exts = [(x509.KeyUsage(True, True, False, False, False, False, False, False, False), True), (CUSTOM, True),
            (x509.BasicConstraints(ca=True, path_length=7), True)]
    csr = make_csr(subject=subject, sans=[x509.DNSName("int.example.com"), utf8_other(UPN, "a@example.com")], exts=exts)
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": csr, "use_csr_values": True, "common_name": "nope",
                                                         "organization": "ReqOrg"})["data"]["certificate"])
    assert cert.subject == subject
    ku = ext(cert, x509.KeyUsage).value  # the CSR's usage replaces CertSign+CRLSign
    assert (ku.digital_signature, ku.content_commitment, ku.key_cert_sign) == (True, True, False)
    assert ext(cert, x509.BasicConstraints).value == x509.BasicConstraints(ca=True, path_length=None)
    assert ext_names(cert) == ["basicConstraints:critical", "subjectKeyIdentifier:non-critical",
                               "authorityKeyIdentifier:non-critical", "subjectAltName:non-critical",
                               "keyUsage:critical", "Unknown OID:critical"]
    assert list(ext(cert, x509.SubjectAlternativeName).value) == [x509.DNSName("int.example.com"),
                                                                  utf8_other(UPN, "a@example.com")]
    # request other SANs rebuild the SAN from the CSR's standard names; the CSR's otherName is lost
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": csr, "use_csr_values": True,
                                                         "other_sans": "1.2.3.4;UTF8:hello"})["data"]["certificate"])
    assert list(ext(cert, x509.SubjectAlternativeName).value) == [utf8_other("1.2.3.4", "hello"),
                                                                  x509.DNSName("int.example.com")]
    assert ext_names(cert)[-1] == "subjectAltName:non-critical"


def test_validity_rules(api):
    csr = make_csr(cn="TTL")

    def validity(resp):
        cert = cert_of(resp["data"]["certificate"])
        return cert.not_valid_before_utc, cert.not_valid_after_utc

    resp = api.ok("pki/root/sign-intermediate", {"csr": csr})
    assert validity(resp) == (T0 - datetime.timedelta(seconds=30), T0 + datetime.timedelta(hours=768))
    # clamped to the mount max; ending exactly with the signer is not "after" it
    resp = api.ok("pki/root/sign-intermediate", {"csr": csr, "ttl": "100000h"})
    assert resp["warnings"] == [AIA_WARNING, 'TTL "100000h0m0s" is longer than permitted maxTTL "87600h0m0s", so '
                                             "maxTTL is being used"]
    assert validity(resp)[1] == T0 + datetime.timedelta(hours=87600)
    resp = api.ok("pki/issuer/short/sign-intermediate", {"csr": csr, "ttl": "9000h"})
    assert resp["warnings"] == [BEYOND, AIA_WARNING] and validity(resp)[1] == T0 + datetime.timedelta(hours=9000)
    resp = api.ok("pki/issuer/short/sign-intermediate", {"csr": csr, "not_after": "2099-01-01T00:00:00Z"})
    assert resp["warnings"] == [BEYOND, AIA_WARNING]
    assert validity(resp)[1] == datetime.datetime(2099, 1, 1, tzinfo=datetime.timezone.utc)
    resp = api.ok("pki/root/sign-intermediate", {"csr": csr, "ttl": "1h", "not_before_duration": "2m",
                                                 "not_before": "2020-01-01T00:00:00Z"})
    assert validity(resp) == (T0 - datetime.timedelta(minutes=2), T0 + datetime.timedelta(hours=1))
    resp = api.ok("pki/root/sign-intermediate", {"csr": csr, "ttl": 60, "not_before_duration": 0})
    assert validity(resp) == (T0 - datetime.timedelta(seconds=30), T0 + datetime.timedelta(seconds=60))
    api.double.manual_clock.advance(HOUR)
    resp = api.ok("pki/root/sign-intermediate", {"csr": csr, "ttl": "1h"})
    assert validity(resp)[0] == T0 + datetime.timedelta(seconds=HOUR - 30)


def test_signature_settings_and_skid(api):
    csr = make_csr(cn="Sig")
    cert = cert_of(api.ok("pki/issuer/rsa/sign-intermediate", {"csr": csr, "signature_bits": 384})["data"]["certificate"])
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA384)
    assert isinstance(cert.signature_algorithm_parameters, padding.PKCS1v15)
    cert = cert_of(api.ok("pki/issuer/rsa/sign-intermediate", {"csr": csr, "use_pss": True})["data"]["certificate"])
    assert isinstance(cert.signature_algorithm_parameters, padding.PSS)
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA256)
    cert.verify_directly_issued_by(cert_of(root_pem(api, "rsa")))
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": csr, "signature_bits": 512})["data"]["certificate"])
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA512)
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": csr, "signature_bits": 123})["data"]["certificate"])
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA256)
    cert = cert_of(api.ok("pki/root/sign-intermediate", {"csr": csr, "skid": "aa:bb-cc DD"})["data"]["certificate"])
    assert ext(cert, x509.SubjectKeyIdentifier).value.digest == bytes.fromhex("aabbccdd")
    for skid, error in (("zz", "encoding/hex: invalid byte: U+007A 'z'"), ("abc", "encoding/hex: odd length hex string"),
                        ("abz", "encoding/hex: invalid byte: U+007A 'z'"), ("a\x01", "encoding/hex: invalid byte: U+0001")):
        assert api.error("pki/root/sign-intermediate", {"csr": csr, "skid": skid}) == [
            f"cannot parse requested SKID value as hex: {error}"]


def test_formats(api):
    csr = make_csr(cn="Fmt")
    data = api.ok("pki/root/sign-intermediate", {"csr": csr, "format": "der"})["data"]
    der = base64.b64decode(data["certificate"])
    root_der = cert_of(root_pem(api)).public_bytes(serialization.Encoding.DER)
    assert base64.b64decode(data["issuing_ca"]) == root_der
    assert [base64.b64decode(c) for c in data["ca_chain"]] == [der, root_der]
    x509.load_der_x509_certificate(der)
    data = api.ok("pki/issuer/default/sign-intermediate", {"csr": csr, "format": "pem_bundle"})["data"]
    assert data["certificate"] == data["ca_chain"][0] + "\n" + root_pem(api)
    assert data["certificate"].count("BEGIN CERTIFICATE") == 2 and not data["certificate"].endswith("\n")
    for fmt in ("p12", "", "PEM"):
        assert api.error("pki/root/sign-intermediate", {"csr": csr, "format": fmt}) == [
            'The "format" path parameter must be "pem" or "der"']
    # checked before the issuer
    assert api.error("pki/issuer/nope/sign-intermediate", {"csr": csr, "format": "p12"}) == [
        'The "format" path parameter must be "pem" or "der"']


def test_empty_subject_warns(api):
    resp = api.ok("pki/root/sign-intermediate", {"csr": make_csr(cn=None)})
    assert resp["warnings"] == [
        "This issuer certificate was generated without a Subject; this makes it likely that issuing leaf certs with this "
        "certificate will cause TLS validation libraries to reject this certificate.", AIA_WARNING]
    assert len(cert_of(resp["data"]["certificate"]).subject) == 0


def test_urls_suppress_the_aia_warning(api):
    api.ok("pki/config/urls", {"issuing_certificates": ["http://pki.example.com/ca"],
                               "crl_distribution_points": ["http://pki.example.com/crl"],
                               "delta_crl_distribution_points": ["http://pki.example.com/delta"]})
    resp = api.ok("pki/root/sign-intermediate", {"csr": make_csr(cn="URL")})
    assert resp["warnings"] is None
    cert = cert_of(resp["data"]["certificate"])
    assert [d.access_location.value for d in ext(cert, x509.AuthorityInformationAccess).value] == [
        "http://pki.example.com/ca"]
    assert ext(cert, x509.CRLDistributionPoints).value[0].full_name[0].value == "http://pki.example.com/crl"
    assert ext(cert, x509.FreshestCRL).value[0].full_name[0].value == "http://pki.example.com/delta"


def test_errors(api):
    csr = make_csr(cn="Err")
    cases = [
        ({"common_name": "x"}, 400, ['"csr" is empty']),
        ({"csr": "garbage"}, 400, ["csr contains no data"]),
        ({"csr": make_csr(rsa.generate_private_key(65537, 1024), cn="small")}, 400,
         ["RSA keys < 2048 bits are unsafe and not supported"]),
        ({"csr": csr, "ttl": "1h", "not_after": "2035-01-01T00:00:00Z"}, 400,
         ["Either ttl or not_after should be provided. Both should not be provided in the same request."]),
        ({"csr": csr, "not_after": "tomorrow"}, 400,
         ['parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"']),
        ({"csr": csr, "not_before": "junk"}, 400,
         ['parsing time "junk" as "2006-01-02T15:04:05Z07:00": cannot parse "junk" as "2006"']),
        ({"csr": csr, "ip_sans": "nope"}, 400, ['the value "nope" is not a valid IP address']),
        ({"csr": csr, "other_sans": "garbage"}, 400,
         ['could not parse requested other SAN: expected a semicolon in other SAN "garbage"']),
        ({"csr": csr, "uri_sans": "::bad"}, 400, ['the provided URI Subject Alternative Name "::bad" is not a valid URI']),
        ({"csr": csr, "issuer_ref": " "}, 400, ["missing issuer reference"]),
        ({"csr": csr, "ttl": "soon"}, 400,
         ['Field validation failed: error converting input for field "ttl": time: invalid duration "soon"']),
    ]
    for body, status, errors in cases:
        assert api.error("pki/root/sign-intermediate", body, status=status) == errors, body
    assert api.error("pki/issuer/nope/sign-intermediate", {"csr": csr}, status=500) == [
        "1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable to find PKI issuer for "
        "reference: nope\n\n"]
    broken = bytearray(x509.load_pem_x509_csr(csr.encode()).public_bytes(serialization.Encoding.DER))
    broken[-3] ^= 0x01
    pem = ("-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(broken)).decode()
           + "-----END CERTIFICATE REQUEST-----\n")
    assert api.error("pki/root/sign-intermediate", {"csr": pem}) == ["request signature invalid"]
    r = api.get("pki/root/sign-intermediate")
    assert r.status_code == 405 and r.json() == {"errors": ["1 error occurred:\n\t* unsupported operation\n\n"]}
    resp = api.ok("pki/root/sign-intermediate", {"csr": csr, "user_ids": "u", "key_type": "ec"})
    assert resp["warnings"][-1] == "Endpoint ignored these unrecognized parameters: [key_type user_ids]"


def test_signed_intermediate_builds_a_verifiable_constrained_chain(api):
    signed = api.ok("pki/root/sign-intermediate", {"csr": api.int_csr, "common_name": "Privileged Intermediate",
                                                   "ttl": "43800h", "permitted_dns_domains": ["example.com"]})["data"]
    api.ok("pki_int/intermediate/set-signed", {"certificate": signed["certificate"] + "\n" + root_pem(api)})
    api.ok("pki_int/roles/any", {"allow_any_name": True, "key_type": "ec", "ttl": "1h"})
    root, intermediate = cert_of(root_pem(api)), cert_of(signed["certificate"])
    verifier = (verification.PolicyBuilder().store(verification.Store([root]))
                .time(T0 + datetime.timedelta(minutes=5)))
    leaf = api.ok("pki_int/issue/any", {"common_name": "a.example.com"})["data"]
    assert leaf["ca_chain"] == [signed["certificate"], root_pem(api)]
    chain = verifier.build_server_verifier(x509.DNSName("a.example.com")).verify(
        cert_of(leaf["certificate"]), [intermediate])
    assert chain[-1] == root and chain[1] == intermediate
    outside = api.ok("pki_int/issue/any", {"common_name": "a.example.org"})["data"]
    with pytest.raises(verification.VerificationError):
        verifier.build_server_verifier(x509.DNSName("a.example.org")).verify(cert_of(outside["certificate"]),
                                                                              [intermediate])
