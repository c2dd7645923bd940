"""Hostile requests at the ACME server (Hypothesis): bodies of every sort, JWS parts that are bad
base64 or bad JSON, headers of any shape, signed payloads of any shape, and huge bodies. Every answer
is an ACME problem document (``application/problem+json``, ``type``/``detail`` only) or an OpenBao
error, never a traceback; a 500 is only one of the ``serverInternal`` problems upstream gives for the
same input (Go's own JSON and JOSE errors, an unknown issuer/role policy), and the nonce store stays
bounded."""

from __future__ import annotations

import json

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st
from robust_helpers import RawClient, hostile_bodies, json_values, robust

from pytest_schedpki.acme import AcmeClient, b64url, enable_acme
from pytest_schedpki.secrets.engines.pki.acme import state as acme_state

PROBLEM = "application/problem+json"
#: the detail prefixes of the serverInternal (500) problems upstream answers for client input
SERVER_INTERNAL = ("failed to json unmarshal 'protected': ", "failed to verify signature: go-jose/go-jose: ",
                   "failed to json unmarshal eab 'protected': ", "go-jose/go-jose: error in cryptographic primitive")
MAX_BODY = 32 * 1024 * 1024


@pytest.fixture(scope="module")
def acme(double):
    s = requests.Session()
    s.headers["X-Vault-Token"] = double.root_token
    base = double.secrets_url
    s.post(f"{base}/v1/sys/mounts/acmefuzz", json={"type": "pki"}).raise_for_status()
    s.post(f"{base}/v1/acmefuzz/root/generate/internal", json={"common_name": "R", "key_type": "ec"}).raise_for_status()
    directory = enable_acme(base, "acmefuzz", double.root_token)
    client = AcmeClient(directory)
    assert client.new_account().status == 201
    double.save_baseline()
    return client


def _check(reply, context: str) -> None:
    text = reply.body[:4000].decode("utf-8", "replace")
    where = f"{context} -> {reply.status} {text[:400]!r}"
    assert "Traceback" not in text and "<html" not in text.lower(), where
    assert "internal error in the double" not in text, where
    content_type = reply.headers.get("content-type", "")
    if reply.status >= 400 and content_type == PROBLEM:
        problem = json.loads(reply.body)
        assert list(problem) == ["type", "detail"], where
        assert problem["type"].startswith("urn:ietf:params:acme:error:"), where
        if reply.status >= 500:
            assert problem["type"].endswith(":serverInternal"), where
            assert problem["detail"].startswith(SERVER_INTERNAL), where
    elif reply.status >= 400:
        assert content_type == "application/json", where
        payload = json.loads(reply.body)
        assert list(payload) == ["errors"], where
        assert reply.status in (400, 403, 404, 405, 413), where
    else:
        assert reply.status in (200, 201, 204), where


def _paths(acme) -> list[str]:
    base = acme.directory_url.rsplit("/", 1)[0].split("/v1/", 1)[1]
    zero = "00000000-0000-0000-0000-000000000000"
    return [f"/v1/{base}/{p}" for p in ("new-account", "new-order", "revoke-cert", f"account/{zero}", "orders",
                                         f"order/{zero}", f"order/{zero}/finalize", f"authorization/{zero}",
                                         f"challenge/{zero}/http-01", "key-change")]


@robust(60)
@given(path_index=st.integers(0, 9), body=hostile_bodies(["protected", "payload", "signature"]))
def test_hostile_bodies(double, acme, path_index, body):
    client = RawClient(double.secrets_url)
    try:
        path = _paths(acme)[path_index]
        _check(client.request("POST", path, {"Content-Type": "application/jose+json"}, body), f"POST {path} {body[:80]!r}")
    finally:
        client.close()


b64_parts = st.one_of(st.text(max_size=40), st.binary(max_size=60).map(b64url),
                      json_values.map(lambda v: b64url(json.dumps(v))),
                      st.dictionaries(st.sampled_from(["alg", "jwk", "kid", "nonce", "url"]), json_values,
                                      max_size=5).map(lambda d: b64url(json.dumps(d))))


@robust(80)
@given(protected=b64_parts, payload=b64_parts, signature=b64_parts)
def test_jws_parts_of_any_sort(double, acme, protected, payload, signature):
    client = RawClient(double.secrets_url)
    try:
        path = _paths(acme)[1]
        body = json.dumps({"protected": protected, "payload": payload, "signature": signature}).encode()
        _check(client.request("POST", path, {"Content-Type": "application/jose+json"}, body), body[:200].decode())
    finally:
        client.close()


@robust(60)
@given(payload=st.one_of(json_values, st.dictionaries(
    st.sampled_from(["identifiers", "csr", "certificate", "reason", "contact", "status", "onlyReturnExisting",
                     "externalAccountBinding", "termsOfServiceAgreed", "notBefore", "notAfter"]), json_values,
    max_size=4)), path_index=st.integers(0, 8))
def test_signed_payloads_of_any_shape(double, acme, payload, path_index):
    url = acme.directory_url.rsplit("/v1/", 1)[0] + _paths(acme)[path_index]
    answer = acme.post(url, json.dumps(payload).encode(), use_jwk=path_index == 0 or None)
    _check(answer, f"{url} {payload!r}"[:300])


def test_huge_bodies_are_refused_or_parsed(double, acme):
    client = RawClient(double.secrets_url, timeout=120)
    try:
        path = _paths(acme)[1]
        big = json.dumps({"protected": "A" * (8 * 1024 * 1024), "payload": "", "signature": ""}).encode()
        _check(client.request("POST", path, {"Content-Type": "application/jose+json"}, big), "8 MiB protected")
        reply = client.request("POST", path, {"Content-Type": "application/jose+json"}, b" " * (MAX_BODY + 1))
        assert reply.status == 413
    finally:
        client.close()


def test_nonces_stay_bounded(double, acme, monkeypatch):
    monkeypatch.setattr(acme_state, "MAX_NONCES", 50)
    for _ in range(200):
        acme.new_nonce()
    for mount in double.secrets.mounts.values():
        runtime = vars(mount.backend).get("acme_runtime")
        if runtime is not None:
            assert len(runtime.nonces._issued) <= 50


def test_a_refused_eab_write_leaves_no_key(double, acme):
    s = requests.Session()
    s.headers["X-Vault-Token"] = double.root_token
    mount = acme.directory_url.rsplit("/v1/", 1)[1].split("/")[0]
    before = s.request("LIST", f"{double.secrets_url}/v1/{mount}/eab").status_code
    assert s.post(f"{double.secrets_url}/v1/{mount}/acme/new-eab/", json={}).status_code == 400
    assert s.request("LIST", f"{double.secrets_url}/v1/{mount}/eab").status_code == before
