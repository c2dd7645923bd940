"""Ports of Nomad's ``command/agent/acl_endpoint_test.go`` auth-method cases (reference §12)."""

import base64
import hashlib

from sched_helpers import assert_plain, mock_oidc, raw_request


def test_list_without_token_is_an_empty_array(sched):
    r = sched.get("/v1/acl/auth-methods", token=None)
    assert (r.status_code, r.text, r.json()) == (200, "[]", [])
    assert r.headers["Content-Type"] == "application/json"


def test_list_with_bad_method_is_405(sched):
    assert_plain(sched.request("CONNECT", "/v1/acl/auth-methods"), 405, "Invalid method")
    assert_plain(sched.put("/v1/acl/auth-methods", json={}), 405, "Invalid method")


def test_list_empty_with_management_token(sched):
    r = sched.get("/v1/acl/auth-methods")
    assert (r.status_code, r.json()) == (200, [])


def test_list_two_methods(sched):
    sched.state.upsert_auth_method(mock_oidc())
    sched.state.upsert_auth_method(mock_oidc())
    r = sched.get("/v1/acl/auth-methods")
    assert r.status_code == 200
    assert len(r.json()) == 2


def test_create_without_token_is_permission_denied(sched):
    # Upstream sends an ACL-role body: unknown fields are ignored, the token check still refuses.
    role = {"Name": "acl-role", "Description": "x", "Policies": [{"Name": "p"}]}
    assert_plain(sched.put("/v1/acl/auth-method", json=role, token=None), 403, "Permission denied")
    assert sched.state.last_index == 1  # a refused request consumes no raft index


def test_create_with_bad_method_is_405(sched):
    assert_plain(sched.request("CONNECT", "/v1/acl/auth-method"), 405, "Invalid method")
    assert_plain(sched.get("/v1/acl/auth-method"), 405, "Invalid method")


def test_create_success_returns_the_stored_method_with_the_input_hash(sched):
    body = mock_oidc()
    r = sched.put("/v1/acl/auth-method", json=body)
    assert r.status_code == 200
    out = r.json()
    stored = sched.state.get_auth_method(body["Name"])
    assert out["Hash"] == base64.b64encode(stored.Hash).decode()
    assert len(base64.b64decode(out["Hash"])) == 32
    # The same body, hashed as upstream feeds BLAKE2b-256 (after TokenNameFormat defaulting).
    c = body["Config"]
    parts = [body["Name"], "OIDC", "local", "${auth_method_type}-${auth_method_name}", "1h0m0s", "false",
             "", "", c["OIDCDiscoveryURL"], "mock", "very secret secret", "false", "false", "false", "0s", "0s", "0s",
             "sales", "engineering", "foo", "bar", "foo", "groups", "RS256", "foo", "bar", "foo", "bar"]
    assert out["Hash"] == base64.b64encode(hashlib.blake2b("".join(parts).encode(), digest_size=32).digest()).decode()
    assert (out["Name"], out["MaxTokenTTL"], out["Config"]["OIDCClientSecret"]) == (body["Name"], "1h0m0s", "redacted")
    assert out["CreateIndex"] == out["ModifyIndex"] == int(r.headers["X-Nomad-Index"]) == 2


def test_specific_path_with_empty_name_is_400_without_token(sched):
    for verb in ("GET", "PUT", "DELETE", "CONNECT"):
        assert_plain(sched.request(verb, "/v1/acl/auth-method/", token=None), 400, "missing ACL auth-method name")


def test_specific_path_with_bad_method_is_405(sched):
    assert_plain(sched.request("CONNECT", "/v1/acl/auth-method/foobar"), 405, "Invalid method")
    assert_plain(sched.request("PATCH", "/v1/acl/auth-method/foobar", json={}), 405, "Invalid method")
    head = sched.request("HEAD", "/v1/acl/auth-method/foobar")
    assert head.status_code == 405


def test_read_returns_the_method_with_its_hash(sched):
    stored = sched.state.upsert_auth_method(mock_oidc())
    r = sched.get(f"/v1/acl/auth-method/{stored.Name}")
    assert r.status_code == 200
    assert r.json()["Hash"] == base64.b64encode(stored.Hash).decode()
    assert r.headers["X-Nomad-Index"] == str(stored.ModifyIndex)


def test_read_update_delete_lifecycle(sched):
    sched.state.set_token_ttl_bounds(max_ttl="3600h")
    body = mock_oidc()
    name = body["Name"]
    sched.state.upsert_auth_method(body)
    assert sched.get(f"/v1/acl/auth-method/{name}").status_code == 200

    r = sched.post(f"/v1/acl/auth-method/{name}", json={**body, "MaxTokenTTL": "3600h"})
    assert r.status_code == 200
    assert r.json()["MaxTokenTTL"] == "3600h0m0s"

    deleted = sched.delete(f"/v1/acl/auth-method/{name}")
    assert (deleted.status_code, deleted.content) == (200, b"")
    assert "Content-Type" not in deleted.headers
    assert int(deleted.headers["X-Nomad-Index"]) > int(r.headers["X-Nomad-Index"])

    assert_plain(sched.get(f"/v1/acl/auth-method/{name}"), 404, "ACL auth-method not found")


def test_http_methods_are_case_sensitive_like_go(sched):
    status, headers, body = raw_request(sched.url, "get", "/v1/acl/auth-methods")
    assert (status, body, headers["Content-Type"]) == (405, b"Invalid method", "text/plain; charset=utf-8")
    status, _, body = raw_request(sched.url, "put", "/v1/acl/auth-method/x", body=b"{}")
    assert (status, body) == (405, b"Invalid method")
