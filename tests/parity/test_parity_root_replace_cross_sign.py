"""Parity: ``root/replace`` (config/issuers' write with only ``default``, default ``next``) and
``intermediate/cross-sign`` (intermediate/generate/existing whatever ``exported`` says)."""

from __future__ import annotations

import base64

import parity_harness as h
import pytest
from cryptography import x509

pytestmark = pytest.mark.parity

CONFIG_KEYS = ["default", "default_follows_latest_issuer"]
NO_KEY_DEFAULT = ("This selected default issuer has no key associated with it. Some operations like issuing certificates "
                  "and signing CRLs will be unavailable with the requested default issuer until a key is imported or "
                  "the default issuer is changed.")


def test_root_replace(pair):
    pair.enable_pki()
    pair.send("POST", "/v1/{mount}/root/replace", json={}).same().expect(
        400, errors=["Error resolving issuer reference: unable to find PKI issuer for reference: next"])
    pair.send("GET", "/v1/{mount}/root/replace").same().expect(405)
    pair.generate_root(prefix="first")
    pair.generate_root({"common_name": "Next Root", "issuer_name": "next", "key_type": "ec"}, prefix="next")
    pair.send("POST", "/v1/{mount}/config/issuers", json=lambda s: {"default": s.vars["first_id"]}).same().expect(200)
    ex = pair.send("POST", "/v1/{mount}/root/replace", json={}).same().expect(200, warnings=None, data_keys=CONFIG_KEYS)
    ex.check(lambda side, resp: None if resp.json()["data"]["default"] == side.vars["next_id"] else pytest.fail("not next"))
    for body, error in (({"default": "default"}, "Invalid issuer specification; must be non-empty and can't be 'default'."),
                        ({"default": ""}, "Invalid issuer specification; must be non-empty and can't be 'default'."),
                        ({"default": "nope"}, "Error resolving issuer reference: unable to find PKI issuer for "
                                              "reference: nope")):
        pair.send("POST", "/v1/{mount}/root/replace", json=body).same().expect(400, errors=[error])
    ex = pair.send("POST", "/v1/{mount}/root/replace",
                   json=lambda s: {"default": s.vars["first_id"], "default_follows_latest_issuer": True}).same()
    ex.expect(200, warnings=["Endpoint ignored these unrecognized parameters: [default_follows_latest_issuer]"],
              data={"default_follows_latest_issuer": False})
    pair.send("GET", "/v1/{mount}/config/issuers").same().expect(200, data={"default_follows_latest_issuer": False})


def test_root_replace_to_an_issuer_without_key_warns(pair):
    pair.enable_pki()
    pair.generate_root()
    ca = h.self_signed_ca(h.ec_key(), "Keyless CA")
    ex = pair.send("POST", "/v1/{mount}/issuers/import/cert", json={"pem_bundle": ca}).same().expect(200)
    ex.capture("keyless", lambda j: j["data"]["imported_issuers"][0])
    for path in ("root/replace", "config/issuers"):
        pair.send("POST", f"/v1/{{mount}}/{path}", json=lambda s: {"default": s.vars["keyless"]}).same().expect(
            200, warnings=[NO_KEY_DEFAULT], data_keys=CONFIG_KEYS)


def test_cross_sign(pair):
    pair.enable_pki()
    pair.send("POST", "/v1/{mount}/intermediate/cross-sign", json={"common_name": "x"}).same().expect(
        400, errors=["failed to lookup public key from existing key: no default key currently configured"])
    pair.generate_root({"common_name": "Parity Root", "ttl": "87600h", "key_type": "ec", "key_name": "rk"})
    for body in ({"common_name": "Cross"}, {"common_name": "Cross", "key_ref": "rk", "exported": "exported"},
                 {"key_ref": "rk", "format": "der"}):
        ex = pair.send("POST", "/v1/{mount}/intermediate/cross-sign", json=body).same().expect(200, data_keys=["csr", "key_id"])

        def same_key(side, resp):
            csr_text = resp.json()["data"]["csr"]
            csr = (x509.load_pem_x509_csr(csr_text.encode()) if csr_text.startswith("-----")
                   else x509.load_der_x509_csr(base64.b64decode(csr_text)))
            assert csr.public_key() == h.load_certificate(side.vars["root_pem"]).public_key()
        ex.check(same_key)
    pair.send("POST", "/v1/{mount}/intermediate/cross-sign", json={"common_name": "x", "key_ref": "nope"}).same().expect(
        400, errors=["failed to lookup public key from existing key: unable to find PKI key for reference: nope"])
    pair.send("GET", "/v1/{mount}/intermediate/cross-sign").same().expect(405)
