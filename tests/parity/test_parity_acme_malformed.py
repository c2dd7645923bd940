"""Parity: malformed ACME requests - bodies that are no JWS, headers of the wrong JSON types, keys
the JOSE layer refuses, payloads of the wrong shape - each answered as bao answers (status, problem
type and detail)."""

from __future__ import annotations

import json

import acme_parity as a
import pytest

from pytest_schedpki.acme import b64url, jwk_of

pytestmark = pytest.mark.parity

MALFORMED = "the request message was malformed"


@pytest.fixture
def acme(web):
    a.enable(web)
    sides = a.AcmeSides(web)
    sides.account()
    return sides


def _raw(c, url, body, content_type="application/jose+json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return c.request("POST", url, data, {"Content-Type": content_type})


def _signed_header(c, header: dict, payload: bytes = b"{}") -> dict:
    """A JWS whose protected header is ``header`` as given, signed with the client's key."""
    from jwt.algorithms import get_default_algorithms
    protected, encoded = b64url(json.dumps(header)), b64url(payload)
    signature = get_default_algorithms()[c.alg].sign(f"{protected}.{encoded}".encode(), c.key)
    return {"protected": protected, "payload": encoded, "signature": b64url(signature)}


@pytest.mark.parametrize("body", [b"", b"not json", b"[]", b'{"protected": 5}', b'{"protected": "", "payload": ""}',
                                  b'{"protected": "e30", "payload": "e30", "signature": ""}'],
                         ids=["empty", "text", "array", "number", "empty-protected", "empty-header"])
def test_bodies_that_are_no_jws(acme, body):
    acme.both(lambda c, s: _raw(c, c.directory()["newAccount"], body), label=repr(body))


@pytest.mark.parametrize("header", [
    {"alg": 5, "jwk": {}}, {"alg": "ES256", "kid": 7}, {"alg": "ES256", "nonce": 1, "jwk": {}},
    {"alg": "none", "jwk": {"kty": "EC"}}, {"alg": "ES256", "jwk": {"kty": "XX"}},
    {"alg": "ES256", "jwk": {"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}}, {"alg": "ES256", "jwk": "x"},
    {"alg": "ES256", "jwk": {"kty": "EC", "crv": "P-999"}}, {"alg": "ES256", "jwk": {"kty": "EC", "crv": "P-256"}},
    {"alg": "ES256", "jwk": {"kty": "EC", "crv": "P-256", "x": "!!", "y": "AA"}},
    {"alg": "ES256", "jwk": {"kty": "EC", "crv": "P-256", "x": "A" * 43, "y": "A" * 43}},
    {"alg": "RS256", "jwk": {"kty": "RSA"}}, {"alg": "EdDSA", "jwk": {"kty": "OKP", "crv": "X25519", "x": "AA"}},
    {"alg": "EdDSA", "jwk": {"kty": "OKP", "crv": "Ed25519"}},
    {"alg": "EdDSA", "jwk": {"kty": "OKP", "crv": "Ed25519", "x": "AA"}},
], ids=["alg-number", "kid-number", "nonce-number", "alg-none", "kty-unknown", "point-invalid", "jwk-string",
        "crv-unknown", "ec-no-xy", "ec-bad-base64", "ec-off-curve", "rsa-no-n", "okp-x25519", "okp-no-x", "okp-short"])
def test_headers_of_the_wrong_shape(acme, header):
    def send(c, s):
        full = {"url": c.directory()["newAccount"], "nonce": c.new_nonce(), **header}
        return _raw(c, c.directory()["newAccount"], _signed_header(c, full))
    acme.both(send, label=json.dumps(header))


@pytest.mark.parametrize("payload", [b"null", b"5", b'"x"', b"{", b'{"identifiers": "x"}', b'{"identifiers": [5]}',
                                     b'{"identifiers": [{"value": "a"}]}', b'{"identifiers": [{"type": 1}]}',
                                     b'{"identifiers": [{"type": "dns"}]}', b'{"identifiers": [{"type": "dns", "value": 2}]}',
                                     b'{"identifiers": [], "notAfter": "2030-01-01T00:00:00Z"}',
                                     b'{"identifiers": [], "notBefore": 5}',
                                     b'{"identifiers": [], "notAfter": "yesterday"}',
                                     b'{"identifiers": [], "notBefore": "2030-13-01T00:00:00Z", "notAfter": 5}',
                                     b'{"identifiers": [], "notBefore": "2030-01-01T00:00:00Z", "notAfter": "x"}',
                                     b'{"identifiers": [], "notAfter": "0001-01-01T00:00:00Z"}',
                                     b'{"identifiers": [], "notAfter": "0001-01-01T01:00:00+01:00"}',
                                     b'{"identifiers": [], "notAfter": "0001-01-01T00:00:00+01:00"}',
                                     b'{"identifiers": [], "notAfter": "0000-01-01T00:00:00Z"}',
                                     b'{"identifiers": [], "notAfter": "9999-12-31T23:59:59-01:00"}',
                                     b'{"identifiers": [], "notAfter": "2030-01-01T00:00:00Zjunk"}',
                                     b'{"identifiers": [{"type": "dns", "value": 2}], "notAfter": "x"}'])
def test_new_order_payloads(acme, payload):
    acme.both(lambda c, s: c.post(c.directory()["newOrder"], payload), label=payload.decode())


@pytest.mark.parametrize("payload", [b'{"contact": [5]}', b'{"termsOfServiceAgreed": "yes"}', b'{"status": 5}',
                                     b'{"externalAccountBinding": 5}', b'{"onlyReturnExisting": 1}'])
def test_account_payloads(acme, payload):
    acme.both(lambda c, s: c.post(c.kid, payload), label=payload.decode())


@pytest.mark.parametrize("payload", [b'{"csr": 5}', b'{"csr": "***"}', b'{"csr": "AAAA"}'])
def test_finalize_payloads(acme, payload):
    orders = acme.both(lambda c, s: c.new_order(["f.example.com"]), 201)
    acme.both(lambda c, s: c.post(orders[s.name].json()["finalize"], payload), label=payload.decode())


def test_unknown_order_authorization_and_challenge(acme):
    base = {n: c.directory_url.rsplit("/", 1)[0] for n, c in acme.clients.items()}
    zero = "00000000-0000-0000-0000-000000000000"
    for path in (f"order/{zero}", f"order/{zero}/finalize", f"order/{zero}/cert", f"authorization/{zero}",
                 f"challenge/{zero}/http-01"):
        acme.both(lambda c, s, p=path: c.post(f"{base[s.name]}/{p}", {} if "finalize" in p else None), label=path)


def test_another_accounts_order(acme):
    orders = acme.both(lambda c, s: c.new_order(["o.example.com"]), 201)
    other = a.AcmeSides(acme.pair)
    other.account()
    other.both(lambda c, s: c.post(orders[s.name].headers["location"]), 400, (
        "malformed", f"order does not exist: {MALFORMED}"))


def test_payload_with_unprotected_jwk_and_extra_fields(acme):
    def send(c, s):
        body = c.jws(c.directory()["newOrder"], {"identifiers": [{"type": "dns", "value": "u.example.com"}]})
        body["header"] = {"jwk": jwk_of(c.key)}
        return _raw(c, c.directory()["newOrder"], body)
    acme.both(send, label="unprotected header")
