"""Parity: revocation - ``revoke`` and ``revoke-with-key`` (every input rule and refusal text), no_store
certificates revoked by PEM, certificates signed elsewhere by the mount's key, expired certificates,
``cert/:serial`` and ``LIST certs/revoked`` afterwards, the CRLs (entries, numbers, disable,
auto_rebuild, rotate, rotate-delta, missing crl-signing usage) and a token allowed only
``revoke-with-key``."""

from __future__ import annotations

import base64
import datetime

import parity_harness as h
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519

pytestmark = pytest.mark.parity

MULTI = "1 error occurred:\n\t* {}\n\n"
REVOKED_KEYS = ["revocation_time", "revocation_time_rfc3339", "state"]
REVOKED_CERT_KEYS = ["certificate", "issuer_id", "revocation_time", "revocation_time_rfc3339"]
TOO_SHORT = ("provided certificate data was too short; perhaps a path was passed to the API rather than the contents "
             "of a PEM file")
FOREIGN = ("unable to verify signature on presented cert from any present issuer in this mount; certificates from "
           "previous CAs will need to have their issuing CA and key re-imported if revocation is necessary")
KEY_SHORT = ("Provided data for private_key was too short; perhaps a path was passed to the API rather than the "
             "contents of a PEM file?")
TYPE_MISMATCH = "provided private key type does not match certificate's public key type"
MISMATCH = "provided private key does not match certificate's public key"
GO_PARAMS = ("{optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> "
             "stringType:0 timeType:0 set:false omitEmpty:false}")
NO_CRL_SIGNING = ("Warning 1 during CRL rebuild: warning from local CRL rebuild: Issuer equivalency set with associated "
                  "keys lacked an issuer with CRL Signing KeyUsage; refusing to rebuild CRL for this group of issuers: "
                  "00000000-0000-0000-0000-000000000000")


def _issue(p: h.Pair, name: str, role: str = "web", **body) -> h.Exchange:
    """Issue a leaf on both sides; vars ``<name>`` (serial), ``<name>_pem``, ``<name>_key``."""
    body.setdefault("common_name", "r.example.com")
    ex = p.send("POST", f"/v1/{{mount}}/issue/{role}", json=body).same(cert_keys=("certificate",)).expect(200)
    ex.capture(name, lambda j: j["data"]["serial_number"])
    ex.capture(f"{name}_pem", lambda j: j["data"]["certificate"])
    ex.capture(f"{name}_key", lambda j: j["data"]["private_key"])
    return ex


def _var(name: str, transform=lambda v: v):
    return lambda side: transform(side.vars[name])


def _crl(side: h.Side, mount: str, path: str = "crl") -> x509.CertificateRevocationList:
    resp = side.request("GET", f"/v1/{mount}/{path}", token=None)
    assert resp.status_code == 200, (side.name, path, resp.status_code)
    return x509.load_der_x509_crl(resp.content)


def _crl_number(crl: x509.CertificateRevocationList) -> int:
    return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


def _crl_state(p: h.Pair, path: str = "crl") -> dict[str, tuple[int, list[str]]]:
    """Per side: (CRL number, entries as the side's var names) - comparable across sides."""
    out = {}
    for side in p.sides:
        crl = _crl(side, p.mount, path)
        by_serial = {int(v.replace(":", ""), 16): k for k, v in side.vars.items()
                     if isinstance(v, str) and h.SERIAL_COLON_RE.fullmatch(v) and not k.endswith("_pem")}
        out[side.name] = (_crl_number(crl), sorted(by_serial.get(e.serial_number, f"#{e.serial_number}") for e in crl))
    return out


def _same_crl_state(p: h.Pair, path: str = "crl") -> tuple[int, list[str]]:
    state = _crl_state(p, path)
    assert state["bao"] == state["double"], state
    return state["bao"]


def _recent(side: h.Side, resp) -> None:
    data = resp.json()["data"]
    when = datetime.datetime.fromisoformat(data["revocation_time_rfc3339"].replace("Z", "+00:00"))
    assert int(when.timestamp()) == data["revocation_time"]
    assert abs(data["revocation_time"] - h.utcnow().timestamp()) < 120


# ------------------------------------------------------------------------------------------ revoke

@pytest.mark.parametrize("spelling", ["colon", "hyphen", "upper"])
def test_revoke_by_serial(web, spelling):
    _issue(web, "leaf")
    transform = {"colon": str, "hyphen": lambda s: s.replace(":", "-"), "upper": str.upper}[spelling]
    ex = web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": transform(s.vars["leaf"])}).same()
    ex.expect(200, warnings=None, data={"state": "revoked"}, data_keys=REVOKED_KEYS).check(_recent)
    ex.capture("revoked_at", lambda j: j["data"])
    ex = web.send("GET", "/v1/{mount}/cert/{leaf}", token=None).same(cert_keys=("certificate",))
    ex.expect(200, data_keys=REVOKED_CERT_KEYS).check(lambda side, resp: None if (
        resp.json()["data"]["issuer_id"] == side.vars["root_id"]
        and {k: resp.json()["data"][k] for k in REVOKED_KEYS[:2]} == {k: side.vars["revoked_at"][k] for k in REVOKED_KEYS[:2]}
    ) else pytest.fail("cert/:serial does not show the revocation"))
    web.send("LIST", "/v1/{mount}/certs/revoked").same().expect(200).check(
        lambda side, resp: None if resp.json()["data"]["keys"] == [side.vars["leaf"]] else pytest.fail("not listed"))
    assert _same_crl_state(web) == (3, ["leaf"])


def test_revoke_by_pem_twice_and_the_crl(web):
    _issue(web, "one")
    _issue(web, "two")
    _issue(web, "kept")
    ex = web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"certificate": "text\n" + s.vars["one_pem"] + "\nmore"})
    ex.same().expect(200, warnings=None, data_keys=REVOKED_KEYS)
    ex.capture("first", lambda j: j["data"])
    ex = web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["one"].upper().replace(":", "-")})
    ex.same().expect(200, warnings=None).check(
        lambda side, resp: None if resp.json()["data"] == side.vars["first"] else pytest.fail("not the first revocation"))
    assert _same_crl_state(web) == (3, ["one"])  # the repeated revocation did not rebuild
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"certificate": s.vars["two_pem"].replace("CERTIFICATE", "X")}
             ).same().expect(200)
    assert _same_crl_state(web) == (5, ["one", "two"])

    def crl_facts(side, resp):
        crl = x509.load_der_x509_crl(resp.content)
        root = h.load_certificate(side.vars["root_pem"])
        assert crl.issuer == root.subject and crl.is_signature_valid(root.public_key())
        assert [e.oid._name for e in crl.extensions] == ["authorityKeyIdentifier", "cRLNumber"]
        assert crl.next_update_utc - crl.last_update_utc == datetime.timedelta(hours=72)
        assert isinstance(crl.signature_hash_algorithm, hashes.SHA256)
        assert all(len(e.extensions) == 0 for e in crl)

    web.send("GET", "/v1/{mount}/crl", token=None).same().expect(200, content_type="application/pkix-crl").check(crl_facts)
    web.send("GET", "/v1/{mount}/crl/pem", token=None).same().expect(200, content_type="application/x-pem-file")
    web.send("GET", "/v1/{mount}/issuer/default/crl", token=None).same().expect(200, data_keys=["crl"])


@pytest.mark.parametrize("body, status, error", [
    ({}, 400, "The serial number or certificate to revoke must be provided."),
    ({"serial_number": "01:02", "certificate": "x"}, 400,
     "Must provide either the certificate or the serial to revoke; not both."),
    ({"serial_number": None, "certificate": None}, 400,
     "Must provide either the certificate or the serial to revoke; not both."),
    ({"serial_number": ""}, 400, "The serial number must be provided"),
    ({"serial_number": None}, 400, "The serial number must be provided"),
    ({"serial_number": "01:02:03:04"}, 400, "certificate with serial 01:02:03:04 not found."),
    ({"serial_number": "zz:zz"}, 400, "certificate with serial zz:zz not found."),
    ({"serial_number": "a/b"}, 400, "certificate with serial a/b not found."),
    ({"serial_number": 123}, 400, "certificate with serial 123 not found."),
    ({"certificate": ""}, 500, MULTI.format(TOO_SHORT)),
    ({"certificate": None}, 500, MULTI.format(TOO_SHORT)),
    ({"certificate": "not a cert"}, 500, MULTI.format(TOO_SHORT)),
    ({"certificate": "x" * 80}, 500, MULTI.format("certificate contains no PEM data")),
    ({"certificate": "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n" + "x" * 40}, 500,
     MULTI.format("certificate could not be parsed: x509: malformed tbs certificate")),
    ({"certificate": "-----BEGIN CERTIFICATE-----\nMAUwAwIBAA==\n-----END CERTIFICATE-----\n" + "x" * 40}, 500,
     MULTI.format("certificate could not be parsed: x509: malformed signature algorithm identifier")),
], ids=["neither", "both", "both-null", "empty-serial", "null-serial", "unknown", "garbage", "slash", "number",
        "empty-cert", "null-cert", "short-cert", "no-pem", "bad-tbs", "bad-sigalg"])
def test_revoke_refusals(web, body, status, error):
    web.send("POST", "/v1/{mount}/revoke", json=body).same().expect(status, errors=[error])


def test_revoke_refusals_with_state(web):
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": " " + s.vars["leaf"]}).same().expect(400)
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"certificate": s.vars["leaf_key"]}).same().expect(
        500, errors=[MULTI.format("certificate could not be parsed: x509: malformed tbs certificate")])
    foreign = h.self_signed_ca(h.ec_key(), "Parity Root")
    web.send("POST", "/v1/{mount}/revoke", json={"certificate": foreign}).same().expect(500, errors=[MULTI.format(FOREIGN)])
    for body in (lambda s: {"serial_number": s.vars["root_serial"]}, lambda s: {"certificate": s.vars["root_pem"]}):
        web.send("POST", "/v1/{mount}/revoke", json=body).same().expect(
            400, errors=["adding issuer (id: 00000000-0000-0000-0000-000000000000) to its own CRL is not allowed"]).check(
            lambda side, resp: None if side.vars["root_id"] in resp.json()["errors"][0] else pytest.fail("other id"))
    for method in ("GET", "DELETE"):
        for path in ("revoke", "revoke-with-key"):
            web.send(method, "/v1/{mount}/" + path).same().expect(405, errors=[MULTI.format("unsupported operation")])
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}, token=None).same().expect(
        403, errors=["permission denied"])
    ex = web.send("PUT", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"], "reason": "x"}).same()
    ex.expect(200, warnings=["Endpoint ignored these unrecognized parameters: [reason]"])
    web.send("LIST", "/v1/{mount}/certs/revoked").same().expect(200)


def test_no_store_certificate_revoked_by_pem(web):
    web.create_role("nostore", {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                                "no_store": True})
    _issue(web, "ns", role="nostore")
    web.send("GET", "/v1/{mount}/cert/{ns}").same().expect(404, errors=[])
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["ns"]}).same().expect(400)
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"certificate": s.vars["ns_pem"]}).same().expect(
        200, data_keys=REVOKED_KEYS)
    web.send("GET", "/v1/{mount}/cert/{ns}", token=None).same(cert_keys=("certificate",)).expect(
        200, data_keys=REVOKED_CERT_KEYS)
    web.send("LIST", "/v1/{mount}/certs").same().expect(200).check(
        lambda side, resp: None if side.vars["ns"] in resp.json()["data"]["keys"] else pytest.fail("not listed"))
    assert _same_crl_state(web) == (3, ["ns"])
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["ns"]}).same().expect(200)


def test_certificates_signed_by_the_mounts_key(pair):
    """An exported root lets the test sign certificates itself: same serial with other content (500),
    another issuer DN (accepted, attributed to no issuer: no issuer_id, on the default CRL), an
    expired one (stored, not revoked, warning)."""
    pair.enable_pki()
    pair.generate_root(kind="exported").capture("root_key", lambda j: j["data"]["private_key"])
    pair.create_role("web", {"allow_any_name": True, "key_type": "ec"})
    _issue(pair, "leaf")
    now = h.utcnow()

    def forge(serial=None, issuer_dn=None, not_after=None, name="forged"):
        def body(side):
            key = serialization.load_pem_private_key(side.vars["root_key"].encode(), None)
            root = h.load_certificate(side.vars["root_pem"])
            builder = (x509.CertificateBuilder()
                       .subject_name(x509.Name.from_rfc4514_string(f"CN={name}"))
                       .issuer_name(x509.Name.from_rfc4514_string(issuer_dn) if issuer_dn else root.subject)
                       .public_key(h.ec_key().public_key())
                       .serial_number(serial(side) if serial else x509.random_serial_number())
                       .not_valid_before(now - datetime.timedelta(hours=2))
                       .not_valid_after(not_after or now + datetime.timedelta(hours=1)))
            cert = builder.sign(key, hashes.SHA256())
            return {"certificate": cert.public_bytes(serialization.Encoding.PEM).decode()}
        return body

    pair.send("POST", "/v1/{mount}/revoke", json=forge(serial=lambda s: int(s.vars["leaf"].replace(":", ""), 16))
              ).same().expect(500, errors=[MULTI.format("certificate with same serial but unequal value already present "
                                                        "in this cluster's storage; refusing to revoke")])
    pair.send("POST", "/v1/{mount}/revoke", json=forge(serial=lambda s: 12345, issuer_dn="CN=Someone Else")).same(
    ).expect(200, data_keys=REVOKED_KEYS)
    pair.send("GET", "/v1/{mount}/cert/30:39").same().expect(
        200, data_keys=["certificate", "revocation_time", "revocation_time_rfc3339"])
    pair.send("POST", "/v1/{mount}/revoke", json=forge(serial=lambda s: 777, not_after=now - datetime.timedelta(hours=1))
              ).same().expect(200, warnings=["certificate with serial 03:09 already expired; refusing to add to CRL. "
                                             "Enable 'AllowExpiredCertRevocation' to allow revoking expired certificates."])
    pair.send("GET", "/v1/{mount}/cert/03:09").same().expect(200, data={"revocation_time": 0})
    pair.send("LIST", "/v1/{mount}/certs/revoked").same().expect(200, data={"keys": ["30:39"]})
    pair.send("LIST", "/v1/{mount}/certs").expect(200).check(  # random serials: order differs per side
        lambda side, resp: None if resp.json()["data"]["keys"] == sorted(
            ["03:09", "30:39", side.vars["leaf"], side.vars["root_serial"]]) else pytest.fail(resp.text))
    assert _same_crl_state(pair) == (3, ["#12345"])


def test_expired_certificate_and_allow_expired(web):
    _issue(web, "short", ttl="1s")
    ex = web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["short"]}).same()
    ex.expect(200, warnings=[
        "certificate with serial 00:00:00:00:00:00:00:00 already expired; refusing to add to CRL. Enable "
        "'AllowExpiredCertRevocation' to allow revoking expired certificates."]).check(
        lambda side, resp: None if resp.json()["data"] is None else pytest.fail("data is not null"))
    web.send("LIST", "/v1/{mount}/certs/revoked").same().expect(404, errors=[])
    assert _same_crl_state(web) == (1, [])
    web.send("POST", "/v1/{mount}/config/crl", json={"allow_expired_cert_revocation": True}).same().expect(200)
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["short"]}).same().expect(
        200, warnings=None, data_keys=REVOKED_KEYS)
    assert _same_crl_state(web) == (3, ["short"])


def test_signed_intermediate_is_revocable(pki):
    mount = pki.new_mount("int")
    pki.enable_pki(mount)
    ex = pki.send("POST", f"/v1/{mount}/intermediate/generate/internal", json={"common_name": "Int", "key_type": "ec"})
    ex.same().expect(200).capture("csr", lambda j: j["data"]["csr"])
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate", json=lambda s: {"csr": s.vars["csr"], "ttl": "8760h"})
    ex.same(cert_keys=("certificate",)).expect(200).capture("int", lambda j: j["data"]["serial_number"])
    pki.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["int"]}).same().expect(
        200, data_keys=REVOKED_KEYS)
    assert _same_crl_state(pki) == (3, ["int"])


def test_list_revoked_paging(web):
    for n in range(4):
        _issue(web, f"l{n}")
        web.send("POST", "/v1/{mount}/revoke", json=lambda s, n=n: {"serial_number": s.vars[f"l{n}"]}).same().expect(200)

    def listed(params_for, expected_for):
        def check(side, resp):
            got = resp.json()["data"]["keys"] if resp.status_code == 200 else []
            assert got == expected_for(sorted(side.vars[f"l{n}"] for n in range(4))), (params_for, got)
        return check

    web.send("LIST", "/v1/{mount}/certs/revoked", params={"limit": "2"}).same().expect(200).check(
        listed("limit", lambda keys: keys[:2]))
    web.send("GET", "/v1/{mount}/certs/revoked", params={"list": "true"}).same().expect(200).check(
        listed("list", lambda keys: keys))
    web.send("GET", "/v1/{mount}/certs/revoked").same().expect(405, errors=[MULTI.format("unsupported operation")])
    web.send("LIST", "/v1/{mount}/certs/revoked", params={"after": "zz"}).same().expect(404, errors=[])
    for side in web.sides:  # per-side "after" values: the second serial, hyphen and colon spellings
        keys = sorted(side.vars[f"l{n}"] for n in range(4))
        side.vars["after_hyphen"] = keys[1].replace(":", "-")
        side.vars["after_colon"] = keys[1]
    for name in ("after_hyphen", "after_colon"):
        ex = web.send("LIST", lambda s, name=name: f"/v1/{s.vars['mount']}/certs/revoked?after={s.vars[name]}")
        ex.check(lambda side, resp, name=name: None if (
            resp.json().get("data", {}) or {}).get("keys", []) == [
                k for k in sorted(side.vars[f"l{n}"] for n in range(4)) if k.replace(":", "-") > side.vars[name]]
            else pytest.fail(f"{name}: {resp.text}"))
        # LIST certs pages the same way (``after`` compared as sent with the hyphen form)
        ex = web.send("LIST", lambda s, name=name: f"/v1/{s.vars['mount']}/certs?after={s.vars[name]}")
        ex.check(lambda side, resp, name=name: None if (
            resp.json().get("data", {}) or {}).get("keys", []) == [
                k for k in sorted([side.vars["root_serial"]] + [side.vars[f"l{n}"] for n in range(4)])
                if k.replace(":", "-") > side.vars[name]]
            else pytest.fail(f"certs {name}: {resp.text}"))


# --------------------------------------------------------------------------------- revoke-with-key

def _reencode(text: str, fmt: str) -> str:
    key = serialization.load_pem_private_key(text.encode(), None)
    form = serialization.PrivateFormat.PKCS8 if fmt == "pkcs8" else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption()).decode()


@pytest.mark.parametrize("key_type, fmt", [("ec", "traditional"), ("ec", "pkcs8"), ("rsa", "traditional"),
                                           ("rsa", "pkcs8"), ("ed25519", "pkcs8")])
def test_revoke_with_the_right_key(pki, key_type, fmt):
    pki.create_role("k", {"allow_any_name": True, "key_type": key_type})
    _issue(pki, "leaf", role="k")
    ex = pki.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {
        "serial_number": s.vars["leaf"], "private_key": _reencode(s.vars["leaf_key"], fmt)})
    ex.same().expect(200, warnings=None, data_keys=REVOKED_KEYS)
    pki.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {
        "certificate": s.vars["leaf_pem"], "private_key": s.vars["leaf_key"]}).same().expect(200)
    assert _same_crl_state(pki) == (3, ["leaf"])


def _pem_key(key, pkcs8: bool = False) -> str:
    pkcs8 = pkcs8 or isinstance(key, (ed25519.Ed25519PrivateKey, x25519.X25519PrivateKey))
    form = serialization.PrivateFormat.PKCS8 if pkcs8 else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption()).decode()


@pytest.mark.parametrize("key_type, other, error", [
    ("ec", lambda: h.ec_key(), MISMATCH),
    ("ec", lambda: ec.generate_private_key(ec.SECP384R1()), MISMATCH),
    ("ec", lambda: h.rsa_key(), TYPE_MISMATCH),
    ("ec", lambda: ed25519.Ed25519PrivateKey.generate(), TYPE_MISMATCH),
    ("rsa", lambda: h.rsa_key(3072), MISMATCH),
    ("rsa", lambda: h.ec_key(), TYPE_MISMATCH),
    ("ed25519", lambda: ed25519.Ed25519PrivateKey.generate(), MISMATCH),
    ("ed25519", lambda: h.ec_key(), TYPE_MISMATCH),
], ids=["ec-other", "ec-p384", "ec-rsa", "ec-ed", "rsa-other", "rsa-ec", "ed-other", "ed-ec"])
def test_revoke_with_a_wrong_key(pki, key_type, other, error):
    pki.create_role("k", {"allow_any_name": True, "key_type": key_type})
    _issue(pki, "leaf", role="k")
    wrong = _pem_key(other())
    pki.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"serial_number": s.vars["leaf"], "private_key": wrong}
             ).same().expect(500, errors=[MULTI.format(error)])
    pki.send("LIST", "/v1/{mount}/certs/revoked").same().expect(404, errors=[])


def test_revoke_with_key_refusals(web):
    _issue(web, "leaf")
    tag0 = "asn1: structure error: tags don't match (16 vs {class:0 tag:0 length:0 isCompound:false}) " + GO_PARAMS
    zeros = "-----BEGIN PRIVATE KEY-----\n" + "A" * 40 + "\n-----END PRIVATE KEY-----\n"
    cases = [
        ({}, 400, "The serial number or certificate to revoke must be provided."),
        ({"private_key": "x" * 70}, 400, "The serial number or certificate to revoke must be provided."),
        ({"leaf": True}, 400, "Must have private key to revoke via the /revoke-with-key path."),
        ({"leaf": True, "private_key": ""}, 400, KEY_SHORT),
        ({"leaf": True, "private_key": None}, 400, KEY_SHORT),
        ({"leaf": True, "private_key": "x" * 63}, 400, KEY_SHORT),
        ({"leaf": True, "private_key": "x" * 64}, 500,
         MULTI.format("provided key PEM block contained no data or failed to parse")),
        ({"leaf": True, "private_key": zeros}, 500, MULTI.format(
            "failed to parse provided private key: got errors attempting to parse DER private key:\n"
            f"1. x509: failed to parse EC private key: {tag0} ecPrivateKey @2\n2. {tag0} pkcs1PrivateKey @2\n"
            f"3. {tag0} pkcs8 @2")),
        ({"leaf": True, "private_key": _pem_key(x25519.X25519PrivateKey.generate())}, 500,
         MULTI.format("failed to parse provided private key: unknown type for parsed PKCS8 Private Key")),
        ({"serial_number": "01:02", "private_key": "x" * 70}, 400, "certificate with serial 01:02 not found."),
        ({"serial_number": "01:02"}, 400, "Must have private key to revoke via the /revoke-with-key path."),
    ]
    for body, status, error in cases:
        def send(side, body=body):
            out = {k: v for k, v in body.items() if k != "leaf"}
            if body.get("leaf"):
                out["serial_number"] = side.vars["leaf"]
            return out
        web.send("POST", "/v1/{mount}/revoke-with-key", json=send).same().expect(status, errors=[error])


def _tbs_length_named(errors: list[str], pem: str) -> list[str]:
    """``errors`` with Go's ``length:N`` of the certificate's TBSCertificate (the DER a certificate
    sent as a key starts with) as ``length:<TBS>``: its N depends on each side's own certificate (a
    random serial is 1 byte longer when its top bit is set), so it is compared as that length."""
    tbs = x509.load_pem_x509_certificate(pem.encode()).tbs_certificate_bytes
    size = int.from_bytes(tbs[2:2 + (tbs[1] & 0x7F)], "big") if tbs[1] & 0x80 else tbs[1]
    assert all(f"length:{size} " in e for e in errors), (size, errors)
    return [e.replace(f"length:{size} ", "length:<TBS> ") for e in errors]


def test_revoke_with_key_go_parse_texts(web):
    _issue(web, "leaf")
    secp256k1 = _pem_key(ec.generate_private_key(ec.SECP256K1()), pkcs8=True)
    web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"serial_number": s.vars["leaf"],
                                                                     "private_key": secp256k1}).same().expect(500)
    ex = web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"serial_number": s.vars["leaf"],
                                                                          "private_key": s.vars["leaf_pem"]}).expect(500)
    texts = [_tbs_length_named(ex.json(side)["errors"], side.vars["leaf_pem"]) for side in (ex.pair.real, ex.pair.double)]
    assert texts[0] == texts[1], texts
    sec1_k1 = _pem_key(ec.generate_private_key(ec.SECP256K1()))
    web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"serial_number": s.vars["leaf"],
                                                                     "private_key": sec1_k1}).same().expect(500)
    der = base64.b64encode(b"\x30\x03\x02\x01\x05").decode()
    odd = "-----BEGIN EC PRIVATE KEY-----\n" + der + "\n-----END EC PRIVATE KEY-----\n" + "#" * 40
    web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"serial_number": s.vars["leaf"],
                                                                     "private_key": odd}).same().expect(500)


def test_revoke_with_key_no_store_and_issuer(web):
    web.create_role("nostore", {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                                "no_store": True})
    _issue(web, "ns", role="nostore")
    wrong = _pem_key(h.ec_key())
    web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"certificate": s.vars["ns_pem"], "private_key": wrong}
             ).same().expect(500, errors=[MULTI.format(MISMATCH)])
    web.send("GET", "/v1/{mount}/cert/{ns}").same().expect(404, errors=[])  # not stored after a failed proof
    web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"certificate": s.vars["ns_pem"],
                                                                     "private_key": s.vars["ns_key"]}).same().expect(200)
    web.send("GET", "/v1/{mount}/cert/{ns}").same().expect(200, data_keys=REVOKED_CERT_KEYS)
    web.send("POST", "/v1/{mount}/revoke-with-key", json=lambda s: {"serial_number": s.vars["root_serial"],
                                                                     "private_key": wrong}
             ).same().expect(500, errors=[MULTI.format(MISMATCH)])
    foreign = h.self_signed_ca(h.ec_key(), "Parity Root")
    web.send("POST", "/v1/{mount}/revoke-with-key", json={"certificate": foreign, "private_key": wrong}).same().expect(
        500, errors=[MULTI.format(FOREIGN)])


def test_token_allowed_only_revoke_with_key(web):
    m = web.mount
    web.send("POST", f"/v1/sys/policies/acl/{m}-rwk", json={
        "policy": f'path "{m}/revoke-with-key" {{ capabilities = ["update"] }}'}).same().expect(204)
    ex = web.send("POST", "/v1/auth/token/create", json={"policies": [f"{m}-rwk"], "ttl": "1h"}).same().expect(200)
    ex.capture("rwk", lambda j: j["auth"]["client_token"])
    _issue(web, "mine")
    _issue(web, "theirs")
    token = _var("rwk")
    web.send("POST", "/v1/{mount}/revoke-with-key", token=token, json=lambda s: {
        "serial_number": s.vars["mine"], "private_key": s.vars["mine_key"]}).same().expect(200, data_keys=REVOKED_KEYS)
    web.send("POST", "/v1/{mount}/revoke", token=token, json=lambda s: {"serial_number": s.vars["theirs"]}).same().expect(
        403, errors=[MULTI.format("permission denied")])
    web.send("LIST", "/v1/{mount}/certs/revoked", token=token).same().expect(403, errors=[MULTI.format("permission denied")])
    web.send("LIST", "/v1/{mount}/certs/revoked").same().expect(200).check(
        lambda side, resp: None if resp.json()["data"]["keys"] == [side.vars["mine"]] else pytest.fail("wrong list"))


# ------------------------------------------------------------------------------------------- CRLs

def test_disabled_crl_and_rotation(web):
    _issue(web, "one")
    _issue(web, "two")
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["one"]}).same().expect(200)
    web.send("POST", "/v1/{mount}/config/crl", json={"disable": True}).same().expect(200)
    assert _same_crl_state(web) == (5, [])
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["two"]}).same().expect(200)
    web.send("GET", "/v1/{mount}/crl/rotate").same().expect(200, data={"success": True}, warnings=None)
    assert _same_crl_state(web) == (5, [])
    web.send("POST", "/v1/{mount}/config/crl", json={"disable": False}).same().expect(200)
    assert _same_crl_state(web) == (7, ["one", "two"])
    web.send("GET", "/v1/{mount}/crl/rotate").same().expect(200, data={"success": True})
    assert _same_crl_state(web) == (9, ["one", "two"])
    web.send("POST", "/v1/{mount}/crl/rotate", json={}).same().expect(405)


def test_auto_rebuild_leaves_the_crl_alone(web):
    web.send("POST", "/v1/{mount}/config/crl", json={"auto_rebuild": True}).same().expect(200)
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(
        200, warnings=None)
    assert _same_crl_state(web) == (1, [])
    assert _same_crl_state(web, "crl/delta") == (2, [])
    web.send("GET", "/v1/{mount}/crl/rotate-delta").same().expect(
        200, warnings=["requested rebuild of delta CRL when delta CRL is not enabled; this is a no-op"])
    web.send("POST", "/v1/{mount}/config/crl", json={"auto_rebuild": False}).same().expect(200)
    assert _same_crl_state(web) == (3, ["leaf"])


def test_delta_crl_rotation(web):
    web.send("POST", "/v1/{mount}/config/crl", json={"auto_rebuild": True, "enable_delta": True}).same().expect(200)
    assert _same_crl_state(web) == (3, [])
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
    assert _same_crl_state(web, "crl/delta") == (4, [])
    web.send("GET", "/v1/{mount}/crl/rotate-delta").same().expect(200, data={"success": True}, warnings=None)
    assert _same_crl_state(web, "crl/delta") == (5, ["leaf"])
    assert _same_crl_state(web) == (3, [])

    def indicator(side, resp):
        crl = x509.load_der_x509_crl(resp.content)
        ext = crl.extensions.get_extension_for_class(x509.DeltaCRLIndicator)
        assert (ext.critical, ext.value.crl_number) == (True, 3)

    web.send("GET", "/v1/{mount}/crl/delta", token=None).same().expect(200).check(indicator)
    web.send("GET", "/v1/{mount}/crl/rotate").same().expect(200)
    assert _same_crl_state(web) == (6, ["leaf"])
    assert _same_crl_state(web, "crl/delta") == (7, [])


def test_revocation_without_crl_signing_usage(web):
    web.send("PATCH", "/v1/{mount}/issuer/default", data='{"usage": "read-only,issuing-certificates"}',
             headers={"Content-Type": "application/merge-patch+json"}).same().expect(200)
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(
        200, warnings=[NO_CRL_SIGNING])
    web.send("GET", "/v1/{mount}/crl/rotate").same().expect(200, warnings=[NO_CRL_SIGNING])
    assert _same_crl_state(web) == (1, [])
