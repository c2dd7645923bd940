"""Parity: what differential fuzzing found (issue 13's table), each pinned against the real server.

Every test sends the same request to ``bao server -dev`` and the double, checks they answer alike
(``same()``) and pins OpenBao 2.7.2's exact answer (``expect()``).
"""

from __future__ import annotations

import parity_harness as h
import pytest
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
