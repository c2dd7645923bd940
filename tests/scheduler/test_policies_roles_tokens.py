"""ACL policies, roles and token reads as login needs them: Nomad's ``ACL.UpsertPolicies``,
``GetPolicy``, ``ListPolicies``, ``UpsertRoles``, ``GetRoleByID``/``GetRoleByName``,
``DeleteRolesByID``, ``GetToken``/``ResolveToken``/``ListTokens`` (nomad/acl_endpoint.go) and the
agent's routes (command/agent/acl_endpoint.go); reference nomad-acl-sso.md §4, §9."""

import uuid

import pytest
from sched_helpers import assert_plain


def put_policy(s, name="eng", **kw):
    r = s.put(f"/v1/acl/policy/{name}", json={"Name": name, "Description": "d", "Rules": 'namespace "default" {}',
                                               **kw})
    assert r.status_code == 200, r.text
    return r


def test_policy_write_is_an_empty_200_and_reads_back(sched):
    r = put_policy(sched)
    assert (r.content, r.headers["X-Nomad-Index"]) == (b"", "2")
    got = sched.get("/v1/acl/policy/eng")
    assert list(got.json()) == ["Name", "Description", "Rules", "RulesJSON", "JobACL", "Hash", "CreateIndex",
                                "ModifyIndex"]
    assert (got.json()["CreateIndex"], got.headers["X-Nomad-Index"]) == (2, "2")
    put_policy(sched, Description="changed")
    assert sched.get("/v1/acl/policy/eng").json()["CreateIndex"] == 2  # overwritten in place
    listed = sched.get("/v1/acl/policies")
    assert [p["Name"] for p in listed.json()] == ["eng"] and listed.headers["X-Nomad-Index"] == "3"


def test_policy_errors(sched):
    assert_plain(sched.put("/v1/acl/policy/eng", json={"Name": "ops"}), 400,
                 "ACL policy name does not match request path")
    assert_plain(sched.put("/v1/acl/policy/a b", json={"Name": "a b"}), 400,
                 "policy 0 invalid: 1 error occurred:\n\t* invalid name 'a b'\n\n")
    assert_plain(sched.put("/v1/acl/policy/eng", json={"Name": "eng"}, token=None), 403, "Permission denied")
    assert_plain(sched.get("/v1/acl/policy/nope"), 404, "ACL policy not found")
    assert_plain(sched.get("/v1/acl/policy/"), 400, "Missing Policy Name")
    assert sched.delete("/v1/acl/policy/nope").status_code == 200  # deleting an unknown name succeeds


def test_role_lifecycle_and_texts(sched):
    put_policy(sched)
    r = sched.put("/v1/acl/role", json={"Name": "devs", "Policies": [{"Name": "eng"}, {"Name": "eng"}]})
    assert r.status_code == 200, r.text
    role = r.json()
    assert list(role) == ["ID", "Name", "Description", "Policies", "Hash", "CreateIndex", "ModifyIndex"]
    assert role["Policies"] == [{"Name": "eng"}] and r.headers["X-Nomad-Index"] == "3"
    assert sched.get(f"/v1/acl/role/{role['ID']}").json() == role
    assert sched.get("/v1/acl/role/name/devs").json() == role
    assert_plain(sched.put("/v1/acl/role", json={"Name": "devs", "Policies": [{"Name": "eng"}]}), 400,
                 "role with name devs already exists")
    assert_plain(sched.put("/v1/acl/role", json={"Name": "x", "Policies": [{"Name": "nope"}]}), 400,
                 "cannot find policy nope")
    assert_plain(sched.put("/v1/acl/role", json={"Name": "x"}), 400,
                 "role 0 invalid: 1 error occurred:\n\t* at least one policy should be specified\n\n")
    assert_plain(sched.put(f"/v1/acl/role/{role['ID']}", json={"Name": "devs"}), 400,
                 "ACL role ID does not match request path")
    assert_plain(sched.get("/v1/acl/role/name/nope"), 404, "ACL role not found")
    assert_plain(sched.get(f"/v1/acl/role/{role['ID']}", token=None), 403, "ACL token not found")
    assert_plain(sched.get("/v1/acl/role/x/devs"), 400, "invalid URI")
    assert_plain(sched.get("/v1/acl/role/a/b/c"), 400, "invalid URI")
    assert_plain(sched.get("/v1/acl/role/name/"), 400, "missing ACL role name")
    assert_plain(sched.request("PATCH", "/v1/acl/role/"), 400, "missing ACL role ID")
    assert_plain(sched.delete(f"/v1/acl/role/{uuid.uuid4()}"), 500, "ACL role not found")
    assert [x["ID"] for x in sched.get("/v1/acl/roles").json()] == [role["ID"]]
    assert sched.delete(f"/v1/acl/role/{role['ID']}").status_code == 200
    assert sched.get("/v1/acl/roles").json() == []


def test_a_client_token_reads_its_own_policies_and_roles_only(sched):
    put_policy(sched, "eng")
    put_policy(sched, "ops")
    role = sched.put("/v1/acl/role", json={"Name": "devs", "Policies": [{"Name": "ops"}]}).json()
    _, token = sched.state.acl.create_login_token("t", False, ["eng"], [role["ID"]], True, 0)
    me = token.SecretID
    assert sched.get("/v1/acl/policy/eng", token=me).status_code == 200
    assert sched.get("/v1/acl/policy/ops", token=me).status_code == 200  # through the role
    assert [p["Name"] for p in sched.get("/v1/acl/policies", token=me).json()] == ["eng", "ops"]
    assert [p["Name"] for p in sched.get("/v1/acl/policy/self", token=me).json()] == ["eng", "ops"]
    assert sched.get(f"/v1/acl/role/{role['ID']}", token=me).status_code == 200
    put_policy(sched, "secret")
    assert_plain(sched.get("/v1/acl/policy/secret", token=me), 403, "Permission denied")
    assert_plain(sched.put("/v1/acl/policy/x", json={"Name": "x"}, token=me), 403, "Permission denied")
    assert_plain(sched.get("/v1/acl/tokens", token=me), 403, "Permission denied")


def test_token_self_accessor_and_list(sched):
    _, token = sched.state.acl.create_login_token("JWT-sso", False, ["eng"], [], False, 3600 * 10**9)
    me = sched.get("/v1/acl/token/self", token=token.SecretID)
    assert me.status_code == 200
    body = me.json()
    assert list(body) == ["ExpirationTTL", "AccessorID", "SecretID", "Name", "Type", "Policies", "Roles", "Global",
                          "Hash", "CreateTime", "ExpirationTime", "CreateIndex", "ModifyIndex"]
    assert (body["ExpirationTTL"], body["Type"], body["Policies"], body["Roles"], body["Global"]) == (
        "1h0m0s", "client", ["eng"], [], False)
    assert sched.get(f"/v1/acl/token/{token.AccessorID}", token=token.SecretID).json() == body
    assert sched.get(f"/v1/acl/token/{token.AccessorID}").json() == body
    assert_plain(sched.get("/v1/acl/token/self", token="nope"), 403, "Permission denied")
    assert me.headers["X-Nomad-Index"] == str(token.ModifyIndex)  # ACL.WhoAmI: the token's ModifyIndex
    anonymous = sched.get("/v1/acl/token/self", token=None)  # Authenticate gives the anonymous token
    assert (anonymous.status_code, anonymous.json()["AccessorID"], anonymous.json()["Policies"]) == (
        200, "anonymous", ["anonymous"])
    assert_plain(sched.get(f"/v1/acl/token/{uuid.uuid4()}"), 404, "ACL token not found")
    assert_plain(sched.get("/v1/acl/token/"), 400, "Missing Token Accessor")
    listed = sched.get("/v1/acl/tokens").json()
    assert sorted(t["AccessorID"] for t in listed) == sorted(
        [token.AccessorID, sched.state.get_token("root").AccessorID])
    assert "SecretID" not in listed[0]


@pytest.mark.parametrize("path", ["/v1/acl/policies", "/v1/acl/roles", "/v1/acl/tokens"])
def test_list_routes_only_answer_get(sched, path):
    assert_plain(sched.put(path, json={}), 405, "Invalid method")
