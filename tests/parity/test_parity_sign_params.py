"""Parity: the request parameters of ``sign/:role`` that only matter when the role does not take
names from the CSR (``alt_names``, ``ip_sans``, ``uri_sans``, ``other_sans``, ``user_ids``,
``exclude_cn_from_sans``), plus ``not_after`` and ``remove_roots_from_chain`` on sign, and
``signature_bits``/``use_pss`` on ``sign-intermediate`` with an RSA issuer. Each is a row of
docs/coverage.md ("verified against OpenBao")."""

from __future__ import annotations

import parity_harness as h
import pytest

pytestmark = pytest.mark.parity

CERT = ("certificate", "issuing_ca", "ca_chain")
UPN = "1.3.6.1.4.1.311.20.2.3"


@pytest.fixture
def request_names(pki):
    """Role ``req``: names from the request only (``use_csr_sans``/``use_csr_common_name`` false), IP and
    URI SANs, one otherName and two user ids allowed."""
    pki.create_role("req", {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                            "use_csr_sans": False, "use_csr_common_name": False, "ttl": "1h", "max_ttl": "24h",
                            "allowed_uri_sans": ["spiffe://example.com/*"], "allowed_other_sans": [f"{UPN};UTF8:*"],
                            "allowed_user_ids": ["alice", "bob"]})
    return pki


def test_sign_takes_sans_and_user_ids_from_the_request(request_names):
    csr = h.make_csr(h.ec_key(), "csr.example.com", dns=["csr-san.example.com"])
    ex = request_names.send("POST", "/v1/{mount}/sign/req", json={
        "csr": csr, "common_name": "a.example.com", "alt_names": "b.example.com,c.example.com",
        "ip_sans": "10.1.2.3", "uri_sans": "spiffe://example.com/svc", "other_sans": f"{UPN};UTF8:alice@example.com",
        "user_ids": "alice,bob"})
    ex.same(cert_keys=CERT).expect(200, warnings=None)
    facts = ex.facts("bao")
    assert facts["subject"] == ["commonName=a.example.com", "userID=alice", "userID=bob"]
    assert facts["san"]["dns"] == ["a.example.com", "b.example.com", "c.example.com"]  # not the CSR's names
    assert facts["san"]["ip"] == ["10.1.2.3"] and facts["san"]["uri"] == ["spiffe://example.com/svc"]
    assert [o.split(":")[0] for o in facts["san"]["other"]] == [UPN]


def test_sign_exclude_cn_from_sans(request_names):
    csr = h.make_csr(h.ec_key(), "csr.example.com")
    ex = request_names.send("POST", "/v1/{mount}/sign/req", json={
        "csr": csr, "common_name": "a.example.com", "alt_names": "b.example.com", "exclude_cn_from_sans": True})
    ex.same(cert_keys=CERT).expect(200, warnings=None)
    facts = ex.facts("bao")
    assert facts["subject"] == ["commonName=a.example.com"] and facts["san"] == {"dns": ["b.example.com"]}


def test_sign_request_name_refusals(request_names):
    csr = h.make_csr(h.ec_key(), "csr.example.com")
    for body, message in (({"alt_names": "x.evil.org"}, "subject alternate name x.evil.org not allowed by this role"),
                          ({"uri_sans": "spiffe://evil.org/x"}, "URI Subject Alternative Names were provided via the "
                                                                "API which are not valid for this role"),
                          ({"user_ids": "mallory"}, "user_id mallory is not allowed by this role"),
                          ({"other_sans": "1.2.3.4;UTF8:x"}, "other SAN OID 1.2.3.4 not allowed by this role")):
        ex = request_names.send("POST", "/v1/{mount}/sign/req", json={"csr": csr, "common_name": "a.example.com", **body})
        ex.same().expect(400, errors=[message])


def test_sign_not_after_and_remove_roots_from_chain(request_names):
    csr = h.make_csr(h.ec_key(), "csr.example.com")
    not_after = (h.utcnow().replace(microsecond=0) + h.datetime.timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ex = request_names.send("POST", "/v1/{mount}/sign/req", json={
        "csr": csr, "common_name": "a.example.com", "not_after": not_after, "remove_roots_from_chain": True})
    ex.same(cert_keys=("certificate", "issuing_ca")).expect(200, warnings=None)

    def checks(side, resp):
        data = resp.json()["data"]
        cert = h.load_certificate(data["certificate"])
        assert cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ") == not_after
        # only the root was in the chain: the key is dropped altogether
        assert "ca_chain" not in data and data["issuing_ca"] == side.vars["root_pem"]

    ex.check(checks)
    bad = request_names.send("POST", "/v1/{mount}/sign/req", json={
        "csr": csr, "common_name": "a.example.com", "not_after": "tomorrow"})
    bad.same().expect(400)


@pytest.mark.parametrize(("body", "sig_alg", "sig_hash"), [
    ({}, "sha256WithRSAEncryption", "sha256"),
    ({"signature_bits": 384}, "sha384WithRSAEncryption", "sha384"),
    ({"use_pss": True}, "rsassaPss", "sha256"),
    ({"use_pss": True, "signature_bits": 512}, "rsassaPss", "sha512"),
])
def test_sign_intermediate_signature_bits_and_use_pss(pki, body, sig_alg, sig_hash):
    pki.generate_root({"common_name": "RSA Root", "key_type": "rsa", "key_bits": 2048, "issuer_name": "rsa",
                       "ttl": "8760h"}, prefix="rsa")
    csr = h.make_csr(h.ec_key(), "RSA-signed Int")
    ex = pki.send("POST", "/v1/{mount}/issuer/rsa/sign-intermediate", json={
        "csr": csr, "common_name": "RSA-signed Int", "ttl": "24h", **body})
    facts = ex.same(cert_keys=("certificate",)).expect(200).facts("bao")
    assert (facts["sig_alg"], facts["sig_hash"]) == (sig_alg, sig_hash)
