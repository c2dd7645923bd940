"""Parity: ``POST sign/:role`` and ``issuer/:ref/sign/:role`` with RSA and EC CSRs made by
``cryptography`` (the same CSR goes to both servers)."""

from __future__ import annotations

import parity_harness as h
import pytest

pytestmark = pytest.mark.parity

SIGN_KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
CERT = ("certificate", "issuing_ca", "ca_chain")
MISSING_CN = ('the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, '
              'unless "require_cn" is set to false')


@pytest.fixture(scope="module")
def csrs():
    """CSRs shared by the module: RSA-2048 (CN s.example.com + SAN s2), EC P-256, SAN-only, foreign CN,
    RSA-1024."""
    rsa_key, ec_key = h.rsa_key(2048), h.ec_key()
    return {
        "rsa": h.make_csr(rsa_key, "s.example.com", dns=["s2.example.com"]),
        "ec": h.make_csr(ec_key, "e.example.com"),
        "nocn": h.make_csr(rsa_key, None, dns=["n.example.com"]),
        "evil": h.make_csr(rsa_key, "s.evil.org"),
        "small": h.make_csr(h.rsa_key(1024), "s.example.com"),
        "ips": h.make_csr(ec_key, "ip.example.com", ips=["10.1.2.3"], uris=["spiffe://example.com/a"]),
    }


@pytest.fixture
def roles(pki):
    """``rsa`` (default key type) and ``ec`` roles for subdomains of example.com, ttl 24h, max 72h."""
    base = {"allowed_domains": ["example.com"], "allow_subdomains": True, "ttl": "24h", "max_ttl": "72h"}
    pki.create_role("rsa", base)
    pki.create_role("ec", {**base, "key_type": "ec", "allowed_uri_sans": ["spiffe://example.com/*"]})
    pki.create_role("any", {**base, "key_type": "any"})
    return pki


def sign(pair, role, body, **same):
    return pair.send("POST", f"/v1/{{mount}}/sign/{role}", json=body).same(cert_keys=CERT, **same)


def test_sign_rsa_csr(roles, csrs):
    ex = sign(roles, "rsa", {"csr": csrs["rsa"]}).expect(200, warnings=None, data_keys=SIGN_KEYS)

    def profile(side, resp):
        data = resp.json()["data"]
        facts = h.cert_facts(data["certificate"], data["issuing_ca"])
        assert facts["subject"] == ["commonName=s.example.com"]
        assert facts["san"] == {"dns": ["s2.example.com", "s.example.com"]}  # CSR SANs first, then the CN
        assert facts["key"] == "rsa-2048" and facts["sig_alg"] == "ecdsa-with-SHA256"
        assert facts["key_usage"] == ["digital_signature", "key_encipherment", "key_agreement"]
        assert facts["ext_key_usage"] == ["serverAuth", "clientAuth"]
        assert facts["validity_seconds"] in (86430, 86429) and facts["verifies_with_issuer"]
        assert data["ca_chain"] == [side.vars["root_pem"]]

    ex.check(profile)


def test_sign_ec_csr_with_ip_and_uri_sans(roles, csrs):
    ex = sign(roles, "ec", {"csr": csrs["ips"]}).expect(200, warnings=None, data_keys=SIGN_KEYS)
    assert ex.facts("bao")["san"] == {"dns": ["ip.example.com"], "ip": ["10.1.2.3"], "uri": ["spiffe://example.com/a"]}


def test_key_type_any_accepts_both(roles, csrs):
    sign(roles, "any", {"csr": csrs["rsa"]}).expect(200, warnings=None)
    sign(roles, "any", {"csr": csrs["ec"]}).expect(200, warnings=None)


def test_common_name_ignored_with_use_csr_common_name(roles, csrs):
    ex = sign(roles, "rsa", {"csr": csrs["rsa"], "common_name": "o.example.com"})
    ex.expect(200, warnings=['the common_name field was provided but the role is set with "use_csr_common_name" set to true'])
    assert ex.facts("bao")["subject"] == ["commonName=s.example.com"]


def test_use_csr_common_name_false_takes_request_cn(roles, csrs):
    roles.create_role("reqcn", {"allowed_domains": ["example.com"], "allow_subdomains": True, "ttl": "1h",
                                "use_csr_common_name": False, "use_csr_sans": False})
    ex = sign(roles, "reqcn", {"csr": csrs["rsa"], "common_name": "o.example.com"}).expect(200, warnings=None)
    assert ex.facts("bao")["subject"] == ["commonName=o.example.com"]
    assert ex.facts("bao")["san"] == {"dns": ["o.example.com"]}


@pytest.mark.parametrize("role, csr, message", [
    ("rsa", "ec", "role requires keys of type rsa"),
    ("ec", "rsa", "role requires keys of type ec"),
    ("rsa", "small", "role requires a minimum of a 2048-bit key, but CSR's key is 1024 bits"),
    ("rsa", "nocn", MISSING_CN),
    ("rsa", "evil", "common name s.evil.org not allowed by this role"),
    ("nope", "rsa", "unknown role: nope"),
], ids=["ec-csr-rsa-role", "rsa-csr-ec-role", "rsa-1024", "csr-without-cn", "cn-not-allowed", "unknown-role"])
def test_sign_errors(roles, csrs, role, csr, message):
    roles.send("POST", f"/v1/{{mount}}/sign/{role}", json={"csr": csrs[csr]}).same().expect(400, errors=[message])


def test_csr_errors(roles):
    roles.send("POST", "/v1/{mount}/sign/rsa", json={"common_name": "a.example.com"}).same().expect(400, errors=['"csr" is empty'])
    roles.send("POST", "/v1/{mount}/sign/rsa", json={"csr": "hello"}).same().expect(400, errors=["csr contains no data"])
    roles.send("POST", "/v1/{mount}/sign/rsa", json={
        "csr": "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----"}).same().expect(
        400, errors=["certificate request could not be parsed: asn1: structure error: tags don't match "
                     "(16 vs {class:0 tag:0 length:0 isCompound:false}) {optional:false explicit:false application:false "
                     "private:false defaultValue:<nil> tag:<nil> stringType:0 timeType:0 set:false omitEmpty:false} "
                     "certificateRequest @2"])


def test_sign_formats(roles, csrs):
    ex = sign(roles, "rsa", {"csr": csrs["rsa"], "format": "der"}).expect(200, warnings=None)
    ex.check(lambda side, resp: None if "-----" not in resp.json()["data"]["certificate"] else pytest.fail("not DER"))
    ex = sign(roles, "rsa", {"csr": csrs["rsa"], "format": "pem_bundle"}).expect(200, warnings=None)
    ex.check(lambda side, resp: None if h.pem_blocks(resp.json()["data"]["certificate"]) == ["CERTIFICATE", "CERTIFICATE"]
             else pytest.fail("pem_bundle is not cert + issuer"))
    roles.send("POST", "/v1/{mount}/sign/rsa", json={"csr": csrs["rsa"], "format": "p12"}).same().expect(
        400, errors=['the "format" path parameter must be "pem", "der", or "pem_bundle"'])


def test_sign_ttl_clamped(roles, csrs):
    ex = sign(roles, "rsa", {"csr": csrs["rsa"], "ttl": "1000h"}).expect(
        200, warnings=['TTL "1000h0m0s" is longer than permitted maxTTL "72h0m0s", so maxTTL is being used'])
    assert ex.facts("bao")["validity_seconds"] in (259230, 259229)


def test_sign_through_issuer_reference(roles, csrs):
    roles.generate_root({"common_name": "Second", "ttl": "8760h", "key_type": "ec", "issuer_name": "second"}, prefix="second")
    ex = roles.send("POST", "/v1/{mount}/issuer/second/sign/rsa", json={"csr": csrs["rsa"]}).same(cert_keys=CERT)
    ex.expect(200, warnings=None).check(
        lambda side, resp: None if resp.json()["data"]["issuing_ca"] == side.vars["second_pem"] else pytest.fail("wrong issuer"))
    roles.send("POST", "/v1/{mount}/issuer/nope/sign/rsa", json={"csr": csrs["rsa"]}).same().expect(
        500, errors=["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): "
                     "unable to find PKI issuer for reference: nope\n\n"])


def test_key_bits_is_a_minimum(roles):
    from cryptography.hazmat.primitives.asymmetric import ec

    roles.create_role("ec384", {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                                "key_bits": 384, "ttl": "1h"})
    p256 = h.make_csr(h.ec_key(), "a.example.com")
    p384 = h.make_csr(ec.generate_private_key(ec.SECP384R1()), "a.example.com")
    p521 = h.make_csr(ec.generate_private_key(ec.SECP521R1()), "a.example.com")
    roles.send("POST", "/v1/{mount}/sign/ec384", json={"csr": p256}).same().expect(
        400, errors=["role requires a minimum of a 384-bit key, but CSR's key is 256 bits"])
    assert sign(roles, "ec384", {"csr": p521}).expect(200, warnings=None).facts("bao")["key"] == "ec-secp521r1"
    assert sign(roles, "ec", {"csr": p384}).expect(200, warnings=None).facts("bao")["key"] == "ec-secp384r1"


def _unpadded_csr_pem() -> str:
    """An EC CSR whose DER length is a multiple of 3, so its base64 body carries no padding."""
    while True:
        pem = h.make_csr(h.ec_key(), "a.example.com")
        body = "".join(pem.split("-----")[2].split())
        if not body.endswith("="):
            return pem


@pytest.mark.parametrize("damage", ["excess-padding", "padding-inside", "short-quantum", "colon-inside"])
def test_csr_with_base64_go_refuses(roles, damage):
    """Go's base64 decoding (``pem.Decode``) takes whole 4-character quanta with padding only at the end;
    Python's is laxer, and header lines (``Key: value``) come only first (found by the differential
    fuzzer: a body with excess padding, or with a colon in its third line, decoded here, while bao found
    no PEM block)."""
    pem = _unpadded_csr_pem()
    head, body, tail = pem.split("-----")[1], pem.split("-----")[2], pem.split("-----")[3]
    lines = body.strip().split("\n")
    if damage == "excess-padding":
        lines[-1] += "=="
    elif damage == "padding-inside":
        lines[0] = lines[0][:4] + "=" + lines[0][5:]
    elif damage == "short-quantum":
        lines[0] = lines[0][:-2]
    else:  # a colon in a later line is bad base64 to Go, not a header line to drop
        lines[2] = lines[2][:5] + ":" + lines[2][6:]
    broken = f"-----{head}-----\n" + "\n".join(lines) + f"\n-----{tail}-----\n"
    roles.send("POST", "/v1/{mount}/sign/rsa", json={"csr": broken}).same().expect(400, errors=["csr contains no data"])
