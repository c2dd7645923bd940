"""Parity: what differential fuzzing found (issue 13's table), each pinned against the real server.

Every test sends the same request to ``bao server -dev`` and the double, checks they answer alike
(``same()``) and pins OpenBao 2.7.2's exact answer (``expect()``).
"""

from __future__ import annotations

import parity_harness as h
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

pytestmark = pytest.mark.parity

JSON = {"Content-Type": "application/json"}
CERT = ("certificate", "issuing_ca", "ca_chain")


@pytest.fixture
def roles(pki):
    """``pki`` plus ``strict`` (subdomains of example.com, EC) and ``any`` (any name, any key type,
    every SAN kind allowed)."""
    pki.create_role("strict", {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                               "ttl": "24h", "max_ttl": "72h"})
    pki.create_role("any", {"allow_any_name": True, "enforce_hostnames": False, "key_type": "any",
                            "allow_ip_sans": True, "allowed_uri_sans": ["*"], "allowed_other_sans": ["*"],
                            "ttl": "1h"})
    return pki


@pytest.fixture(scope="module")
def ec_csr():
    """A plain EC P-256 CSR (CN a.example.com)."""
    return h.make_csr(h.ec_key(), "a.example.com")


@pytest.fixture(scope="module")
def k1_csr():
    """A CSR with a secp256k1 key (a curve Go's x509 refuses)."""
    return h.make_csr(ec.generate_private_key(ec.SECP256K1()), "k1.example.com")


# ----------------------------------------------------------------------------------- 1. secp256k1

@pytest.mark.parametrize("path", ["sign/any", "sign-verbatim", "root/sign-intermediate"])
def test_secp256k1_csr_is_refused_as_go_cannot_parse_it(roles, k1_csr, path):
    roles.send("POST", f"/v1/{{mount}}/{path}", json={"csr": k1_csr, "common_name": "k1.example.com"}).same().expect(
        400, errors=["certificate request could not be parsed: x509: unsupported elliptic curve"])


# ----------------------------------------------------------------------------------- 2, 3. JSON bodies

@pytest.mark.parametrize("body, number", [
    ('{"common_name": 1e999}', "1e999"),
    ('{"common_name": 1e999}x', "1e999"),  # read number by number: before the trailing garbage
    ("[1E400]", "1E400"),  # ... and before the type of the whole value
    ('{"a": {"b": [-1e999]}, "c": tru}', "-1e999"),
])
def test_a_number_beyond_float64_is_refused_when_read(roles, body, number):
    roles.send("POST", "/v1/{mount}/issue/strict", data=body, headers=JSON).same().expect(
        400, errors=[f"failed to decode JSON input: json: cannot unmarshal number {number} into Go value of type float64"])


@pytest.mark.parametrize("body, reason", [
    ('{"x": tru, "a": 1e999}', "invalid character ',' in literal true (expecting 'e')"),
    ('{"common_name": Infinity}', "invalid character 'I' looking for beginning of value"),
    ('{"common_name": -Infinity}', "invalid character 'I' in numeric literal"),
    ('{"common_name": NaN}', "invalid character 'N' looking for beginning of value"),
    ('\ufeff{"common_name": "a.example.com"}', "invalid character '\\ufeff' looking for beginning of value"),
    ('{"common_name": "a.example.com"}\u200b', "invalid character '\\u200b' looking for beginning of value"),
])
def test_json_syntax_errors_quote_the_character_as_go_does(roles, body, reason):
    roles.send("POST", "/v1/{mount}/issue/strict", data=body.encode(), headers=JSON).same().expect(
        400, errors=[f"failed to decode JSON input: {reason}"])


def test_a_tiny_number_underflows_to_zero_without_error(roles):
    roles.send("POST", "/v1/{mount}/issue/strict", data='{"common_name": "a.example.com", "x": 1e-999}',
               headers=JSON).same(cert_keys=CERT).expect(200)


# ----------------------------------------------------------------------------------- 4. key_type any

def test_issue_on_an_any_role_with_key_type_any_fails_at_key_generation(roles):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "key_type": "any", "key_bits": 7}).same().expect(
        400, errors=["unknown key type: any"])


def test_issue_with_key_type_any_still_checks_the_format_first(roles):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "key_type": "any", "format": "x"}).same().expect(
        400, errors=['the "format" path parameter must be "pem", "der", or "pem_bundle"'])


# ----------------------------------------------------------------------------------- 5, 6. login paths

@pytest.mark.parametrize("method, path, status, error", [
    ("DELETE", "crl/pem", 405, "unsupported operation"),
    ("POST", "ca/pem", 405, "unsupported operation"),
    ("GET", "cert/zz/raw", 404, "unsupported path"),
    ("GET", "cert/zz", 404, "unsupported path"),
    ("DELETE", "issuer/default/pem", 405, "unsupported operation"),
])
@pytest.mark.parametrize("token", ["root", None])
def test_unauthenticated_paths_answer_unwrapped_errors_with_or_without_token(pki, method, path, status, error, token):
    pki.send(method, f"/v1/{{mount}}/{path}", token=token).same().expect(status, errors=[error])


def test_authenticated_paths_still_wrap_unsupported_operation(pki):
    pki.send("DELETE", "/v1/{mount}/issue/strict").same().expect(
        405, errors=["1 error occurred:\n\t* unsupported operation\n\n"])


# ----------------------------------------------------------------------------------- 12. durations

@pytest.mark.parametrize("ttl, reason", [
    ("bad", 'strconv.ParseInt: parsing "ba": invalid syntax'),
    ("d", 'strconv.ParseInt: parsing "": invalid syntax'),
    ("1.5d", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    ("1m1d", 'strconv.ParseInt: parsing "1m1": invalid syntax'),
    ("99999999999999999999d", 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("99999999999999999999", 'time: invalid duration "99999999999999999999"'),
    ("1e3", 'time: unknown unit "e" in duration "1e3"'),
])
def test_duration_texts_follow_parse_duration_second(roles, ttl, reason):
    roles.send("POST", "/v1/{mount}/issue/strict", json={"common_name": "a.example.com", "ttl": ttl}).same().expect(
        400, errors=[f'Field validation failed: error converting input for field "ttl": {reason}'])


# ----------------------------------------------------------------------------------- 7. other_sans OIDs

@pytest.mark.parametrize("role, other, reason", [
    ("any", ";UTF8:x", 'strconv.Atoi: parsing "": invalid syntax'),
    ("strict", ";UTF8:x", 'strconv.Atoi: parsing "": invalid syntax'),  # an empty OID is not refused by the role
    ("any", "1.2.x;UTF8:x", 'strconv.Atoi: parsing "x": invalid syntax'),
    ("any", "1.2.99999999999999999999;UTF8:x", 'strconv.Atoi: parsing "99999999999999999999": value out of range'),
    ("any", "1;UTF8:x", "cryptobyte: invalid OID: 1"),
    ("any", "3.1;UTF8:x", "cryptobyte: invalid OID: 3.1"),
])
def test_other_sans_oids_go_cannot_marshal_fail_at_signing(roles, role, other, reason):
    body = {"common_name": "a.example.com", "other_sans": other, "key_type": "ec"}
    roles.send("POST", f"/v1/{{mount}}/issue/{role}", json=body).same().expect(
        500, errors=[f"1 error occurred:\n\t* error marshaling other SANs: {reason}\n\n"])


def test_other_sans_oid_refused_by_a_strict_role_is_named(roles):
    roles.send("POST", "/v1/{mount}/issue/strict", json={"common_name": "a.example.com", "other_sans": "1.2.x;UTF8:x"}) \
        .same().expect(400, errors=["other SAN OID 1.2.x not allowed by this role"])


def test_other_sans_marshaling_error_on_sign_intermediate_is_prefixed(roles, ec_csr):
    roles.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": ec_csr, "common_name": "x",
                                                                   "other_sans": ";UTF8:x"}).same().expect(
        500, errors=['1 error occurred:\n\t* error signing cert: error marshaling other SANs: strconv.Atoi: parsing "": '
                     'invalid syntax\n\n'])


# ----------------------------------------------------------------------------------- 8, 10. IP SANs

def test_ipv4_mapped_ipv6_is_written_as_the_ipv4_address(roles):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "ip_sans": "::ffff:10.0.0.1", "key_type": "ec"}) \
        .same(cert_keys=CERT).expect(200).check(
            lambda side, r: _assert(h.cert_facts(r.json()["data"]["certificate"])["san"]["ip"] == ["10.0.0.1"]))


@pytest.mark.parametrize("ip", ["fe80::1%eth0", "::ffff:1.2.3.4%2"])
def test_ipv6_zone_ids_are_not_ip_addresses(roles, ip):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "ip_sans": ip, "key_type": "ec"}).same().expect(
        400, errors=[f'the value "{ip}" is not a valid IP address'])


# ----------------------------------------------------------------------------------- 15, 18. URI SANs

def test_uri_sans_are_written_as_go_re_encodes_them(roles):
    uris = ["HTTPS://Example.COM/Path", "not a uri", "urn:uuid:1234", "http://example.com/%41%2f", "http://u:p@h/",
            "http://h/a%20b?x y#f g", "x:"]
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "uri_sans": uris, "key_type": "ec"}) \
        .same(cert_keys=CERT).expect(200).check(lambda side, r: _assert(
            h.cert_facts(r.json()["data"]["certificate"])["san"]["uri"] == [
                "https://Example.COM/Path", "not%20a%20uri", "urn:uuid:1234", "http://example.com/%41%2f",
                "http://u:p@h/", "http://h/a%20b?x y#f%20g", "x:"]))


@pytest.mark.parametrize("uri", ["://missing-scheme", "1a:b", "http://a b", "%zz", "http://h:port/", "http://[::1/"])
def test_uri_sans_url_parse_refuses(roles, uri):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "uri_sans": uri, "key_type": "ec"}).same().expect(
        400, errors=[f'the provided URI Subject Alternative Name "{uri}" is not a valid URI'])


@pytest.mark.parametrize("uri, written", [("http://a..b/", "http://a..b/"), ("http://a.b./x", "http://a.b./x"),
                                          ("http://\u4f8b\u3048.jp/", "http://%E4%BE%8B%E3%81%88.jp/")])
def test_uri_sans_whose_host_go_cannot_read_back_fail_after_signing(roles, uri, written):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "uri_sans": uri, "key_type": "ec"}).same().expect(
        500, errors=[f'1 error occurred:\n\t* unable to parse created certificate: x509: cannot parse URI "{written}": '
                     "invalid domain\n\n"])


# ----------------------------------------------------------------------------------- 19. EKU OIDs

@pytest.mark.parametrize("oids", ["0", "1.2.x,3.1", "1.40", "1.2.840.113549.1.1.1.99999999999,0", "-1.2,1.40"])
def test_sign_verbatim_eku_oids_go_cannot_marshal(pki, ec_csr, oids):
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": ec_csr, "ext_key_usage_oids": oids}).same().expect(
        500, errors=["1 error occurred:\n\t* unable to create certificate: asn1: structure error: invalid object "
                     "identifier\n\n"])


@pytest.mark.parametrize("oids", ["1.2.x", "1.2.99999999999999999999", "2.999.1"])
def test_sign_verbatim_skips_eku_oids_that_are_not_integers(pki, ec_csr, oids):
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": ec_csr, "ext_key_usage_oids": oids}).same(
        cert_keys=CERT).expect(200)


def test_a_role_eku_oid_go_cannot_marshal_fails_issue(roles):
    roles.create_role("r1", {"allow_any_name": True, "key_type": "ec", "ext_key_usage_oids": "0"})
    roles.send("POST", "/v1/{mount}/issue/r1", json={"common_name": "a"}).same().expect(
        500, errors=["1 error occurred:\n\t* unable to create certificate: asn1: structure error: invalid object "
                     "identifier\n\n"])


def _assert(condition: bool) -> None:
    assert condition


# ----------------------------------------------------------------------------------- 9. KeyUsage bits

@pytest.mark.parametrize("usage, encoded", [
    (["DigitalSignature", "DecipherOnly"], "0303078080"),
    (["EncipherOnly"], "03020001"),
    (["EncipherOnly", "CRLSign", "DecipherOnly"], "0303070380"),
])
def test_sign_verbatim_writes_encipher_decipher_only_without_key_agreement(pki, ec_csr, usage, encoded):
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": ec_csr, "key_usage": usage}).same(
        cert_keys=CERT).expect(200).check(lambda side, r: _assert(
            h.extension_value_der(h.load_certificate(r.json()["data"]["certificate"]), b"\x06\x03\x55\x1d\x0f").hex()
            == encoded))


def test_a_certificate_with_decipher_only_alone_can_be_revoked_by_certificate(pki, ec_csr):
    ex = pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": ec_csr, "key_usage": ["DecipherOnly"]}).same(
        cert_keys=CERT).expect(200)
    ex.capture("leaf", lambda j: j["data"]["certificate"])
    pki.send("POST", "/v1/{mount}/revoke", json=lambda side: {"certificate": side.vars["leaf"]}).same().expect(
        200, data={"state": "revoked"})


# ----------------------------------------------------------------------------------- 11, 13. name constraints

def test_sign_intermediate_writes_a_wildcard_dns_constraint(pki, ec_csr):
    pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={
        "csr": ec_csr, "common_name": "i", "permitted_dns_domains": "*.x.test,.example.com"}).same(
        cert_keys=CERT).expect(200).check(lambda side, r: _assert(
            h.cert_facts(r.json()["data"]["certificate"])["name_constraints_der"]
            == "301ea01c300a82082a2e782e74657374300e820c2e6578616d706c652e636f6d"))


@pytest.mark.parametrize("domain", ["bad domain", "a..b", "x."])
def test_a_dns_constraint_go_cannot_read_back_fails_after_signing(pki, ec_csr, domain):
    pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={
        "csr": ec_csr, "common_name": "i", "permitted_dns_domains": [domain]}).same().expect(
        500, errors=[f'1 error occurred:\n\t* error signing cert: unable to parse created certificate: x509: failed to '
                     f'parse dnsName constraint "{domain}"\n\n'])


def test_root_generation_with_a_dns_constraint_go_cannot_read_back(pair):
    pair.enable_pki()
    pair.send("POST", "/v1/{mount}/root/generate/internal", json={
        "common_name": "x", "key_type": "ec", "permitted_dns_domains": "bad domain"}).same().expect(
        500, errors=['1 error occurred:\n\t* unable to parse created certificate: x509: failed to parse dnsName '
                     'constraint "bad domain"\n\n'])


# ----------------------------------------------------------------------------------- 14. JSON null

@pytest.mark.parametrize("body, status, error", [
    ({"format": None}, 400, 'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
    ({"not_after": None}, 400, 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'),
])
def test_null_is_the_zero_value_not_an_absent_field(roles, body, status, error):
    roles.send("POST", "/v1/{mount}/issue/strict", json={"common_name": "a.example.com", **body}).same().expect(
        status, errors=[error])


def test_null_key_type_on_an_any_role_is_the_empty_key_type(roles):
    roles.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a", "key_type": None}).same().expect(
        500, errors=["1 error occurred:\n\t* failed to validate role: unknown key type \n\n"])


def test_null_key_type_on_a_role_write(pki):
    pki.send("POST", "/v1/{mount}/roles/r1", json={"key_type": None}).same().expect(400, errors=["unknown key type "])


def test_null_values_that_mean_zero_are_accepted(roles):
    roles.send("POST", "/v1/{mount}/issue/strict", json={
        "common_name": "a.example.com", "ttl": None, "alt_names": None, "ip_sans": None, "private_key_format": None,
        "exclude_cn_from_sans": None, "not_before_duration": None, "user_ids": None}).same(cert_keys=CERT).expect(200)


# ----------------------------------------------------------------------------------- 17. ttl + not_after

@pytest.mark.parametrize("path", ["root/sign-intermediate", "issuer/default/sign-intermediate"])
def test_sign_intermediate_refuses_ttl_with_not_after_before_parsing_it(pki, ec_csr, path):
    pki.send("POST", f"/v1/{{mount}}/{path}", json={"csr": ec_csr, "common_name": "x", "not_after": "tomorrow",
                                                    "ttl": "1h"}).same().expect(
        400, errors=["Either ttl or not_after should be provided. Both should not be provided in the same request."])


@pytest.mark.parametrize("extra", [{"not_after": ""}, {"not_after": None, "ttl": "1h"}])
def test_sign_intermediate_parses_an_empty_not_after(pki, ec_csr, extra):
    pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": ec_csr, "common_name": "x", **extra}).same() \
        .expect(400, errors=['parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'])


def test_issue_parses_not_after_before_refusing_it_with_ttl(roles):
    roles.send("POST", "/v1/{mount}/issue/strict", json={"common_name": "a.example.com", "not_after": "tomorrow",
                                                         "ttl": "1h"}).same().expect(
        400, errors=['parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"'])


# ----------------------------------------------------------------------------------- weak decoding

def test_an_empty_object_is_an_empty_list_for_list_fields(roles):
    roles.send("POST", "/v1/{mount}/issue/strict", json={"common_name": "a.example.com", "other_sans": {},
                                                         "ip_sans": {}, "uri_sans": {}}).same(cert_keys=CERT).expect(200)


def test_a_non_empty_object_is_not_a_list(roles):
    roles.send("POST", "/v1/{mount}/issue/strict", json={"common_name": "a.example.com", "ip_sans": {"a": "b"}}) \
        .same().expect(400, errors=['Field validation failed: error converting input for field "ip_sans": 1 error(s) '
                                    "decoding:\n\n* '[0]' expected type 'string', got unconvertible type "
                                    "'map[string]interface {}', value: 'map[a:b]'"])


@pytest.mark.parametrize("value", [2 ** 70, "99999999999999999999", "-99999999999999999999"])
def test_integers_beyond_int64_are_out_of_range(pki, value):
    pki.send("POST", "/v1/{mount}/roles/r1", json={"key_bits": value}).same().expect(
        400, errors=['Field validation failed: error converting input for field "key_bits": \'\' cannot parse value as '
                     "'int': strconv.ParseInt: value out of range"])


# ----------------------------------------------------------------------------------- 16. foreign issuer

def test_revoking_an_issuer_signed_by_another_mount_stores_it_and_refuses(pki):
    """pki_int's issuers are the intermediate signed by ``{mount}`` and that mount's root (imported
    with it); revoking either on pki_int stores the certificate, then refuses: it is an issuer."""
    pki.enable_pki(pki.new_mount("int"))
    ex = pki.send("POST", "/v1/{int}/intermediate/generate/internal", json={"common_name": "int", "key_type": "ec"})
    ex.same().expect(200).capture("csr", lambda j: j["data"]["csr"])
    pki.send("POST", "/v1/{mount}/root/sign-intermediate", json=lambda s: {"csr": s.vars["csr"], "common_name": "int"}) \
        .same(cert_keys=CERT).expect(200).capture("int_pem", lambda j: j["data"]["certificate"])
    pki.send("POST", "/v1/{int}/intermediate/set-signed",
             json=lambda s: {"certificate": s.vars["int_pem"] + "\n" + s.vars["root_pem"]}).same().expect(200)
    for key in ("root_pem", "int_pem"):
        ex = pki.send("POST", "/v1/{int}/revoke", json=lambda s, key=key: {"certificate": s.vars[key]})
        ex.same().check(lambda side, r: _assert(r.status_code == 400 and r.json()["errors"][0].startswith(
            "adding issuer (id: ") and r.json()["errors"][0].endswith(") to its own CRL is not allowed")))
    pki.send("LIST", "/v1/{int}/certs").same().check(lambda side, r: _assert(len(r.json()["data"]["keys"]) == 2))
    pki.send("LIST", "/v1/{int}/certs/revoked").same().expect(404, errors=[])


# ----------------------------------------------------------------------------------- lone surrogates

@pytest.mark.parametrize("body, error", [
    ('{"common_name": "example.com", "key_type": "ec", "ttl": "\\ud800"}',
     'Field validation failed: error converting input for field "ttl": time: invalid duration "\\xef\\xbf\\xbd"'),
    ('{"common_name": "example.com", "key_type": "ec", "not_after": "\\ud800"}',
     'parsing time "\\xef\\xbf\\xbd" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xef\\xbf\\xbd" as "2006"'),
    ('{"common_name": "a.\\ud800x.com", "key_type": "ec"}', 'idna: invalid label "\ufffdx"'),
])
def test_a_lone_surrogate_escape_decodes_as_the_replacement_character(roles, body, error):
    roles.send("POST", "/v1/{mount}/issue/any", data=body, headers=JSON).same().expect(400, errors=[error])


# ----------------------------------------------------------------------------------- policy identifiers

@pytest.mark.parametrize("value, error", [
    (-0, "asn1: structure error: invalid object identifier"),
    ("3.1", "asn1: structure error: invalid object identifier"),
    (2 ** 70, 'policy identifier "1180591620717411303424" is neither a valid OID: strconv.Atoi: parsing '
              '"1180591620717411303424": value out of range, Nor JSON Policy Identifier: json: cannot unmarshal '
              "number into Go value of type certutil.PolicyIdentifierWithQualifierEntry"),
    ('1.2.3.4,[{"oid":"1.2.3"}]', 'policy identifier "[{\\"oid\\":\\"1.2.3\\"}]" is neither a valid OID: strconv.Atoi: parsing '
                          '"[{\\"oid\\":\\"1": invalid syntax, Nor JSON Policy Identifier: json: cannot unmarshal '
                          "array into Go value of type certutil.PolicyIdentifierWithQualifierEntry"),
    ("true", 'policy identifier "true" is neither a valid OID: strconv.Atoi: parsing "true": invalid syntax, Nor JSON '
             "Policy Identifier: json: cannot unmarshal bool into Go value of type "
             "certutil.PolicyIdentifierWithQualifierEntry"),
])
def test_role_policy_identifiers_go_refuses(pki, value, error):
    pki.send("POST", "/v1/{mount}/roles/r1", json={"policy_identifiers": value}).same().expect(
        500, errors=[f"1 error occurred:\n\t* {error}\n\n"])


@pytest.mark.parametrize("value, stored", [
    ([None], [""]), ([None, "1.2.3"], ["", "1.2.3"]), ("1.2.3,", ["1.2.3", ""]), (["", ""], ["", ""]),
])
def test_role_policy_identifiers_keep_empty_entries(pki, value, stored):
    """An empty entry is stored and skipped at issuance; only empty entries still give an empty
    CertificatePolicies extension (found by the differential fuzzer: the double refused them)."""
    pki.send("POST", "/v1/{mount}/roles/p", json={"policy_identifiers": value, "allow_any_name": True, "key_type": "ec",
                                                   "ttl": "1h"}).same().expect(200, data={"policy_identifiers": stored})

    def policies(side, resp):
        cert = h.load_certificate(resp.json()["data"]["certificate"])
        value = cert.extensions.get_extension_for_oid(x509.oid.ExtensionOID.CERTIFICATE_POLICIES).value
        assert [p.policy_identifier.dotted_string for p in value] == [s for s in stored if s]

    pki.send("POST", "/v1/{mount}/issue/p", json={"common_name": "a.example.com"}).same(cert_keys=CERT).expect(
        200).check(policies)


@pytest.mark.parametrize("value, points", [
    ([{"oid": "1.2.3"}], ["'[0]' expected type 'string', got unconvertible type 'map[string]interface {}', "
                          "value: 'map[oid:1.2.3]'"]),
    ([{"b": [1, "x"], "a": None}, [1, 2], "x", {}],
     ["'[0]' expected type 'string', got unconvertible type 'map[string]interface {}', value: 'map[a:<nil> b:[1 x]]'",
      "'[1]' expected type 'string', got unconvertible type '[]interface {}', value: '[1 2]'",
      "'[3]' expected type 'string', got unconvertible type 'map[string]interface {}', value: 'map[]'"]),
    ([[]] * 11, sorted(f"'[{i}]' expected type 'string', got unconvertible type '[]interface {{}}', value: '[]'"
                       for i in range(11))),
])
def test_a_list_item_that_is_no_string_is_named_with_its_index_and_value(pki, value, points):
    for field in ("policy_identifiers", "allowed_domains"):
        pki.send("POST", "/v1/{mount}/roles/r1", json={field: value}).same().expect(400, errors=[
            f'Field validation failed: error converting input for field "{field}": {len(points)} error(s) decoding:'
            "\n\n* " + "\n* ".join(points)])


# ----------------------------------------------------------------------------------- back-dating, EKU arcs

def test_a_not_before_before_1950_is_written_as_generalized_time(pki, ec_csr):
    pki.create_role("old", {"allow_any_name": True, "key_type": "rsa", "not_before_duration": "1000000h"})
    for path, body in (("root/sign-intermediate", {"csr": ec_csr, "common_name": "x", "not_before_duration": "1000000h"}),
                       ("issue/old", {"common_name": "a"})):
        pki.send("POST", f"/v1/{{mount}}/{path}", json=body).same(cert_keys=CERT).expect(200).check(
            lambda side, r: _assert(h.load_certificate(r.json()["data"]["certificate"]).not_valid_before_utc.year < 1950))


@pytest.mark.parametrize("oids", ["-1.2", "1.2.2147483648", "1.2.840.113549.1.1.1.99999999999,1.2.3.abc"])
def test_eku_oids_go_writes_but_cannot_read_back(pki, ec_csr, oids):
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": ec_csr, "ext_key_usage_oids": oids}).same().expect(
        500, errors=["1 error occurred:\n\t* unable to parse created certificate: x509: invalid extended key usages\n\n"])


# ----------------------------------------------------------------------------------- null durations, empty expiry

def test_a_null_duration_is_not_set(pki):
    """getPrimitive: JSON null for a duration field leaves it unset, so the default applies (other
    types weak-decode null to their zero value and count as set)."""
    pki.send("POST", "/v1/{mount}/roles/n", json={"allow_any_name": True, "key_type": "ec", "not_before_duration": None,
                                                   "ttl": None, "max_ttl": None}).same().expect(
        200, data={"not_before_duration": 30, "ttl": 0, "max_ttl": 0})
    pki.send("PATCH", "/v1/{mount}/roles/n", json={"not_before_duration": None, "ttl": "1h"},
             headers={"Content-Type": "application/merge-patch+json"}).same().expect(
        200, data={"not_before_duration": 30, "ttl": 3600})


@pytest.mark.parametrize("expiry", [None, ""])
def test_an_empty_crl_expiry_reads_back_as_72h(pki, expiry):
    """getRevocationConfig fills an empty stored ``expiry`` with the default; the write's own answer
    shows what was written, and the rebuilt CRL is valid for 72h."""
    pki.send("POST", "/v1/{mount}/config/crl", json={"expiry": expiry, "ocsp_expiry": None}).same().expect(
        200, data={"expiry": "", "ocsp_expiry": ""})
    pki.send("GET", "/v1/{mount}/config/crl").same().expect(200, data={"expiry": "72h", "ocsp_expiry": ""})
    pki.send("GET", "/v1/{mount}/crl/rotate").same().expect(200)

    def valid_for_72h(side, resp):
        crl = x509.load_der_x509_crl(resp.content)
        assert abs((crl.next_update_utc - crl.last_update_utc).total_seconds() - 72 * 3600) <= 2

    pki.send("GET", "/v1/{mount}/crl", token=None).same().expect(200).check(valid_for_72h)


def test_a_policy_identifier_entry_is_stored_as_go_marshals_it(pki):
    """A JSON entry is re-encoded with json.Marshal: HTML characters escaped inside the stored string,
    other characters as they are (found in review; checked against bao)."""
    pki.send("POST", "/v1/{mount}/roles/p", json={
        "policy_identifiers": '[{"oid":"1.2.3","notice":"<a&b> \\u00e9"}]', "allow_any_name": True,
        "key_type": "ec", "ttl": "1h"}).same().expect(
        200, data={"policy_identifiers": ['{"oid":"1.2.3","notice":"\\u003ca\\u0026b\\u003e é"}']})

    def notice(side, resp):
        cert = h.load_certificate(resp.json()["data"]["certificate"])
        policies = cert.extensions.get_extension_for_oid(x509.oid.ExtensionOID.CERTIFICATE_POLICIES).value
        assert policies[0].policy_qualifiers[0].explicit_text == "<a&b> é"

    pki.send("POST", "/v1/{mount}/issue/p", json={"common_name": "a.example.com"}).same(cert_keys=CERT).expect(
        200).check(notice)
