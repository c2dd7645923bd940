"""Go clients cannot be built here, so this module sends, byte for byte, what they send
(reference/real-clients.md §3 for Nomad's ``api`` package, §4-§5 for Vault/OpenBao's ``api``
package and its users: the CLIs, terraform providers, cert-manager, consul-template) with
``http.client`` and asserts what the Go code needs from the answer. Each test pins one row of
docs/go-clients.md.

The Nomad rows run against the double only (no real Nomad here); the Vault rows run against the
double and, marked ``parity``, against a real ``bao server -dev``.

What Go's ``net/http`` adds to every request: ``Host``, ``User-Agent: Go-http-client/1.1``,
``Content-Length`` when there is a body, and ``Accept-Encoding: gzip`` (the transport then
un-gzips only when the answer says ``Content-Encoding: gzip``). Neither API package sets a
Content-Type on JSON bodies (``json.NewEncoder`` output: compact JSON plus a newline), except
``JSONMergePatch`` (``application/merge-patch+json``).
"""

from __future__ import annotations

import http.client
import json
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from contract_helpers import h, unique_mount

GO_UA = "Go-http-client/1.1"
RFC3339NANO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)")
GO_DURATION = re.compile(r"(\d+h)?(\d+m)?(\d+(\.\d+)?s)?|0s|")


@dataclass
class GoResponse:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self):
        return json.loads(self.body)


def go_encode(value) -> bytes:
    """``json.NewEncoder(buf).Encode(v)``: compact, HTML-safe escaping aside, plus a newline."""
    return (json.dumps(value, separators=(",", ":")) + "\n").encode()


def go_request(base_url: str, method: str, path: str, headers: dict[str, str] | None = None,
               body: bytes | None = None) -> GoResponse:
    """One request with exactly the headers a Go client sends (nothing that http.client would add)."""
    url = urlsplit(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", url.netloc)
        conn.putheader("User-Agent", GO_UA)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.putheader("Accept-Encoding", "gzip")
        conn.endheaders(body)
        resp = conn.getresponse()
        return GoResponse(resp.status, resp.headers, resp.read())
    finally:
        conn.close()


# ============================================================================ Nomad api (scheduler)

#: the exact Create body of Nomad's Go client (real-clients.md §3), Name and TTL aside
GO_METHOD = {"MaxTokenTTL": "1h0m0s", "Name": "okta", "Type": "OIDC", "TokenLocality": "global", "TokenNameFormat": "",
             "Default": False, "Config": {
                 "ExpirationLeeway": "", "NotBeforeLeeway": "", "ClockSkewLeeway": "", "JWTValidationPubKeys": None,
                 "JWKSURL": "", "OIDCDiscoveryURL": "https://x", "OIDCClientID": "id", "OIDCClientSecret": "",
                 "OIDCClientAssertion": None, "OIDCEnablePKCE": False, "OIDCDisableUserInfo": False, "OIDCScopes": None,
                 "BoundAudiences": None, "BoundIssuer": None, "AllowedRedirectURIs": None, "DiscoveryCaPem": None,
                 "JWKSCACert": "", "SigningAlgs": None, "ClaimMappings": None, "ListClaimMappings": None,
                 "VerboseLogging": False},
             "CreateTime": "0001-01-01T00:00:00Z", "ModifyTime": "0001-01-01T00:00:00Z", "CreateIndex": 0, "ModifyIndex": 0}


@pytest.fixture
def nomad(schedpki):
    """``(base_url, token)`` of the double's scheduler."""
    return schedpki.scheduler.url, schedpki.scheduler.token


def _create(nomad, body=None, **headers) -> GoResponse:
    url, token = nomad
    return go_request(url, "PUT", "/v1/acl/auth-method", {"X-Nomad-Token": token, **headers}, go_encode(body or GO_METHOD))


def test_nomad_body_without_content_type_is_decoded(nomad):
    r = _create(nomad)
    assert r.status == 200 and r.headers["Content-Type"] == "application/json"
    assert r.json()["Name"] == "okta" and r.json()["Config"]["OIDCDiscoveryURL"] == "https://x"


def test_nomad_token_headers(nomad):
    url, token = nomad
    assert _create(nomad).status == 200
    assert go_request(url, "GET", "/v1/acl/auth-method/okta", {"X-Nomad-Token": token}).status == 200
    # NOMAD_HTTP_AUTH adds Basic auth next to X-Nomad-Token; the token still wins
    both = go_request(url, "GET", "/v1/acl/auth-method/okta", {"Authorization": "Basic dXNlcjpwYXNz", "X-Nomad-Token": token})
    assert both.status == 200
    bearer = go_request(url, "GET", "/v1/acl/auth-method/okta", {"Authorization": f"Bearer {token}"})
    assert bearer.status == 200
    none = go_request(url, "GET", "/v1/acl/auth-method/okta")
    assert (none.status, none.body) == (403, b"Permission denied")


def test_nomad_index_header_on_every_answer(nomad):
    url, token = nomad
    created = _create(nomad)
    write_index = int(created.headers["X-Nomad-Index"])
    assert write_index >= 1 and created.headers["X-Nomad-KnownLeader"] is None  # writes: the index only
    read = go_request(url, "GET", "/v1/acl/auth-method/okta", {"X-Nomad-Token": token})
    assert (read.headers["X-Nomad-Index"], read.headers["X-Nomad-KnownLeader"], read.headers["X-Nomad-LastContact"]) == \
        (str(write_index), "true", "0")
    listed = go_request(url, "GET", "/v1/acl/auth-methods")
    assert (listed.headers["X-Nomad-Index"], listed.headers["X-Nomad-KnownLeader"]) == (str(write_index), "true")
    missing = go_request(url, "GET", "/v1/acl/auth-method/nope", {"X-Nomad-Token": token})
    assert missing.status == 404 and missing.headers["X-Nomad-Index"] == str(write_index)  # meta set before the 404
    deleted = go_request(url, "DELETE", "/v1/acl/auth-method/okta", {"X-Nomad-Token": token})
    assert deleted.status == 200 and int(deleted.headers["X-Nomad-Index"]) > write_index


def test_nomad_durations_are_go_duration_strings(nomad):
    body = {**GO_METHOD, "MaxTokenTTL": 5400 * 10**9,  # an integer of nanoseconds is accepted too
            "Config": {**GO_METHOD["Config"], "ExpirationLeeway": "1m30s", "ClockSkewLeeway": 2_000_000_000}}
    r = _create(nomad, body)
    assert r.status == 200
    got = r.json()
    assert got["MaxTokenTTL"] == "1h30m0s"  # Go's Duration.String(), never a number
    assert (got["Config"]["ExpirationLeeway"], got["Config"]["ClockSkewLeeway"], got["Config"]["NotBeforeLeeway"]) == \
        ("1m30s", "2s", "")  # "" for zero, as the server's MarshalJSON writes
    for value in (got["MaxTokenTTL"], got["Config"]["ExpirationLeeway"]):
        assert GO_DURATION.fullmatch(value)
    for key in ("CreateTime", "ModifyTime"):
        assert RFC3339NANO.fullmatch(got[key]), got[key]
    short = _create(nomad, {**GO_METHOD, "MaxTokenTTL": "10m"})
    assert short.json()["MaxTokenTTL"] == "10m0s"  # normalised: terraform compares MaxTokenTTL.String()


def test_nomad_zero_ttl_is_refused_as_upstream(nomad):
    # the Go client sends "" for a zero Duration; the server's UnmarshalJSON fails on it
    r = _create(nomad, {**GO_METHOD, "MaxTokenTTL": ""})
    assert (r.status, r.headers["Content-Type"], r.body) == (400, "text/plain; charset=utf-8", b'time: invalid duration ""')


def test_nomad_query_options_are_parsed(nomad):
    url, token = nomad
    index = int(_create(nomad).headers["X-Nomad-Index"])
    # QueryOptions{AllowStale, WaitIndex, WaitTime, Region, Namespace, Prefix, PerPage, Reverse}
    q = f"?region=global&namespace=default&stale=&index={index - 1}&wait=5000ms&prefix=ok&per_page=10&reverse=true"
    r = go_request(url, "GET", "/v1/acl/auth-methods" + q, {"X-Nomad-Token": token})
    assert r.status == 200 and [m["Name"] for m in r.json()] == ["okta"]  # index already passed: no wait
    for query, text in (("?stale=maybe", b"Expect `true` or `false` for `stale` query string parameter"),
                        ("?wait=5", b"Invalid wait time"), ("?index=x", b"Invalid index"),
                        ("?per_page=x", b"Expect a number for `per_page` query string parameter")):
        bad = go_request(url, "GET", "/v1/acl/auth-methods" + query)
        assert (bad.status, bad.body) == (400, text), query
    # WriteOptions: region, namespace and idempotency_token are accepted on writes
    w = go_request(url, "PUT", "/v1/acl/auth-method?region=global&namespace=default&idempotency_token=abc",
                   {"X-Nomad-Token": token}, go_encode(GO_METHOD))
    assert w.status == 200


def test_nomad_gzip_accepted_but_answers_are_plain(nomad):
    url, _ = nomad
    r = go_request(url, "GET", "/v1/acl/auth-methods")
    # Go un-gzips only when told so; the double never compresses
    assert r.headers["Content-Encoding"] is None and r.body == b"[]"


def test_nomad_no_empty_bodies_where_go_decodes(nomad):
    url, token = nomad
    empty = go_request(url, "GET", "/v1/acl/auth-methods")
    assert empty.status == 200 and int(empty.headers["Content-Length"]) > 0  # "[]": Go refuses a 0-byte body
    created = _create(nomad)
    assert int(created.headers["Content-Length"]) == len(created.body) > 0
    deleted = go_request(url, "DELETE", "/v1/acl/auth-method/okta", {"X-Nomad-Token": token})
    assert (deleted.status, deleted.body) == (200, b"")  # out=nil: the body is not decoded, 200 is required


#: api.ACLBindingRule as the Go client encodes it for Create (zero times, zero indexes, no Hash)
GO_RULE = {"ID": "", "Description": "", "AuthMethod": "sso", "Selector": "", "BindType": "management",
           "BindName": "", "CreateTime": "0001-01-01T00:00:00Z", "ModifyTime": "0001-01-01T00:00:00Z",
           "CreateIndex": 0, "ModifyIndex": 0}


def test_nomad_binding_rules_requests(nomad, schedpki):
    """``ACLBindingRules().Create/Update/Get/List/Delete`` (api/acl.go): PUT ``/v1/acl/binding-rule``,
    PUT ``/v1/acl/binding-rule/<ID>`` with the fetched struct, GET, GET list, DELETE with no body."""
    url, token = nomad
    auth = {"X-Nomad-Token": token}
    schedpki.factories.scheduler.jwt_auth_method("sso", builtin_idp=True)
    created = go_request(url, "PUT", "/v1/acl/binding-rule", auth, go_encode(GO_RULE))
    assert created.status == 200 and int(created.headers["X-Nomad-Index"]) == created.json()["ModifyIndex"]
    rule = created.json()
    assert RFC3339NANO.fullmatch(rule["CreateTime"]) and RFC3339NANO.fullmatch(rule["ModifyTime"])
    update = {k: v for k, v in rule.items() if k != "Hash"}  # api.ACLBindingRule has no Hash field
    update["Description"] = "all logins"
    updated = go_request(url, "PUT", f"/v1/acl/binding-rule/{rule['ID']}", auth, go_encode(update))
    assert (updated.status, updated.json()["Description"]) == (200, "all logins")
    got = go_request(url, "GET", f"/v1/acl/binding-rule/{rule['ID']}", auth)
    assert got.json()["Description"] == "all logins" and got.headers["X-Nomad-KnownLeader"] == "true"
    listed = go_request(url, "GET", "/v1/acl/binding-rules", auth)
    assert [r["ID"] for r in listed.json()] == [rule["ID"]]
    deleted = go_request(url, "DELETE", f"/v1/acl/binding-rule/{rule['ID']}", auth)
    assert (deleted.status, deleted.body) == (200, b"") and int(deleted.headers["X-Nomad-Index"]) > 0


def test_nomad_login_and_oidc_requests(nomad, schedpki):
    """``ACLAuth().Login``, ``GetAuthURL`` and ``CompleteAuth`` (``ACLOIDC()`` embeds the same methods):
    PUT with ``api.ACLLoginRequest``/``ACLOIDCAuthURLRequest``/``ACLOIDCCompleteAuthRequest`` bodies and
    no token. Login and complete-auth answer ``X-Nomad-Index: 0`` (Nomad never fills it); auth-url has
    no index header, which ``parseWriteMeta`` ignores (LastIndex 0)."""
    url, _ = nomad
    f = schedpki.factories.scheduler
    f.jwt_auth_method("ci", builtin_idp=True)
    f.oidc_auth_method("okta", builtin_idp=True)
    f.binding_rule("ci", "management")
    f.binding_rule("okta", "management")
    login = go_request(url, "PUT", "/v1/acl/login", None,
                       go_encode({"AuthMethodName": "ci", "LoginToken": schedpki.scheduler.jwt("ci", {})}))
    assert (login.status, login.headers["X-Nomad-Index"]) == (200, "0")
    token = login.json()
    assert token["ExpirationTTL"] == "1h0m0s" and GO_DURATION.fullmatch(token["ExpirationTTL"])
    assert RFC3339NANO.fullmatch(token["ExpirationTime"]) and token["Type"] == "management"
    redirect = "http://localhost:4649/oidc/callback"
    auth_url = go_request(url, "PUT", "/v1/acl/oidc/auth-url", None,
                          go_encode({"AuthMethodName": "okta", "RedirectURI": redirect, "ClientNonce": "n"}))
    assert auth_url.status == 200 and auth_url.headers["X-Nomad-Index"] is None
    location = go_request(url, "GET", urlsplit(auth_url.json()["AuthURL"])._replace(scheme="", netloc="").geturl())
    query = dict(p.split("=", 1) for p in urlsplit(location.headers["Location"]).query.split("&"))
    done = go_request(url, "PUT", "/v1/acl/oidc/complete-auth", None, go_encode(
        {"AuthMethodName": "okta", "ClientNonce": "n", "State": query["state"], "Code": query["code"], "Iss": "",
         "RedirectURI": redirect}))
    assert (done.status, done.headers["X-Nomad-Index"], done.json()["Name"]) == (200, "0", "OIDC-okta")


def test_nomad_errors_are_plain_text(nomad):
    url, token = nomad
    r = go_request(url, "PUT", "/v1/acl/auth-method/other", {"X-Nomad-Token": token}, go_encode(GO_METHOD))
    # api.UnexpectedResponseError: "Unexpected response code: 400 (<trimmed body>)"
    assert (r.status, r.headers["Content-Type"], r.body) == \
        (400, "text/plain; charset=utf-8", b"ACL auth-method name does not match request path")
    r = go_request(url, "POST", "/v1/acl/auth-methods")
    assert (r.status, r.body) == (405, b"Invalid method")


# ============================================================================ Vault/OpenBao api (secrets)


@pytest.fixture
def vault(request, target):
    """``(base_url, mount)``: a PKI mount with an EC root and role ``web``, set up the Go way (PUT)."""
    url = target[1]
    mount = unique_mount("go_", request)
    hdr = {"X-Vault-Token": "root", "X-Vault-Request": "true"}
    assert go_request(url, "PUT", f"/v1/sys/mounts/{mount}", hdr, go_encode({"type": "pki"})).status == 204
    assert go_request(url, "PUT", f"/v1/sys/mounts/{mount}/tune", hdr, go_encode({"max_lease_ttl": "87600h"})).status == 204
    root = go_request(url, "PUT", f"/v1/{mount}/root/generate/internal", hdr,
                      go_encode({"common_name": "Go Root", "key_type": "ec", "ttl": "87600h", "issuer_name": "root"}))
    assert root.status == 200
    role = go_request(url, "PUT", f"/v1/{mount}/roles/web", hdr, go_encode(
        {"allowed_domains": "example.com", "allow_subdomains": "true", "key_type": "ec", "ttl": "1h", "max_ttl": "24h"}))
    assert role.status == 200
    yield url, mount
    go_request(url, "DELETE", f"/v1/sys/mounts/{mount}", hdr)


VAULT_HDR = {"X-Vault-Request": "true", "X-Vault-Token": "root"}


def test_vault_write_is_put_without_content_type(vault):
    url, mount = vault
    r = go_request(url, "PUT", f"/v1/{mount}/issue/web", VAULT_HDR, go_encode({"common_name": "a.example.com"}))
    assert r.status == 200
    assert r.headers["Content-Type"] == "application/json"  # exactly: hvac compares it literally
    body = r.json()
    assert list(body) == ["request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings", "auth"]
    data = body["data"]
    assert isinstance(data["expiration"], int) and isinstance(data["ca_chain"], list)  # terraform's type assertions
    assert re.fullmatch(r"([0-9a-f]{2}:)+[0-9a-f]{2}", data["serial_number"])
    assert h.cert_facts(data["certificate"], data["issuing_ca"])["verifies_with_issuer"]
    assert r.headers["Content-Encoding"] is None


def test_vault_string_typed_bodies_are_coerced(vault):
    # cert-manager and consul-template send every value as a string
    url, mount = vault
    csr = h.make_csr(h.ec_key(), "cm.example.com", dns=["cm.example.com"])
    body = {"common_name": "cm.example.com", "alt_names": "", "ip_sans": "", "uri_sans": "", "ttl": "2h0m0s",
            "csr": csr, "exclude_cn_from_sans": "true"}
    r = go_request(url, "PUT", f"/v1/{mount}/sign/web", VAULT_HDR, go_encode(body))
    assert r.status == 200, r.body
    facts = h.cert_facts(r.json()["data"]["certificate"])
    assert facts["validity_seconds"] in (7230, 7229) and facts["san"] == {"dns": ["cm.example.com"]}


def test_vault_list_is_get_with_list_true(vault):
    url, mount = vault
    r = go_request(url, "GET", f"/v1/{mount}/roles?list=true", VAULT_HDR)
    assert r.status == 200 and r.json()["data"] == {"keys": ["web"]}
    empty = go_request(url, "GET", f"/v1/{mount}/certs/revoked?list=true", VAULT_HDR)
    assert (empty.status, empty.json()) == (404, {"errors": []})  # Go: nil secret, the CLI's "No value found"


def test_vault_204_and_empty_bodies(vault):
    url, mount = vault
    deleted = go_request(url, "DELETE", f"/v1/{mount}/roles/web", VAULT_HDR)
    assert (deleted.status, deleted.body) == (204, b"")  # Go: nil secret, "Success! Data deleted"
    missing = go_request(url, "GET", f"/v1/{mount}/roles/web", VAULT_HDR)
    assert (missing.status, missing.headers["Content-Type"], missing.json()) == (404, "application/json", {"errors": []})


def test_vault_request_header_is_not_required(vault):
    url, mount = vault
    r = go_request(url, "GET", f"/v1/{mount}/roles/web", {"X-Vault-Token": "root"})
    assert r.status == 200 and r.json()["data"]["key_type"] == "ec"
    bearer = go_request(url, "GET", f"/v1/{mount}/roles/web", {"Authorization": "Bearer root"})
    assert bearer.status == 200


def test_vault_merge_patch(vault):
    url, mount = vault
    patch = go_encode({"leaf_not_after_behavior": "truncate"})
    r = go_request(url, "PATCH", f"/v1/{mount}/issuer/root", {**VAULT_HDR, "Content-Type": "application/merge-patch+json"},
                   patch)
    assert r.status == 200 and r.json()["data"]["leaf_not_after_behavior"] == "truncate"
    assert r.json()["data"]["issuer_name"] == "root"  # a merge: the other fields stay
    # a plain Logical().Write-style PATCH without Content-Type fails in Go's mime.ParseMediaType
    missing = go_request(url, "PATCH", f"/v1/{mount}/issuer/root", VAULT_HDR, patch)
    assert (missing.status, missing.json()) == (400, {"errors": ["mime: no media type"]})


PATCH_CONTENT_TYPES = [  # OpenBao 2.7.2's answers: Go's mime.ParseMediaType, then a lower-cased comparison
    ("", 400, "mime: no media type"),
    ("application/json", 415, "PATCH requires Content-Type of application/merge-patch+json, provided application/json"),
    ("Application/Merge-Patch+JSON", 200, None),
    (" application/merge-patch+json ", 200, None),
    ("application/merge-patch+json; charset=utf-8", 200, None),
    ('application/merge-patch+json; a="q"', 200, None),
    ("application/merge-patch+json;", 200, None),
    ("application/merge-patch+json;;", 400, "mime: invalid media parameter"),
    ("application/merge-patch+json; x", 400, "mime: invalid media parameter"),
    ("application/merge-patch+json; a=1; a=2", 400, "mime: duplicate parameter name"),
    ("/json", 400, "mime: no media type"),
    ("application", 415, "PATCH requires Content-Type of application/merge-patch+json, provided application"),
    ("application/", 400, "mime: expected token after slash"),
    ("application/merge-patch+json garbage", 400, "mime: unexpected content after media subtype"),
    ("a/b/c", 400, "mime: unexpected content after media subtype"),
    ("text/plain;charset", 400, "mime: invalid media parameter"),
]


def test_vault_patch_content_type_parsing(vault):
    url, mount = vault
    patch = go_encode({"leaf_not_after_behavior": "truncate"})
    for content_type, status, error in PATCH_CONTENT_TYPES:
        r = go_request(url, "PATCH", f"/v1/{mount}/issuer/root", {**VAULT_HDR, "Content-Type": content_type}, patch)
        assert r.status == status, (content_type, r.status, r.body)
        if error is not None:
            assert r.json() == {"errors": [error]}, content_type


def test_vault_5xx_only_where_upstream_answers_5xx(vault):
    # the Go library retries 5xx (and 412, 429) twice with backoff; user mistakes must stay 4xx
    url, mount = vault
    user_errors = [("PUT", f"/v1/{mount}/issue/web", {"common_name": "evil.org"}, 400),
                   ("PUT", f"/v1/{mount}/issue/nope", {"common_name": "a.example.com"}, 400),
                   ("PUT", f"/v1/{mount}/roles/web", {"ttl": "soon"}, 400),
                   ("GET", f"/v1/{mount}/cert/01:02", None, 404),
                   ("PUT", f"/v1/{mount}/revoke", {"serial_number": "01:02"}, 400)]
    for method, path, body, status in user_errors:
        r = go_request(url, method, path, VAULT_HDR, go_encode(body) if body is not None else None)
        assert r.status == status, (path, r.status, r.body)
    # upstream's own 500 (multierror) for an unknown issuer reference: a Go client retries it, as with the real server
    r = go_request(url, "PUT", f"/v1/{mount}/issuer/nope/issue/web", VAULT_HDR, go_encode({"common_name": "a.example.com"}))
    assert r.status == 500 and r.json()["errors"][0].startswith("1 error occurred:\n\t* ")


def test_vault_unauthenticated_pem_fetches(vault):
    # terraform-provider-vault clears ClientToken for its drift check
    url, mount = vault
    issuer_id = go_request(url, "GET", f"/v1/{mount}/issuer/root", VAULT_HDR).json()["data"]["issuer_id"]
    for path in (f"/v1/{mount}/issuer/{issuer_id}/pem", f"/v1/{mount}/ca/pem"):
        r = go_request(url, "GET", path)
        assert r.status == 200 and r.body.startswith(b"-----BEGIN CERTIFICATE-----"), path
        cert = h.load_certificate(r.body.decode())
        assert h.cert_facts(cert)["subject"] == ["commonName=Go Root"]
