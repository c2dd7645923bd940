"""sign/:role and issuer/:ref/sign/:role with RSA and EC CSRs."""

import datetime
import re

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from pki_leaf_helpers import T0, cert_of, make_csr

RSA_KEY = rsa.generate_private_key(65537, 2048)
RSA_1024 = rsa.generate_private_key(65537, 1024)
SIGN_KEYS = {"ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"}


def sans(cert):
    try:
        return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def root(bao, name="root-a"):
    return next(i for i in bao.state().issuers.values() if i.issuer_name == name).certificate


def test_sign_rsa_csr(bao):
    csr = make_csr("s.example.com", dns=["s2.example.com"], key=RSA_KEY)
    r = bao.post("pki/sign/web", {"csr": csr})
    assert r.status_code == 200 and r.json()["warnings"] is None
    data = r.json()["data"]
    assert set(data) == SIGN_KEYS
    cert = cert_of(data["certificate"])
    cert.verify_directly_issued_by(root(bao))
    assert cert.public_key().public_numbers() == RSA_KEY.public_key().public_numbers()
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "s.example.com"
    assert sans(cert).get_values_for_type(x509.DNSName) == ["s2.example.com", "s.example.com"]
    assert cert.not_valid_before_utc == T0 - datetime.timedelta(seconds=30)
    assert cert.not_valid_after_utc == T0 + datetime.timedelta(hours=24)
    assert bao.state().certs[data["serial_number"]].private_key_pem is None


def test_sign_ec_csr_with_ip_and_uri(bao):
    key = ec.generate_private_key(ec.SECP256R1())
    r = bao.post("pki/sign/ec", {"csr": make_csr("e.example.com", ips=["10.1.1.1"], uris=["spiffe://example.com/a"],
                                                 key=key)}).json()
    assert r["warnings"] == ['TTL "768h0m0s" is longer than permitted maxTTL "720h0m0s", so maxTTL is being used']
    cert = cert_of(r["data"]["certificate"])
    assert cert.public_key() == key.public_key()
    names = sans(cert)
    assert names.get_values_for_type(x509.DNSName) == ["e.example.com"]
    assert [str(i) for i in names.get_values_for_type(x509.IPAddress)] == ["10.1.1.1"]
    assert names.get_values_for_type(x509.UniformResourceIdentifier) == ["spiffe://example.com/a"]


def test_csr_values_win_with_warnings_in_upstream_order(bao):
    csr = make_csr("s.example.com", dns=["s2.example.com"], key=RSA_KEY)
    r = bao.post("pki/sign/web", {"csr": csr, "common_name": "o.example.com", "alt_names": "x.example.com",
                                  "ttl": "100h"}).json()
    assert r["warnings"] == [
        'the common_name field was provided but the role is set with "use_csr_common_name" set to true',
        'the alt_names field was provided but the role is set with "use_csr_sans" set to true',
        'TTL "100h0m0s" is longer than permitted maxTTL "72h0m0s", so maxTTL is being used']
    cert = cert_of(r["data"]["certificate"])
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "s.example.com"
    assert sans(cert).get_values_for_type(x509.DNSName) == ["s2.example.com", "s.example.com"]


def test_request_values_when_the_role_does_not_use_the_csr(bao):
    bao.post("pki/roles/own", {"allowed_domains": "example.com", "allow_subdomains": True, "key_type": "ec",
                               "use_csr_common_name": False, "use_csr_sans": False, "ttl": "1h"})
    r = bao.post("pki/sign/own", {"csr": make_csr("s.example.com", dns=["s2.example.com"]),
                                  "common_name": "o.example.com", "alt_names": "x.example.com"}).json()
    assert r["warnings"] is None
    cert = cert_of(r["data"]["certificate"])
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "o.example.com"
    assert sans(cert).get_values_for_type(x509.DNSName) == ["o.example.com", "x.example.com"]


def test_csr_without_cn_falls_back_to_common_name(bao):
    r = bao.post("pki/sign/web", {"csr": make_csr(None, dns=["s.example.com"], key=RSA_KEY)})
    assert (r.status_code, r.json()) == (400, {"errors": [
        'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, '
        'unless "require_cn" is set to false']})
    r = bao.post("pki/sign/web", {"csr": make_csr(None, dns=["s.example.com"], key=RSA_KEY),
                                  "common_name": "c.example.com"}).json()
    assert r["warnings"] == ['the common_name field was provided but the role is set with "use_csr_common_name" set to true']
    assert cert_of(r["data"]["certificate"]).subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "c.example.com"


@pytest.mark.parametrize("role, csr_kwargs, extra, message", [
    ("web", {"cn": "e.example.com"}, {}, "role requires keys of type rsa"),
    ("ec", {"cn": "e.example.com", "key": RSA_KEY}, {}, "role requires keys of type ec"),
    ("web", {"cn": "s.example.com", "key": RSA_1024}, {},
     "role requires a minimum of a 2048-bit key, but CSR's key is 1024 bits"),
    ("any", {"cn": "x.com", "key": RSA_1024}, {}, "RSA keys < 2048 bits are unsafe and not supported"),
    ("web", {"cn": "s.evil.org", "key": RSA_KEY}, {}, "common name s.evil.org not allowed by this role"),
    ("web", {"cn": "e.example.com", "ips": ["10.1.1.1"], "key": RSA_KEY}, {},
     "IP Subject Alternative Names are not allowed in this role, but was provided via CSR"),
    ("ec", {"cn": "e.example.com", "uris": ["spiffe://other/a"]}, {},
     "URI Subject Alternative Names were provided via CSR which are not valid for this role"),
    ("userids", {"cn": "a.example.com", "user_id": "mallory"}, {}, "user_id mallory is not allowed by this role"),
    ("web", {"cn": "s.example.com", "key": RSA_KEY}, {"format": "p12"},
     'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
])
def test_sign_refusals(bao, role, csr_kwargs, extra, message):
    kwargs = dict(csr_kwargs)
    cn = kwargs.pop("cn")
    r = bao.post(f"pki/sign/{role}", {"csr": make_csr(cn, **kwargs), **extra})
    assert (r.status_code, r.json()) == (400, {"errors": [message]})


@pytest.mark.parametrize("csr, message", [
    (None, '"csr" is empty'),
    ("", '"csr" is empty'),
    ("hello", "csr contains no data"),
    ("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
     "certificate request could not be parsed: asn1: structure error: tags don't match (16 vs {class:0 tag:0 length:0 "
     "isCompound:false}) {optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> "
     "stringType:0 timeType:0 set:false omitEmpty:false} certificateRequest @2"),
])
def test_bad_csr_values(bao, csr, message):
    body = {"common_name": "a.example.com"} if csr is None else {"csr": csr}
    r = bao.post("pki/sign/web", body)
    assert (r.status_code, r.json()) == (400, {"errors": [message]})


def test_basic_constraints_in_the_csr_are_dropped_with_a_warning(bao):
    r = bao.post("pki/sign/web", {"csr": make_csr("s.example.com", key=RSA_KEY, basic_constraints=True)}).json()
    assert r["warnings"] == ["specified CSR contained a Basic Constraints extension that was ignored during issuance"]
    with pytest.raises(x509.ExtensionNotFound):
        cert_of(r["data"]["certificate"]).extensions.get_extension_for_class(x509.BasicConstraints)


def test_user_id_from_the_csr_subject(bao):
    cert = cert_of(bao.post("pki/sign/userids", {"csr": make_csr("a.example.com", user_id="alice")})
                   .json()["data"]["certificate"])
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.USER_ID)] == ["alice"]


def test_sign_formats_and_issuer_path(bao):
    csr = make_csr("s.example.com", key=RSA_KEY)
    data = bao.post("pki/sign/web", {"csr": csr, "format": "pem_bundle", "remove_roots_from_chain": True}).json()["data"]
    assert re.findall(r"-----BEGIN ([A-Z ]+)-----", data["certificate"]) == ["CERTIFICATE", "CERTIFICATE"]
    assert "ca_chain" not in data and "private_key" not in data
    data = bao.post("pki/sign/web", {"csr": csr, "format": "der"}).json()["data"]
    assert not data["certificate"].startswith("-----")
    data = bao.post("pki/issuer/root-b/sign/web", {"csr": csr}).json()["data"]
    cert_of(data["certificate"]).verify_directly_issued_by(root(bao, "root-b"))
    r = bao.post("pki/issuer/nope/sign/web", {"csr": csr})
    assert (r.status_code, r.json()) == (500, {"errors": [
        "1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable to find PKI issuer for "
        "reference: nope\n\n"]})
    r = bao.post("pki/sign/nope", {"csr": csr})
    assert (r.status_code, r.json()) == (400, {"errors": ["unknown role: nope"]})


def test_sign_ignores_request_not_before_and_key_type_is_unknown(bao):
    r = bao.post("pki/sign/web", {"csr": make_csr("s.example.com", key=RSA_KEY), "not_before": "2030-05-01T00:00:00Z",
                                  "key_type": "ec"}).json()
    assert cert_of(r["data"]["certificate"]).not_valid_before_utc == T0 - datetime.timedelta(seconds=30)
    assert r["warnings"] == ["Endpoint ignored these unrecognized parameters: [key_type]"]


def test_sign_lease(bao):
    body = bao.post("pki/sign/lease", {"csr": make_csr("l.example.com")}).json()
    assert re.fullmatch(r"pki/sign/lease/[A-Za-z0-9]{24}", body["lease_id"]) and body["lease_duration"] == 3600


def test_signature_bits_apply_to_sign_but_not_to_issue_from_an_ec_issuer(bao):
    bao.post("pki/roles/sb", {"allow_any_name": True, "key_type": "ec", "signature_bits": 384, "ttl": "1h"})
    algorithm = {}
    for ref in ("root-a", "root-b"):
        issued = bao.post(f"pki/issuer/{ref}/issue/sb", {"common_name": "x.com"}).json()["data"]["certificate"]
        signed = bao.post(f"pki/issuer/{ref}/sign/sb", {"csr": make_csr("x.com")}).json()["data"]["certificate"]
        algorithm[ref] = (cert_of(issued).signature_hash_algorithm.name, cert_of(signed).signature_hash_algorithm.name)
    assert algorithm == {"root-a": ("sha384", "sha384"), "root-b": ("sha256", "sha384")}


def test_sign_refuses_a_csr_whose_signature_is_invalid(bao):
    """OpenBao checks the CSR's self-signature last, before signing: 400 ``request signature invalid``,
    and nothing is stored."""
    import base64

    good = make_csr("s.example.com", key=RSA_KEY)
    der = bytearray(base64.b64decode("".join(good.strip().splitlines()[1:-1])))
    der[-1] ^= 0xFF  # the last byte belongs to the signature BIT STRING
    bad = "-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(der)).decode() + "-----END CERTIFICATE REQUEST-----"
    before = set(bao.state().certs)
    r = bao.post("pki/sign/web", {"csr": bad})
    assert (r.status_code, r.json()) == (400, {"errors": ["request signature invalid"]})
    assert set(bao.state().certs) == before
