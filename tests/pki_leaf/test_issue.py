"""issue/:role and issuer/:ref/issue/:role: response data, certificate profile, names and SANs, errors."""

import datetime
import re

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID
from pki_leaf_helpers import T0, cert_of, issuer_cert

UTC = datetime.timezone.utc
MERGE = {"Content-Type": "application/merge-patch+json"}
DATA_KEYS = {"ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "private_key", "private_key_type",
             "serial_number"}


def san(cert):
    try:
        return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def test_issue_response_shape_and_certificate_profile(bao):
    r = bao.post("pki/issue/web", {"common_name": "a.example.com"})
    assert r.status_code == 200
    body = r.json()
    data = body["data"]
    assert set(data) == DATA_KEYS and body["warnings"] is None and body["lease_id"] == "" and body["lease_duration"] == 0
    assert isinstance(data["expiration"], int) and isinstance(data["not_before"], int)
    assert re.fullmatch(r"[0-9a-f]{2}(:[0-9a-f]{2}){0,19}", data["serial_number"])
    assert data["private_key_type"] == "rsa" and data["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----\n")
    assert not data["certificate"].endswith("\n")
    root = issuer_cert(bao)
    root_pem = root.public_bytes(serialization.Encoding.PEM).decode().rstrip("\n")
    assert data["issuing_ca"] == root_pem and data["ca_chain"] == [root_pem]

    cert = cert_of(data["certificate"])
    assert cert.subject == x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.example.com")])
    assert cert.issuer == root.subject
    cert.verify_directly_issued_by(root)
    assert cert.not_valid_before_utc == T0 - datetime.timedelta(seconds=30)
    assert cert.not_valid_after_utc == T0 + datetime.timedelta(hours=24)  # role ttl
    assert data["not_before"] == int(cert.not_valid_before_utc.timestamp())
    assert data["expiration"] == int(cert.not_valid_after_utc.timestamp())
    assert data["serial_number"] == ":".join(f"{b:02x}" for b in cert.serial_number.to_bytes(20, "big")).lstrip("0:") \
        or data["serial_number"]
    ku = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert ku.critical and ku.value.digital_signature and ku.value.key_encipherment and ku.value.key_agreement
    assert not (ku.value.key_cert_sign or ku.value.crl_sign or ku.value.content_commitment)
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    assert list(eku.value) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH] and not eku.critical
    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.BasicConstraints)
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert ski == x509.SubjectKeyIdentifier.from_public_key(cert.public_key())
    aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == root.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    assert san(cert).get_values_for_type(x509.DNSName) == ["a.example.com"]
    key = serialization.load_pem_private_key(data["private_key"].encode(), None)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == 2048
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()


def test_serial_is_colon_hex_of_the_certificate_serial(bao):
    data = bao.post("pki/issue/ec", {"common_name": "a.example.com"}).json()["data"]
    serial = cert_of(data["certificate"]).serial_number
    raw = serial.to_bytes((serial.bit_length() + 7) // 8, "big")
    assert data["serial_number"] == ":".join(f"{b:02x}" for b in raw)
    assert serial.bit_length() <= 159


def test_san_kinds(bao):
    data = bao.post("pki/issue/ec", {"common_name": "example.com", "ip_sans": "127.0.0.1,::1",
                                     "uri_sans": "spiffe://example.com/svc",
                                     "alt_names": "b.example.com,b.example.com,x@a.example.com,Ä.example.com"}).json()["data"]
    names = san(cert_of(data["certificate"]))
    assert names.get_values_for_type(x509.DNSName) == ["example.com", "b.example.com", "xn--7ba.example.com"]
    assert names.get_values_for_type(x509.RFC822Name) == ["x@a.example.com"]
    assert [str(i) for i in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "::1"]
    assert names.get_values_for_type(x509.UniformResourceIdentifier) == ["spiffe://example.com/svc"]


def test_email_cn_becomes_rfc822_only_and_exclude_cn_from_sans(bao):
    cert = cert_of(bao.post("pki/issue/web", {"common_name": "user@a.example.com"}).json()["data"]["certificate"])
    assert san(cert).get_values_for_type(x509.RFC822Name) == ["user@a.example.com"]
    assert san(cert).get_values_for_type(x509.DNSName) == []
    cert = cert_of(bao.post("pki/issue/web", {"common_name": "b.example.com", "exclude_cn_from_sans": True})
                   .json()["data"]["certificate"])
    assert san(cert) is None and cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "b.example.com"


def test_wildcard_localhost_and_non_hostname_names(bao):
    cert = cert_of(bao.post("pki/issue/web", {"common_name": "*.example.com", "alt_names": "localhost"})
                   .json()["data"]["certificate"])
    assert san(cert).get_values_for_type(x509.DNSName) == ["*.example.com", "localhost"]
    # a wildcard in the middle of a label is allowed but is not a DNS SAN
    cert = cert_of(bao.post("pki/issue/web", {"common_name": "f*o.example.com"}).json()["data"]["certificate"])
    assert san(cert) is None


def test_other_sans_and_user_ids(bao):
    data = bao.post("pki/issue/othersans", {"common_name": "a.example.com",
                                            "other_sans": "1.3.6.1.4.1.311.20.2.3;UTF8:alice@example.com"}).json()["data"]
    others = san(cert_of(data["certificate"])).get_values_for_type(x509.OtherName)
    assert [(o.type_id.dotted_string, o.value) for o in others] == [
        ("1.3.6.1.4.1.311.20.2.3", b"\x0c\x11alice@example.com")]
    cert = cert_of(bao.post("pki/issue/userids", {"common_name": "a.example.com", "user_ids": ["alice", "bob"]})
                   .json()["data"]["certificate"])
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.USER_ID)] == ["alice", "bob"]


def test_no_cn_no_sans_with_require_cn_false(bao):
    r = bao.post("pki/issue/nocn", {})
    cert = cert_of(r.json()["data"]["certificate"])
    assert len(cert.subject) == 0 and san(cert) is None
    assert r.json()["warnings"] == ['TTL "768h0m0s" is longer than permitted maxTTL "1h0m0s", so maxTTL is being used']


@pytest.mark.parametrize("role, body, message", [
    ("web", {"common_name": "a.other.com"}, "common name a.other.com not allowed by this role"),
    ("web", {"common_name": "example.com"}, "common name example.com not allowed by this role"),
    ("web", {"common_name": 123}, "common name 123 not allowed by this role"),
    ("web", {"common_name": "a.example.com", "alt_names": "evil.org"}, "subject alternate name evil.org not allowed by this role"),
    ("web", {"common_name": "a.example.com", "alt_names": "x@evil.com"}, "email address x@evil.com not allowed by this role"),
    ("web", {"common_name": "a.example.com", "ip_sans": "10.0.0.1"},
     "IP Subject Alternative Names are not allowed in this role, but was provided via the API"),
    ("web", {"common_name": "a.example.com", "uri_sans": "spiffe://example.com/x"},
     "URI Subject Alternative Names are not allowed in this role, but were provided via the API"),
    ("ec", {"common_name": "example.com", "uri_sans": "spiffe://other.org/svc"},
     "URI Subject Alternative Names were provided via the API which are not valid for this role"),
    ("ec", {"common_name": "example.com", "ip_sans": "not-an-ip"}, 'the value "not-an-ip" is not a valid IP address'),
    ("web", {"common_name": "a.example.com", "other_sans": "1.3.6.1.4.1.311.20.2.3;UTF8:a@example.com"},
     "other SAN OID 1.3.6.1.4.1.311.20.2.3 not allowed by this role"),
    ("othersans", {"common_name": "a.example.com", "other_sans": "1.3.6.1.4.1.311.20.2.3;UTF8:alice@evil.org"},
     "other SAN alice@evil.org not allowed for OID 1.3.6.1.4.1.311.20.2.3 by this role"),
    ("othersans", {"common_name": "a.example.com", "other_sans": "garbage"},
     'could not parse requested other SAN: expected a semicolon in other SAN "garbage"'),
    ("web", {"common_name": "a.example.com", "user_ids": "alice"}, "user_id alice is not allowed by this role"),
    ("userids", {"common_name": "a.example.com", "user_ids": "mallory"}, "user_id mallory is not allowed by this role"),
    ("web", {}, 'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to '
                'true, unless "require_cn" is set to false'),
    ("web", {"alt_names": "a.example.com"}, 'the common_name field is required, or must be provided in a CSR with '
                                            '"use_csr_common_name" set to true, unless "require_cn" is set to false'),
    ("web", {"common_name": "a.example.com", "alt_names": "a..example.com"}, 'idna: invalid label "a..example.com"'),
    ("web", {"common_name": "a.example.com", "serial_number": "123"}, "serial_number 123 not allowed by this role"),
    ("web", {"common_name": "a.example.com", "format": "p12"}, 'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
    ("web", {"common_name": "a.example.com", "format": ""}, 'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
    ("web", {"common_name": "a.example.com", "format": "PEM"}, 'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
    ("web", {"common_name": "a.example.com", "ttl": "1h", "not_after": "2030-07-01T00:00:00Z"},
     "Either ttl or not_after should be provided. Both should not be provided in the same request."),
    ("web", {"common_name": "a.example.com", "not_after": "tomorrow"},
     'parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"'),
    ("web", {"common_name": "a.example.com", "alt_names": ["c.example.com"]},
     "Field validation failed: error converting input for field \"alt_names\": '' expected type 'string', got "
     "unconvertible type '[]interface {}'"),
    ("web", {"common_name": "a.example.com", "ttl": True},
     'Field validation failed: error converting input for field "ttl": could not parse duration from input'),
    ("nope", {"common_name": "a.example.com"}, "unknown role: nope"),
    ("any", {"common_name": "x.com"}, 'role key type "any" not allowed for issuing certificates without providing '
                                      "key_type and/or key_bits request parameters"),
])
def test_user_errors(bao, role, body, message):
    r = bao.post(f"pki/issue/{role}", body)
    assert (r.status_code, r.json()) == (400, {"errors": [message]})


def test_issuer_selection(bao):
    state = bao.state()
    root_a = next(i for i in state.issuers.values() if i.issuer_name == "root-a")
    root_b = next(i for i in state.issuers.values() if i.issuer_name == "root-b")
    for ref, expected in (("default", root_a), (root_a.issuer_id, root_a), ("root-b", root_b), (root_b.issuer_id, root_b)):
        data = bao.post(f"pki/issuer/{ref}/issue/web", {"common_name": "i.example.com"}).json()["data"]
        cert_of(data["certificate"]).verify_directly_issued_by(expected.certificate)
        assert bao.state().certs[data["serial_number"]].issuer_id == expected.issuer_id
    # the role's issuer_ref picks the issuer on issue/:role; the path wins on issuer/:ref/issue/:role
    bao.post("pki/roles/onb", {"allow_any_name": True, "key_type": "ec", "issuer_ref": "root-b", "ttl": "1h"})
    cert_of(bao.post("pki/issue/onb", {"common_name": "x.com"}).json()["data"]["certificate"]) \
        .verify_directly_issued_by(root_b.certificate)
    cert_of(bao.post("pki/issuer/root-a/issue/onb", {"common_name": "x.com"}).json()["data"]["certificate"]) \
        .verify_directly_issued_by(root_a.certificate)


@pytest.mark.parametrize("path, message", [
    ("pki/issuer/nope/issue/web", "could not fetch the CA certificate (was one set?): unable to find PKI issuer for "
                                  "reference: nope"),
])
def test_unknown_issuer_is_500(bao, path, message):
    r = bao.post(path, {"common_name": "i.example.com"})
    assert (r.status_code, r.json()) == (500, {"errors": [f"1 error occurred:\n\t* {message}\n\n"]})
    r = bao.post("pki/issuer/nope/issue/nope", {"common_name": "i.example.com"})
    assert (r.status_code, r.json()) == (400, {"errors": ["unknown role: nope"]})  # the role is checked first


def test_issuer_without_default_key_or_usage(bao):
    bao.post("pki/roles/odd", {"allow_any_name": True, "key_type": "ec", "issuer_ref": "ghost"})
    r = bao.post("pki/issue/odd", {"common_name": "x.com"})
    assert r.status_code == 500 and "unable to find PKI issuer for reference: ghost" in r.json()["errors"][0]
    int_state = bao.state("pki_int")
    keyless = next(i for i in int_state.issuers.values() if i.key_id is None)
    r = bao.post(f"pki_int/issuer/{keyless.issuer_id}/issue/svc", {"common_name": "a.svc.example.com"})
    assert r.json() == {"errors": [f"1 error occurred:\n\t* could not fetch the CA certificate (was one set?): unable "
                                   f"to fetch corresponding key for issuer {keyless.issuer_id}; unable to use this "
                                   f"issuer for signing\n\n"]}
    root_b = next(i for i in bao.state().issuers.values() if i.issuer_name == "root-b")
    root_b.usage = "read-only,crl-signing"
    r = bao.post("pki/issuer/root-b/issue/web", {"common_name": "i.example.com"})
    assert r.json() == {"errors": [f"1 error occurred:\n\t* error fetching CA certificate: error while attempting to use "
                                   f"issuer {root_b.issuer_id}: requested usage issuing-certificates for issuer "
                                   f"[id:{root_b.issuer_id} / name:root-b] but only had usage crl-signing,read-only\n\n"]}


def test_key_type_parameters(bao):
    r = bao.post("pki/issue/ec", {"common_name": "x.example.com", "key_type": "rsa", "ttl": "1h", "foo": 1}).json()
    assert r["data"]["private_key_type"] == "ec"
    assert r["warnings"] == ["parameters key_type and key_bits ignored as role had specific values",
                             "Endpoint ignored these unrecognized parameters: [foo]"]
    data = bao.post("pki/issue/any", {"common_name": "x.com", "key_type": "ec", "key_bits": 384}).json()["data"]
    key = serialization.load_pem_private_key(data["private_key"].encode(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp384r1"
    data = bao.post("pki/issue/any", {"common_name": "x.com", "key_type": "ed25519"}).json()["data"]
    assert data["private_key_type"] == "ed25519" and data["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert isinstance(serialization.load_pem_private_key(data["private_key"].encode(), None), ed25519.Ed25519PrivateKey)
    for body, text in (({"key_type": "ec", "key_bits": 2048}, "unsupported bit length for EC key: 2048"),
                       ({"key_type": "dsa"}, "unknown key type dsa")):
        r = bao.post("pki/issue/any", {"common_name": "x.com", **body})
        assert (r.status_code, r.json()) == (500, {"errors": [f"1 error occurred:\n\t* failed to validate role: {text}\n\n"]})


def test_role_profile_fields(bao):
    bao.post("pki/roles/prof", {
        "allow_any_name": True, "key_type": "ec", "key_usage": [], "ext_key_usage": ["bogus", "TimeStamping", "any"],
        "ext_key_usage_oids": "1.2.3.4", "code_signing_flag": True, "email_protection_flag": True, "server_flag": False,
        "policy_identifiers": "1.2.3.4.5", "basic_constraints_valid_for_non_ca": True, "ou": "u1,u2,u1",
        "organization": "O1", "country": "US", "locality": "L", "province": "P", "street_address": "S",
        "postal_code": "12345", "allowed_serial_numbers": "SN*", "ttl": "1h"})
    cert = cert_of(bao.post("pki/issue/prof", {"common_name": "p.example.com", "serial_number": "SN1"})
                   .json()["data"]["certificate"])
    assert [(a.oid, a.value) for a in cert.subject] == [
        (NameOID.COUNTRY_NAME, "US"), (NameOID.STATE_OR_PROVINCE_NAME, "P"), (NameOID.LOCALITY_NAME, "L"),
        (NameOID.STREET_ADDRESS, "S"), (NameOID.POSTAL_CODE, "12345"), (NameOID.ORGANIZATION_NAME, "O1"),
        (NameOID.ORGANIZATIONAL_UNIT_NAME, "u1"), (NameOID.ORGANIZATIONAL_UNIT_NAME, "u2"),
        (NameOID.COMMON_NAME, "p.example.com"), (NameOID.SERIAL_NUMBER, "SN1")]
    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE, ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.CODE_SIGNING,
        ExtendedKeyUsageOID.EMAIL_PROTECTION, ExtendedKeyUsageOID.TIME_STAMPING, x509.ObjectIdentifier("1.2.3.4")]
    bc = cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca is False
    policies = cert.extensions.get_extension_for_oid(ExtensionOID.CERTIFICATE_POLICIES).value
    assert [p.policy_identifier.dotted_string for p in policies] == ["1.2.3.4.5"]


def test_aia_urls_from_config(bao):
    bao.state().config_urls.update({"issuing_certificates": ["http://127.0.0.1:8200/v1/pki/ca"],
                                    "crl_distribution_points": ["http://127.0.0.1:8200/v1/pki/crl"]})
    cert = cert_of(bao.post("pki/issue/ec", {"common_name": "a.example.com"}).json()["data"]["certificate"])
    aia = cert.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    assert [(d.access_method.dotted_string, d.access_location.value) for d in aia] == [
        ("1.3.6.1.5.5.7.48.2", "http://127.0.0.1:8200/v1/pki/ca")]
    dps = cert.extensions.get_extension_for_class(x509.CRLDistributionPoints).value
    assert [n.value for dp in dps for n in dp.full_name] == ["http://127.0.0.1:8200/v1/pki/crl"]


def test_put_form_body_and_path_role_in_body(bao):
    assert bao.call("PUT", "pki/issue/ec", {"common_name": "a.example.com"}).status_code == 200
    import requests

    r = requests.post(bao.url + "pki/issue/ec", data="common_name=a.example.com&ttl=1h",
                      headers={"X-Vault-Token": "root", "Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200 and r.json()["warnings"] is None
    r = bao.post("pki/issue/ec", {"common_name": "a.example.com", "ttl": "1h", "role": "web"}).json()
    assert r["data"]["private_key_type"] == "ec"
    assert r["warnings"] == ["Endpoint replaced the value of these parameters with the values captured from the "
                             "endpoint's path: [role]"]


def test_methods_and_auth(bao):
    assert bao.get("pki/issue/web").status_code == 405
    assert bao.call("DELETE", "pki/issue/web").status_code == 405
    assert bao.post("pki/issue/web", {"common_name": "a.example.com"}, token=None).status_code == 403
    r = bao.post("pki/issue/web/extra", {"common_name": "a.example.com"})
    assert (r.status_code, r.json()) == (404, {"errors": ["1 error occurred:\n\t* unsupported path\n\n"]})
