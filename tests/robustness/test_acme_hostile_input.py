"""Hostile input at the ACME server that tests/robustness/test_acme_robustness.py does not send: JSON
nested past Go's 10000 levels inside the JWS (the outer body, the protected header, the signed
payload) and a signed request under any Content-Type. The expected answers were read off bao 2.7.2 with
the same requests (``bao server -dev``, a mount set up as tests/contract/acme_helpers.py sets it up):

* outer body nested too deep: 400 ``{"errors": ["failed to decode JSON input: exceeded max depth"]}``;
* protected header nested too deep: 500 serverInternal ``failed to json unmarshal 'protected': exceeded
  max depth`` (Go's text without the scanner's ``invalid character '['`` prefix);
* signed payload nested too deep: 400 malformed ``failed to verify signature: failed to json unmarshal
  'payload': exceeded max depth: the request message was malformed``;
* a valid signed new-order under ``application/json``, ``text/plain``, no Content-Type, a charset
  parameter or a form type: 201 (bao does not look at the Content-Type of a JWS request).
"""

from __future__ import annotations

import json

import pytest
import requests

from pytest_schedpki.acme import AcmeClient, b64url, enable_acme

DEPTH = 10001  # Go's encoding/json refuses nesting deeper than 10000


@pytest.fixture(scope="module")
def acme(double):
    s = requests.Session()
    s.headers["X-Vault-Token"] = double.root_token
    base = double.secrets_url
    s.post(f"{base}/v1/sys/mounts/acmehostile", json={"type": "pki"}).raise_for_status()
    s.post(f"{base}/v1/acmehostile/root/generate/internal", json={"common_name": "R", "key_type": "ec"}).raise_for_status()
    client = AcmeClient(enable_acme(base, "acmehostile", double.root_token))
    assert client.new_account(terms_agreed=True).status == 201
    return client


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _problem(answer) -> dict:
    assert answer.headers["content-type"] == "application/problem+json", answer.body[:300]
    return json.loads(answer.body)


def test_outer_body_nested_too_deep(double, acme):
    url = acme.directory()["newOrder"]
    answer = acme.request("POST", url, ('{"protected":' + _nested(DEPTH) + "}").encode(),
                          {"Content-Type": "application/jose+json"})
    assert answer.status == 400
    assert json.loads(answer.body) == {"errors": ["failed to decode JSON input: exceeded max depth"]}
    assert double.pop_handler_errors() == []


def test_protected_header_nested_too_deep(double, acme):
    url = acme.directory()["newOrder"]
    header = b64url('{"alg":"ES256","x":' + _nested(DEPTH) + "}")
    answer = acme.request("POST", url, json.dumps({"protected": header, "payload": "", "signature": ""}).encode(),
                          {"Content-Type": "application/jose+json"})
    assert answer.status == 500
    assert _problem(answer) == {"type": "urn:ietf:params:acme:error:serverInternal",
                                "detail": "failed to json unmarshal 'protected': exceeded max depth"}
    assert double.pop_handler_errors() == []


def test_signed_payload_nested_too_deep(double, acme):
    answer = acme.post(acme.directory()["newOrder"], ('{"identifiers":' + _nested(DEPTH) + "}").encode())
    assert answer.status == 400
    assert _problem(answer) == {"type": "urn:ietf:params:acme:error:malformed",
                                "detail": "failed to verify signature: failed to json unmarshal 'payload': exceeded "
                                          "max depth: the request message was malformed"}
    assert double.pop_handler_errors() == []


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", None, "application/jose+json; charset=utf-8",
                                          "application/x-www-form-urlencoded"])
def test_a_signed_request_under_any_content_type_is_read(double, acme, content_type):
    url = acme.directory()["newOrder"]
    body = json.dumps(acme.jws(url, {"identifiers": [{"type": "dns", "value": "localhost"}]})).encode()
    answer = acme.request("POST", url, body, {"Content-Type": content_type} if content_type else {})
    assert answer.status == 201, answer.body[:300]
    assert json.loads(answer.body)["status"] == "pending"
    assert double.pop_handler_errors() == []
