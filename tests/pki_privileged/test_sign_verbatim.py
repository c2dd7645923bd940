"""``sign-verbatim``, ``sign-verbatim/:role`` and ``issuer/:ref/sign-verbatim(/:role)`` over HTTP:
values copied from the CSR, request values as defaults only, the role parameters that apply,
validity, storage, leases, formats and every error text (reference section 5)."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from priv_helpers import (
    BC_IGNORED,
    HOUR,
    T0,
    UID,
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

from pytest_schedpki.secrets.engines.pki.enterprise import cert_metadata

KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
CN_IGNORED = 'the common_name field was provided but the role is set with "use_csr_common_name" set to true'
ALT_IGNORED = 'the alt_names field was provided but the role is set with "use_csr_sans" set to true'
CA_CSR_EXT = (x509.BasicConstraints(ca=True, path_length=None), True)
DEFAULT_KU = x509.KeyUsage(True, False, True, False, True, False, False, False, False)


def root_pem(api, ref="root"):
    return api.get(f"pki/issuer/{ref}/json").json()["data"]["certificate"].rstrip("\n")


def test_copies_the_csr(api):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = name((NameOID.COMMON_NAME, "verbatim.evil.org"), (UID, "csruser"), (NameOID.ORGANIZATION_NAME, "CSR O"))
    csr = make_csr(key, subject=subject, sans=[x509.DNSName("anything.invalid"), ip("10.1.2.3"),
                                               x509.UniformResourceIdentifier("spiffe://a/b")])
    body = api.ok("pki/sign-verbatim", {"csr": csr, "common_name": "x.example.com", "alt_names": "y.example.com",
                                        "user_ids": "u1,u2", "serial_number": "SN9",
                                        "enforce_leaf_not_after_behavior": True})
    assert body["warnings"] == [CN_IGNORED, ALT_IGNORED, "Endpoint ignored these unrecognized parameters: "
                                                         "[enforce_leaf_not_after_behavior]"]
    data = body["data"]
    assert sorted(data) == KEYS and data["ca_chain"] == [root_pem(api)] and data["issuing_ca"] == root_pem(api)
    cert = cert_of(data["certificate"])
    assert cert.subject == subject and cert.public_key() == key.public_key()  # no UIDs, CN or serial added
    assert cert.subject.public_bytes() == x509.load_pem_x509_csr(csr.encode()).subject.public_bytes()
    assert (cert.not_valid_before_utc, cert.not_valid_after_utc) == (T0 - datetime.timedelta(seconds=30),
                                                                     T0 + datetime.timedelta(hours=768))
    assert (data["not_before"], data["expiration"]) == (int(cert.not_valid_before_utc.timestamp()),
                                                        int(cert.not_valid_after_utc.timestamp()))
    assert ext_names(cert) == ["keyUsage:critical", "subjectKeyIdentifier:non-critical",
                               "authorityKeyIdentifier:non-critical", "subjectAltName:non-critical"]
    assert ext(cert, x509.KeyUsage).value == DEFAULT_KU
    assert list(ext(cert, x509.SubjectAlternativeName).value) == [
        x509.DNSName("anything.invalid"), ip("10.1.2.3"), x509.UniformResourceIdentifier("spiffe://a/b")]
    assert ext(cert, x509.SubjectKeyIdentifier).value.digest == sha1_ski(key.public_key())
    cert.verify_directly_issued_by(cert_of(root_pem(api)))
    assert api.get(f"pki/cert/{data['serial_number']}").json()["data"]["certificate"] == data["certificate"]


def test_csr_extensions_win_over_request_values(api):
    exts = [(x509.KeyUsage(True, True, False, False, False, False, False, False, False), True),
            (x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.3.4.5"), b"\x04\x02hi"), True),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False),
            (x509.SubjectKeyIdentifier(b"\xaa\xbb"), False), (x509.AuthorityKeyIdentifier(b"\xcc\xdd", None, None), False),
            CA_CSR_EXT]
    csr = make_csr(cn="v2.example.com", sans=[x509.DNSName("d.example.com")], exts=exts)
    body = api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "key_usage": ["CRLSign"],
                                        "ext_key_usage": ["ServerAuth"], "ext_key_usage_oids": "1.2.3"})
    assert body["warnings"] == [BC_IGNORED]
    cert = cert_of(body["data"]["certificate"])
    assert ext_names(cert) == ["subjectAltName:non-critical", "keyUsage:critical", "Unknown OID:critical",
                               "extendedKeyUsage:non-critical", "subjectKeyIdentifier:non-critical",
                               "authorityKeyIdentifier:non-critical"]
    assert ext(cert, x509.KeyUsage).value == exts[0][0]
    assert list(ext(cert, x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.CODE_SIGNING]
    assert ext(cert, x509.SubjectKeyIdentifier).value.digest == b"\xaa\xbb"
    assert ext(cert, x509.AuthorityKeyIdentifier).value.key_identifier == b"\xcc\xdd"


@pytest.mark.parametrize(("body", "key_usage"), [
    ({"key_usage": []}, None),
    ({"key_usage": ""}, None),
    ({"key_usage": " digitalsignature , CRLSign,CertSign, bogus"},
     x509.KeyUsage(True, False, False, False, False, True, True, False, False)),
    ({"key_usage": ["KeyAgreement", "EncipherOnly"]}, x509.KeyUsage(False, False, False, False, True, False, False,
                                                                     True, False)),
])
def test_key_usage_is_a_default(api, body, key_usage):
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": make_csr(), "ttl": "1h", **body})["data"]["certificate"])
    assert (ext(cert, x509.KeyUsage).value if key_usage is not None else ext(cert, x509.KeyUsage)) == key_usage


def test_ext_key_usage_is_a_default(api):
    cert = cert_of(api.ok("pki/sign-verbatim", {
        "csr": make_csr(), "ttl": "1h", "ext_key_usage": ["ServerAuth", "timestamping", "nope", "CLIENTAUTH"],
        "ext_key_usage_oids": ["1.2.3.4", "bad.oid", " 1.5.6"]})["data"]["certificate"])
    assert [o.dotted_string for o in ext(cert, x509.ExtendedKeyUsage).value] == [
        "1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2", "1.3.6.1.5.5.7.3.8", "1.2.3.4", "1.5.6"]
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": make_csr(), "ttl": "1h", "ext_key_usage_oids": "1.2.3.4,1.2.3.5"})
                   ["data"]["certificate"])
    assert [o.dotted_string for o in ext(cert, x509.ExtendedKeyUsage).value] == ["1.2.3.4", "1.2.3.5"]


def test_basic_constraints(api):
    api.ok("pki/roles/bc", {"basic_constraints_valid_for_non_ca": True, "ttl": "1h"})
    csr = make_csr(cn="ca.example.com", exts=[CA_CSR_EXT])
    for path, extra, warnings, constraints in (
            ("pki/sign-verbatim", {}, [BC_IGNORED], None),
            ("pki/sign-verbatim", {"basic_constraints_valid_for_non_ca": True}, None, x509.BasicConstraints(False, None)),
            ("pki/sign-verbatim/bc", {}, None, x509.BasicConstraints(False, None)),
            ("pki/sign-verbatim/bc", {"basic_constraints_valid_for_non_ca": False}, [BC_IGNORED], None)):
        body = api.ok(path, {"csr": csr, "ttl": "1h", **extra})
        assert body["warnings"] == warnings, (path, extra)
        found = ext(cert_of(body["data"]["certificate"]), x509.BasicConstraints)
        assert (found.value if found else None) == constraints and (found is None or found.critical)
    # a plain CSR with the flag: CA:FALSE too, no warning
    body = api.ok("pki/sign-verbatim", {"csr": make_csr(), "ttl": "1h", "basic_constraints_valid_for_non_ca": True})
    assert body["warnings"] is None
    assert ext(cert_of(body["data"]["certificate"]), x509.BasicConstraints).value == x509.BasicConstraints(False, None)


def test_other_sans_rebuild_the_san(api):
    csr = make_csr(cn="o.example.com", sans=[x509.DNSName("o.example.com"), utf8_other(UPN, "csr@example.com"),
                                             x509.RFC822Name("m@example.com")])
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h"})["data"]["certificate"])
    assert ext_names(cert)[-1] == "subjectAltName:non-critical"
    assert list(ext(cert, x509.SubjectAlternativeName).value) == [
        utf8_other(UPN, "csr@example.com"), x509.DNSName("o.example.com"), x509.RFC822Name("m@example.com")]
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "other_sans": f"{UPN};UTF8:api@example.com"})
                   ["data"]["certificate"])
    assert list(ext(cert, x509.SubjectAlternativeName).value) == [
        utf8_other(UPN, "api@example.com"), utf8_other(UPN, "csr@example.com"), x509.DNSName("o.example.com"),
        x509.RFC822Name("m@example.com")]


def test_csr_other_name_that_is_not_utf8(api):
    bad = make_csr(cn="o.example.com", sans=[x509.OtherName(x509.ObjectIdentifier(UPN), b"\x02\x01\x05")])
    assert api.error("pki/sign-verbatim", {"csr": bad}) == [
        "could not parse requested other SAN: no UTF-8 string found in OtherName"]


def test_role_parameters_that_apply(api):
    api.ok("pki/roles/r1", {"allowed_domains": ["example.com"], "key_type": "rsa", "ttl": "2h", "max_ttl": "3h",
                            "not_before_duration": "90s", "issuer_ref": "rsa", "key_usage": ["CRLSign"],
                            "server_flag": True, "ou": ["RoleOU"], "allowed_user_ids": ["x"]})
    csr = make_csr(cn="evil.org")
    body = api.ok("pki/sign-verbatim/r1", {"csr": csr, "user_ids": "mallory", "issuer_ref": "short"})
    assert body["warnings"] is None and body["lease_id"] == ""
    cert = cert_of(body["data"]["certificate"])
    assert cert.issuer == cn_name("RSA Root") and cert.subject == cn_name("evil.org")
    assert (cert.not_valid_before_utc, cert.not_valid_after_utc) == (T0 - datetime.timedelta(seconds=90),
                                                                     T0 + datetime.timedelta(hours=2))
    assert ext(cert, x509.KeyUsage).value == DEFAULT_KU and ext(cert, x509.ExtendedKeyUsage) is None
    assert api.get(f"pki/cert/{body['data']['serial_number']}").status_code == 200
    body = api.ok("pki/sign-verbatim/r1", {"csr": csr, "ttl": "5h"})
    assert body["warnings"] == ['TTL "5h0m0s" is longer than permitted maxTTL "3h0m0s", so maxTTL is being used']
    assert cert_of(body["data"]["certificate"]).not_valid_after_utc == T0 + datetime.timedelta(hours=3)
    # issuer/:ref/sign-verbatim/:role signs with the path's issuer
    cert = cert_of(api.ok("pki/issuer/default/sign-verbatim/r1", {"csr": csr})["data"]["certificate"])
    assert cert.issuer == cn_name("Privileged Root")
    assert cert.not_valid_after_utc == T0 + datetime.timedelta(hours=2)


def test_issuer_selection_without_role(api):
    csr = make_csr(cn="i.example.com")
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": csr, "issuer_ref": "rsa"})["data"]["certificate"])
    assert cert.issuer == cn_name("RSA Root")
    body = api.ok("pki/issuer/short/sign-verbatim", {"csr": csr, "issuer_ref": "rsa", "ttl": "1h"})
    assert cert_of(body["data"]["certificate"]).issuer == cn_name("Short Root")
    assert body["data"]["ca_chain"] == [root_pem(api, "short")]
    api.ok("pki/roles/r2", {"ttl": "2h"})
    body = api.ok("pki/sign-verbatim", {"csr": csr, "role": "r2"})  # the path's empty role replaces it
    assert body["warnings"] == ["Endpoint replaced the value of these parameters with the values captured from the "
                                "endpoint's path: [role]"]
    assert cert_of(body["data"]["certificate"]).not_valid_after_utc == T0 + datetime.timedelta(hours=768)
    assert api.error("pki/sign-verbatim", {"csr": csr, "issuer_ref": " "}, status=500) == [
        "1 error occurred:\n\t* missing issuer reference\n\n"]


def test_no_store_lease_and_outputs(api):
    api.ok("pki/roles/nostore", {"no_store": True, "ttl": "1h"})
    api.ok("pki/roles/lease", {"generate_lease": True, "ttl": "1h"})
    csr = make_csr(cn="l.example.com")
    serial = api.ok("pki/sign-verbatim/nostore", {"csr": csr})["data"]["serial_number"]
    assert api.get(f"pki/cert/{serial}").status_code == 404
    assert serial not in api.call("LIST", "pki/certs").json()["data"]["keys"]
    body = api.ok("pki/sign-verbatim/lease", {"csr": csr})
    assert body["lease_id"].startswith("pki/sign-verbatim/lease/") and len(body["lease_id"].rsplit("/", 1)[1]) == 24
    assert body["lease_duration"] == HOUR and body["renewable"] is False
    data = api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "remove_roots_from_chain": True})["data"]
    assert sorted(data) == ["certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
    data = api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "format": "der"})["data"]
    root_der = cert_of(root_pem(api)).public_bytes(serialization.Encoding.DER)
    assert base64.b64decode(data["issuing_ca"]) == root_der and [base64.b64decode(c) for c in data["ca_chain"]] == [
        root_der]
    x509.load_der_x509_certificate(base64.b64decode(data["certificate"]))
    data = api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "format": "pem_bundle"})["data"]
    assert data["certificate"].endswith("\n" + root_pem(api)) and data["certificate"].count("BEGIN CERTIFICATE") == 2


def test_validity_against_the_issuer(api):
    csr = make_csr(cn="t.example.com")
    errors = api.error("pki/issuer/short/sign-verbatim", {"csr": csr, "ttl": "9000h"})
    assert errors == ["cannot satisfy request, as TTL would result in notAfter of 2032-03-10T08:00:00Z that is beyond "
                      "the expiration of the CA certificate at 2032-02-29T08:00:00Z"]
    assert api.error("pki/issuer/short/sign-verbatim", {"csr": csr, "not_after": "2099-01-01T00:00:00Z"}) == [
        "cannot satisfy request, as TTL would result in notAfter of 2099-01-01T00:00:00Z that is beyond the expiration "
        "of the CA certificate at 2032-02-29T08:00:00Z"]
    assert api.error("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "not_after": "2032-01-01T00:00:00Z"}) == [
        "Either ttl or not_after should be provided. Both should not be provided in the same request."]
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": csr, "not_after": "2032-01-01T00:00:00Z",
                                                "not_before": "garbage"})["data"]["certificate"])
    assert cert.not_valid_after_utc == datetime.datetime(2032, 1, 1, tzinfo=datetime.timezone.utc)
    for behaviour, expected in (("truncate", T0 + datetime.timedelta(hours=8760)),
                                ("permit", T0 + datetime.timedelta(hours=9000))):
        r = api.call("PATCH", "pki/issuer/short", {"leaf_not_after_behavior": behaviour},
                     headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200
        body = api.ok("pki/issuer/short/sign-verbatim", {"csr": csr, "ttl": "9000h"})
        assert body["warnings"] is None
        assert cert_of(body["data"]["certificate"]).not_valid_after_utc == expected


def test_signature_settings(api):
    csr = make_csr(cn="s.example.com")
    for extra, padding_kind, digest in (({"signature_bits": 384}, padding.PKCS1v15, hashes.SHA384),
                                        ({"signature_bits": 123}, padding.PKCS1v15, hashes.SHA256),
                                        ({"use_pss": True}, padding.PSS, hashes.SHA256),
                                        ({"use_pss": True, "signature_bits": 512}, padding.PSS, hashes.SHA512)):
        cert = cert_of(api.ok("pki/issuer/rsa/sign-verbatim", {"csr": csr, "ttl": "1h", **extra})["data"]["certificate"])
        assert isinstance(cert.signature_algorithm_parameters, padding_kind) and isinstance(
            cert.signature_hash_algorithm, digest), extra
    cert = cert_of(api.ok("pki/sign-verbatim", {"csr": csr, "ttl": "1h", "signature_bits": 384, "use_pss": True})
                   ["data"]["certificate"])
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA384) and isinstance(
        cert.signature_algorithm_parameters, ec.ECDSA)


def test_errors(api):
    csr = make_csr(cn="e.example.com")
    cases = [
        ("pki/sign-verbatim", {}, 400, ['"csr" is empty']),
        ("pki/sign-verbatim", {"csr": "garbage"}, 400, ["csr contains no data"]),
        ("pki/sign-verbatim", {"csr": csr, "format": "p12"}, 400,
         ['the "format" path parameter must be "pem", "der", or "pem_bundle"']),
        ("pki/sign-verbatim", {"csr": make_csr(rsa.generate_private_key(65537, 1024), cn="small")}, 400,
         ["RSA keys < 2048 bits are unsafe and not supported"]),
        ("pki/sign-verbatim/nope", {"csr": csr}, 400, ["unknown role: nope"]),
        ("pki/sign-verbatim/a/b", {"csr": csr}, 400, ["unknown role: a/b"]),
        ("pki/issuer/default/sign-verbatim/nope", {"csr": csr}, 400, ["unknown role: nope"]),
        ("pki/issuer/nope/sign-verbatim", {"format": "p12"}, 500,
         ["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable to find PKI issuer for "
          "reference: nope\n\n"]),
        ("pki/sign-verbatim", {"csr": csr, "other_sans": "garbage"}, 400,
         ['could not parse requested other SAN: expected a semicolon in other SAN "garbage"']),
        ("pki/sign-verbatim", {"csr": csr, "ttl": "soon"}, 400,
         ['Field validation failed: error converting input for field "ttl": time: invalid duration "soon"']),
        ("pki/sign-verbatim/", {"csr": csr}, 400, ["cannot write to a path ending in '/'"]),
    ]
    for path, body, status, errors in cases:
        assert api.error(path, body, status=status) == errors, (path, body)
    broken = bytearray(x509.load_pem_x509_csr(csr.encode()).public_bytes(serialization.Encoding.DER))
    broken[-3] ^= 0x01
    pem = ("-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(broken)).decode()
           + "-----END CERTIFICATE REQUEST-----\n")
    assert api.error("pki/sign-verbatim", {"csr": pem}) == ["request signature invalid"]
    r = api.get("pki/sign-verbatim")
    assert r.status_code == 405 and r.json() == {"errors": ["1 error occurred:\n\t* unsupported operation\n\n"]}


def test_cert_metadata_only_with_enterprise_emulation(api):
    api.ok("pki/roles/meta", {"ttl": "1h"})
    csr = make_csr(cn="m.example.com")
    body = api.ok("pki/sign-verbatim/meta", {"csr": csr, "cert_metadata": "aGk="})
    assert body["warnings"] == ["Endpoint ignored these unrecognized parameters: [cert_metadata]"]
    api.double.secrets.enterprise = True
    try:
        body = api.ok("pki/sign-verbatim/meta", {"csr": csr, "cert_metadata": "aGk="})
        assert body["warnings"] is None
        stored = api.get(f"pki/cert-metadata/{body['data']['serial_number']}").json()["data"]
        assert stored["cert_metadata"] == "aGk=" and stored["role"] == "meta"
        assert api.error("pki/sign-verbatim", {"csr": csr, "cert_metadata": "aGk="}) == [cert_metadata.NO_ROLE]
    finally:
        api.double.secrets.enterprise = False


def test_past_not_after_gives_an_inverted_certificate(api):
    for path in ("pki/sign-verbatim", "pki/root/sign-intermediate"):
        cert = cert_of(api.ok(path, {"csr": make_csr(), "not_after": "2030-01-01T00:00:00Z"})["data"]["certificate"])
        assert cert.not_valid_before_utc == T0 - datetime.timedelta(seconds=30)
        assert cert.not_valid_after_utc == datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


def test_not_after_before_1950_is_refused_not_crashing(api):
    """Known divergence: OpenBao writes a GeneralizedTime (200); cryptography cannot encode such a time."""
    csr = make_csr()
    assert api.error("pki/sign-verbatim", {"csr": csr, "not_after": "1900-01-01T00:00:00Z"}, status=500) == [
        "1 error occurred:\n\t* unable to create certificate: The not valid after date must be on or after 1950 "
        "January 1.\n\n"]
    assert api.error("pki/root/sign-intermediate", {"csr": csr, "not_after": "0001-01-01T00:00:00Z"}, status=500) == [
        "1 error occurred:\n\t* error signing cert: unable to create certificate: The not valid after date must be on "
        "or after 1950 January 1.\n\n"]
