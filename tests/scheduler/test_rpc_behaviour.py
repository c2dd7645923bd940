"""Ports of Nomad's ``nomad/acl_endpoint_test.go`` auth-method RPC cases, restated over HTTP."""

import base64
import datetime

from sched_helpers import assert_plain, mock_oidc


def test_read_reports_modify_index_or_the_table_index_when_missing(sched):
    a = sched.state.upsert_auth_method(mock_oidc())
    anonymous = sched.state.upsert_auth_method(mock_oidc("anonymous"))
    assert anonymous.ModifyIndex == a.ModifyIndex + 1

    r = sched.get(f"/v1/acl/auth-method/{a.Name}")
    assert r.status_code == 200
    assert r.headers["X-Nomad-Index"] == str(a.ModifyIndex)
    assert (r.headers["X-Nomad-KnownLeader"], r.headers["X-Nomad-LastContact"]) == ("true", "0")

    missing = sched.get("/v1/acl/auth-method/some-random-name")
    assert_plain(missing, 404, "ACL auth-method not found")
    assert missing.headers["X-Nomad-Index"] == str(anonymous.ModifyIndex)
    assert (missing.headers["X-Nomad-KnownLeader"], missing.headers["X-Nomad-LastContact"]) == ("true", "0")


def test_read_not_found_on_a_fresh_cluster_reports_index_zero(sched):
    missing = sched.get("/v1/acl/auth-method/nothing-here")
    assert missing.status_code == 404
    assert missing.headers["X-Nomad-Index"] == "0"  # the table index is not floored for reads


def test_list_is_sorted_and_needs_no_token(sched):
    second = sched.state.upsert_auth_method(mock_oidc("aaaabbbb-fbaf-4bcd-9e6b-64e5a2fa4dd5"))
    first = sched.state.upsert_auth_method(mock_oidc("aaaaaaaa-3350-4b4b-d185-0e1992ed43e9"))
    client = sched.state.add_token(type="client", name="client")
    expired = sched.state.add_token(type="management", expiration_time=datetime.datetime(2000, 1, 1))
    expected = [
        {"Name": first.Name, "Type": "OIDC", "Default": False, "Hash": base64.b64encode(first.Hash).decode(),
         "CreateIndex": first.CreateIndex, "ModifyIndex": first.ModifyIndex},
        {"Name": second.Name, "Type": "OIDC", "Default": False, "Hash": base64.b64encode(second.Hash).decode(),
         "CreateIndex": second.CreateIndex, "ModifyIndex": second.ModifyIndex},
    ]
    for token in ("root", client.SecretID, expired.SecretID, "not-a-token", None):
        r = sched.get("/v1/acl/auth-methods", token=token)
        assert r.status_code == 200, token
        assert r.json() == expected
        assert r.headers["X-Nomad-Index"] == str(first.ModifyIndex)


def test_list_orders_names_by_bytes(sched):
    for name in ("b", "B", "a-1", "0", "-x", "A"):
        sched.state.upsert_auth_method(mock_oidc(name))
    names = [m["Name"] for m in sched.get("/v1/acl/auth-methods").json()]
    assert names == ["-x", "0", "A", "B", "a-1", "b"]


def test_delete_existing_then_unknown(sched):
    method = sched.state.upsert_auth_method(mock_oidc())
    r = sched.delete(f"/v1/acl/auth-method/{method.Name}")
    assert r.status_code == 200 and int(r.headers["X-Nomad-Index"]) == method.ModifyIndex + 1
    unknown = sched.delete("/v1/acl/auth-method/non-existing-auth-method")
    assert_plain(unknown, 500, "ACL auth method not found")
    assert "X-Nomad-Index" not in unknown.headers


def test_upsert_with_default_and_partial_update(sched):
    sched.state.set_token_ttl_bounds(min_ttl=10, max_ttl="24h")
    one = mock_oidc(Default=True)
    r = sched.put("/v1/acl/auth-method", json=one)
    assert r.status_code == 200 and int(r.headers["X-Nomad-Index"]) > 0
    stored = sched.state.get_auth_method(one["Name"])
    assert r.json()["Hash"] == base64.b64encode(stored.Hash).decode()
    assert r.json()["Default"] is True

    two = mock_oidc(Default=True)
    assert_plain(sched.put("/v1/acl/auth-method", json=two), 400, f"default method already exists: {one['Name']}")

    # Re-asserting Default on the current default is fine.
    assert sched.put(f"/v1/acl/auth-method/{one['Name']}", json=one).status_code == 200

    partial = sched.put("/v1/acl/auth-method", json={"Name": one["Name"], "TokenLocality": "global"})
    assert partial.status_code == 200
    out = partial.json()
    assert out["TokenLocality"] == "global"
    assert (out["Type"], out["MaxTokenTTL"], out["Config"]["OIDCClientID"]) == ("OIDC", "1h0m0s", "mock")
    assert out["Default"] is False  # Default is never merged: omitting it clears the flag
    # ...which frees the default slot for another method.
    assert sched.put("/v1/acl/auth-method", json=two).status_code == 200


def test_update_of_unknown_name_creates_it_and_create_of_known_name_updates_it(sched):
    body = mock_oidc()
    created = sched.put(f"/v1/acl/auth-method/{body['Name']}", json=body)
    assert created.status_code == 200 and created.json()["CreateIndex"] == int(created.headers["X-Nomad-Index"])
    updated = sched.put("/v1/acl/auth-method", json={**body, "TokenLocality": "global"})
    assert updated.status_code == 200
    assert updated.json()["CreateIndex"] == created.json()["CreateIndex"]
    assert updated.json()["ModifyIndex"] == int(updated.headers["X-Nomad-Index"]) > updated.json()["CreateIndex"]


def test_type_can_change_on_update(sched):
    body = mock_oidc()
    sched.create(body)
    r = sched.put(f"/v1/acl/auth-method/{body['Name']}", json={"Name": body["Name"], "Type": "JWT"})
    assert r.status_code == 200 and r.json()["Type"] == "JWT"
