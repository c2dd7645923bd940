"""Parity: the intermediate flow - ``intermediate/generate`` on a second mount, ``root/sign-intermediate``
(and ``issuer/:ref/sign-intermediate``) on the root mount, ``intermediate/set-signed``, then leaves
issued from the intermediate (chain order, remove_roots_from_chain, pem_bundle, ca_chain)."""

from __future__ import annotations

import parity_harness as h
import pytest

pytestmark = pytest.mark.parity

INT_AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
                   "for systems to find missing certificates in the chain or to validate revocation status of "
                   "certificates. Consider updating /config/urls or the newly generated issuer with this information. "
                   "Since this certificate is an intermediate, it might be useful to regenerate this certificate after "
                   "fixing this problem for the root mount.")
AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of certificates. "
               "Consider updating /config/urls or the newly generated issuer with this information.")
SIGNED_KEYS = ["ca_chain", "certificate", "expiration", "issuing_ca", "serial_number"]
CERT = ("certificate", "issuing_ca", "ca_chain")


@pytest.fixture
def int_csr(pki):
    """``pki`` plus a second mount (vars ``int``, tuned to 43800h) holding a generated EC intermediate
    key; vars ``int_csr``."""
    mount = pki.new_mount("int")
    pki.enable_pki(mount, max_lease_ttl="43800h")
    ex = pki.send("POST", f"/v1/{mount}/intermediate/generate/internal",
                  json={"common_name": "Parity Intermediate", "key_type": "ec", "key_bits": 256}).same()
    ex.expect(200, warnings=[INT_AIA_WARNING], data_keys=["csr", "key_id"])
    ex.capture("int_csr", lambda j: j["data"]["csr"])
    return pki


@pytest.fixture
def chain(int_csr):
    """``int_csr`` signed by the root (43800h) and set on the intermediate mount; role ``svc`` there
    (subdomains of svc.example.com, EC, max_ttl 24h); vars ``int_pem``, ``int_serial``."""
    p = int_csr
    ex = p.send("POST", "/v1/{mount}/root/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "Parity Intermediate", "ttl": "43800h"}).same(cert_keys=CERT)
    ex.expect(200, warnings=[AIA_WARNING], data_keys=SIGNED_KEYS)
    ex.capture("int_pem", lambda j: j["data"]["certificate"])
    ex.capture("int_serial", lambda j: j["data"]["serial_number"])
    ex = p.send("POST", "/v1/{int}/intermediate/set-signed",
                json=lambda s: {"certificate": s.vars["int_pem"] + "\n" + s.vars["root_pem"]}).same()
    ex.expect(200, warnings=[AIA_WARNING], data={"existing_issuers": None, "existing_keys": None, "imported_keys": None},
              data_keys=["existing_issuers", "existing_keys", "imported_issuers", "imported_keys", "mapping"])
    p.create_role("svc", {"allowed_domains": ["svc.example.com"], "allow_subdomains": True, "max_ttl": "24h",
                          "key_type": "ec"}, mount=p.real.vars["int"])
    return p


def test_generate_intermediate_exported_and_bad_type(pki):
    mount = pki.new_mount("int")
    pki.enable_pki(mount)
    ex = pki.send("POST", f"/v1/{mount}/intermediate/generate/exported", json={"common_name": "Exported Int", "key_type": "ec"})
    ex.same().expect(200, warnings=[INT_AIA_WARNING], data_keys=["csr", "key_id", "private_key", "private_key_type"],
                     data={"private_key_type": "ec"})

    def csr_matches_key(side, resp):
        from cryptography import x509

        data = resp.json()["data"]
        csr = x509.load_pem_x509_csr(data["csr"].encode())
        assert csr.is_signature_valid
        assert [f"{a.oid._name}={a.value}" for a in csr.subject] == ["commonName=Exported Int"]
        assert data["private_key"].startswith("-----BEGIN EC PRIVATE KEY-----")

    ex.check(csr_matches_key)
    pki.send("POST", f"/v1/{mount}/intermediate/generate/bogus", json={"common_name": "x"}).same().expect(
        400, errors=['the "exported" path parameter must be "internal", "existing", exported" or "kms"'])


def test_sign_intermediate_profile(int_csr):
    ex = int_csr.send("POST", "/v1/{mount}/root/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "Signed Int", "ttl": "8760h"}).same(cert_keys=CERT)
    ex.expect(200, warnings=[AIA_WARNING], data_keys=SIGNED_KEYS)

    def profile(side, resp):
        data = resp.json()["data"]
        facts = h.cert_facts(data["certificate"], data["issuing_ca"])
        assert facts["subject"] == ["commonName=Signed Int"] and facts["issuer"] == ["commonName=Parity Root"]
        assert facts["basic_constraints"] == {"ca": True, "path_length": None}
        assert facts["key_usage"] == ["key_cert_sign", "crl_sign"] and "ext_key_usage" not in facts
        assert facts["validity_seconds"] in (31536030, 31536029) and facts["verifies_with_issuer"]
        # ca_chain starts with the certificate just signed, then the issuer's chain
        assert data["ca_chain"] == [data["certificate"], side.vars["root_pem"]]

    ex.check(profile)


def test_sign_intermediate_variants(int_csr):
    send = int_csr.send

    def csr(extra):
        return lambda side: {"csr": side.vars["int_csr"], **extra}

    ex = send("POST", "/v1/{mount}/root/sign-intermediate", json=csr({})).same(cert_keys=CERT).expect(200)
    assert ex.facts("bao")["subject"] == ["commonName=Parity Intermediate"]  # CN taken from the CSR
    ex = send("POST", "/v1/{mount}/root/sign-intermediate", json=csr({"common_name": "PL", "max_path_length": 0}))
    ex.same(cert_keys=CERT).expect(200, warnings=[
        AIA_WARNING, "Max path length of the signed certificate is zero. This certificate cannot be used to issue intermediate "
        "CA certificates."])
    assert ex.facts("bao")["basic_constraints"] == {"ca": True, "path_length": 0}
    ex = send("POST", "/v1/{mount}/root/sign-intermediate", json=csr({"common_name": "PL2", "max_path_length": 2}))
    assert ex.same(cert_keys=CERT).expect(200).facts("bao")["basic_constraints"] == {"ca": True, "path_length": 2}
    ex = send("POST", "/v1/{mount}/root/sign-intermediate",
              json=csr({"common_name": "NC", "permitted_dns_domains": ["example.com", ".example.org"]}))
    assert ex.same(cert_keys=CERT).expect(200).facts("bao")["name_constraints"] == {
        "permitted": ["example.com", ".example.org"], "excluded": []}
    ex = send("POST", "/v1/{mount}/root/sign-intermediate",
              json=csr({"common_name": "KU", "key_usage": ["CertSign", "CRLSign", "DigitalSignature"]}))
    assert ex.same(cert_keys=CERT).expect(200).facts("bao")["key_usage"] == ["digital_signature", "key_cert_sign", "crl_sign"]


def test_sign_intermediate_use_csr_values(pki):
    key = h.ec_key()
    csr = h.make_csr(key, "CSR Intermediate", org="CSR Org", dns=["int.example.com"])
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json={"csr": csr, "use_csr_values": True})
    ex.same(cert_keys=CERT).expect(200, warnings=[AIA_WARNING])
    facts = ex.facts("bao")
    assert facts["subject"] == ["commonName=CSR Intermediate", "organizationName=CSR Org"]
    assert facts["san"] == {"dns": ["int.example.com"]}


def test_sign_intermediate_beyond_issuer_is_a_warning(int_csr):
    beyond = ("The expiration time for the signed certificate is after the CA's expiration time. If the new certificate "
              "is not treated as a root, validation paths with the certificate past the issuing CA's expiration time "
              "will fail.")
    # a 1-year second root: the clamped 10-year TTL surely ends after it (with the 10-year default root the
    # outcome would depend on whether both certificates were made in the same second)
    int_csr.generate_root({"common_name": "Short Root", "ttl": "8760h", "key_type": "ec", "issuer_name": "short"},
                          prefix="short")
    ex = int_csr.send("POST", "/v1/{mount}/issuer/short/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "Long", "ttl": "100000h"}).same(cert_keys=CERT)
    ex.expect(200, warnings=[beyond, AIA_WARNING,
                             'TTL "100000h0m0s" is longer than permitted maxTTL "87600h0m0s", so maxTTL is being used'])
    assert ex.facts("bao")["validity_seconds"] in (315360030, 315360029)
    ex = int_csr.send("POST", "/v1/{mount}/root/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "Long", "not_after": "2099-01-01T00:00:00Z"}).same(
        cert_keys=CERT, validity_tolerance=5)
    ex.expect(200, warnings=[beyond, AIA_WARNING])


def test_sign_intermediate_errors_and_formats(int_csr):
    int_csr.send("POST", "/v1/{mount}/root/sign-intermediate", json={"common_name": "x"}).same().expect(
        400, errors=['"csr" is empty'])
    int_csr.send("POST", "/v1/{mount}/issuer/nope/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "x"}).same().expect(
        500, errors=["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): "
                     "unable to find PKI issuer for reference: nope\n\n"])
    ex = int_csr.send("POST", "/v1/{mount}/issuer/default/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "Bundle", "format": "pem_bundle"}).same().expect(200)
    ex.check(lambda side, resp: None if h.pem_blocks(resp.json()["data"]["certificate"]) == ["CERTIFICATE", "CERTIFICATE"]
             else pytest.fail("pem_bundle is not cert + issuer"))
    ex = int_csr.send("POST", "/v1/{mount}/root/sign-intermediate", json=lambda s: {
        "csr": s.vars["int_csr"], "common_name": "Der", "format": "der"}).same(cert_keys=("certificate",)).expect(200)


def test_set_signed_errors(int_csr):
    int_csr.send("POST", "/v1/{int}/intermediate/set-signed", json={}).same().expect(
        400, errors=["'pem_bundle' and 'certificate' parameters were empty"])
    int_csr.send("POST", "/v1/{int}/intermediate/set-signed", json={"certificate": "garbage"}).same().expect(
        400, errors=["provided data for import was too short; perhaps a path was passed to the API rather than the "
                     "contents of a PEM file"])


def test_intermediate_mount_after_set_signed(chain):
    ex = chain.send("LIST", "/v1/{int}/issuers").same().expect(200)
    ex.check(lambda side, resp: None if len(resp.json()["data"]["keys"]) == 2 else pytest.fail("expected int + root"))
    chain.send("GET", "/v1/{int}/issuer/default").same(cert_keys=("certificate", "ca_chain")).expect(
        200, data={"issuer_name": "", "leaf_not_after_behavior": "err"})
    ex = chain.send("GET", "/v1/{int}/ca_chain", token=None).same().expect(200, content_type="application/pkix-cert")
    ex.check(lambda side, resp: None if h.pem_blocks(resp.text) == ["CERTIFICATE", "CERTIFICATE"] else pytest.fail("chain"))
    chain.send("GET", "/v1/{int}/ca/pem", token=None).same().expect(200).check(
        lambda side, resp: None if resp.text == side.vars["int_pem"] else pytest.fail("ca/pem is not the intermediate"))


def test_leaves_from_the_intermediate(chain):
    path = "/v1/{int}/issue/svc"
    ex = chain.send("POST", path, json={"common_name": "a.svc.example.com"}).same(cert_keys=CERT)
    ex.expect(200, warnings=['TTL "768h0m0s" is longer than permitted maxTTL "24h0m0s", so maxTTL is being used'])

    def chain_order(side, resp):
        data = resp.json()["data"]
        assert data["ca_chain"] == [side.vars["int_pem"], side.vars["root_pem"]]
        assert data["issuing_ca"] == side.vars["int_pem"]
        assert h.cert_facts(data["certificate"], data["issuing_ca"])["issuer"] == ["commonName=Parity Intermediate"]

    ex.check(chain_order)
    ex = chain.send("POST", path, json={"common_name": "a.svc.example.com", "ttl": "1h", "remove_roots_from_chain": True})
    ex.same(cert_keys=CERT).expect(200, warnings=None).check(
        lambda side, resp: None if resp.json()["data"]["ca_chain"] == [side.vars["int_pem"]] else pytest.fail("roots kept"))
    ex = chain.send("POST", path, json={"common_name": "a.svc.example.com", "ttl": "1h", "format": "pem_bundle"})
    ex.same().expect(200, warnings=None).check(
        lambda side, resp: None if h.pem_blocks(resp.json()["data"]["certificate"]) ==
        ["EC PRIVATE KEY", "CERTIFICATE", "CERTIFICATE", "CERTIFICATE"] else pytest.fail("bundle is not key+leaf+int+root"))
    chain.send("POST", path, json={"common_name": "a.example.com", "ttl": "1h"}).same().expect(
        400, errors=["common name a.example.com not allowed by this role"])


def test_signed_intermediate_is_listed_on_the_root_mount(chain):
    chain.send("GET", "/v1/{mount}/cert/{int_serial}").same(cert_keys=("certificate",)).expect(200)
    chain.send("LIST", "/v1/{mount}/certs").same().expect(200).check(
        lambda side, resp: None if side.vars["int_serial"] in resp.json()["data"]["keys"] else pytest.fail("not listed"))


def test_ocsp_of_an_intermediate_and_of_its_leaves(chain):
    """The responder of the intermediate's mount answers for its leaves (the CertID's name hash is the
    intermediate's subject, not its issuer's: a regression), the root's mount for the intermediate."""
    from test_parity_ocsp import _answer, _get, _post, _request

    p = chain
    ex = p.send("POST", "/v1/{int}/issue/svc", json={"common_name": "a.svc.example.com"}).same().expect(200)
    ex.capture("leaf", lambda j: j["data"]["serial_number"])
    ex.capture("leaf_pem", lambda j: j["data"]["certificate"])
    for side in p.sides:
        side.vars["int_mount"] = side.vars["int"]
    leaf = lambda s: _request(s.vars["leaf_pem"], s.vars["int_pem"])  # noqa: E731
    p.mount, saved = p.real.vars["int"], p.mount
    try:
        _get(p, leaf).same().check(_answer("GOOD", "leaf", issuer_var="int_pem"))
        ex = p.send("POST", "/v1/{int}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
        ex.capture("revoked", lambda j: j["data"])
        _post(p, leaf).same().check(_answer("REVOKED", "leaf", issuer_var="int_pem", revoked_var="revoked"))
    finally:
        p.mount = saved
    _get(p, lambda s: _request(s.vars["int_pem"], s.vars["root_pem"])).same().check(_answer("GOOD", "int_serial"))
