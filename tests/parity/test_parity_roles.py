"""Parity: roles - create (full default record compared value by value), read, list, patch, delete,
validation errors and warnings."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

#: what OpenBao 2.7.2 answers for ``POST roles/:name {}`` (every field at its default)
DEFAULT_ROLE = {
    "allow_any_name": False, "allow_bare_domains": False, "allow_glob_domains": False,
    "allow_globs_in_identity_templates": False, "allow_ip_sans": True, "allow_localhost": True,
    "allow_subdomains": False, "allow_token_displayname": False, "allow_wildcard_certificates": True,
    "allowed_domains": [], "allowed_domains_template": False, "allowed_ip_sans_cidr": [], "allowed_other_sans": [],
    "allowed_serial_numbers": [], "allowed_uri_sans": [], "allowed_uri_sans_template": False, "allowed_user_ids": [],
    "basic_constraints_valid_for_non_ca": False, "client_flag": True, "cn_validations": ["email", "hostname"],
    "code_signing_flag": False, "country": [], "email_protection_flag": False, "enforce_hostnames": True,
    "ext_key_usage": [], "ext_key_usage_oids": [], "generate_lease": False, "issuer_ref": "default", "key_bits": 2048,
    "key_type": "rsa", "key_usage": ["DigitalSignature", "KeyAgreement", "KeyEncipherment"], "locality": [],
    "max_ttl": 0, "no_store": False, "not_after": "", "not_after_bound": "permit", "not_before": "",
    "not_before_bound": "permit", "not_before_duration": 30, "organization": [], "ou": [], "policy_identifiers": [],
    "postal_code": [], "province": [], "require_cn": True, "server_flag": True, "signature_bits": 0,
    "street_address": [], "ttl": 0, "use_csr_common_name": True, "use_csr_sans": True, "use_pss": False,
}
MERGE = {"Content-Type": "application/merge-patch+json"}


def role(**changes):
    """The default role record with ``changes`` applied."""
    return {**DEFAULT_ROLE, **changes}


def test_create_with_defaults_returns_full_record(pki):
    ex = pki.send("POST", "/v1/{mount}/roles/defaults", json={}).same()
    ex.expect(200, warnings=None, data=DEFAULT_ROLE, data_keys=list(DEFAULT_ROLE))
    pki.send("GET", "/v1/{mount}/roles/defaults").same().expect(200, data=DEFAULT_ROLE, data_keys=list(DEFAULT_ROLE))


def test_create_on_mount_without_issuer(pair):
    pair.enable_pki()
    pair.send("POST", "/v1/{mount}/roles/early", json={"allow_any_name": True}).same().expect(
        200, data=role(allow_any_name=True),
        warnings=["Issuing Certificate was set to default, but no default issuing certificate (configurable at "
                  "/config/issuers) is currently set"])


def test_create_with_values_and_ttl_seconds(pki):
    body = {"allowed_domains": ["example.com", "example.org"], "allow_subdomains": True, "max_ttl": "72h", "ttl": "24h",
            "key_type": "ec", "key_bits": 384, "allow_ip_sans": False, "allowed_uri_sans": ["spiffe://example.com/*"],
            "allowed_other_sans": ["1.3.6.1.4.1.311.20.2.3;UTF8:*@example.com"], "allowed_user_ids": ["alice"],
            "organization": ["Org"], "ou": "Unit A,Unit B", "server_flag": False, "code_signing_flag": True,
            "not_before_duration": "1m", "ext_key_usage": ["TimeStamping"], "no_store": True}
    expected = role(allowed_domains=["example.com", "example.org"], allow_subdomains=True, max_ttl=259200, ttl=86400,
                    key_type="ec", key_bits=384, allow_ip_sans=False, allowed_uri_sans=["spiffe://example.com/*"],
                    allowed_other_sans=["1.3.6.1.4.1.311.20.2.3;UTF8:*@example.com"], allowed_user_ids=["alice"],
                    organization=["Org"], ou=["Unit A", "Unit B"], server_flag=False, code_signing_flag=True,
                    not_before_duration=60, ext_key_usage=["TimeStamping"], no_store=True)
    pki.send("POST", "/v1/{mount}/roles/full", json=body).same().expect(200, warnings=None, data=expected)
    pki.send("GET", "/v1/{mount}/roles/full").same().expect(200, data=expected)


def test_create_with_string_typed_values_like_the_cli(pki):
    body = {"allowed_domains": "a.com, b.com", "allow_subdomains": "true", "max_ttl": "3600", "key_bits": "4096",
            "key_usage": "DigitalSignature,Bogus"}
    pki.send("POST", "/v1/{mount}/roles/cli", json=body).same().expect(200, data=role(
        allowed_domains=["a.com", "b.com"], allow_subdomains=True, max_ttl=3600, key_bits=4096,
        key_usage=["DigitalSignature", "Bogus"]))


@pytest.mark.parametrize("body, changes", [
    ({"key_type": "any"}, {"key_type": "any", "key_bits": 0}),
    ({"key_type": "ed25519"}, {"key_type": "ed25519", "key_bits": 0}),
    ({"key_type": "ec", "key_bits": 0}, {"key_type": "ec", "key_bits": 256}),
    ({"key_type": "rsa", "key_bits": 0}, {"key_type": "rsa", "key_bits": 2048}),
    ({"signature_bits": 384}, {"signature_bits": 384}),
], ids=["any", "ed25519", "ec-0", "rsa-0", "signature-bits"])
def test_key_type_defaults(pki, body, changes):
    pki.send("POST", "/v1/{mount}/roles/k", json=body).same().expect(200, data=role(**changes))


def test_list_read_delete(pki):
    pki.send("LIST", "/v1/{mount}/roles").same().expect(404, errors=[])
    for name in ("web", "api", "Zeta", "a-b"):
        pki.create_role(name, {"allow_any_name": True, "key_type": "ec"})
    pki.send("LIST", "/v1/{mount}/roles").same().expect(200, data={"keys": ["Zeta", "a-b", "api", "web"]})
    pki.send("GET", "/v1/{mount}/roles", params={"list": "true"}).same().expect(200, data={"keys": ["Zeta", "a-b", "api", "web"]})
    pki.send("GET", "/v1/{mount}/roles").same().expect(405, errors=["1 error occurred:\n\t* unsupported operation\n\n"])
    pki.send("GET", "/v1/{mount}/roles/nope").same().expect(404, errors=[])
    pki.send("DELETE", "/v1/{mount}/roles/api").same().expect(204)
    pki.send("DELETE", "/v1/{mount}/roles/api").same().expect(204)  # unknown: still 204
    pki.send("GET", "/v1/{mount}/roles/api").same().expect(404, errors=[])
    pki.send("LIST", "/v1/{mount}/roles").same().expect(200, data={"keys": ["Zeta", "a-b", "web"]})
    for name in ("web", "Zeta", "a-b"):
        pki.send("DELETE", f"/v1/{{mount}}/roles/{name}").same().expect(204)
    pki.send("LIST", "/v1/{mount}/roles").same().expect(404, errors=[])


def test_update_is_full_replace(pki):
    pki.create_role("r", {"allowed_domains": ["example.com"], "ttl": "1h", "key_type": "ec"})
    pki.send("POST", "/v1/{mount}/roles/r", json={"allow_any_name": True}).same().expect(
        200, data=role(allow_any_name=True))


def test_patch_merges(pki):
    pki.create_role("r", {"allowed_domains": ["example.com"], "key_type": "ec", "max_ttl": "2h"})
    pki.send("PATCH", "/v1/{mount}/roles/r", data='{"ttl": "1h", "allowed_domains": "a.com,b.com"}', headers=MERGE).same().expect(
        200, warnings=None, data=role(allowed_domains=["a.com", "b.com"], key_type="ec", key_bits=256, ttl=3600, max_ttl=7200))
    pki.send("GET", "/v1/{mount}/roles/r").same().expect(200, data={"ttl": 3600, "max_ttl": 7200, "key_type": "ec"})
    pki.send("PATCH", "/v1/{mount}/roles/nope", data='{"ttl": "1h"}', headers=MERGE).same().expect(
        400, errors=["Unable to fetch role entry to patch"])
    pki.send("PATCH", "/v1/{mount}/roles/r", json={"ttl": "1h"}).same().expect(
        415, errors=["PATCH requires Content-Type of application/merge-patch+json, provided application/json"])
    pki.send("PATCH", "/v1/{mount}/roles/r", data='{"ttl": "5h"}', headers=MERGE).same().expect(
        400, errors=['"ttl" value must be less than "max_ttl" value'])


@pytest.mark.parametrize("body, message", [
    ({"key_type": "dsa"}, "unknown key type dsa"),
    ({"key_type": "ec", "key_bits": 2048}, "unsupported bit length for EC key: 2048"),
    ({"key_type": "rsa", "key_bits": 1024}, "RSA keys < 2048 bits are unsafe and not supported: got 1024"),
    ({"ttl": "10h", "max_ttl": "1h"}, '"ttl" value must be less than "max_ttl" value'),
    ({"ttl": "forever"}, 'Field validation failed: error converting input for field "ttl": time: invalid duration "forever"'),
    ({"not_before_duration": "-1h"},
     "Field validation failed: error converting input for field \"not_before_duration\": cannot provide negative value '-3600'"),
    ({"allow_subdomains": "maybe"},
     "Field validation failed: error converting input for field \"allow_subdomains\": '' cannot parse value as 'bool': "
     "strconv.ParseBool: invalid syntax"),
], ids=["key-type", "ec-bits", "rsa-bits", "ttl-gt-max", "ttl-syntax", "negative-duration", "bool-syntax"])
def test_validation_errors(pki, body, message):
    pki.send("POST", "/v1/{mount}/roles/bad", json=body).same().expect(400, errors=[message])
    pki.send("GET", "/v1/{mount}/roles/bad").same().expect(404, errors=[])


def test_warnings(pki):
    pki.send("POST", "/v1/{mount}/roles/lease", json={"generate_lease": True}).same().expect(
        200, data=role(generate_lease=True),
        warnings=["it is encouraged to disable generate_lease and rely on PKI's native capabilities when possible; "
                  "this option can cause instance-wide issues with large numbers of issued certificates"])
    pki.send("POST", "/v1/{mount}/roles/both", json={"no_store": True, "generate_lease": True}).same().expect(
        200, data=role(no_store=True, generate_lease=False),
        warnings=["mutually exclusive values no_store=true and generate_lease=true were both specified; "
                  "no_store=true takes priority"])
    pki.send("POST", "/v1/{mount}/roles/ref", json={"issuer_ref": "nope"}).same().expect(
        200, data=role(issuer_ref="nope"),
        warnings=["Issuing Certificate was set to nope but no issuing certificate currently has that name"])
    pki.send("POST", "/v1/{mount}/roles/unk", json={"allowed_domains": ["example.com"], "bogus_field": 1}).same().expect(
        200, data=role(allowed_domains=["example.com"]),
        warnings=["Endpoint ignored these unrecognized parameters: [bogus_field]"])
