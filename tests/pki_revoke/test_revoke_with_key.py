"""POST revoke-with-key: proof of possession with PKCS#1, SEC1 and PKCS#8 keys, every refusal with
Go's texts, and a token whose policy only allows revoke-with-key."""

from __future__ import annotations

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, x25519
from revoke_helpers import MULTI, cert_of, ec_key, ed_key, key_pem, pem, rsa_key, signed_cert

TYPE_MISMATCH = MULTI.format("provided private key type does not match certificate's public key type")
MISMATCH = MULTI.format("provided private key does not match certificate's public key")
GO_PARAMS = ("{optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> "
             "stringType:0 timeType:0 set:false omitEmpty:false}")


def _reencode(private_key_pem: str, fmt: str) -> str:
    return key_pem(serialization.load_pem_private_key(private_key_pem.encode(), None), fmt)


@pytest.mark.parametrize("role, fmt", [("web", "traditional"), ("web", "pkcs8"), ("rsa", "traditional"),
                                       ("rsa", "pkcs8"), ("ed", "pkcs8")])
def test_right_key_revokes(pki, role, fmt):
    leaf = pki.issue(role)
    key = _reencode(leaf["private_key"], fmt)
    data = pki.ok("POST", "revoke-with-key", {"serial_number": leaf["serial_number"], "private_key": key})["data"]
    assert data["state"] == "revoked"
    assert pki.revoked_list() == [leaf["serial_number"]]
    again = pki.ok("POST", "revoke-with-key", {"certificate": leaf["certificate"], "private_key": key})["data"]
    assert again == data


def test_key_block_label_is_ignored(pki):
    leaf = pki.issue()
    relabelled = _reencode(leaf["private_key"], "pkcs8").replace("PRIVATE KEY", "RSA PRIVATE KEY")
    assert pki.ok("POST", "revoke-with-key", {"serial_number": leaf["serial_number"], "private_key": relabelled})


@pytest.mark.parametrize("role, other, error", [
    ("web", lambda: ec_key(), MISMATCH),
    ("web", lambda: ec_key(ec.SECP384R1), MISMATCH),
    ("web", lambda: rsa_key(), TYPE_MISMATCH),
    ("web", lambda: ed_key(), TYPE_MISMATCH),
    ("rsa", lambda: rsa_key(), MISMATCH),
    ("rsa", lambda: ec_key(), TYPE_MISMATCH),
    ("ed", lambda: ed_key(), MISMATCH),
    ("ed", lambda: ec_key(), TYPE_MISMATCH),
], ids=["ec-other", "ec-p384", "ec-rsa", "ec-ed25519", "rsa-other", "rsa-ec", "ed-other", "ed-ec"])
def test_wrong_keys(pki, role, other, error):
    leaf = pki.issue(role)
    for fmt in ("traditional", "pkcs8") if role != "ed" else ("pkcs8",):
        body = {"serial_number": leaf["serial_number"], "private_key": key_pem(other(), fmt)}
        assert pki.fails("POST", "revoke-with-key", body, 500) == [error]
    assert pki.revoked_list() is None


def test_key_refusals(pki):
    leaf = pki.issue()
    serial = leaf["serial_number"]
    too_short = ("Provided data for private_key was too short; perhaps a path was passed to the API rather than the "
                 "contents of a PEM file?")
    cases = [
        ({"serial_number": serial}, 400, "Must have private key to revoke via the /revoke-with-key path."),
        ({"serial_number": serial, "private_key": ""}, 400, too_short),
        ({"serial_number": serial, "private_key": None}, 400, too_short),
        ({"serial_number": serial, "private_key": "x" * 63}, 400, too_short),
        ({"serial_number": serial, "private_key": "x" * 64}, 500,
         MULTI.format("provided key PEM block contained no data or failed to parse")),
        ({}, 400, "The serial number or certificate to revoke must be provided."),
        ({"private_key": "x" * 70}, 400, "The serial number or certificate to revoke must be provided."),
        ({"serial_number": serial, "certificate": "c"}, 400,
         "Must provide either the certificate or the serial to revoke; not both."),
        ({"serial_number": "01:02", "private_key": "x" * 70}, 400, "certificate with serial 01:02 not found."),
        ({"serial_number": "01:02"}, 400, "Must have private key to revoke via the /revoke-with-key path."),
    ]
    for body, status, error in cases:
        assert pki.fails("POST", "revoke-with-key", body, status) == [error], body
    assert pki.revoked_list() is None


def test_unparseable_keys_get_gos_three_errors(pki):
    leaf = pki.issue()
    zeros = "-----BEGIN PRIVATE KEY-----\n" + "A" * 40 + "\n-----END PRIVATE KEY-----\n"
    tag0 = "asn1: structure error: tags don't match (16 vs {class:0 tag:0 length:0 isCompound:false}) " + GO_PARAMS
    assert pki.fails("POST", "revoke-with-key", {"serial_number": leaf["serial_number"], "private_key": zeros}, 500) == [
        MULTI.format("failed to parse provided private key: got errors attempting to parse DER private key:\n"
                     f"1. x509: failed to parse EC private key: {tag0} ecPrivateKey @2\n"
                     f"2. {tag0} pkcs1PrivateKey @2\n3. {tag0} pkcs8 @2")]
    cert_der = cert_of(leaf["certificate"]).public_bytes(serialization.Encoding.DER)
    assert cert_der[1] == 0x82 and cert_der[5] == 0x82  # long-form lengths: the tbs length is bytes 6-7
    inner_len = int.from_bytes(cert_der[6:8], "big")
    int4 = (f"asn1: structure error: tags don't match (2 vs {{class:0 tag:16 length:{inner_len} isCompound:true}}) "
            f"{GO_PARAMS} int @4")
    assert pki.fails("POST", "revoke-with-key", {"serial_number": leaf["serial_number"],
                                                 "private_key": leaf["certificate"]}, 500) == [
        MULTI.format("failed to parse provided private key: got errors attempting to parse DER private key:\n"
                     f"1. x509: failed to parse EC private key: {int4}\n2. {int4}\n3. {int4}")]


def test_x25519_key(pki):
    leaf = pki.issue()
    key = key_pem(x25519.X25519PrivateKey.generate(), "pkcs8")
    assert pki.fails("POST", "revoke-with-key", {"serial_number": leaf["serial_number"], "private_key": key}, 500) == [
        MULTI.format("failed to parse provided private key: unknown type for parsed PKCS8 Private Key")]


def test_secp256k1_key(pki):
    leaf = pki.issue()
    key = key_pem(ec.generate_private_key(ec.SECP256K1()), "pkcs8")
    hint = "x509: failed to parse private key (use ParsePKCS8PrivateKey instead for this key format)"
    assert pki.fails("POST", "revoke-with-key", {"serial_number": leaf["serial_number"], "private_key": key}, 500) == [
        MULTI.format("failed to parse provided private key: got errors attempting to parse DER private key:\n"
                     f"1. {hint}\n2. {hint}\n3. x509: failed to parse EC private key embedded in PKCS#8: "
                     "x509: unknown elliptic curve")]


def test_pem_not_stored_when_the_key_is_wrong(pki):
    leaf = pki.issue("nostore")
    body = {"certificate": leaf["certificate"], "private_key": key_pem(ec_key())}
    assert pki.fails("POST", "revoke-with-key", body, 500) == [MISMATCH]
    assert pki.call("GET", f"cert/{leaf['serial_number']}").status_code == 404
    body["private_key"] = leaf["private_key"]
    assert pki.ok("POST", "revoke-with-key", body)["data"]["state"] == "revoked"
    assert pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]["issuer_id"] == pki.root["issuer_id"]


def test_issuer_refused_after_the_key_check(pki):
    root_key = pki.root["private_key"]
    body = {"serial_number": pki.root["serial_number"], "private_key": key_pem(ec_key())}
    assert pki.fails("POST", "revoke-with-key", body, 500) == [MISMATCH]
    body["private_key"] = root_key
    assert pki.fails("POST", "revoke-with-key", body, 400) == [
        f"adding issuer (id: {pki.root['issuer_id']}) to its own CRL is not allowed"]


def test_foreign_certificate_before_the_key(pki):
    other = ec_key()
    foreign = signed_cert(other, cert_of(pki.root["certificate"]).subject)
    body = {"certificate": pem(foreign), "private_key": "x" * 70}
    assert pki.fails("POST", "revoke-with-key", body, 500) == [MULTI.format(
        "unable to verify signature on presented cert from any present issuer in this mount; certificates from "
        "previous CAs will need to have their issuing CA and key re-imported if revocation is necessary")]


def test_token_allowed_only_revoke_with_key(pki):
    url = pki.double.secrets_url
    root = {"X-Vault-Token": "root"}
    policy = f'path "{pki.name}/revoke-with-key" {{ capabilities = ["update"] }}'
    resp = requests.post(f"{url}/v1/sys/policies/acl/rwk-{pki.name}", json={"policy": policy}, headers=root, timeout=30)
    assert resp.status_code == 204
    resp = requests.post(f"{url}/v1/auth/token/create", json={"policies": [f"rwk-{pki.name}"], "ttl": "1h"},
                         headers=root, timeout=30)
    token = resp.json()["auth"]["client_token"]
    leaf = pki.issue()
    other = pki.issue()
    body = {"serial_number": leaf["serial_number"], "private_key": leaf["private_key"]}
    resp = pki.call("POST", "revoke-with-key", body, token=token)
    assert resp.status_code == 200 and resp.json()["data"]["state"] == "revoked"
    resp = pki.call("POST", "revoke", {"serial_number": other["serial_number"]}, token=token)
    assert (resp.status_code, resp.json()) == (403, {"errors": [MULTI.format("permission denied")]})
    resp = pki.call("LIST", "certs/revoked", token=token)
    assert (resp.status_code, resp.json()) == (403, {"errors": [MULTI.format("permission denied")]})
    assert pki.revoked_list() == [leaf["serial_number"]]
