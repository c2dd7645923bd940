"""Parity: ``POST issue/:role`` and ``issuer/:ref/issue/:role`` - the leaf profile, the format x
private_key_format matrix, TTL clamping and not_after rules, leaf_not_after_behavior, name/SAN rules,
other_sans, user_ids, remove_roots_from_chain, generate_lease and no_store (reference section 4)."""

from __future__ import annotations

import datetime

import parity_harness as h
import pytest

pytestmark = pytest.mark.parity

ISSUE_KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "private_key", "private_key_type",
              "serial_number"]
CERT = ("certificate", "issuing_ca", "ca_chain")
LEAF_KU = ["digital_signature", "key_encipherment", "key_agreement"]


def ttl_warning(asked: str, max_: str) -> str:
    return f'TTL "{asked}" is longer than permitted maxTTL "{max_}", so maxTTL is being used'


BEYOND_CA = ("cannot satisfy request, as TTL would result in notAfter of <RFC3339> that is beyond the expiration "
             "of the CA certificate at <RFC3339>")


def issue(pair, body, role="web", **same):
    return pair.send("POST", f"/v1/{{mount}}/issue/{role}", json=body).same(cert_keys=CERT, **same)


# ---------------------------------------------------------------------------------- profile
def test_leaf_profile(web):
    ex = issue(web, {"common_name": "a.example.com"}).expect(200, warnings=None, data_keys=ISSUE_KEYS,
                                                            data={"private_key_type": "ec"})

    def profile(side, resp):
        data = resp.json()["data"]
        cert = h.load_certificate(data["certificate"])
        facts = h.cert_facts(cert, data["issuing_ca"])
        assert facts["subject"] == ["commonName=a.example.com"] and facts["issuer"] == ["commonName=Parity Root"]
        assert facts["san"] == {"dns": ["a.example.com"]}
        assert facts["key_usage"] == LEAF_KU
        assert facts["ext_key_usage"] == ["serverAuth", "clientAuth"]
        assert "basic_constraints" not in facts
        assert facts["validity_seconds"] in (86430, 86429) and facts["serial_class"] == "random-160"
        assert facts["verifies_with_issuer"] and facts["aki_is_issuer_ski"]
        assert sorted(facts["extensions"]) == sorted([
            "authorityKeyIdentifier:non-critical", "extendedKeyUsage:non-critical", "keyUsage:critical",
            "subjectAltName:non-critical", "subjectKeyIdentifier:non-critical"])
        assert data["ca_chain"] == [side.vars["root_pem"]] and data["issuing_ca"] == side.vars["root_pem"]
        assert data["expiration"] == int(cert.not_valid_after_utc.timestamp())
        assert data["not_before"] == int(cert.not_valid_before_utc.timestamp())
        n = cert.serial_number
        assert data["serial_number"] == ":".join(f"{b:02x}" for b in n.to_bytes((n.bit_length() + 7) // 8, "big"))
        assert not data["certificate"].endswith("\n") and data["private_key"].startswith("-----BEGIN EC PRIVATE KEY")
        assert h.key_matches(data["private_key"], cert)

    ex.check(profile)


def test_rsa_role_leaf(pki):
    pki.create_role("rsa", {"allow_any_name": True, "ttl": "1h"})
    ex = issue(pki, {"common_name": "rsa.example.com"}, role="rsa").expect(200, data={"private_key_type": "rsa"})
    facts = ex.facts("bao")
    assert facts["key"] == "rsa-2048" and facts["sig_alg"] == "ecdsa-with-SHA256"


# ---------------------------------------------------------------------------------- formats
@pytest.mark.parametrize("key_type", ["ec", "rsa"])
@pytest.mark.parametrize("fmt", ["pem", "der", "pem_bundle"])
@pytest.mark.parametrize("pkf", ["der", "pkcs8"])
def test_format_matrix(pki, key_type, fmt, pkf):
    pki.create_role("f", {"allow_any_name": True, "key_type": key_type, "ttl": "1h"})
    ex = issue(pki, {"common_name": "f.example.com", "format": fmt, "private_key_format": pkf}, role="f")
    ex.expect(200, warnings=None, data={"private_key_type": key_type})
    legacy = "RSA PRIVATE KEY" if key_type == "rsa" else "EC PRIVATE KEY"

    def shape(side, resp):
        data = resp.json()["data"]
        key = h.private_key_format(data["private_key"])
        wanted_format = "pkcs8" if pkf == "pkcs8" else ("pkcs1" if key_type == "rsa" else "sec1")
        assert key["format"] == wanted_format, key
        if fmt == "der":
            assert key["encoding"] == "der-base64"
            for value in [data["certificate"], data["issuing_ca"], *data["ca_chain"]]:
                assert "-----" not in value
                h.load_certificate(value)
        else:
            assert key["pem"] == (["PRIVATE KEY"] if pkf == "pkcs8" else [legacy])
            assert h.pem_blocks(data["issuing_ca"]) == ["CERTIFICATE"]
            assert [h.pem_blocks(c) for c in data["ca_chain"]] == [["CERTIFICATE"]]
        if fmt == "pem_bundle":
            # the key inside the bundle stays PKCS#1/SEC1 whatever private_key_format says
            assert h.pem_blocks(data["certificate"]) == [legacy, "CERTIFICATE", "CERTIFICATE"]
        elif fmt == "pem":
            assert h.pem_blocks(data["certificate"]) == ["CERTIFICATE"]
        assert h.key_matches(data["private_key"], data["certificate"])

    ex.check(shape)


@pytest.mark.parametrize("fmt", ["p12", "", "PEM"])
def test_bad_format(web, fmt):
    web.send("POST", "/v1/{mount}/issue/web", json={"common_name": "a.example.com", "format": fmt}).same().expect(
        400, errors=['the "format" path parameter must be "pem", "der", or "pem_bundle"'])


@pytest.mark.parametrize("pkf", ["bogus", "pkcs1", "pem"])
def test_unknown_private_key_format_is_accepted_as_default(web, pkf):
    ex = issue(web, {"common_name": "a.example.com", "private_key_format": pkf}).expect(200, warnings=None)
    ex.check(lambda side, resp: None if h.private_key_format(resp.json()["data"]["private_key"])["format"] == "sec1"
             else pytest.fail("not the default SEC1 key"))


# ---------------------------------------------------------------------------------- TTL rules
def test_alt_names_and_ttl(web):
    ex = issue(web, {"common_name": "b.example.com", "alt_names": "c.example.com,d.example.com", "ttl": "2h"})
    ex.expect(200, warnings=None)
    facts = ex.facts("bao")
    assert facts["san"] == {"dns": ["b.example.com", "c.example.com", "d.example.com"]}
    assert facts["validity_seconds"] in (7230, 7229)


def test_ttl_above_role_max_is_clamped_with_warning(web):
    ex = issue(web, {"common_name": "a.example.com", "ttl": "100h"}).expect(200, warnings=[ttl_warning("100h0m0s", "72h0m0s")])
    assert ex.facts("bao")["validity_seconds"] in (259230, 259229)


def test_role_with_max_ttl_only_warns_on_every_default_issue(pki):
    pki.create_role("maxonly", {"allow_any_name": True, "key_type": "ec", "max_ttl": "720h"})
    ex = issue(pki, {"common_name": "x.example.com"}, role="maxonly").expect(
        200, warnings=[ttl_warning("768h0m0s", "720h0m0s")])
    assert ex.facts("bao")["validity_seconds"] in (2592030, 2592029)


def test_role_without_ttls_uses_mount_default(pki):
    pki.create_role("plain", {"allow_any_name": True, "key_type": "ec"})
    ex = issue(pki, {"common_name": "x.example.com"}, role="plain").expect(200, warnings=None)
    assert ex.facts("bao")["validity_seconds"] in (2764830, 2764829)


@pytest.mark.parametrize("ttl", [3600, "3600", "3600s", "60m", "1h"])
def test_ttl_spellings(web, ttl):
    ex = issue(web, {"common_name": "a.example.com", "ttl": ttl}).expect(200, warnings=None)
    assert ex.facts("bao")["validity_seconds"] in (3630, 3629)


def test_not_after_ignores_role_max_ttl(web):
    not_after = h.rfc3339((h.utcnow() + datetime.timedelta(days=30)).replace(microsecond=0))
    ex = issue(web, {"common_name": "a.example.com", "not_after": not_after}, validity_tolerance=3)
    ex.expect(200, warnings=None)
    ex.check(lambda side, resp: None if h.rfc3339(h.load_certificate(resp.json()["data"]["certificate"]).not_valid_after_utc)
             == not_after else pytest.fail("notAfter is not the requested not_after"))


def test_not_after_and_ttl_errors(web):
    web.send("POST", "/v1/{mount}/issue/web", json={"common_name": "a.example.com", "ttl": "1h",
                                                  "not_after": "2030-01-01T00:00:00Z"}).same().expect(
        400, errors=["Either ttl or not_after should be provided. Both should not be provided in the same request."])
    web.send("POST", "/v1/{mount}/issue/web", json={"common_name": "a.example.com", "not_after": "tomorrow"}).same().expect(
        400, errors=['parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"'])
    web.send("POST", "/v1/{mount}/issue/web", json={"common_name": "a.example.com", "not_after": "2099-01-01T00:00:00Z"}
             ).same().expect(400, errors=[BEYOND_CA])


def test_ttl_beyond_issuer_and_above_mount_max(pki):
    pki.create_role("nomax", {"allow_any_name": True, "key_type": "ec"})
    pki.send("POST", "/v1/{mount}/issue/nomax", json={"common_name": "a.example.com", "ttl": "87600h"}).same().expect(
        400, errors=[BEYOND_CA])
    pki.send("POST", "/v1/{mount}/issue/nomax", json={"common_name": "a.example.com", "ttl": "100000h"}).same().expect(
        400, errors=[BEYOND_CA])


def test_untuned_mount_default_leaf_outlives_root(pair):
    pair.enable_pki(max_lease_ttl=None)
    pair.generate_root({"common_name": "Untuned", "ttl": "768h", "key_type": "ec"})
    pair.create_role("any", {"allow_any_name": True, "key_type": "ec"})
    pair.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a.example.com"}).same().expect(400, errors=[BEYOND_CA])
    issue(pair, {"common_name": "a.example.com", "ttl": "1h"}, role="any").expect(200, warnings=None)


MERGE = {"Content-Type": "application/merge-patch+json"}


def test_leaf_not_after_behavior(pki):
    pki.create_role("nomax", {"allow_any_name": True, "key_type": "ec"})
    pki.send("PATCH", "/v1/{mount}/issuer/default", data='{"leaf_not_after_behavior": "truncate"}', headers=MERGE
             ).same(cert_keys=("certificate",)).expect(200, data={"leaf_not_after_behavior": "truncate"})
    ex = issue(pki, {"common_name": "t.example.com", "ttl": "100000h"}, role="nomax", validity_tolerance=10)
    ex.expect(200, warnings=[ttl_warning("100000h0m0s", "87600h0m0s")])

    def truncated(side, resp):
        data = resp.json()["data"]
        leaf = h.load_certificate(data["certificate"])
        assert leaf.not_valid_after_utc == h.load_certificate(data["issuing_ca"]).not_valid_after_utc

    ex.check(truncated)
    pki.send("PATCH", "/v1/{mount}/issuer/default", data='{"leaf_not_after_behavior": "permit"}', headers=MERGE
             ).same(cert_keys=("certificate",)).expect(200, data={"leaf_not_after_behavior": "permit"})
    ex = issue(pki, {"common_name": "p.example.com", "not_after": "2099-01-01T00:00:00Z"}, role="nomax", validity_tolerance=5)
    ex.expect(200, warnings=None)
    ex.check(lambda side, resp: None if h.rfc3339(h.load_certificate(resp.json()["data"]["certificate"]).not_valid_after_utc)
             == "2099-01-01T00:00:00Z" else pytest.fail("permit did not keep not_after"))
    pki.send("PATCH", "/v1/{mount}/issuer/default", data='{"leaf_not_after_behavior": "err"}', headers=MERGE
             ).same(cert_keys=("certificate",)).expect(200)
    pki.send("POST", "/v1/{mount}/issue/nomax", json={"common_name": "e.example.com", "not_after": "2099-01-01T00:00:00Z"}
             ).same().expect(400, errors=[BEYOND_CA])


# ---------------------------------------------------------------------------------- names and SANs
@pytest.fixture
def strict(pki):
    """Roles for the name rules: ``web`` (subdomains of example.com, no IP SANs), ``uris``
    (allowed_uri_sans spiffe://example.com/*), ``other`` (one otherName pattern) and ``uids``."""
    base = {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "ttl": "1h"}
    pki.create_role("web", {**base, "allow_ip_sans": False})
    pki.create_role("uris", {**base, "allow_bare_domains": True, "allowed_uri_sans": ["spiffe://example.com/*"]})
    pki.create_role("other", {**base, "allowed_other_sans": ["1.3.6.1.4.1.311.20.2.3;UTF8:*@example.com"]})
    pki.create_role("uids", {**base, "allowed_user_ids": ["alice", "bob"]})
    return pki


@pytest.mark.parametrize("role, body, message", [
    ("web", {"common_name": "a.other.com"}, "common name a.other.com not allowed by this role"),
    ("web", {"common_name": "example.com"}, "common name example.com not allowed by this role"),
    ("web", {"common_name": "a.example.com", "alt_names": "evil.org"}, "subject alternate name evil.org not allowed by this role"),
    ("web", {"common_name": "a.example.com", "ip_sans": "10.0.0.1"},
     "IP Subject Alternative Names are not allowed in this role, but was provided via the API"),
    ("uris", {"common_name": "a.example.com", "ip_sans": "not-an-ip"}, 'the value "not-an-ip" is not a valid IP address'),
    ("web", {"common_name": "a.example.com", "uri_sans": "spiffe://example.com/x"},
     "URI Subject Alternative Names are not allowed in this role, but were provided via the API"),
    ("uris", {"common_name": "a.example.com", "uri_sans": "spiffe://other.org/svc"},
     "URI Subject Alternative Names were provided via the API which are not valid for this role"),
    ("web", {"common_name": "a.example.com", "other_sans": "1.3.6.1.4.1.311.20.2.3;UTF8:a@example.com"},
     "other SAN OID 1.3.6.1.4.1.311.20.2.3 not allowed by this role"),
    ("other", {"common_name": "a.example.com", "other_sans": "1.2.3.4;UTF8:alice@example.com"},
     "other SAN OID 1.2.3.4 not allowed by this role"),
    ("other", {"common_name": "a.example.com", "other_sans": "1.3.6.1.4.1.311.20.2.3;UTF8:alice@evil.org"},
     "other SAN alice@evil.org not allowed for OID 1.3.6.1.4.1.311.20.2.3 by this role"),
    ("other", {"common_name": "a.example.com", "other_sans": "garbage"},
     'could not parse requested other SAN: expected a semicolon in other SAN "garbage"'),
    ("web", {"common_name": "a.example.com", "user_ids": "alice"}, "user_id alice is not allowed by this role"),
    ("uids", {"common_name": "a.example.com", "user_ids": "mallory"}, "user_id mallory is not allowed by this role"),
    ("web", {}, 'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, '
                'unless "require_cn" is set to false'),
    ("web", {"alt_names": "a.example.com"}, 'the common_name field is required, or must be provided in a CSR with '
                                             '"use_csr_common_name" set to true, unless "require_cn" is set to false'),
    ("nope", {"common_name": "a.example.com"}, "unknown role: nope"),
], ids=["cn-domain", "bare-domain", "alt-name", "ip-sans-disallowed", "bad-ip", "uri-sans-disallowed", "uri-mismatch",
        "other-sans-disallowed", "other-sans-oid", "other-sans-value", "other-sans-malformed", "user-ids-disallowed",
        "user-id-mismatch", "missing-cn", "missing-cn-with-alt-names", "unknown-role"])
def test_name_rules_errors(strict, role, body, message):
    strict.send("POST", f"/v1/{{mount}}/issue/{role}", json=body).same().expect(400, errors=[message])


def test_accepted_names(strict):
    ex = issue(strict, {"common_name": "a.example.com", "alt_names": "localhost"}).expect(200, warnings=None)
    assert ex.facts("bao")["san"] == {"dns": ["a.example.com", "localhost"]}
    ex = issue(strict, {"common_name": "*.example.com"}).expect(200, warnings=None)
    assert ex.facts("bao")["san"] == {"dns": ["*.example.com"]}
    ex = issue(strict, {"common_name": "user@a.example.com"}).expect(200, warnings=None)
    assert ex.facts("bao")["san"] == {"email": ["user@a.example.com"]}
    ex = issue(strict, {"common_name": "b.example.com", "exclude_cn_from_sans": True}).expect(200, warnings=None)
    assert ex.facts("bao")["subject"] == ["commonName=b.example.com"] and "san" not in ex.facts("bao")


def test_ip_and_uri_sans(strict):
    ex = issue(strict, {"common_name": "example.com", "ip_sans": "127.0.0.1,::1", "uri_sans": "spiffe://example.com/svc"},
               role="uris").expect(200, warnings=None)
    assert ex.facts("bao")["san"] == {"dns": ["example.com"], "ip": ["127.0.0.1", "::1"], "uri": ["spiffe://example.com/svc"]}


def test_other_sans_and_user_ids(strict):
    ex = issue(strict, {"common_name": "a.example.com", "other_sans": "1.3.6.1.4.1.311.20.2.3;UTF8:alice@example.com"},
               role="other").expect(200, warnings=None)
    assert ex.facts("bao")["san"]["other"] == ["1.3.6.1.4.1.311.20.2.3:0c11616c696365406578616d706c652e636f6d"]
    ex = issue(strict, {"common_name": "a.example.com", "user_ids": "alice"}, role="uids").expect(200, warnings=None)
    assert ex.facts("bao")["subject"] == ["commonName=a.example.com", "userID=alice"]
    ex = issue(strict, {"common_name": "a.example.com", "user_ids": ["alice", "bob"]}, role="uids").expect(200)
    assert ex.facts("bao")["subject"] == ["commonName=a.example.com", "userID=alice", "userID=bob"]


def test_require_cn_false_without_names(pki):
    pki.create_role("nocn", {"allow_any_name": True, "require_cn": False, "max_ttl": "1h", "key_type": "ec"})
    ex = issue(pki, {}, role="nocn").expect(200, warnings=[ttl_warning("768h0m0s", "1h0m0s")])
    facts = ex.facts("bao")
    assert facts["subject"] == [] and "san" not in facts
    ex = issue(pki, {"common_name": "anything.whatever"}, role="nocn").expect(200)
    assert ex.facts("bao")["san"] == {"dns": ["anything.whatever"]}


def test_key_type_in_request_is_ignored_with_warning(web):
    ex = issue(web, {"common_name": "x.example.com", "key_type": "rsa", "key_bits": 4096}).expect(
        200, warnings=["parameters key_type and key_bits ignored as role had specific values"], data={"private_key_type": "ec"})
    assert ex.facts("bao")["key"] == "ec-secp256r1"


# ---------------------------------------------------------------------------------- chain, lease, no_store
def test_remove_roots_from_chain_on_root_mount(web):
    ex = issue(web, {"common_name": "a.example.com", "remove_roots_from_chain": True})
    ex.expect(200, warnings=None, data_keys=[k for k in ISSUE_KEYS if k != "ca_chain"])


def test_generate_lease(pki):
    pki.create_role("lease", {"allow_any_name": True, "key_type": "ec", "generate_lease": True, "ttl": "1h"})
    # lease_duration is the time left on the certificate: 3600, or 3599 when a second boundary passed
    ex = issue(pki, {"common_name": "l.example.com"}, role="lease", volatile=("lease_duration",)).expect(200, warnings=None)

    def lease(side, resp):
        body = resp.json()
        assert body["lease_id"].startswith(f"{pki.mount}/issue/lease/") and len(body["lease_id"].rsplit("/", 1)[1]) == 24
        assert body["lease_duration"] in (3600, 3599) and body["renewable"] is False

    ex.check(lease)


def test_no_store(pki):
    pki.create_role("nostore", {"allow_any_name": True, "key_type": "ec", "no_store": True, "ttl": "1h"})
    pki.create_role("store", {"allow_any_name": True, "key_type": "ec", "ttl": "1h"})
    ex = issue(pki, {"common_name": "ns.example.com"}, role="nostore").expect(200, warnings=None)
    ex.capture("nostore", lambda j: j["data"]["serial_number"])
    ex = issue(pki, {"common_name": "s.example.com"}, role="store").expect(200, warnings=None)
    ex.capture("stored", lambda j: j["data"]["serial_number"])
    pki.send("GET", "/v1/{mount}/cert/{nostore}").same().expect(404, errors=[])
    pki.send("GET", "/v1/{mount}/cert/{stored}").same(cert_keys=("certificate",)).expect(200)

    def listed(side, resp):
        keys = resp.json()["data"]["keys"]
        assert side.vars["stored"] in keys and side.vars["root_serial"] in keys
        assert side.vars["nostore"] not in keys and len(keys) == 2

    pki.send("LIST", "/v1/{mount}/certs").same().expect(200).check(listed)


# ---------------------------------------------------------------------------------- issuer/:ref/issue
@pytest.mark.parametrize("ref", ["default", "{root_id}", "second", "{second_id}"])
def test_issue_through_issuer_reference(web, ref):
    web.generate_root({"common_name": "Second Root", "ttl": "8760h", "key_type": "ec", "issuer_name": "second"},
                      prefix="second")
    ex = web.send("POST", "/v1/{mount}/issuer/" + ref + "/issue/web", json={"common_name": "i.example.com"})
    ex.same(cert_keys=CERT).expect(200, warnings=None)
    wanted = "root_pem" if ref in ("default", "{root_id}") else "second_pem"
    ex.check(lambda side, resp: None if resp.json()["data"]["issuing_ca"] == side.vars[wanted]
             else pytest.fail("signed by the wrong issuer"))


def test_issue_through_unknown_issuer_or_role(web):
    web.send("POST", "/v1/{mount}/issuer/nope/issue/web", json={"common_name": "i.example.com"}).same().expect(
        500, errors=["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): "
                     "unable to find PKI issuer for reference: nope\n\n"])
    web.send("POST", "/v1/{mount}/issuer/default/issue/nope", json={"common_name": "i.example.com"}).same().expect(
        400, errors=["unknown role: nope"])


def test_issue_on_mount_without_issuer(pair):
    pair.enable_pki()
    pair.create_role("any", {"allow_any_name": True, "key_type": "ec"})
    pair.send("POST", "/v1/{mount}/issue/any", json={"common_name": "a.example.com"}).same().expect(
        500, errors=["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): "
                     "no default issuer currently configured\n\n"])
