"""Hostile requests at the scheduler (Hypothesis): every answer has Nomad's status and plain-text
error shape, never a traceback, an HTML page or a 500 other than Nomad's own (``ACL auth method not
found``, ``No path to region``, ``No cluster leader``); a rejected write changes no state (a delete
of an unknown name consumes one raft index, as upstream) and an accepted one exactly one index."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st
from robust_helpers import (
    RawClient,
    check_scheduler_reply,
    header_text,
    hostile_bodies,
    json_values,
    quote_path,
    robust,
    scheduler_fingerprint,
    seed_scheduler,
)

NAMES = ["okta", "jwt-default", "new-method", "a" * 128, "a" * 129, "", "bad name", "ünï", "a.b", "-", "x_y", "A-1"]
DURATIONS = ["1h", "0", "", "-1h", "1ms", "59s", "1m", "24h", "24h0m1s", "100000h", "soon", "1.5h", " 1h"]
CONFIG_STRINGS = ["https://idp.example.com", "", "not a url", "http://[::1", "client-id", "${x}"]
CONFIG_FIELDS = {
    "JWTValidationPubKeys": "strings", "JWKSURL": "string", "OIDCDiscoveryURL": "string", "OIDCClientID": "string",
    "OIDCClientSecret": "string", "OIDCEnablePKCE": "bool", "OIDCDisableUserInfo": "bool", "OIDCScopes": "strings",
    "BoundAudiences": "strings", "BoundIssuer": "strings", "AllowedRedirectURIs": "strings", "DiscoveryCaPem": "strings",
    "JWKSCACert": "string", "SigningAlgs": "strings", "ExpirationLeeway": "duration", "NotBeforeLeeway": "duration",
    "ClockSkewLeeway": "duration", "ClaimMappings": "map", "ListClaimMappings": "map", "VerboseLogging": "bool",
    "OIDCClientAssertion": "assertion",
}
ASSERTION_FIELDS = {"KeySource": ["nomad", "private_key", "client_secret", "", "bogus"],
                    "Audience": [["https://idp.example.com"], [], "x"], "KeyAlgorithm": ["RS256", "ES256", "", "none"],
                    "ClientSecret": ["s" * 32, "short", ""], "ExtraHeaders": [{"kid": "x"}, {}, {"typ": 1}]}
KEY_FILES = ["/nonexistent/key.pem", "/", "/etc/hostname", "", "relative/path.pem"]


@pytest.fixture(scope="module")
def baseline(double):
    seed_scheduler(double)


def _typed(kind: str, draw) -> object:
    if kind == "string":
        return draw(st.sampled_from(CONFIG_STRINGS) | st.text(max_size=20))
    if kind == "strings":
        return draw(st.lists(st.sampled_from(CONFIG_STRINGS) | st.text(max_size=10), max_size=3))
    if kind == "bool":
        return draw(st.booleans())
    if kind == "duration":
        return draw(st.sampled_from(DURATIONS) | st.integers(-(2 ** 64), 2 ** 64))
    if kind == "map":
        return draw(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3))
    assertion = {k: draw(st.sampled_from(v)) for k, v in ASSERTION_FIELDS.items() if draw(st.booleans())}
    if draw(st.booleans()):
        assertion["PrivateKey"] = {
            k: draw(st.sampled_from(v)) for k, v in {
                "PemKey": ["", "not a key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"],
                "PemKeyFile": KEY_FILES, "PemCert": ["", "garbage"], "PemCertFile": KEY_FILES,
                "KeyID": ["kid", ""], "KeyIDHeader": ["kid", "x5t", ""]}.items() if draw(st.booleans())}
    return assertion


def _method_body(draw) -> dict:
    body: dict = {}
    if draw(st.integers(0, 5)):
        body["Name"] = draw(st.sampled_from(NAMES) | st.text(max_size=12))
    fields = {
        "Type": st.sampled_from(["OIDC", "JWT", "oidc", "", "LDAP"]),
        "TokenLocality": st.sampled_from(["local", "global", "", "x"]),
        "TokenNameFormat": st.sampled_from(["${auth_method_type}-${claim.sub}", "", "x"]),
        "MaxTokenTTL": st.sampled_from(DURATIONS) | st.integers(-(2 ** 64), 2 ** 64),
        "Default": st.booleans(),
        "CreateTime": st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456789+02:00", "garbage", ""]),
        "ModifyIndex": st.integers(-5, 2 ** 65), "Hash": st.sampled_from(["", "AAAA", "!!"]),
    }
    for name, strategy in fields.items():
        if draw(st.booleans()):
            body[name] = draw(strategy) if draw(st.integers(0, 5)) else draw(json_values)
    if draw(st.integers(0, 3)):
        config = {}
        for name in draw(st.lists(st.sampled_from(sorted(CONFIG_FIELDS)), max_size=6, unique=True)):
            config[name] = _typed(CONFIG_FIELDS[name], draw) if draw(st.integers(0, 5)) else draw(json_values)
        body["Config"] = config if draw(st.integers(0, 9)) else draw(json_values)
    if draw(st.integers(0, 9)) == 0:  # Go matches keys case-insensitively
        body = {k.lower() if draw(st.booleans()) else k: v for k, v in body.items()}
    if draw(st.integers(0, 9)) == 0:
        body[draw(st.text(max_size=8))] = draw(json_values)
    return body


def _query(draw, method: str) -> dict:
    query: dict = {}
    if method != "GET" or not draw(st.booleans()):
        return query
    if draw(st.booleans()):  # a blocking query: always with a short wait (upstream caps waits at 300s)
        query["index"] = draw(st.sampled_from(["1", "2", "3", "4", "99", "0", "-1", "x", "18446744073709551616"]))
        query["wait"] = draw(st.sampled_from(["10ms", "1ms", "30ms", "abc", "5"]))
    elif draw(st.booleans()):
        query["wait"] = draw(st.sampled_from(DURATIONS))
    for name, values in {"stale": ["", "true", "false", "maybe", "1"], "per_page": ["", "10", "-1", "x", "99999999999"],
                         "region": ["global", "", "nope", "eu"], "pretty": ["", "1", "0"],
                         "next_token": ["x", ""]}.items():
        if draw(st.integers(0, 3)) == 0:
            query[name] = draw(st.sampled_from(values))
    return query


def _headers(draw) -> dict:
    token = draw(st.sampled_from(["root", "root", "root", "client-secret", "bogus", "", None]))
    header = draw(st.sampled_from(["X-Nomad-Token", "X-Scheduler-Token", "Authorization", "x-nomad-token"]))
    headers = {}
    if token is not None:
        headers[header] = f"Bearer {token}" if header == "Authorization" else token
    if draw(st.integers(0, 3)) == 0:
        headers["Content-Type"] = draw(st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded"])
                                       | header_text)
    return headers


def _exchange(double, method, target, headers, body, context):
    before = scheduler_fingerprint(double.scheduler)
    raft, methods = double.scheduler.last_index, dict(double.scheduler.authoritative_view().methods)
    client = RawClient(double.scheduler_url)
    try:
        reply = client.request(method, target, headers, body)
    finally:
        client.close()
    check_scheduler_reply(reply, method, context)
    errors = double.pop_handler_errors()
    assert not errors, "\n".join(map(str, errors))
    if reply.status == 200 and method in ("PUT", "POST", "DELETE"):
        assert double.scheduler.last_index == raft + 1, context
        assert reply.headers.get("x-nomad-index") == str(raft + 1), context
    elif reply.status == 500 and reply.text() == "ACL auth method not found":
        assert double.scheduler.last_index == raft + 1, context
        assert dict(double.scheduler.authoritative_view().methods) == methods, context
    elif reply.status != 200:
        assert scheduler_fingerprint(double.scheduler) == before, f"rejected request changed state: {context}"
    else:
        assert scheduler_fingerprint(double.scheduler) == before, f"a read changed state: {context}"
    return reply


def _setup(double, draw) -> None:
    double.reset()
    situation = draw(st.sampled_from(["normal"] * 8 + ["no-leader", "acl-off"]), label="situation")
    if situation == "no-leader":
        double.scheduler.set_leader(False)
    elif situation == "acl-off":
        double.scheduler.set_acl_enabled(False)


@robust(500)
@given(data=st.data())
def test_auth_method_requests_answer_as_nomad_and_rejected_writes_change_nothing(double, baseline, data):
    draw = data.draw
    _setup(double, draw)
    method = draw(st.sampled_from(["PUT", "POST", "PUT", "GET", "GET", "DELETE", "PATCH", "HEAD"]), label="method")
    name = draw(st.sampled_from(NAMES) | st.text(max_size=12), label="name")
    path = draw(st.sampled_from(["/v1/acl/auth-method", "/v1/acl/auth-method/" + name, "/v1/acl/auth-methods",
                                 "/v1/acl/auth-method/" + name + "/", "//v1/acl/auth-method/" + name,
                                 "/v1/acl/auth-methods/x"]), label="path")
    body = json.dumps(_method_body(draw)).encode() if method in ("PUT", "POST") and draw(st.integers(0, 5)) else None
    if method in ("PUT", "POST") and body is None and draw(st.booleans()):
        body = draw(hostile_bodies(["Name", "MaxTokenTTL", "Config", "Type"]))
    query = _query(draw, method)
    target = quote_path(path) + ("?" + urllib.parse.urlencode(query) if query else "")
    _exchange(double, method, target, _headers(draw), body, f"{method} {target} {body!r:.400}")


@robust(300)
@given(data=st.data())
def test_transport_garbage_gets_nomad_shaped_answers(double, baseline, data):
    draw = data.draw
    _setup(double, draw)
    method = draw(st.sampled_from(["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "get", "LIST"])
                  | st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8), label="method")
    segments = draw(st.lists(st.text(max_size=12) | st.sampled_from(["v1", "acl", "auth-method", "auth-methods", "okta",
                                                                       "", ".", ".."]), max_size=6))
    prefix = draw(st.sampled_from(["/v1/acl/", "/v1/acl/auth-method/", "/", "//v1//acl/", "/v1/"]))
    path = prefix + "/".join("x" + s if s.startswith("_schedpki") else s for s in segments)
    query = draw(st.lists(st.tuples(st.sampled_from(["stale", "wait", "per_page", "region", "pretty", "filter"])
                                    | st.text(max_size=6), st.text(max_size=10)), max_size=3))
    body = draw(hostile_bodies(["Name", "MaxTokenTTL", "Config"]), label="body")
    target = quote_path(path) + ("?" + urllib.parse.urlencode(query) if query else "")
    _exchange(double, method, target, _headers(draw), body, f"{method} {target} {body!r:.300}")
