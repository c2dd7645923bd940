"""Parity: the privileged signing paths beyond the basic intermediate flow - ``root/sign-self-issued``
and ``issuer/:ref/sign-self-issued``, ``sign-verbatim`` (+ ``/:role``, ``issuer/:ref/...``), and the
finer points of ``root/sign-intermediate`` (pathLen inheritance, CSR values and extensions, SKID,
subject fields, errors). Every expectation was checked against OpenBao 2.7.2
(``SCHEDPKI_PARITY_SELFCHECK=1``)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress

import parity_harness as h
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

pytestmark = pytest.mark.parity

AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of certificates. "
               "Consider updating /config/urls or the newly generated issuer with this information.")
BC_IGNORED = "specified CSR contained a Basic Constraints extension that was ignored during issuance"
CN_IGNORED = 'the common_name field was provided but the role is set with "use_csr_common_name" set to true'
ALT_IGNORED = 'the alt_names field was provided but the role is set with "use_csr_sans" set to true'
PATH_ZERO = ("Max path length of the signed certificate is zero. This certificate cannot be used to issue intermediate "
             "CA certificates.")
VERBATIM_KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
SIGNED_KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "serial_number"]
CERT = ("certificate", "issuing_ca", "ca_chain")
UPN = "1.3.6.1.4.1.311.20.2.3"
UID = x509.ObjectIdentifier("0.9.2342.19200300.100.1.1")
CUSTOM = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.3.4.5"), b"\x04\x02hi")


def utf8_other(oid: str, value: str) -> x509.OtherName:
    raw = value.encode()
    return x509.OtherName(x509.ObjectIdentifier(oid), bytes([0x0C, len(raw)]) + raw)


def csr_with(key=None, subject=None, cn="csr.example.com", sans=(), exts=()) -> str:
    """A PEM CSR with any subject, SANs and (extension, critical) pairs."""
    key = key or h.ec_key()
    name = subject if subject is not None else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else [])
    builder = x509.CertificateSigningRequestBuilder().subject_name(name)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    for ext, critical in exts:
        builder = builder.add_extension(ext, critical=critical)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def self_ca(key, cn="Self Issued CA", subject=None, exts=(), ski=True, algorithm=None, ca=True, path_length=None) -> str:
    """A self-signed certificate (PEM) with BasicConstraints (``ca``) plus the given extensions."""
    now = h.utcnow()
    name = subject if subject is not None else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
               .not_valid_after(now + datetime.timedelta(days=365)))
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=path_length), critical=True)
    for ext, critical in exts:
        builder = builder.add_extension(ext, critical=critical)
    if ski:
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    return builder.sign(key, algorithm or hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def cert_of(text: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(text.encode())


def ext_of(cert: x509.Certificate, kind):
    try:
        return cert.extensions.get_extension_for_class(kind)
    except x509.ExtensionNotFound:
        return None


# ------------------------------------------------------------------------------------- sign-self-issued

RICH_EXTENSIONS = [
    (x509.KeyUsage(True, False, False, False, False, True, True, False, False), False),
    (CUSTOM, False),
    (x509.ExtendedKeyUsage([x509.ObjectIdentifier("1.2.3.9"), ExtendedKeyUsageOID.SERVER_AUTH]), True),
    (x509.SubjectAlternativeName([x509.RFC822Name("ca@example.com"), utf8_other(UPN, "a@example.com"),
                                  x509.DNSName("self.example.com")]), True),
    (x509.CertificatePolicies([x509.PolicyInformation(x509.ObjectIdentifier("1.2.3.7"), ["http://cps.example.com"])]),
     False),
    (x509.NameConstraints([x509.DNSName("example.com")], [x509.DNSName("bad.example.com")]), False),
    (x509.AuthorityInformationAccess([x509.AccessDescription(
        x509.oid.AuthorityInformationAccessOID.CA_ISSUERS, x509.UniformResourceIdentifier("http://old/ca"))]), False),
    (x509.CRLDistributionPoints([x509.DistributionPoint([x509.UniformResourceIdentifier("http://old/crl")], None, None,
                                                         None)]), False),
    (x509.FreshestCRL([x509.DistributionPoint([x509.UniformResourceIdentifier("http://old/delta")], None, None, None)]),
     False),
]


def test_sign_self_issued_rebuilds_the_template_as_go_does(pki):
    key = h.ec_key()
    submitted = self_ca(key, exts=RICH_EXTENSIONS, path_length=2)
    ex = pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": submitted})
    ex.same(cert_keys=("certificate", "issuing_ca")).expect(200, warnings=None, data_keys=["certificate", "issuing_ca"])

    def profile(side, resp):
        data = resp.json()["data"]
        assert data["issuing_ca"] == side.vars["root_pem"]
        new, old = cert_of(data["certificate"]), cert_of(submitted)
        facts = h.cert_facts(new, data["issuing_ca"])
        assert facts["verifies_with_issuer"] and facts["aki_is_issuer_ski"]
        assert (new.serial_number, new.subject, new.not_valid_before_utc, new.not_valid_after_utc) == (
            old.serial_number, old.subject, old.not_valid_before_utc, old.not_valid_after_utc)
        assert facts["issuer"] == ["commonName=Parity Root"]
        # unknown extension, AIA, CRL DP and FreshestCRL are gone; KU critical, EKU/SAN non-critical
        assert facts["extensions"] == sorted([
            "keyUsage:critical", "extendedKeyUsage:non-critical", "basicConstraints:critical",
            "subjectKeyIdentifier:non-critical", "authorityKeyIdentifier:non-critical",
            "subjectAltName:non-critical", "certificatePolicies:non-critical", "nameConstraints:non-critical"])
        assert facts["ext_key_usage"] == ["serverAuth", "Unknown OID"]  # Go's known usages first
        assert facts["san"] == {"dns": ["self.example.com"], "email": ["ca@example.com"]}  # otherName lost
        assert facts["basic_constraints"] == {"ca": True, "path_length": 2}
        policies = ext_of(new, x509.CertificatePolicies).value
        assert [(p.policy_identifier.dotted_string, p.policy_qualifiers) for p in policies] == [("1.2.3.7", None)]
        assert ext_of(new, x509.SubjectKeyIdentifier).value == ext_of(old, x509.SubjectKeyIdentifier).value

    ex.check(profile)


def test_sign_self_issued_takes_the_mount_urls(pki):
    pki.send("POST", "/v1/{mount}/config/urls", json={
        "issuing_certificates": ["http://pki.example.com/ca"], "crl_distribution_points": ["http://pki.example.com/crl"],
        "ocsp_servers": ["http://ocsp.example.com"], "delta_crl_distribution_points": ["http://pki.example.com/delta"]}
    ).same().expect(200)
    submitted = self_ca(h.ec_key(), exts=RICH_EXTENSIONS[6:])
    ex = pki.send("POST", "/v1/{mount}/issuer/default/sign-self-issued", json={"certificate": submitted})
    ex.same(cert_keys=("certificate",)).expect(200, warnings=None)
    facts = ex.facts("bao")
    assert facts["aia"] == ["OCSP:http://ocsp.example.com", "caIssuers:http://pki.example.com/ca"]
    assert facts["crl_dp"] == ["http://pki.example.com/crl"]
    assert "freshestCRL:non-critical" not in facts["extensions"]


def test_sign_self_issued_signature_algorithms(pki):
    send = pki.send
    # same key type: the certificate's own algorithm is kept (ECDSA-SHA384 by a P-256 issuer)
    p384 = ec.generate_private_key(ec.SECP384R1())
    ex = send("POST", "/v1/{mount}/root/sign-self-issued",
              json={"certificate": self_ca(p384, algorithm=hashes.SHA384()), "require_matching_certificate_algorithms": True})
    assert ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["sig_hash"] == "sha384"
    # another key type: the issuer's default, or a 500 when matching is required
    rsa_ca = self_ca(h.rsa_key(), algorithm=hashes.SHA512())
    ex = send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": rsa_ca})
    facts = ex.same(cert_keys=("certificate",)).expect(200).facts("bao")
    assert (facts["sig_alg"], facts["key"]) == ("ecdsa-with-SHA256", "rsa-2048")
    send("POST", "/v1/{mount}/root/sign-self-issued",
         json={"certificate": rsa_ca, "require_matching_certificate_algorithms": True}).same().expect(
        500, errors=["1 error occurred:\n\t* signing certificate's public key algorithm (ECDSA) does not match "
                     "submitted certificate's (RSA), and require_matching_certificate_algorithms is true\n\n"])
    send("POST", "/v1/{mount}/root/sign-self-issued",
         json={"certificate": rsa_ca, "require_matching_certificate_algorithms": "maybe"}).same().expect(
        400, errors=['Field validation failed: error converting input for field "require_matching_certificate_algorithms": '
                     "'' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"])


def test_sign_self_issued_rolled_root_and_generated_ski(pki):
    # same subject bytes as the issuer: Go keeps the template's (absent) AKI instead of the issuer's SKI
    key = h.ec_key()
    ex = pki.send("POST", "/v1/{mount}/root/sign-self-issued", json=lambda s: {
        "certificate": self_ca(key, subject=cert_of(s.vars["root_pem"]).subject)})
    ex.same(cert_keys=("certificate",)).expect(200)

    def aki(resp):
        return ext_of(cert_of(resp.json()["data"]["certificate"]), x509.AuthorityKeyIdentifier)

    ex.check(lambda side, resp: None if aki(resp) is None else pytest.fail("AKI added"))
    # the same name encoded differently (UTF8String instead of the root's PrintableString) is another subject
    utf8_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Parity Root")])
    ex = pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": self_ca(key, subject=utf8_name)})
    ex.same(cert_keys=("certificate",)).expect(200)
    ex.check(lambda side, resp: None if aki(resp) is not None else pytest.fail("AKI missing"))
    # no SKI in the template: the leftmost 160 bits of SHA-256 over the public key bits
    ex = pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": self_ca(key, ski=False)})
    ex.same(cert_keys=("certificate",)).expect(200)
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)

    def generated_ski(side, resp):
        ski = ext_of(cert_of(resp.json()["data"]["certificate"]), x509.SubjectKeyIdentifier).value.digest
        assert ski == hashlib.sha256(point).digest()[:20]

    ex.check(generated_ski)


def test_sign_self_issued_errors(pki):
    send = pki.send
    key = h.ec_key()
    for cert, error in ((self_ca(key, ca=None), "given certificate is not a CA certificate"),
                        (self_ca(key, ca=False), "given certificate is not a CA certificate"),
                        (self_ca(key, ca=None) + self_ca(key), "given certificate is not a CA certificate"),
                        ("garbage", "certificate could not be PEM-decoded"),
                        ("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", "certificate could not be PEM-decoded"),
                        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                         "error parsing certificate: x509: malformed certificate"),
                        (csr_with(key), "error parsing certificate: x509: inner and outer signature algorithm "
                                        "identifiers don't match")):
        send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": cert}).same().expect(400, errors=[error])
    send("POST", "/v1/{mount}/root/sign-self-issued", json={}).same().expect(
        400, errors=["certificate could not be PEM-decoded"])
    # two DER certificates inside one PEM block
    der = b"".join(cert_of(self_ca(key)).public_bytes(serialization.Encoding.DER) for _ in range(2))
    block = "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der).decode() + "-----END CERTIFICATE-----\n"
    send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": block}).same().expect(
        400, errors=["2 certificates found in PEM file, expected 1"])
    # an intermediate signed by the root is not self-issued
    ex = send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr_with(cn="Int"), "common_name": "Int"})
    ex.same().capture("int_pem", lambda j: j["data"]["certificate"])
    send("POST", "/v1/{mount}/issuer/default/sign-self-issued", json=lambda s: {"certificate": s.vars["int_pem"]}).same(
    ).expect(400, errors=["given certificate is not self-issued"])
    # the certificate is checked before the issuer; an empty reference before both
    send("POST", "/v1/{mount}/issuer/nope/sign-self-issued", json={"certificate": "garbage"}).same().expect(
        400, errors=["certificate could not be PEM-decoded"])
    send("POST", "/v1/{mount}/issuer/nope/sign-self-issued", json={"certificate": self_ca(key)}).same().expect(
        500, errors=["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable to find PKI "
                     "issuer for reference: nope\n\n"])
    send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": "garbage", "issuer_ref": " "}).same().expect(
        400, errors=["missing issuer reference"])
    send("GET", "/v1/{mount}/root/sign-self-issued").same().expect(
        405, errors=["1 error occurred:\n\t* unsupported operation\n\n"])


def test_sign_self_issued_issuer_from_body_and_path(pki):
    pki.generate_root({"common_name": "Second Root", "key_type": "rsa", "issuer_name": "second", "ttl": "8760h"},
                      prefix="second")
    cert = self_ca(h.ec_key())
    ex = pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": cert, "issuer_ref": "second"})
    assert ex.same(cert_keys=("certificate",)).expect(200, warnings=None).facts("bao")["issuer"] == [
        "commonName=Second Root"]
    ex = pki.send("POST", "/v1/{mount}/issuer/default/sign-self-issued", json={"certificate": cert, "issuer_ref": "second"})
    assert ex.same(cert_keys=("certificate",)).expect(200, warnings=[
        "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: "
        "[issuer_ref]"]).facts("bao")["issuer"] == ["commonName=Parity Root"]


# ---------------------------------------------------------------------------------------- sign-verbatim

def test_sign_verbatim_copies_the_csr(pki):
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "verbatim.evil.org"),
                         x509.NameAttribute(UID, "csruser"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "CSR O")])
    csr = csr_with(subject=subject, sans=[x509.DNSName("anything.invalid"), x509.IPAddress(ipaddress.ip_address("10.1.2.3")),
                                          x509.UniformResourceIdentifier("spiffe://a/b")])
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={
        "csr": csr, "common_name": "x.example.com", "alt_names": "y.example.com", "user_ids": "u1,u2",
        "cert_metadata": "aGk=", "enforce_leaf_not_after_behavior": True})
    ex.same(cert_keys=CERT).expect(200, data_keys=VERBATIM_KEYS, warnings=[
        CN_IGNORED, ALT_IGNORED,
        "Endpoint ignored these unrecognized parameters: [cert_metadata enforce_leaf_not_after_behavior]"])
    facts = ex.facts("bao")
    assert facts["subject"] == ["commonName=verbatim.evil.org", "userID=csruser", "organizationName=CSR O"]
    assert facts["san"] == {"dns": ["anything.invalid"], "ip": ["10.1.2.3"], "uri": ["spiffe://a/b"]}
    assert facts["key_usage"] == ["digital_signature", "key_encipherment", "key_agreement"]
    assert "ext_key_usage" not in facts and "basic_constraints" not in facts
    assert facts["validity_seconds"] in (2764830, 2764829)  # the mount default, 768h
    ex.check(lambda side, resp: None if resp.json()["data"]["ca_chain"] == [side.vars["root_pem"]] else pytest.fail("chain"))


def test_sign_verbatim_csr_extensions_win(pki):
    exts = [(x509.KeyUsage(True, True, False, False, False, False, False, False, False), True), (CUSTOM, True),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False),
            (x509.SubjectKeyIdentifier(b"\xaa\xbb"), False), (x509.AuthorityKeyIdentifier(b"\xcc\xdd", None, None), False),
            (x509.BasicConstraints(ca=True, path_length=None), True)]
    csr = csr_with(cn="v2.example.com", sans=[x509.DNSName("d.example.com")], exts=exts)
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={
        "csr": csr, "ttl": "1h", "key_usage": ["CRLSign"], "ext_key_usage": ["ServerAuth"]})
    ex.same(cert_keys=("certificate",)).expect(200, warnings=[BC_IGNORED])
    facts = ex.facts("bao")
    assert facts["key_usage"] == ["digital_signature", "content_commitment"]
    assert facts["ext_key_usage"] == ["codeSigning"]
    assert "Unknown OID:critical" in facts["extensions"]
    data = ex.data("bao")
    assert h.cert_facts(data["certificate"], data["issuing_ca"])["aki_is_issuer_ski"] is False  # the CSR's AKI
    cert = cert_of(ex.data("double")["certificate"])
    assert ext_of(cert, x509.SubjectKeyIdentifier).value.digest == b"\xaa\xbb"
    # the same CSR with basic_constraints_valid_for_non_ca: a CA:FALSE extension, no warning
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h",
                                                             "basic_constraints_valid_for_non_ca": True})
    assert ex.same(cert_keys=("certificate",)).expect(200, warnings=None).facts("bao")["basic_constraints"] == {
        "ca": False, "path_length": None}


def test_sign_verbatim_usages_as_defaults(pki):
    csr = csr_with(cn="u.example.com")
    send = pki.send
    ex = send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h", "key_usage": []})
    assert "key_usage" not in ex.same(cert_keys=("certificate",)).expect(200).facts("bao")
    ex = send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h",
                                                          "key_usage": " digitalsignature , CRLSign,CertSign, bogus"})
    assert ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["key_usage"] == [
        "digital_signature", "key_cert_sign", "crl_sign"]
    ex = send("POST", "/v1/{mount}/sign-verbatim", json={
        "csr": csr, "ttl": "1h", "ext_key_usage": ["ServerAuth", "timestamping", "nope"],
        "ext_key_usage_oids": ["1.2.3.4", "bad.oid", " 1.5.6"]})
    ex.same(cert_keys=("certificate",)).expect(200)
    eku = ext_of(cert_of(ex.data("bao")["certificate"]), x509.ExtendedKeyUsage).value
    assert [o.dotted_string for o in eku] == ["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.8", "1.2.3.4", "1.5.6"]


def test_sign_verbatim_other_sans_rebuild_the_san(pki):
    csr = csr_with(cn="o.example.com", sans=[x509.DNSName("o.example.com"), utf8_other(UPN, "csr@example.com")])
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h"})
    san = ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["san"]
    assert san["dns"] == ["o.example.com"] and len(san["other"]) == 1
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h",
                                                             "other_sans": f"{UPN};UTF8:api@example.com"})
    san = ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["san"]
    assert [o.split(":")[0] for o in san["other"]] == [UPN, UPN] and san["dns"] == ["o.example.com"]
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "other_sans": "garbage"}).same().expect(
        400, errors=['could not parse requested other SAN: expected a semicolon in other SAN "garbage"'])


def test_sign_verbatim_roles_and_issuers(pki):
    pki.generate_root({"common_name": "Second Root", "key_type": "rsa", "issuer_name": "second", "ttl": "8760h"},
                      prefix="second")
    pki.create_role("r1", {"allowed_domains": ["example.com"], "key_type": "rsa", "ttl": "2h", "max_ttl": "3h",
                           "not_before_duration": "90s", "issuer_ref": "second", "key_usage": ["CRLSign"],
                           "server_flag": True, "ou": ["RoleOU"]})
    csr = csr_with(cn="evil.org", exts=[(x509.BasicConstraints(ca=True, path_length=None), True)])
    send = pki.send
    # only ttl/max_ttl/not_before_duration/issuer_ref of the role apply (no names, key type, usages)
    ex = send("POST", "/v1/{mount}/sign-verbatim/r1", json={"csr": csr, "ttl": "5h", "issuer_ref": "default"})
    ex.same(cert_keys=CERT).expect(200, warnings=[
        'TTL "5h0m0s" is longer than permitted maxTTL "3h0m0s", so maxTTL is being used', BC_IGNORED])
    facts = ex.facts("bao")
    assert facts["issuer"] == ["commonName=Second Root"] and facts["subject"] == ["commonName=evil.org"]
    assert facts["validity_seconds"] in (10890, 10889) and facts["key_usage"] == [
        "digital_signature", "key_encipherment", "key_agreement"]
    # the path's issuer wins on issuer/:ref/...; the body's on the role-less path
    ex = send("POST", "/v1/{mount}/issuer/default/sign-verbatim/r1", json={"csr": csr})
    assert ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["issuer"] == ["commonName=Parity Root"]
    ex = send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "issuer_ref": "second", "role": "r1"})
    ex.same(cert_keys=("certificate",)).expect(200, warnings=[
        BC_IGNORED, "Endpoint replaced the value of these parameters with the values captured from the endpoint's "
                    "path: [role]"])
    assert ex.facts("bao")["issuer"] == ["commonName=Second Root"]
    assert ex.facts("bao")["validity_seconds"] in (2764830, 2764829)  # no role: the body's role is replaced by ""
    ex = send("POST", "/v1/{mount}/issuer/second/sign-verbatim", json={"csr": csr, "format": "der"})
    assert ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["issuer"] == ["commonName=Second Root"]


def test_sign_verbatim_no_store_lease_and_remove_roots(pki):
    pki.create_role("nostore", {"no_store": True, "ttl": "1h"})
    pki.create_role("lease", {"generate_lease": True, "ttl": "1h"})
    csr = csr_with(cn="l.example.com")
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim/nostore", json={"csr": csr}).same(cert_keys=("certificate",))
    ex.expect(200, warnings=None).capture("serial", lambda j: j["data"]["serial_number"])
    pki.send("GET", "/v1/{mount}/cert/{serial}").same().expect(404, errors=[])
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim/lease", json={"csr": csr}).same(volatile=("lease_duration",))
    ex.expect(200)

    def leased(side, resp):
        body = resp.json()
        assert body["lease_id"].startswith(f"{side.vars['mount']}/sign-verbatim/lease/")
        assert body["lease_duration"] in (3600, 3599)

    ex.check(leased).capture("serial", lambda j: j["data"]["serial_number"])
    pki.send("GET", "/v1/{mount}/cert/{serial}").same(cert_keys=("certificate",)).expect(200)
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h", "remove_roots_from_chain": True}
             ).same().expect(200, data_keys=["certificate", "expiration", "issuing_ca", "not_before", "serial_number"])


def test_sign_verbatim_validity(pki):
    pki.generate_root({"common_name": "Short Root", "ttl": "8760h", "key_type": "ec", "issuer_name": "short"},
                      prefix="short")
    csr = csr_with(cn="t.example.com")
    send = pki.send
    ex = send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "not_after": "2027-01-01T00:00:00Z",
                                                          "not_before": "garbage"})
    ex.same(cert_keys=("certificate",), validity_tolerance=5).expect(200, warnings=None)
    send("POST", "/v1/{mount}/issuer/short/sign-verbatim", json={"csr": csr, "ttl": "9000h"}).same().expect(400)
    send("POST", "/v1/{mount}/issuer/short/sign-verbatim", json={"csr": csr, "not_after": "2099-01-01T00:00:00Z"}
         ).same().expect(400, errors=["cannot satisfy request, as TTL would result in notAfter of 2099-01-01T00:00:00Z "
                                      "that is beyond the expiration of the CA certificate at <RFC3339>"])
    send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h", "not_after": "2027-01-01T00:00:00Z"}
         ).same().expect(400, errors=["Either ttl or not_after should be provided. Both should not be provided in the "
                                      "same request."])
    send("PATCH", "/v1/{mount}/issuer/short", json={"leaf_not_after_behavior": "truncate"},
         headers={"Content-Type": "application/merge-patch+json"}).same().expect(200)
    ex = send("POST", "/v1/{mount}/issuer/short/sign-verbatim", json={"csr": csr, "ttl": "9000h"})
    ex.same(cert_keys=("certificate",)).expect(200, warnings=None)


def test_sign_verbatim_errors(pki):
    send = pki.send
    csr = csr_with(cn="e.example.com")
    send("POST", "/v1/{mount}/sign-verbatim", json={}).same().expect(400, errors=['"csr" is empty'])
    send("POST", "/v1/{mount}/sign-verbatim", json={"csr": "garbage"}).same().expect(400, errors=["csr contains no data"])
    send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "format": "p12"}).same().expect(
        400, errors=['the "format" path parameter must be "pem", "der", or "pem_bundle"'])
    send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr_with(h.rsa_key(1024), cn="small")}).same().expect(
        400, errors=["RSA keys < 2048 bits are unsafe and not supported"])
    send("POST", "/v1/{mount}/sign-verbatim/nope", json={"csr": csr}).same().expect(400, errors=["unknown role: nope"])
    send("POST", "/v1/{mount}/sign-verbatim/a/b", json={"csr": csr}).same().expect(400, errors=["unknown role: a/b"])
    send("POST", "/v1/{mount}/issuer/nope/sign-verbatim", json={"format": "p12"}).same().expect(
        500, errors=["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable to find PKI "
                     "issuer for reference: nope\n\n"])
    send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "issuer_ref": ""}).same().expect(
        500, errors=["1 error occurred:\n\t* missing issuer reference\n\n"])
    # a CSR whose signature does not verify
    good = x509.load_pem_x509_csr(csr.encode()).public_bytes(serialization.Encoding.DER)
    broken = bytearray(good)
    broken[-3] ^= 0x01
    pem = "-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(broken)).decode() + \
          "-----END CERTIFICATE REQUEST-----\n"
    send("POST", "/v1/{mount}/sign-verbatim", json={"csr": pem}).same().expect(400, errors=["request signature invalid"])


def test_sign_verbatim_signature_settings(pki):
    pki.generate_root({"common_name": "RSA Root", "key_type": "rsa", "issuer_name": "rsa", "ttl": "8760h"},
                      prefix="rsa")
    csr = csr_with(cn="s.example.com")
    for body, sig_alg, sig_hash in (({"signature_bits": 384}, "sha384WithRSAEncryption", "sha384"),
                                    ({"signature_bits": 123}, "sha256WithRSAEncryption", "sha256"),
                                    ({"use_pss": True}, "rsassaPss", "sha256"),
                                    ({"use_pss": True, "signature_bits": 512}, "rsassaPss", "sha512")):
        ex = pki.send("POST", "/v1/{mount}/issuer/rsa/sign-verbatim", json={"csr": csr, "ttl": "1h", **body})
        facts = ex.same(cert_keys=("certificate",)).expect(200).facts("bao")
        assert (facts["sig_alg"], facts["sig_hash"]) == (sig_alg, sig_hash)
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": csr, "ttl": "1h", "signature_bits": 512})
    assert ex.same(cert_keys=("certificate",)).expect(200).facts("bao")["sig_hash"] == "sha512"


# ----------------------------------------------------------------------------- sign-intermediate extras

def test_sign_intermediate_path_length_rules(pair):
    pair.enable_pki()
    pair.generate_root({"common_name": "PL3 Root", "key_type": "ec", "max_path_length": 3, "ttl": "87600h"})
    csr = csr_with(cn="PL Int")
    for body, expected, warnings in (({}, 2, [AIA_WARNING]), ({"max_path_length": -1}, None, [AIA_WARNING]),
                                     ({"max_path_length": 5}, 5, [AIA_WARNING]),
                                     ({"max_path_length": "0"}, 0, [AIA_WARNING, PATH_ZERO])):
        ex = pair.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, **body})
        facts = ex.same(cert_keys=CERT).expect(200, warnings=warnings).facts("bao")
        assert facts["basic_constraints"] == {"ca": True, "path_length": expected}
    pair.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, "max_path_length": -2}).same().expect(
        500, errors=["1 error occurred:\n\t* error signing cert: unable to create certificate: x509: invalid MaxPathLen, "
                     "must be greater or equal to -1\n\n"])
    pair.generate_root({"common_name": "PL0 Root", "key_type": "ec", "max_path_length": 0, "issuer_name": "pl0"},
                       prefix="pl0")
    pair.send("POST", "/v1/{mount}/issuer/pl0/sign-intermediate", json={"csr": csr, "max_path_length": 2}).same().expect(
        400, errors=["signing certificate has a max path length of zero, and cannot issue further CA certificates"])


def test_sign_intermediate_csr_values_and_extensions(pki):
    subject = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Org"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "Use CSR")])
    exts = [(x509.KeyUsage(True, True, False, False, False, False, False, False, False), True), (CUSTOM, False),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False),
            (x509.BasicConstraints(ca=True, path_length=7), True)]
    csr = csr_with(subject=subject, sans=[x509.DNSName("int.example.com"), utf8_other(UPN, "a@b.c"),
                                          x509.IPAddress(ipaddress.ip_address("10.0.0.1"))], exts=exts)
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, "use_csr_values": True,
                                                                      "common_name": "ignored", "organization": "ReqOrg"})
    facts = ex.same(cert_keys=CERT).expect(200, warnings=[AIA_WARNING]).facts("bao")
    assert facts["subject"] == ["countryName=DE", "organizationName=Org", "commonName=Use CSR"]
    assert facts["key_usage"] == ["digital_signature", "content_commitment"]  # the CSR's replaces CertSign+CRLSign
    assert facts["basic_constraints"] == {"ca": True, "path_length": None}
    assert facts["ext_key_usage"] == ["codeSigning"] and "Unknown OID:non-critical" in facts["extensions"]
    assert facts["san"]["dns"] == ["int.example.com"] and len(facts["san"]["other"]) == 1
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, "use_csr_values": True,
                                                                      "other_sans": "1.2.3.4;UTF8:hello"})
    san = ex.same(cert_keys=CERT).expect(200).facts("bao")["san"]
    assert san["dns"] == ["int.example.com"] and san["ip"] == ["10.0.0.1"]
    assert [o.split(":")[0] for o in san["other"]] == ["1.2.3.4"]  # the CSR's otherName is lost


def test_sign_intermediate_request_values(pki):
    csr = csr_with(cn="Ignored CSR CN", exts=[(x509.KeyUsage(True, True, False, False, False, False, False, False, False),
                                               True)])
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={
        "csr": csr, "common_name": "Req CN", "alt_names": "a.example.com,b@example.com", "ip_sans": "1.2.3.4",
        "uri_sans": "spiffe://x/y", "other_sans": "1.2.3.4;UTF8:hello", "ou": "U1,U2", "organization": ["O1", "O1"],
        "country": "US", "locality": "L", "province": "P", "street_address": "S", "postal_code": "123",
        "serial_number": "SN1", "key_usage": ["DigitalSignature", "KeyEncipherment", "bogus"],
        "ext_key_usage": ["ServerAuth", "clientauth"], "skid": "01:02-03 04", "not_before_duration": "60s",
        "ttl": "10h", "permitted_dns_domains": "example.com,.example.org"})
    facts = ex.same(cert_keys=CERT).expect(200, warnings=[AIA_WARNING]).facts("bao")
    assert facts["subject"] == ["countryName=US", "stateOrProvinceName=P", "localityName=L", "streetAddress=S",
                                "postalCode=123", "organizationName=O1", "organizationalUnitName=U1",
                                "organizationalUnitName=U2", "commonName=Req CN", "serialNumber=SN1"]
    assert facts["key_usage"] == ["digital_signature", "key_cert_sign", "crl_sign"]
    assert facts["ext_key_usage"] == ["serverAuth", "clientAuth"]
    assert facts["validity_seconds"] in (36060, 36059)
    assert facts["san"] == {"dns": ["a.example.com"], "email": ["b@example.com"], "ip": ["1.2.3.4"],
                            "uri": ["spiffe://x/y"], "other": ["1.2.3.4:0c0568656c6c6f"]}
    assert facts["name_constraints"] == {"permitted": ["example.com", ".example.org"], "excluded": []}
    ex.check(lambda side, resp: None if ext_of(cert_of(resp.json()["data"]["certificate"]), x509.SubjectKeyIdentifier)
             .value.digest == b"\x01\x02\x03\x04" else pytest.fail("skid"))
    # ext_key_usage_oids (parsed by upstream as names) clears ext_key_usage; exclude_cn_from_sans drops the DNS SAN
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={
        "csr": csr, "common_name": "host.example.com", "ext_key_usage": ["ServerAuth"], "ext_key_usage_oids": "1.2.3.4",
        "exclude_cn_from_sans": True})
    facts = ex.same(cert_keys=CERT).expect(200).facts("bao")
    assert "ext_key_usage" not in facts and "san" not in facts


def test_sign_intermediate_parameter_errors(pki):
    csr = csr_with(cn="Err Int")
    send = pki.send
    cases = (({"format": "p12"}, 'The "format" path parameter must be "pem" or "der"'),
             ({"csr": "garbage"}, "csr contains no data"),
             ({"ttl": "1h", "not_after": "2030-01-01T00:00:00Z"},
              "Either ttl or not_after should be provided. Both should not be provided in the same request."),
             ({"not_before": "junk"}, 'parsing time "junk" as "2006-01-02T15:04:05Z07:00": cannot parse "junk" as "2006"'),
             ({"skid": "zz"}, "cannot parse requested SKID value as hex: encoding/hex: invalid byte: U+007A 'z'"),
             ({"skid": "abc"}, "cannot parse requested SKID value as hex: encoding/hex: odd length hex string"),
             ({"ip_sans": "nope"}, 'the value "nope" is not a valid IP address'),
             ({"other_sans": "garbage"}, 'could not parse requested other SAN: expected a semicolon in other SAN "garbage"'),
             ({"uri_sans": "::bad"}, 'the provided URI Subject Alternative Name "::bad" is not a valid URI'),
             ({"issuer_ref": ""}, "missing issuer reference"))
    for body, error in cases:
        send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, **body}).same().expect(400, errors=[error])
    # format is checked before the issuer
    send("POST", "/v1/{mount}/issuer/nope/sign-intermediate", json={"csr": csr, "format": "p12"}).same().expect(
        400, errors=['The "format" path parameter must be "pem" or "der"'])
    ex = send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, "not_before": "2020-01-01T00:00:00Z"})
    ex.same(cert_keys=CERT).expect(200)  # parsed, but NotBefore stays now - 30s
    assert ex.facts("bao")["validity_seconds"] in (2764830, 2764829)


def test_sign_intermediate_empty_subject_and_der(pki):
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr_with(cn=None), "format": "der"})
    ex.same(cert_keys=CERT).expect(200, data_keys=SIGNED_KEYS, warnings=[
        "This issuer certificate was generated without a Subject; this makes it likely that issuing leaf certs with this "
        "certificate will cause TLS validation libraries to reject this certificate.", AIA_WARNING])
    ex.check(lambda side, resp: None if len(resp.json()["data"]["ca_chain"]) == 2
             and resp.json()["data"]["ca_chain"][0] == resp.json()["data"]["certificate"] else pytest.fail("der chain"))


def test_past_not_after_is_signed_as_is(pki):
    """Neither path checks that NotAfter comes after NotBefore: the certificate is issued inverted."""
    csr = csr_with(cn="past.example.com")
    for path, warnings in (("root/sign-intermediate", [AIA_WARNING]), ("sign-verbatim", None)):
        ex = pki.send("POST", f"/v1/{{mount}}/{path}", json={"csr": csr, "not_after": "2020-01-01T00:00:00Z"})
        ex.same().expect(200, warnings=warnings)
        ex.check(lambda side, resp: None if cert_of(resp.json()["data"]["certificate"]).not_valid_after_utc ==
                 datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc) else pytest.fail("not_after changed"))
