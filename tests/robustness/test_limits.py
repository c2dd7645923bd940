"""Limits as the upstream servers apply them, with their errors, and nothing changed by a refusal.

Secrets service (observed on OpenBao 2.7.2, ``bao server -dev``): ``max_request_size`` 32 MiB ->
``413 http: request body too large`` (with or without Content-Length, before the token check);
JSON complexity (``max_request_json_strings`` 1000, ``max_request_json_memory`` 32 MiB + 512 KiB)
-> ``400 refused JSON input due to high complexity: ...`` (before the token check); nesting up to
Go's 10000 levels decodes, deeper is ``exceeded max depth``. Scheduler (Nomad): names of 1..128
characters, blocking waits capped at 300 s; Nomad has no body size limit, the double refuses bodies
over 1 MiB with ``413 http: request body too large`` (docs/divergences.md)."""

from __future__ import annotations

import http.client
import json
import time

import pytest
from robust_helpers import RawClient, Reply, check_scheduler_reply, check_secrets_reply, secrets_fingerprint

from pytest_schedpki.scheduler import blocking

MiB = 1024 * 1024
LIMIT = 32 * MiB
ROOT_V = {"X-Vault-Token": "root"}
ROOT_S = {"X-Nomad-Token": "root"}


@pytest.fixture
def fresh(double):
    double.reset()
    double.secrets.enable_mount("pki")
    return double


def _role_body(size: int) -> bytes:
    """A valid role body of exactly ``size`` bytes (an ignored padding field fills it up)."""
    head, tail = b'{"allowed_domains":["example.com"],"padding":"', b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def _chunks(body: bytes, size: int = MiB):
    for i in range(0, len(body), size):
        yield body[i:i + size]


def _post(double, path: str, body: bytes, headers=ROOT_V, chunked: bool = False) -> Reply:
    """POST ``body`` with a Content-Length, or chunked in 1 MiB chunks (no length announced)."""
    if not chunked:
        client = RawClient(double.secrets_url, timeout=120)
        try:
            return client.request("POST", path, headers, body)
        finally:
            client.close()
    host, port = double.secrets_url.rsplit("/", 1)[-1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    try:
        conn.request("POST", path, body=_chunks(body), headers={**headers, "Transfer-Encoding": "chunked"},
                     encode_chunked=True)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_request_body_of_32_mib_is_accepted_and_one_byte_more_is_413(fresh, chunked):
    ok = _post(fresh, "/v1/pki/roles/big", _role_body(LIMIT), chunked=chunked)
    assert ok.status == 200, ok.text()[:300]
    before = secrets_fingerprint(fresh.secrets)
    too_big = _post(fresh, "/v1/pki/roles/bigger", _role_body(LIMIT + 1), chunked=chunked)
    assert (too_big.status, json.loads(too_big.body)) == (413, {"errors": ["http: request body too large"]})
    assert secrets_fingerprint(fresh.secrets) == before


def test_body_size_is_checked_before_the_token(fresh):
    reply = _post(fresh, "/v1/pki/roles/big", _role_body(LIMIT + 1), headers={})
    assert (reply.status, json.loads(reply.body)) == (413, {"errors": ["http: request body too large"]})


def _strings(count: int) -> bytes:
    """A role body with exactly ``count`` JSON strings (keys included)."""
    return json.dumps({"allowed_domains": "example.com", **{f"k{i}": 1 for i in range(count - 2)}}).encode()


def test_one_thousand_json_strings_pass_and_one_more_is_refused_before_the_token(fresh):
    assert _post(fresh, "/v1/pki/roles/ok", _strings(1000)).status == 200
    before = secrets_fingerprint(fresh.secrets)
    for headers in (ROOT_V, {}):
        reply = _post(fresh, "/v1/pki/roles/no", _strings(1001), headers=headers)
        check_secrets_reply(reply, "POST")
        assert (reply.status, json.loads(reply.body)["errors"]) == (
            400, ["refused JSON input due to high complexity: exceeded maximum number of strings"])
    assert secrets_fingerprint(fresh.secrets) == before


def test_the_string_limit_wins_over_a_later_syntax_error(fresh):
    reply = _post(fresh, "/v1/pki/roles/no", _strings(1001)[:-1] + b', "broken": }')
    assert json.loads(reply.body)["errors"] == [
        "refused JSON input due to high complexity: exceeded maximum number of strings"]
    reply = _post(fresh, "/v1/pki/roles/no", b'{"a": tru, ' + _strings(1001)[1:])
    assert json.loads(reply.body)["errors"] == [
        "failed to decode JSON input: invalid character ',' in literal true (expecting 'e')"]


def test_estimated_json_memory_over_the_limit_is_refused(fresh):
    numbers = b'{"allowed_domains":[' + b",".join([b"1"] * 1_500_000) + b"]}"  # 1.5M numbers x 24 bytes
    reply = _post(fresh, "/v1/pki/roles/no", numbers)
    assert (reply.status, json.loads(reply.body)["errors"]) == (
        400, ["refused JSON input due to high complexity: exceeded maximum estimated memory limits"])


@pytest.mark.parametrize(("depth", "error"), [
    (999, "failed to decode JSON input: json: cannot unmarshal array into Go value of type map[string]interface {}"),
    (10_000, "failed to decode JSON input: json: cannot unmarshal array into Go value of type map[string]interface {}"),
    (10_001, "failed to decode JSON input: exceeded max depth"),
])
def test_nesting_depth_as_go_decodes_it(fresh, depth, error):
    reply = _post(fresh, "/v1/pki/roles/deep", b"[" * depth + b"]" * depth)
    check_secrets_reply(reply, "POST")
    assert (reply.status, json.loads(reply.body)["errors"]) == (400, [error])


def test_deeply_nested_but_simple_objects_are_accepted(fresh):
    body = b'{"allowed_domains":"example.com","a":' + b'{"a":' * 900 + b"1" + b"}" * 901
    reply = _post(fresh, "/v1/pki/roles/deep", body)
    assert reply.status == 200, reply.text()[:300]
    assert "Endpoint ignored these unrecognized parameters: [a]" in json.loads(reply.body)["warnings"]
    deep_array = b'{"allowed_domains":"example.com","a":' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert _post(fresh, "/v1/pki/roles/deeper", deep_array).status == 200


# -- scheduler ----------------------------------------------------------------------------------

def _method(name: str, **extra) -> bytes:
    return json.dumps({"Name": name, "Type": "JWT", "TokenLocality": "global", "MaxTokenTTL": "1h",
                       "Config": {"JWKSURL": "https://idp.example.com/jwks", "BoundAudiences": ["a"]}, **extra}).encode()


def _put(double, body: bytes):
    client = RawClient(double.scheduler_url, timeout=120)
    try:
        reply = client.request("PUT", "/v1/acl/auth-method", ROOT_S, body)
    finally:
        client.close()
    check_scheduler_reply(reply, "PUT")
    return reply


def test_auth_method_names_are_limited_to_128_characters(fresh):
    assert _put(fresh, _method("n" * 128)).status == 200
    index = fresh.scheduler.last_index
    reply = _put(fresh, _method("n" * 129))
    assert (reply.status, reply.text()) == (400, f"auth method 0 invalid: 1 error occurred:\n\t* invalid name '{'n' * 129}'\n\n")
    assert fresh.scheduler.last_index == index


def _padded_method(name: str, size: int) -> bytes:
    """A valid auth-method body of exactly ``size`` bytes (an ignored padding field fills it up)."""
    body = _method(name, Padding="")
    return body[:-2] + b"x" * (size - len(body)) + body[-2:]


def test_scheduler_bodies_up_to_1_mib_are_accepted_and_one_byte_more_is_413(fresh):
    assert _put(fresh, _padded_method("big", MiB)).status == 200
    index = fresh.scheduler.last_index
    reply = _put(fresh, _padded_method("bigger", MiB + 1))
    assert (reply.status, reply.text()) == (413, "http: request body too large")
    assert fresh.scheduler.last_index == index


def test_blocking_waits_are_capped(monkeypatch, fresh):
    assert blocking.wait_seconds(0) == blocking.wait_seconds(-1) == 300
    assert blocking.wait_seconds(301 * blocking.SECOND) == 300
    assert blocking.wait_seconds(10 * 1_000_000) == 0.01
    # over HTTP, with the cap lowered so the test stays short: a wait of 1000h ends at the cap
    monkeypatch.setattr(blocking, "MAX_QUERY_TIME_NS", int(0.3 * blocking.SECOND))
    client = RawClient(fresh.scheduler_url, timeout=10)
    try:
        index = int(client.request("GET", "/v1/acl/auth-methods", ROOT_S).headers["x-nomad-index"])
        started = time.monotonic()
        reply = client.request("GET", f"/v1/acl/auth-methods?index={index}&wait=1000h", ROOT_S)
        took = time.monotonic() - started
    finally:
        client.close()
    assert reply.status == 200 and reply.headers["x-nomad-index"] == str(index)
    assert 0.29 <= took < 0.3 * (1 + 1 / 16) + 0.5


def test_a_body_over_the_memory_limit_is_refused_without_decoding_its_numbers(monkeypatch):
    """The complexity limits are checked before the body is decoded: a 30 MiB body of numbers used to be
    decoded number by number (~10 s of CPU, holding the interpreter lock) before it was refused."""
    from pytest_schedpki.secrets import jsonbody
    from pytest_schedpki.secrets.framework.logical import LogicalError

    made = []

    def counting_number(text):
        made.append(text)
        return jsonbody.JsonNumber(text)

    monkeypatch.setattr(jsonbody, "_DECODER", json.JSONDecoder(parse_int=counting_number, parse_float=counting_number,
                                                               parse_constant=jsonbody._refuse_constant))
    body = b'{"allowed_domains":[' + b",".join([b"1"] * 15_000_000) + b"]}"
    with pytest.raises(LogicalError) as refused:
        jsonbody.parse_json_body(body)
    assert (refused.value.status, refused.value.errors) == (
        400, ["refused JSON input due to high complexity: exceeded maximum estimated memory limits"])
    assert made == []
    # a body under the limits is still decoded (with the same decoder)
    assert jsonbody.parse_json_body(b'{"ttl": 5}') == {"ttl": "5"} and made == ["5"]
