"""Parity: the ACME server (OpenBao 2.7 ``path_acme_*.go``) - directory under the four prefixes,
new-nonce, the mount-tune header rule, accounts, JWS refusals, orders, authorizations, challenge and
finalize refusals, each answer compared between bao and the double (status, Content-Type, the JSON
or problem document with URLs and ids normalised)."""

from __future__ import annotations

import base64
import json
import time

import acme_parity as a
import parity_harness as h
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from pytest_schedpki.acme import b64url, csr_for, jwk_of

pytestmark = pytest.mark.parity

MALFORMED = "the request message was malformed"


@pytest.fixture
def acme(web):
    """``web`` (EC root, role ``web`` for subdomains of example.com) with ACME enabled and tuned."""
    a.enable(web)
    return a.AcmeSides(web)


def test_disabled_directory_is_an_empty_404(web):
    web.send("GET", "/v1/{mount}/acme/directory", token=None).same().expect(404)
    web.send("GET", "/v1/{mount}/acme/new-nonce", token=None).same().expect(404)


@pytest.mark.parametrize("prefix", ["acme/", "roles/web/acme/", "issuer/default/acme/", "issuer/default/roles/web/acme/"])
def test_directory_under_every_prefix(acme, prefix):
    sides = a.AcmeSides(acme.pair, prefix)
    answers = sides.both(lambda c, s: c.request("GET", c.directory_url), 200)
    body = answers["double"].json()
    assert body["newNonce"].endswith(f"/{prefix}new-nonce")
    assert body["meta"] == {"externalAccountRequired": False}


def test_directory_of_unknown_role_and_issuer(acme):
    for prefix, detail in (("roles/nope/acme/", "the request message was malformed: role does not exist"),
                           ("issuer/nope/acme/", "the request message was malformed: issuer does not exist")):
        sides = a.AcmeSides(acme.pair, prefix)
        sides.both(lambda c, s: c.request("GET", c.directory_url), 400, ("malformed", detail))


def test_new_nonce_head_and_get(acme):
    answers = acme.both(lambda c, s: c.request("HEAD", c.directory()["newNonce"]), 200)
    answers.update(acme.both(lambda c, s: c.request("GET", c.directory()["newNonce"]), 204))
    for answer in answers.values():
        assert answer.headers["replay-nonce"]
        assert answer.headers["link"].endswith('/acme/directory>;rel="index"')
        assert "content-type" not in answer.headers


def test_without_the_tune_no_acme_header_passes(web):
    a.enable(web, tune=False)
    sides = a.AcmeSides(web)
    answers = sides.both(lambda c, s: c.request("HEAD", c.directory()["newNonce"]), 200)
    for answer in answers.values():
        assert "replay-nonce" not in answer.headers and "link" not in answer.headers


def test_acme_paths_need_no_token_but_new_eab_does(acme):
    acme.pair.send("POST", "/v1/{mount}/acme/new-eab", token=None).same().expect(403)
    acme.pair.send("GET", "/v1/{mount}/acme/new-account", token=None).same().expect(405)


def test_account_create_lookup_update_deactivate(acme):
    acme.both(lambda c, s: c.new_account(only_existing=True), 400, (
        "accountDoesNotExist", "an account with this key does not exist: the request specified an account that does "
                               "not exist"))
    acme.account()
    acme.both(lambda c, s: c.new_account(), 200)
    acme.both(lambda c, s: c.new_account(only_existing=True), 200)
    acme.both(lambda c, s: c.post(c.kid, {"contact": ["mailto:new@example.com"]}), 200)
    acme.both(lambda c, s: c.post(c.kid, {"contact": "x"}), 400, (
        "malformed", f"invalid type (string) for field 'contact': {MALFORMED}"))
    acme.both(lambda c, s: c.post(c.kid, {"status": "deactivated"}), 200)
    acme.both(lambda c, s: c.new_order(["a.example.com"]), 401, (
        "unauthorized", "the client lacks sufficient authorization: account in status: deactivated"))


def test_new_account_refuses_a_kid(acme):
    acme.account()
    acme.both(lambda c, s: c.post(c.directory()["newAccount"], {}), 400, (
        "malformed", f"cannot submit to newAccount with 'kid': {MALFORMED}"))


def _raw_post(c, url: str, body) -> h.Any:
    return c.request("POST", url, json.dumps(body).encode(), {"Content-Type": "application/jose+json"})


def test_jws_refusals(acme):
    acme.account()
    url = lambda c: c.directory()["newOrder"]  # noqa: E731
    acme.both(lambda c, s: _raw_post(c, url(c), {}), 400, ("malformed", f"missing required field 'protected': {MALFORMED}"))
    acme.both(lambda c, s: _raw_post(c, url(c), {"protected": "a=b"}), 400, (
        "malformed", f"failed to base64 parse 'protected': illegal base64 data at input byte 1: {MALFORMED}"))
    acme.both(lambda c, s: _raw_post(c, url(c), {"protected": b64url("{}")}), 400, (
        "malformed", "failed to json unmarshal 'protected': invalid header: got neither required fields of 'kid' nor "
                     f"'jwk': {MALFORMED}"))
    acme.both(lambda c, s: c.post(url(c), {}, extra_header={"jwk": jwk_of(c.key)}), 400, (
        "malformed", "failed to json unmarshal 'protected': invalid header: got both account 'kid' and 'jwk' in the "
                     f"same message; expected only one: {MALFORMED}"))
    acme.both(lambda c, s: c.post(url(c), {}, extra_header={"alg": "HS256"}), 400, (
        "malformed", f"failed to json unmarshal 'protected': invalid header: unexpected value for 'algo': {MALFORMED}"))
    acme.both(lambda c, s: c.post(url(c), {}, nonce="bm9wZQ"), 400, (
        "badNonce", "invalid or reused nonce: the client sent an unacceptable anti-replay nonce"))
    acme.both(lambda c, s: c.post(url(c) + "x", {}), 403)  # not an ACME path: a token is needed
    acme.both(lambda c, s: c.post(c.directory()["newOrder"], {}, extra_header={"url": "http://elsewhere/"}), 401)
    acme.both(lambda c, s: c.post(url(c), {}, extra_header={"kid": c.kid.rsplit("/", 1)[0] + "/0" * 0 +
                                                               "/00000000-0000-0000-0000-000000000000"}), 400, (
        "accountDoesNotExist", "failed to json unmarshal 'protected': account not found: the request specified an "
                               "account that does not exist"))


def test_reused_nonce_and_bad_signature(acme):
    acme.account()
    nonces = {}

    def first(c, s):
        nonces[s.name] = c.new_nonce()
        return c.post(c.directory()["newOrder"], {"identifiers": [{"type": "dns", "value": "a.example.com"}]},
                      nonce=nonces[s.name])
    acme.both(first, 201)
    acme.both(lambda c, s: c.post(c.directory()["newOrder"], {}, nonce=nonces[s.name]), 400, (
        "badNonce", "invalid or reused nonce: the client sent an unacceptable anti-replay nonce"))

    def forged(c, s):
        body = c.jws(c.directory()["newOrder"], {"identifiers": []})
        body["signature"] = b64url(b"\x01" * 64)
        return _raw_post(c, c.directory()["newOrder"], body)
    acme.both(forged, 500, ("serverInternal", "failed to verify signature: go-jose/go-jose: error in cryptographic "
                                              "primitive"))


@pytest.mark.parametrize(("identifiers", "problem"), [
    (None, ("malformed", f"missing required identifiers argument: {MALFORMED}")),
    ([{"type": "ip", "value": "nope"}], ("malformed", "value argument (nope) failed validation: failed parsing as IP: "
                                                      f"{MALFORMED}")),
    ([{"type": "email", "value": "a@b"}], ("unsupportedIdentifier", "unsupported identifier type email: an identifier "
                                                                    "is of an unsupported type")),
    ([{"type": "dns", "value": ""}], ("malformed", f"value argument for value in 'identifiers' can not be blank: "
                                                   f"{MALFORMED}")),
    ([{"type": "dns", "value": "1.2.3.4"}], ("malformed", "refusing to accept argument (1.2.3.4) as DNS type "
                                                          f"identifier: parsed OK as IP address: {MALFORMED}")),
    ([{"type": "dns", "value": "*w.example.com"}], ("malformed", "value argument (*w.example.com) failed validation: "
                                                                 "invalid wildcard: wildcard must be entire left-most "
                                                                 f"label: {MALFORMED}")),
])
def test_new_order_refusals(acme, identifiers, problem):
    acme.account()
    payload = {} if identifiers is None else {"identifiers": identifiers}
    acme.both(lambda c, s: c.post(c.directory()["newOrder"], payload), 400, problem)


def test_role_directory_rejects_a_name_the_role_refuses(acme):
    sides = a.AcmeSides(acme.pair, "roles/web/acme/")
    sides.account()
    sides.both(lambda c, s: c.new_order(["www.other.org"]), 400, (
        "rejectedIdentifier", "the server will not issue certificates for the identifier: role (web) will not issue "
                              "certificate for name www.other.org"))
    sides.both(lambda c, s: c.new_order(["www.example.com"], ips=["10.0.0.1"]), 201)


def test_order_authorization_and_challenge_reads(acme):
    acme.account()
    answers = acme.both(lambda c, s: c.new_order(["www.example.com", "*.example.com"]), 201)
    urls = {name: ans.json() for name, ans in answers.items()}
    acme.both(lambda c, s: c.post(answers[s.name].headers["location"]), 200)
    acme.both(lambda c, s: c.post(c.kid + "/orders"), 403)  # the account's "orders" URL is no path upstream
    acme.both(lambda c, s: c.post(c.directory_url.replace("/directory", "/orders")), 200)
    for index in range(2):
        acme.both(lambda c, s, i=index: c.post(urls[s.name]["authorizations"][i]), 200)
    authz = {n: acme.client(s).post(urls[n]["authorizations"][0]).json() for n, s in
             (("bao", acme.pair.real), ("double", acme.pair.double))}
    acme.both(lambda c, s: c.post(authz[s.name]["challenges"][0]["url"]), 200)
    acme.both(lambda c, s: c.post(authz[s.name]["challenges"][0]["url"].rsplit("/", 1)[0] + "/nope-01"), 400, (
        "malformed", f"unknown challenge of type 'nope-01' in authorization: {MALFORMED}"))
    acme.both(lambda c, s: c.post(authz[s.name]["challenges"][0]["url"], {"x": 1}), 400, (
        "malformed", f"unexpected request parameters: {MALFORMED}"))
    acme.both(lambda c, s: c.post(urls[s.name]["finalize"], {"csr": b64url(csr_for(ec.generate_private_key(
        ec.SECP256R1()), ["www.example.com"]))}), 403, (
        "orderNotReady", "the request attempted to finalize an order that is not ready to be finalized: order is "
                         "status pending, needs to be in ready state"))
    acme.both(lambda c, s: c.post(urls[s.name]["finalize"], {}), 400, ("malformed", f"{MALFORMED}: missing csr in payload"))
    acme.both(lambda c, s: c.post(urls[s.name]["authorizations"][0], {"status": "deactivated"}), 200)
    acme.both(lambda c, s: c.post(answers[s.name].headers["location"]), 200)
    acme.both(lambda c, s: c.post(authz[s.name]["challenges"][0]["url"], {}), 400, (
        "malformed", "error submitting challenge for validation: the request message was malformed: cannot accept "
                     "already validated authorization <uuid> (deactivated)"))


def test_revoke_refusals(acme):
    acme.account()
    acme.both(lambda c, s: c.post(c.directory()["revokeCert"], {}), 400, (
        "malformed", f"bad request was lacking required field 'certificate': {MALFORMED}"))
    acme.both(lambda c, s: c.post(c.directory()["revokeCert"], {"certificate": "!!"}), 400, (
        "malformed", f"failed to base64 decode certificate: illegal base64 data at input byte 0: {MALFORMED}"))
    root = {s.name: h.load_certificate(s.vars["root_pem"]) for s in acme.pair.sides}
    from cryptography.hazmat.primitives.serialization import Encoding
    acme.both(lambda c, s: c.revoke(root[s.name].public_bytes(Encoding.DER), reason=4), 400, (
        "badRevocationReason", "OpenBao does not support revocation reasons (got 4; expected omitted or "
                               "0/unspecified): the revocation reason provided is not allowed by the server"))


EAB_POLICY_TEXT = ("invalid eab policy name provided, valid values are 'not-required', 'new-account-required', "
                   "'always-required'")


@pytest.mark.parametrize(("body", "error"), [
    ({"allowed_roles": []}, "allowed_roles must take a non-zero length value; specify '*' as the value to allow "
                            "anything or specify enabled=false to disable ACME entirely"),
    ({"allowed_roles": ["web", "*"]}, "cannot use '*' as role name at index 1"),
    ({"allowed_roles": ["nope"]}, "allowed_role nope is not a valid acme role: the request message was malformed: "
                                  "role does not exist"),
    ({"default_directory_policy": "bad"}, "invalid default_directory_policy: string bad not a valid Default Directory "
                                          "Policy"),
    ({"default_directory_policy": "role:"}, "invalid default_directory_policy: no role specified by policy role:"),
    ({"default_directory_policy": "role:web", "allowed_roles": ["other"]},
     "allowed_role other is not a valid acme role: the request message was malformed: role does not exist"),
    ({"allowed_issuers": ["nope"]}, "failed validating allowed_issuers: unable to fetch issuer: nope: unable to find "
                                    "PKI issuer for reference: nope"),
    ({"dns_resolver": "1.2.3.4"}, "failed to parse DNS resolver address: address 1.2.3.4: missing port in address"),
    ({"dns_resolver": "resolver:53"}, "failed to parse DNS resolver address: expected IPv4/IPv6 address, likely got "
                                      "hostname"),
    ({"dns_resolver": ":53"}, "failed to parse DNS resolver address: got empty address"),
    ({"eab_policy": "x"}, EAB_POLICY_TEXT),
    ({"enabled": True}, "ACME feature requires local cluster 'path' field configuration to be set"),
])
def test_config_acme_validation(web, body, error):
    web.send("POST", "/v1/{mount}/config/acme", json=body).same().expect(500, errors=[
        f"1 error occurred:\n\t* {error}\n\n"])
    web.send("GET", "/v1/{mount}/config/acme").same().expect(200, data={"enabled": False, "allowed_roles": ["*"]})


def test_config_acme_write_normalises_and_keeps(web):
    web.send("POST", "/v1/{mount}/config/acme", json={"eab_policy": " Always-Required ", "allowed_roles": "web",
                                                      "default_directory_policy": "role:web"}).same().expect(200, data={
        "eab_policy": "always-required", "allowed_roles": ["web"], "default_directory_policy": "role:web"})
    web.send("POST", "/v1/{mount}/config/acme", json={"allow_role_ext_key_usage": True}).same().expect(200, data={
        "eab_policy": "always-required", "allow_role_ext_key_usage": True})
    web.send("DELETE", "/v1/{mount}/config/acme").same().expect(405)
    web.send("POST", "/v1/{mount}/config/acme", json={"max_ttl": "1h"}).same().expect(  # Vault's field, not bao's
        200, warnings=["Endpoint ignored these unrecognized parameters: [max_ttl]"])


def test_eab_lifecycle_and_policy(acme):
    p = acme.pair
    p.send("POST", "/v1/{mount}/config/acme", json={"eab_policy": "new-account-required"}).same().expect(200)
    acme.both(lambda c, s: c.request("GET", c.directory_url), 200)
    acme.both(lambda c, s: c.new_account(), 401, (
        "externalAccountRequired", "the request must include a value for the 'externalAccountBinding' field"))
    p.send("LIST", "/v1/{mount}/eab").same().expect(404)
    ex = p.send("POST", "/v1/{mount}/acme/new-eab").same(volatile=("id", "key", "created_on")).expect(200, data={
        "key_type": "hs", "acme_directory": "acme/directory"})
    ex.capture("eab_id", lambda j: j["data"]["id"])
    ex.capture("eab_key", lambda j: j["data"]["key"])
    p.send("POST", "/v1/{mount}/roles/web/acme/new-eab").same(volatile=("id", "key", "created_on")).expect(
        200, data={"acme_directory": "roles/web/acme/directory"})
    p.send("LIST", "/v1/{mount}/eab").same(volatile=("keys", "key_info")).expect(200)
    def one_key(side, resp):
        assert len(resp.json()["data"]["keys"]) == 1, resp.text
    p.send("LIST", "/v1/{mount}/eab", params={"limit": "1"}).same(volatile=("keys", "key_info")).check(one_key)
    p.send("LIST", "/v1/{mount}/eab", params={"after": "g"}).same().expect(404)
    p.send("LIST", "/v1/{mount}/eab", params={"limit": "x"}).same().expect(400)
    p.send("DELETE", "/v1/{mount}/eab/not-a-uuid").same().expect(404)
    p.send("DELETE", "/v1/{mount}/eab/00000000-0000-0000-0000-000000000000").same().expect(
        200, warnings=["No key id found with id: 00000000-0000-0000-0000-000000000000"])
    answers = acme.both(lambda c, s: c.new_account(eab=(s.vars["eab_id"], s.vars["eab_key"])), 201,
                        volatile=("externalAccountBinding",))
    for side in p.sides:  # each side echoes the binding it was sent
        sent = answers[side.name].json()["externalAccountBinding"]
        assert json.loads(base64.urlsafe_b64decode(sent["protected"] + "==="))["kid"] == side.vars["eab_id"]
    other = a.AcmeSides(p)
    other.both(lambda c, s: c.new_account(eab=(s.vars["eab_id"], s.vars["eab_key"])), 401, (
        "unauthorized", "the client lacks sufficient authorization: failed to verify eab"))


def test_rsa_and_ed25519_account_keys(acme):
    from cryptography.hazmat.primitives.asymmetric import ed25519
    for key in (rsa.generate_private_key(65537, 2048), ed25519.Ed25519PrivateKey.generate()):
        a.AcmeSides(acme.pair, key=key).account()


def test_jws_payload_not_an_object(acme):
    acme.account()
    acme.both(lambda c, s: c.post(c.directory()["newOrder"], b"[1]"), 400, (
        "malformed", "failed to verify signature: failed to json unmarshal 'payload': json: cannot unmarshal array "
                     f"into Go value of type map[string]interface {{}}: {MALFORMED}"))


def test_tidy_acme_revokes_and_deletes_idle_accounts(acme):
    from test_parity_tidy import _counts, _tidy

    acme.account()
    gone = a.AcmeSides(acme.pair)
    gone.account()
    gone.both(lambda c, s: c.post(c.kid, {"status": "deactivated"}), 200)
    busy = a.AcmeSides(acme.pair)
    busy.account()
    busy.both(lambda c, s: c.new_order(["t.example.com"]), 201)  # a pending order keeps its account
    time.sleep(2.2)  # past the 1 s account safety buffer on both servers' clocks
    _tidy(acme.pair, {"tidy_acme": True, "acme_account_safety_buffer": "1s"})
    _counts(acme.pair, acme_account_revoked_count=1, acme_account_deleted_count=1, acme_orders_deleted_count=0,
            total_acme_account_count=0)
    acme.both(lambda c, s: c.new_order(["x.example.com"]), 401, (
        "unauthorized", "the client lacks sufficient authorization: account in status: revoked"))
    gone.both(lambda c, s: c.new_order(["x.example.com"]), 400, (
        "accountDoesNotExist", "failed to json unmarshal 'protected': account not found: the request specified an "
                               "account that does not exist"))
    busy.both(lambda c, s: c.new_order(["y.example.com"]), 201)


@pytest.mark.parametrize(("config", "prefix", "detail"), [
    ({"default_directory_policy": "forbid"}, "acme/", "default directory not allowed by ACME policy"),
    ({"default_directory_policy": "role:web"}, "acme/", None),
    ({"allowed_roles": ["web"]}, "roles/nostore/acme/", "role can not be used as NoStore is set to true"),
    ({"allowed_roles": ["web"]}, "roles/other/acme/", "specified role not allowed by ACME policy"),
    ({"allowed_issuers": ["default"]}, "issuer/default/acme/", None),
])
def test_directory_policies(web, config, prefix, detail):
    web.create_role("nostore", {"no_store": True, "allow_any_name": True})
    web.create_role("other", {"allow_any_name": True})
    a.enable(web, **config)
    sides = a.AcmeSides(web, prefix)
    if detail is None:
        sides.both(lambda c, s: c.request("GET", c.directory_url), 200)
        sides.account()
        sides.both(lambda c, s: c.new_order(["www.example.com"]), 201)
    else:
        sides.both(lambda c, s: c.request("GET", c.directory_url), 500, (
            "serverInternal", f"the server experienced an internal error: {detail}"))


def test_account_of_another_directory(acme):
    acme.account()
    other = a.AcmeSides(acme.pair, "roles/web/acme/", key=acme.key)
    for name, client in other.clients.items():
        client.kid = acme.clients[name].kid
    other.both(lambda c, s: c.new_order(["www.example.com"]), 400, (
        "malformed", "failed to json unmarshal 'protected': the request message was malformed: account part of "
                     "different ACME directory path"))


def test_post_as_get_on_the_account_and_key_change(acme):
    acme.account()
    acme.both(lambda c, s: c.post(c.kid), 200)  # upstream reads it as an update with no contact
    acme.both(lambda c, s: c.new_account(only_existing=True), 200)
    acme.both(lambda c, s: c.post(c.directory()["keyChange"], {}), 404)
    acme.both(lambda c, s: c.request("GET", c.directory()["keyChange"]), 404)
