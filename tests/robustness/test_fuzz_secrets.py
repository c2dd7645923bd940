"""Hostile requests at the secrets service (Hypothesis): every answer has OpenBao's status and
``{"errors": [...]}`` shape, never a traceback, an HTML page or a 500 of the double's own making,
and a rejected request changes no state.

Three properties: endpoint-aware requests (each route's own fields with typed and ill-typed values,
in bodies or query strings), transport-level garbage (any verb, path, header and body bytes), and
malformed PEM / CSR / DER at every endpoint that parses them."""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st
from robust_helpers import (
    RawClient,
    check_secrets_reply,
    header_text,
    hostile_bodies,
    json_values,
    mutated_pem,
    quote_path,
    robust,
    secrets_fingerprint,
    seed_secrets,
)

from pytest_schedpki.secrets.system.routes import SYS_ROUTER, TOKEN_ROUTER

# a country of any length is accepted (as upstream); cryptography warns about it
pytestmark = pytest.mark.filterwarnings("ignore:Attribute's length must be")

PKI_PATHS = [
    "issuers", "issuer/{issuer}", "config/issuers", "keys", "keys/generate/{gen}", "keys/import", "key/{key}",
    "config/keys", "root/generate/{gen}", "issuers/generate/root/{gen}", "root/rotate/{gen}",
    "intermediate/generate/{gen}", "issuers/generate/intermediate/{gen}", "root", "intermediate/set-signed",
    "config/ca", "issuers/import/{imp}", "crl", "crl/pem", "cert/crl", "crl/delta", "crl/delta/pem",
    "cert/delta-crl", "crl/rotate", "crl/rotate-delta", "issuer/{issuer}/crl", "issuer/{issuer}/crl/delta/pem",
    "issuer/{issuer}/crl/der", "config/crl", "ca", "ca/pem", "ca_chain", "cert/ca", "cert/ca_chain", "cert/ca/raw",
    "cert/ca/raw/pem", "issuer/{issuer}/json", "issuer/{issuer}/pem", "issuer/{issuer}/der", "config/urls", "roles",
    "roles/{role}", "issue/{role}", "sign/{role}", "issuer/{issuer}/issue/{role}", "issuer/{issuer}/sign/{role}",
    "root/sign-intermediate", "issuer/{issuer}/sign-intermediate", "root/sign-self-issued",
    "issuer/{issuer}/sign-self-issued", "sign-verbatim", "sign-verbatim/{role}", "issuer/{issuer}/sign-verbatim",
    "issuer/{issuer}/sign-verbatim/{role}", "cert/{serial}", "cert/{serial}/raw", "cert/{serial}/raw/pem", "certs",
    "revoke", "revoke-with-key", "certs/revoked", "cert-metadata/{serial}", "cert-metadata", "tidy", "tidy-status",
    "{junk}", "issue/{role}/{junk}",
]
SYS_PATHS = [
    "sys/mounts", "sys/mounts/{mount}", "sys/mounts/{mount}/tune", "sys/policies/acl", "sys/policies/acl/{policy}",
    "sys/policy", "sys/policy/{policy}", "sys/health", "sys/seal-status", "sys/wrapping/unwrap",
    "sys/wrapping/lookup", "sys/internal/ui/mounts/{mount}", "auth/token/create", "auth/token/create-orphan",
    "auth/token/lookup-self", "auth/token/lookup", "auth/token/renew-self", "auth/token/{junk}", "sys/{junk}",
    "{junk}/{junk}",
]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "LIST", "HEAD", "OPTIONS"]
READS = {"GET", "LIST", "HEAD", "DELETE"}

DURATIONS = ["1h", "30m", "0", "0s", "-1h", "87600h", "9999999999h", "1d", "soon", "", " 1h", "1h30m", "1.5h",
             "3600", "-5", "1e3", "720h"]
NAMES = ["a.example.com", "*.example.com", "example.com", "localhost", "evil.org", "foo@example.com",
         "xn--bcher-kva.example.com", "bücher.example.com", "", " ", "a..b.example.com", "-a.example.com",
         "a.example.com,b.example.com", "*", "a" * 300 + ".example.com", "127.0.0.1", "*.*.example.com"]
IPS = ["127.0.0.1", "::1", "300.1.1.1", "fe80::1%eth0", "abc", "10.0.0.0/8", "127.0.0.1,::1", ""]
TIMES = ["2099-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2000-01-01T00:00:00Z", "garbage", "2030-02-30T00:00:00Z",
         "2031-01-01T00:00:00+25:00", "", "0001-01-01T00:00:00Z"]
SAFE_INTS = st.integers(-(2 ** 66), 2 ** 66).filter(lambda n: n not in (3072, 4096, 8192))
BOOLISH = st.booleans() | st.sampled_from(["true", "false", "maybe", "1", "0", "", 2, -1, "T"])
POLICIES = ['path "pki/*" { capabilities = ["read"] }', 'path "*" { capabilities = ["sudo", "update"] }',
            '{"path": {"pki/*": {"capabilities": ["list"]}}}', 'path "x" {', "garbage", 'path "a" { policy = "deny" }']


@pytest.fixture(scope="module")
def baseline(double):
    return seed_secrets(double)


def _fill(template: str, draw, base) -> str:
    values = {
        "issuer": st.sampled_from(["default", base.root_a["issuer_id"], "root-a", "root-b", "nope", "a" * 200,
                                   base.root_b["issuer_id"], "-x", "x.y"]) | st.text(max_size=10),
        "role": st.sampled_from(["web", "rsa", "nope", "a-b_c.d", "x" * 200]) | st.text(max_size=10),
        "serial": st.sampled_from([base.leaf["serial_number"], base.revoked_serial, base.root_a["serial_number"],
                                   base.leaf["serial_number"].replace(":", "-").upper(), "01:02", "zz", "ca"])
        | st.text("0123456789abcdef:-", max_size=60),
        "gen": st.sampled_from(["internal", "exported", "existing", "kms", "bogus"]),
        "key": st.sampled_from(["default", base.root_a["key_id"], "nope"]) | st.text(max_size=8),
        "imp": st.sampled_from(["cert", "bundle", "x"]),
        "mount": st.sampled_from(["pki", "pki2", "new/nested", "sys", "auth/x", "pki/deeper", "cubbyhole", "a"]),
        "policy": st.sampled_from(["limited", "default", "root", "new", "UPPER"]) | st.text(max_size=8),
        "junk": st.text(max_size=20) | st.sampled_from(["..", ".", "%2e%2e", "a/../b", "_schedpki"]),
    }
    out = template
    for name, strategy in values.items():
        while "{" + name + "}" in out:
            value = draw(strategy).replace("/", "_") if name != "mount" else draw(strategy)
            if value.startswith("_schedpki"):
                value = "x" + value
            out = out.replace("{" + name + "}", value, 1)
    return out


def _field_value(name: str, ftype: str, draw, base) -> object:
    """A value for field ``name``: mostly plausible for its meaning, sometimes any JSON at all."""
    if draw(st.integers(0, 4)) == 0:
        return draw(json_values)
    if name in ("csr", "certificate", "pem_bundle", "private_key", "key", "pem_keys"):
        return draw(mutated_pem(base.pems))
    if "ttl" in name or name.endswith(("_duration", "expiry", "period", "interval", "buffer")) or name in (
            "auto_rebuild_grace_period", "lease"):
        return draw(st.sampled_from(DURATIONS) | SAFE_INTS)
    if name in ("common_name", "alt_names", "allowed_domains", "exclude_cn_from_sans", "permitted_dns_domains",
                "other_sans", "allowed_other_sans", "allowed_uri_sans", "uri_sans", "excluded_dns_domains"):
        value = draw(st.lists(st.sampled_from(NAMES), max_size=3))
        return ",".join(value) if draw(st.booleans()) else value
    if name in ("ip_sans", "permitted_ip_ranges", "excluded_ip_ranges"):
        return draw(st.sampled_from(IPS))
    if name == "serial_number":
        return draw(st.sampled_from([base.leaf["serial_number"], base.revoked_serial, base.root_a["serial_number"],
                                     "01:02:03", "zz:zz", ""]))
    if name == "key_type":
        return draw(st.sampled_from(["rsa", "ec", "ed25519", "any", "dsa", "", "EC"]))
    if name in ("key_bits", "signature_bits"):
        return draw(st.sampled_from([0, 224, 256, 384, 521, 1024, 2048, -1, 7, "256", "x"]))
    if name in ("format", "private_key_format"):
        return draw(st.sampled_from(["pem", "der", "pem_bundle", "base64", "pkcs8", "", "x"]))
    if name in ("not_after",):
        return draw(st.sampled_from(TIMES))
    if name in ("issuer_ref", "issuer_name", "key_ref", "key_name", "default", "name"):
        return draw(st.sampled_from(["default", "root-a", "root-b", base.root_a["issuer_id"], "nope", "",
                                     "new-name", "a" * 200, "bad name!"]))
    if name in ("policy", "rules"):
        return draw(st.sampled_from(POLICIES))
    if name == "type":
        return draw(st.sampled_from(["pki", "kv", "", "internal", "exported", "service", "batch"]))
    if name == "usage":
        return draw(st.sampled_from(["read-only", "issuing-certificates,crl-signing", "bogus", ""]))
    if name == "leaf_not_after_behavior":
        return draw(st.sampled_from(["err", "truncate", "permit", "x"]))
    if name in ("manual_chain", "policies"):
        return draw(st.lists(st.sampled_from(["self", "root-a", "root-b", "nope", "default", "limited"]), max_size=3))
    if name == "token":
        return draw(st.sampled_from(["root", "limited-token", "nope", ""]))
    if ftype == "bool":
        return draw(BOOLISH)
    if ftype == "int":
        return draw(SAFE_INTS | st.sampled_from(["12", "x", "", "1.5"]))
    if ftype in ("comma_string_slice", "string_slice", "comma_int_slice"):
        return draw(st.lists(st.text(max_size=10), max_size=3) | st.text(max_size=20))
    if ftype == "map":
        return draw(st.dictionaries(st.text(max_size=6), json_values, max_size=3) | st.text(max_size=10))
    return draw(st.text(max_size=30) | SAFE_INTS | st.booleans())


def _route_fields(service, rel: str) -> dict:
    if rel.startswith("sys/"):
        found = SYS_ROUTER.match(rel[4:])
    elif rel.startswith("auth/token/"):
        found = TOKEN_ROUTER.match(rel[len("auth/token/"):])
    else:
        located = service.find_mount(rel)
        found = located[0].backend.router.match(located[1]) if located else None
    return dict(found[0].fields) if found else {}


def _headers(draw, content_type: str | None) -> dict[str, str]:
    token = draw(st.sampled_from(["root", "root", "root", "limited-token", "bogus", "", None]))
    header = draw(st.sampled_from(["X-Vault-Token", "X-Secrets-Token", "Authorization", "x-vault-token"]))
    headers: dict[str, str] = {}
    if token is not None:
        headers[header] = f"Bearer {token}" if header == "Authorization" else token
    if content_type:
        headers["Content-Type"] = content_type
    if draw(st.integers(0, 9)) == 0:
        headers["X-Vault-Wrap-TTL"] = draw(st.sampled_from(["60", "1h", "0", "-1", "soon", ""]))
    if draw(st.integers(0, 9)) == 0:
        headers[draw(st.sampled_from(["X-Vault-Request", "X-Vault-Namespace", "If-Modified-Since", "Accept",
                                      "X-Forwarded-For", "Expect"]))] = draw(header_text)
    return headers


def _exchange(double, client, method, target, headers, body, context):
    before = secrets_fingerprint(double.secrets)
    reply = client.request(method, target, headers, body)
    check_secrets_reply(reply, method, context)
    # the one refusal upstream does not roll back: revoking an issuer's certificate the mount had not
    # stored stores it, then answers 400 "adding issuer (id: ...) to its own CRL is not allowed"
    stored_then_refused = reply.status == 400 and "to its own CRL is not allowed" in reply.text()
    if reply.status >= 400 and not stored_then_refused:
        assert secrets_fingerprint(double.secrets) == before, f"rejected request changed state: {context} -> {reply.status} {reply.text()[:300]}"
    errors = double.pop_handler_errors()
    assert not errors, "\n".join(map(str, errors))
    return reply


_GO_INT = re.compile(r"[+-]?[0-9]+\Z")  # strconv.Atoi's syntax
_GO_BOOLS = frozenset({"", "1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"})
_HEALTH_CODES = ("uninitcode", "sealedcode", "standbycode", "activecode")


def _health_outcome(query: str, headers: dict[str, str]) -> int | None:
    """What OpenBao answers ``GET /v1/sys/health?<query>`` on an unsealed node (``sys_health.go``; each
    case checked against bao in tests/parity/test_parity_token_fuzz_finds.py and
    test_parity_namespace_http_layer.py): 400 for a request naming any namespace (the root one included),
    a ``standbyok`` that is no Go bool or a status code parameter that is no Go int64;
    else the code asked for (``activecode``, default 200), or ``None`` when Go's ``WriteHeader`` refuses
    it (below 100 or above 999): the server then drops the connection without an answer."""
    if headers.get("X-Vault-Namespace", "").strip(" \t"):  # any namespace, the root one included
        return 400
    values = {k: v[0] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
    if "standbyok" in values and values["standbyok"] not in _GO_BOOLS:
        return 400
    for name in _HEALTH_CODES:
        if name in values and not (_GO_INT.match(values[name]) and -2 ** 63 <= int(values[name]) < 2 ** 63):
            return 400
    code = int(values.get("activecode", "200"))
    return code if 100 <= code <= 999 else None


def _exchange_health(double, client, target, headers, query, context):
    """``GET sys/health``: it answers any status code the query asks for, or drops the connection
    (:func:`_health_outcome`); nothing changes either way."""
    before = secrets_fingerprint(double.secrets)
    expected = _health_outcome(query, headers)
    if expected is None:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
            client.request("GET", target, headers)
    else:
        reply = client.request("GET", target, headers)
        # a 1xx code is an interim answer (http.client skips 100 Continue), then 200
        allowed = {expected, 200} if expected < 200 else {expected}
        assert reply.status in allowed, f"{context} -> {reply.status} {reply.text()[:300]!r}"
        if reply.status == 400:
            assert reply.body == b'{"errors":[]}\n' or json.loads(reply.body)["errors"], context
        elif reply.status not in (204, 304):
            assert json.loads(reply.body)["initialized"] is True, context
    assert secrets_fingerprint(double.secrets) == before, context
    errors = double.pop_handler_errors()
    assert not errors, "\n".join(map(str, errors))


@robust(400)
@given(data=st.data())
def test_endpoint_aware_requests_answer_as_openbao_and_rejected_ones_change_nothing(double, baseline, data):
    double.reset()
    draw = data.draw
    template = draw(st.sampled_from(["pki/" + p for p in PKI_PATHS] + SYS_PATHS), label="template")
    rel = _fill(template, draw, baseline)
    fields = _route_fields(double.secrets, rel)
    method = draw(st.sampled_from(["POST", "POST", "PUT", "GET", "LIST", "DELETE", "PATCH"]), label="method")
    names = sorted(fields) + ["unknown_field", "help"]
    chosen = draw(st.lists(st.sampled_from(names), max_size=6, unique=True), label="fields")
    values = {name: _field_value(name, getattr(fields.get(name), "type", "string"), draw, baseline) for name in chosen}
    query = ""
    body: bytes | None = None
    content_type = None
    if method in ("GET", "LIST", "DELETE"):
        flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
        if draw(st.booleans()) and method == "GET":
            flat["list"] = draw(st.sampled_from(["true", "1", "false", "maybe"]))
        query = urllib.parse.urlencode(flat)
    else:
        encoding = draw(st.sampled_from(["json", "json", "json", "form"]))
        if encoding == "form":
            content_type = "application/x-www-form-urlencoded"
            body = urllib.parse.urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}).encode()
        else:
            content_type = "application/merge-patch+json" if method == "PATCH" and draw(st.booleans()) else "application/json"
            body = json.dumps(values).encode()
    headers = _headers(draw, content_type)
    target = quote_path("/v1/" + rel) + ("?" + query if query else "")
    client = RawClient(double.secrets_url)
    context = f"{method} {target} {headers} {body!r:.300}"
    try:
        if rel == "sys/health" and method == "GET":
            _exchange_health(double, client, target, headers, query, context)
        else:
            _exchange(double, client, method, target, headers, body, context)
    finally:
        client.close()


@robust(300)
@given(data=st.data())
def test_transport_garbage_gets_openbao_shaped_answers(double, baseline, data):
    double.reset()
    draw = data.draw
    method = draw(st.sampled_from(METHODS) | st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8), label="method")
    segments = draw(st.lists(st.text(max_size=12) | st.sampled_from(["v1", "pki", "issue", "web", "sys", "", ".",
                                                                       "..", "roles", "crl"]), max_size=6))
    prefix = draw(st.sampled_from(["/v1/", "/v1/pki/", "/", "//v1//pki/", "/v2/", "/V1/", "/v1"]))
    path = prefix + "/".join(s if not s.startswith("_schedpki") else "x" + s for s in segments)
    query = draw(st.lists(st.tuples(st.text(max_size=8), st.text(max_size=12)), max_size=3))
    body = draw(hostile_bodies(["common_name", "type", "policy", "ttl", "csr"]), label="body")
    content_type = draw(st.sampled_from([None, "application/json", "application/x-www-form-urlencoded",
                                         "application/merge-patch+json", "text/plain", "multipart/form-data",
                                         "application/json; charset=latin-1"]) | header_text)
    headers = _headers(draw, content_type)
    target = quote_path(path) + ("?" + urllib.parse.urlencode(query) if query else "")
    client = RawClient(double.secrets_url)
    try:
        _exchange(double, client, method, target, headers, body, f"{method} {target} {headers} {body!r:.300}")
    finally:
        client.close()


PEM_ENDPOINTS = [
    ("pki/sign/web", "csr"), ("pki/sign-verbatim", "csr"), ("pki/sign-verbatim/web", "csr"),
    ("pki/root/sign-intermediate", "csr"), ("pki/issuer/root-b/sign-intermediate", "csr"),
    ("pki/root/sign-self-issued", "certificate"), ("pki/issuer/default/sign-self-issued", "certificate"),
    ("pki/issuers/import/bundle", "pem_bundle"), ("pki/issuers/import/cert", "pem_bundle"),
    ("pki/config/ca", "pem_bundle"), ("pki/keys/import", "pem_bundle"), ("pki/intermediate/set-signed", "certificate"),
    ("pki/revoke", "certificate"), ("pki/revoke-with-key", "certificate"),
]


@robust(300)
@given(data=st.data())
def test_malformed_pem_csr_and_der_are_refused_as_openbao_does(double, baseline, data):
    double.reset()
    draw = data.draw
    rel, field_name = draw(st.sampled_from(PEM_ENDPOINTS), label="endpoint")
    body = {field_name: draw(mutated_pem(baseline.pems), label="pem")}
    if rel.endswith("revoke-with-key"):
        body["private_key"] = draw(mutated_pem(baseline.pems), label="key")
    if draw(st.booleans()):
        body[draw(st.sampled_from(["common_name", "ttl", "format", "use_csr_values", "serial_number"]))] = draw(
            st.sampled_from(["a.example.com", "1h", "der", True, baseline.leaf["serial_number"]]))
    client = RawClient(double.secrets_url)
    try:
        _exchange(double, client, "POST", "/v1/" + rel, {"X-Vault-Token": "root"}, json.dumps(body).encode(),
                  f"POST {rel} {body!r:.600}")
    finally:
        client.close()
