"""Parity: root generation, issuers (list, read by id/name/default, json/pem/der), config/issuers,
config/urls, the CA fetch endpoints (ca, ca/pem, ca_chain, cert/ca) and issuer updates."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it "
               "harder for systems to find missing certificates in the chain or to validate revocation status of "
               "certificates. Consider updating /config/urls or the newly generated issuer with this information.")
NO_SUBJECT_WARNING = ("This issuer certificate was generated without a Subject; this makes it likely that issuing "
                      "leaf certs with this certificate will cause TLS validation libraries to reject this certificate.")
ROOT_KEYS = ["certificate", "expiration", "issuer_id", "issuer_name", "issuing_ca", "key_id", "key_name", "serial_number"]
ISSUER_KEYS = ["ca_chain", "certificate", "crl_distribution_points", "delta_crl_distribution_points", "issuer_id",
               "issuer_name", "issuing_certificates", "key_id", "leaf_not_after_behavior", "manual_chain",
               "ocsp_servers", "revocation_signature_algorithm", "revoked", "usage"]
CERT_KEYS = ("certificate", "issuing_ca", "ca_chain")
URLS = {"issuing_certificates": ["http://127.0.0.1:8200/v1/pki/ca"],
        "crl_distribution_points": ["http://127.0.0.1:8200/v1/pki/crl"]}


# ---------------------------------------------------------------------------------- root/generate
def test_root_generate_internal_ec(pair):
    pair.enable_pki()
    ex = pair.generate_root({"common_name": "root.example.com", "ttl": "87600h", "key_type": "ec", "key_bits": 256,
                             "issuer_name": "root-a"})
    ex.expect(200, warnings=[AIA_WARNING], data_keys=ROOT_KEYS, data={"issuer_name": "root-a", "key_name": ""})

    def profile(side, resp):
        facts = ex.facts(side)
        assert facts["self_issued"] and facts["verifies_with_issuer"] and facts["aki_is_issuer_ski"]
        assert facts["basic_constraints"] == {"ca": True, "path_length": None}
        assert facts["key_usage"] == ["key_cert_sign", "crl_sign"]
        assert facts["san"] == {"dns": ["root.example.com"]}  # a hostname-like CN is also a DNS SAN
        assert facts["sig_alg"] == "ecdsa-with-SHA256" and facts["key"] == "ec-secp256r1"
        assert facts["validity_seconds"] in (315360030, 315360029)
        data = resp.json()["data"]
        assert data["certificate"] == data["issuing_ca"] and not data["certificate"].endswith("\n")

    ex.check(profile)


def test_root_generate_exported_rsa(pair):
    pair.enable_pki()
    ex = pair.generate_root({"common_name": "Exported Root", "ttl": "8760h", "key_type": "rsa", "key_bits": 2048},
                            kind="exported")
    ex.expect(200, warnings=[AIA_WARNING], data_keys=ROOT_KEYS + ["private_key", "private_key_type"],
              data={"private_key_type": "rsa", "issuer_name": ""})

    def rsa_profile(side, resp):
        facts = ex.facts(side)
        assert facts["sig_alg"] == "sha256WithRSAEncryption" and facts["key"] == "rsa-2048"
        assert "san" not in facts
        assert resp.json()["data"]["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----")

    ex.check(rsa_profile)


def test_root_generate_ec_exported_key_is_sec1(pair):
    pair.enable_pki()
    ex = pair.generate_root({"common_name": "EC Exported", "ttl": "1h", "key_type": "ec"}, kind="exported")
    ex.expect(200, data={"private_key_type": "ec"}).check(
        lambda side, resp: None if resp.json()["data"]["private_key"].startswith("-----BEGIN EC PRIVATE KEY-----")
        else pytest.fail("not SEC1"))


def test_root_ttl_clamped_to_untuned_mount_max(pair):
    pair.enable_pki(max_lease_ttl=None)
    ex = pair.generate_root({"common_name": "Untuned Root", "ttl": "8760h", "key_type": "ec"})
    ex.expect(200, warnings=['TTL "8760h0m0s" is longer than permitted maxTTL "768h0m0s", so maxTTL is being used',
                             AIA_WARNING])
    assert ex.facts("bao")["validity_seconds"] in (2764830, 2764829)


def test_root_without_subject_warns(pair):
    pair.enable_pki()
    ex = pair.generate_root({"ttl": "1h", "key_type": "ec"})
    ex.expect(200, warnings=[NO_SUBJECT_WARNING, AIA_WARNING])
    assert ex.facts("bao")["subject"] == []


def test_root_after_config_urls_has_no_aia_warning_and_carries_urls(pair):
    pair.enable_pki()
    pair.send("POST", "/v1/{mount}/config/urls", json=URLS).same().expect(200)
    ex = pair.generate_root({"common_name": "AIA Root", "ttl": "1h", "key_type": "ec"})
    ex.expect(200, warnings=None)
    facts = ex.facts("bao")
    assert facts["aia"] == ["caIssuers:http://127.0.0.1:8200/v1/pki/ca"]
    assert facts["crl_dp"] == ["http://127.0.0.1:8200/v1/pki/crl"]


def test_root_duplicate_issuer_name_and_bad_type(pair):
    pair.enable_pki()
    pair.generate_root({"common_name": "A", "ttl": "1h", "key_type": "ec", "issuer_name": "dup"})
    pair.send("POST", "/v1/{mount}/root/generate/internal",
              json={"common_name": "B", "ttl": "1h", "key_type": "ec", "issuer_name": "dup"}).same().expect(
        400, errors=["issuer name already in use"])
    pair.send("POST", "/v1/{mount}/root/generate/bogus", json={"common_name": "x"}).same().expect(
        400, errors=['the "exported" path parameter must be "internal", "existing", exported" or "kms"'])


def test_root_parameter_errors(pair):
    pair.enable_pki()
    root = "/v1/{mount}/root/generate/internal"
    pair.send("POST", root, json={"common_name": "x", "key_type": "dsa"}).same().expect(400, errors=["unknown key type dsa"])
    pair.send("POST", root, json={"common_name": "x", "key_type": "ec", "key_bits": 2048}).same().expect(
        400, errors=["unsupported bit length for EC key: 2048"])
    pair.send("POST", root, json={"common_name": "x", "key_type": "rsa", "key_bits": 1024}).same().expect(
        400, errors=["RSA keys < 2048 bits are unsafe and not supported: got 1024"])
    pair.send("POST", root, json={"common_name": "x", "ttl": "soon"}).same().expect(
        400, errors=['Field validation failed: error converting input for field "ttl": time: invalid duration "soon"'])
    pair.send("POST", root, json={"common_name": "x", "ttl": "1h", "not_after": "2099-01-01T00:00:00Z"}).same().expect(
        400, errors=["Either ttl or not_after should be provided. Both should not be provided in the same request."])
    pair.send("POST", root, json={"common_name": "x", "key_type": "ec", "issuer_name": "x y"}).same().expect(
        400, errors=["issuer name contained invalid characters"])


# ---------------------------------------------------------------------------------- issuers
def _two_roots(pair):
    pair.enable_pki()
    pair.generate_root({"common_name": "Root A", "ttl": "87600h", "key_type": "ec", "issuer_name": "root-a"}, prefix="a")
    pair.generate_root({"common_name": "Root B", "ttl": "43800h", "key_type": "ec", "key_bits": 384,
                        "issuer_name": "root-b"}, prefix="b")


def test_list_issuers(pair):
    _two_roots(pair)
    ex = pair.send("LIST", "/v1/{mount}/issuers").same().expect(200, data_keys=["keys", "key_info"])

    def listing(side, resp):
        data = resp.json()["data"]
        assert sorted(data["keys"]) == sorted([side.vars["a_id"], side.vars["b_id"]])
        info = data["key_info"][side.vars["a_id"]]
        assert sorted(info) == ["is_default", "issuer_name", "key_id", "serial_number"]
        assert info["is_default"] is True and info["issuer_name"] == "root-a"
        assert data["key_info"][side.vars["b_id"]]["is_default"] is False

    ex.check(listing)
    pair.send("GET", "/v1/{mount}/issuers", params={"list": "true"}).same().expect(200)


def test_list_issuers_empty(pair):
    pair.enable_pki()
    pair.send("LIST", "/v1/{mount}/issuers").same().expect(404, errors=[])


@pytest.mark.parametrize("ref", ["default", "root-a", "{a_id}", "root-b", "{b_id}"])
def test_read_issuer_by_reference(pair, ref):
    _two_roots(pair)
    ex = pair.send("GET", "/v1/{mount}/issuer/" + ref).same(cert_keys=("certificate", "ca_chain"))
    expected_name = "root-b" if "b" in ref else "root-a"
    ex.expect(200, data_keys=ISSUER_KEYS, data={
        "issuer_name": expected_name, "leaf_not_after_behavior": "err", "manual_chain": None, "revoked": False,
        "usage": "crl-signing,issuing-certificates,ocsp-signing,read-only", "issuing_certificates": [],
        "crl_distribution_points": [], "ocsp_servers": [], "delta_crl_distribution_points": [],
        "revocation_signature_algorithm": "ECDSAWithSHA384" if expected_name == "root-b" else "ECDSAWithSHA256"})
    ex.check(lambda side, resp: None if resp.json()["data"]["certificate"].endswith("\n")
             else pytest.fail("issuer/:ref PEM has no trailing newline"))


def test_read_issuer_unknown_and_empty_mount(pair):
    pair.enable_pki()
    pair.send("GET", "/v1/{mount}/issuer/default").same().expect(
        500, errors=["1 error occurred:\n\t* no default issuer currently configured\n\n"])
    pair.generate_root()
    pair.send("GET", "/v1/{mount}/issuer/nope").same().expect(
        500, errors=["1 error occurred:\n\t* unable to find PKI issuer for reference: nope\n\n"])


def test_issuer_json_pem_der(pki):
    pki.send("GET", "/v1/{mount}/issuer/default/json", token=None).same(cert_keys=("certificate", "ca_chain")).expect(
        200, data_keys=["ca_chain", "certificate", "issuer_id", "issuer_name"])
    pki.send("GET", "/v1/{mount}/issuer/default/pem", token=None).same().expect(
        200, content_type="application/pem-certificate-chain").check(
        lambda side, resp: None if resp.text == side.vars["root_pem"] + "\n" else pytest.fail("not the root PEM + newline"))
    pki.send("GET", "/v1/{mount}/issuer/{root_id}/der", token=None).same().expect(200, content_type="application/pkix-cert")
    pki.send("GET", "/v1/{mount}/issuer/nope/pem", token=None).same().expect(
        500, errors=["unable to find PKI issuer for reference: nope"])


def test_issuer_fetch_on_empty_mount(pair):
    pair.enable_pki()
    pair.send("GET", "/v1/{mount}/issuer/default/pem", token=None).same().expect(
        500, errors=["no default issuer currently configured"])
    pair.send("GET", "/v1/{mount}/issuer/default/json", token=None).same().expect(
        500, errors=["no default issuer currently configured"])


# ---------------------------------------------------------------------------------- config/issuers
def test_config_issuers(pair):
    pair.enable_pki()
    pair.send("GET", "/v1/{mount}/config/issuers").same().expect(
        200, data={"default": "", "default_follows_latest_issuer": False})
    _roots = _two_roots_on_existing(pair)
    ex = pair.send("GET", "/v1/{mount}/config/issuers").same().expect(200, data={"default_follows_latest_issuer": False})
    ex.check(lambda side, resp: None if resp.json()["data"]["default"] == side.vars["a_id"]
             else pytest.fail("first root is not the default"))
    ex = pair.send("POST", "/v1/{mount}/config/issuers", json={"default": "root-b"}).same().expect(200)
    ex.check(lambda side, resp: None if resp.json()["data"]["default"] == side.vars["b_id"]
             else pytest.fail("default not resolved to root-b's id"))
    pair.send("POST", "/v1/{mount}/config/issuers", json={"default": "nope"}).same().expect(
        400, errors=["Error resolving issuer reference: unable to find PKI issuer for reference: nope"])
    pair.send("GET", "/v1/{mount}/issuer/default").same(cert_keys=("certificate",)).expect(200, data={"issuer_name": "root-b"})


def _two_roots_on_existing(pair):
    pair.generate_root({"common_name": "Root A", "ttl": "87600h", "key_type": "ec", "issuer_name": "root-a"}, prefix="a")
    pair.generate_root({"common_name": "Root B", "ttl": "43800h", "key_type": "ec", "issuer_name": "root-b"}, prefix="b")


# ---------------------------------------------------------------------------------- config/urls
def test_config_urls_write_read_and_leaf_extensions(pki):
    pki.send("GET", "/v1/{mount}/config/urls").same().expect(200, data={
        "crl_distribution_points": [], "delta_crl_distribution_points": [], "enable_templating": False,
        "issuing_certificates": [], "ocsp_servers": []})
    pki.send("POST", "/v1/{mount}/config/urls", json=URLS).same().expect(200, data={
        "crl_distribution_points": ["http://127.0.0.1:8200/v1/pki/crl"], "delta_crl_distribution_points": [],
        "enable_templating": False, "issuing_certificates": ["http://127.0.0.1:8200/v1/pki/ca"], "ocsp_servers": []})
    pki.send("GET", "/v1/{mount}/config/urls").same().expect(200, data={
        "issuing_certificates": ["http://127.0.0.1:8200/v1/pki/ca"], "ocsp_servers": []})
    pki.create_role("any", {"allow_any_name": True, "key_type": "ec"})
    ex = pki.send("POST", "/v1/{mount}/issue/any", json={"common_name": "aia.example.com", "ttl": "1h"})
    ex.same(cert_keys=("certificate",)).expect(200)
    facts = ex.facts("bao")
    assert facts["aia"] == ["caIssuers:http://127.0.0.1:8200/v1/pki/ca"]
    assert facts["crl_dp"] == ["http://127.0.0.1:8200/v1/pki/crl"]


def test_config_urls_comma_string(pki):
    pki.send("POST", "/v1/{mount}/config/urls", json={"ocsp_servers": "http://a.example/ocsp,http://b.example/ocsp"}).same().expect(
        200, data={"ocsp_servers": ["http://a.example/ocsp", "http://b.example/ocsp"]})


# ---------------------------------------------------------------------------------- CA fetch endpoints
def test_ca_endpoints(pki):
    pki.send("GET", "/v1/{mount}/ca", token=None).same().expect(200, content_type="application/pkix-cert")
    pem = pki.send("GET", "/v1/{mount}/ca/pem", token=None).same().expect(200, content_type="application/pem-certificate-chain")
    pem.check(lambda side, resp: None if resp.text == side.vars["root_pem"] else pytest.fail("ca/pem != root PEM"))
    pki.send("GET", "/v1/{mount}/ca_chain", token=None).same().expect(200, content_type="application/pkix-cert")
    pki.send("GET", "/v1/{mount}/cert/ca", token=None).same(cert_keys=("certificate",)).expect(
        200, data={"revocation_time": 0, "revocation_time_rfc3339": ""})


def test_ca_endpoints_on_empty_mount(pair):
    pair.enable_pki()
    pair.send("GET", "/v1/{mount}/ca/pem", token=None).same().expect(204, content_type="application/pem-certificate-chain")
    pair.send("GET", "/v1/{mount}/ca", token=None).same().expect(204, content_type="application/pkix-cert")
    pair.send("GET", "/v1/{mount}/ca_chain", token=None).same().expect(204, content_type="application/pkix-cert")
    pair.send("GET", "/v1/{mount}/cert/ca", token=None).same().expect(400, errors=["no default issuer currently configured"])


# ---------------------------------------------------------------------------------- issuer updates
MERGE = {"Content-Type": "application/merge-patch+json"}


def test_issuer_patch_and_full_replace(pki):
    pki.send("PATCH", "/v1/{mount}/issuer/default", data='{"issuer_name": "renamed"}', headers=MERGE).same(
        cert_keys=("certificate",)).expect(200, data={"issuer_name": "renamed", "leaf_not_after_behavior": "err"})
    pki.send("GET", "/v1/{mount}/issuer/renamed").same(cert_keys=("certificate",)).expect(200)
    pki.send("PATCH", "/v1/{mount}/issuer/renamed", data='{"leaf_not_after_behavior": "maybe"}', headers=MERGE).same().expect(
        400, errors=["Unknown value for field `leaf_not_after_behavior`. Possible values are `err`, `truncate`, and `permit`."])
    pki.send("PATCH", "/v1/{mount}/issuer/renamed", json={"leaf_not_after_behavior": "err"}).same().expect(
        415, errors=["PATCH requires Content-Type of application/merge-patch+json, provided application/json"])
    # POST is a full replace: the omitted issuer_name is reset to ""
    pki.send("POST", "/v1/{mount}/issuer/renamed", json={"leaf_not_after_behavior": "truncate"}).same(
        cert_keys=("certificate",)).expect(200, data={"issuer_name": "", "leaf_not_after_behavior": "truncate"})
    pki.send("GET", "/v1/{mount}/issuer/renamed").same().expect(
        500, errors=["1 error occurred:\n\t* unable to find PKI issuer for reference: renamed\n\n"])


def test_rename_and_delete_warn_about_roles_that_reference_the_issuer(pair):
    pair.enable_pki()
    pair.generate_root({"common_name": "a", "issuer_name": "first", "key_type": "ec"}, prefix="a")
    pair.generate_root({"common_name": "b", "issuer_name": "second", "key_type": "ec"}, prefix="b")
    pair.create_role("r1", {"allow_any_name": True})
    pair.create_role("r2", {"allow_any_name": True, "issuer_ref": "second"})
    pair.create_role("r3", {"allow_any_name": True, "issuer_ref": "first"})
    pair.send("POST", "/v1/{mount}/roles/r4", json=lambda s: {"allow_any_name": True, "issuer_ref": s.vars["b_id"]}
              ).same().expect(200)
    pair.send("POST", "/v1/{mount}/issuer/second", json={"issuer_name": "second2"}).same(
        cert_keys=("certificate",)).expect(200, warnings=["1 roles reference second"])
    pair.send("POST", "/v1/{mount}/issuer/second2", json={"issuer_name": "second2"}).same(
        cert_keys=("certificate",)).expect(200, warnings=None)
    pair.send("DELETE", "/v1/{mount}/issuer/second2").same().expect(200, warnings=["1 roles reference {}".format(
        "<UUID>")])
    pair.send("DELETE", "/v1/{mount}/issuer/first").same().expect(200)
    ex = pair.send("DELETE", "/v1/{mount}/issuer/first")
    ex.same().expect(200, warnings=None)
