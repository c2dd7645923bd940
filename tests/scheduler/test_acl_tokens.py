"""ACL tokens over HTTP: create, read, update, delete, list, self (``nomad/acl_endpoint.go``
``UpsertTokens``/``upsertTokens``, ``DeleteTokens``, ``GetToken``, ``ListTokens``, ``WhoAmI``;
``nomad/structs/acl.go`` ``ACLToken.Canonicalize``/``Validate``; ``command/agent/acl_endpoint.go``)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import uuid

import pytest
from freezegun import freeze_time
from sched_helpers import assert_plain


def policy(s, name="eng", rules='namespace "default" { policy = "read" }'):
    r = s.put(f"/v1/acl/policy/{name}", json={"Name": name, "Rules": rules})
    assert r.status_code == 200, r.text


def create(s, **body):
    r = s.put("/v1/acl/token", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_create_a_client_token_answers_the_stored_token_with_its_secret(sched):
    policy(sched)
    before = sched.state.last_index
    r = sched.put("/v1/acl/token", json={"Name": "ci", "Type": "client", "Policies": ["eng"]})
    assert r.status_code == 200
    t = r.json()
    assert list(t) == ["ExpirationTTL", "AccessorID", "SecretID", "Name", "Type", "Policies", "Roles", "Global",
                       "Hash", "CreateTime", "ExpirationTime", "CreateIndex", "ModifyIndex"]
    assert (t["Name"], t["Type"], t["Policies"], t["Roles"], t["Global"], t["ExpirationTime"], t["ExpirationTTL"]) == (
        "ci", "client", ["eng"], None, False, None, "")
    uuid.UUID(t["AccessorID"]), uuid.UUID(t["SecretID"])
    assert t["CreateIndex"] == t["ModifyIndex"] == before + 1 == int(r.headers["X-Nomad-Index"])
    digest = hashlib.blake2b(b"ciclientenglocal", digest_size=32).digest()  # SetHash: name, type, policies, local
    assert t["Hash"] == base64.b64encode(digest).decode()
    read = sched.get(f"/v1/acl/token/{t['AccessorID']}")
    assert read.status_code == 200 and read.json() == t
    assert read.headers["X-Nomad-Index"] == str(t["ModifyIndex"])
    me = sched.get("/v1/acl/token/self", token=t["SecretID"])
    assert me.json() == t and me.headers["X-Nomad-Index"] == str(t["ModifyIndex"])


def test_a_management_token_has_null_policies_and_roles(sched):
    t = create(sched, Name="admin", Type="management", Global=True)
    assert (t["Type"], t["Policies"], t["Roles"], t["Global"]) == ("management", None, None, True)
    assert sched.get("/v1/acl/tokens", token=t["SecretID"]).status_code == 200


@pytest.mark.parametrize(("body", "problems"), [
    ({"Type": "client"}, ["client token missing policies or roles"]),
    ({"Type": "management", "Policies": ["eng"]}, ["management token cannot be associated with policies or roles"]),
    ({"Type": "root"}, ["token type must be client or management"]),
    ({}, ["token type must be client or management"]),
    ({"Type": "client", "Policies": ["eng"], "Name": "n" * 257}, ["token name too long"]),
    ({"Type": "client", "Policies": ["eng"], "ExpirationTTL": "-1m"},  # Canonicalize derived an ExpirationTime
     ["token expiration TTL '-1m0s' should not be negative", "expiration time cannot be before create time",
      "expiration time cannot be less than 1m0s in the future (was -1m0s)"]),
    ({"Type": "client", "Policies": ["eng"], "ExpirationTTL": "30s"},
     ["expiration time cannot be less than 1m0s in the future (was 30s)"]),
    ({"Type": "client", "Policies": ["eng"], "ExpirationTTL": "25h"},
     ["expiration time cannot be more than 24h0m0s in the future (was 25h0m0s)"]),
    ({"Type": "x", "Name": "n" * 300}, ["token name too long", "token type must be client or management"]),
])
def test_validation_texts(sched, body, problems):
    before = sched.state.last_index
    r = sched.put("/v1/acl/token", json=body)
    if len(problems) == 1:
        text = f"token 0 invalid: 1 error occurred:\n\t* {problems[0]}\n\n"
    else:
        text = f"token 0 invalid: {len(problems)} errors occurred:\n\t" + "\n\t".join(f"* {p}" for p in problems) + "\n\n"
    assert_plain(r, 400, text)
    assert sched.state.last_index == before  # nothing written


def test_expiration_ttl_sets_the_expiration_time_and_expired_tokens_are_refused(sched):
    policy(sched)
    with freeze_time("2026-01-01T00:00:00Z") as frozen:
        t = create(sched, Type="client", Policies=["eng"], ExpirationTTL="1h")
        assert (t["ExpirationTTL"], t["CreateTime"], t["ExpirationTime"]) == (
            "1h0m0s", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z")
        assert sched.get("/v1/acl/token/self", token=t["SecretID"]).status_code == 200
        frozen.tick(datetime.timedelta(hours=1, seconds=1))
        # GetToken and WhoAmI return Authenticate's ErrTokenExpired as is: the agent answers 500
        assert_plain(sched.get("/v1/acl/token/self", token=t["SecretID"]), 500, "ACL token expired")
        assert_plain(sched.get(f"/v1/acl/token/{t['AccessorID']}", token=t["SecretID"]), 500, "ACL token expired")
        # endpoints that turn an authentication error into Permission denied
        assert_plain(sched.get("/v1/acl/policy/eng", token=t["SecretID"]), 403, "Permission denied")


def test_expiration_time_given_explicitly(sched):
    policy(sched)
    with freeze_time("2026-01-01T00:00:00Z"):
        t = create(sched, Type="client", Policies=["eng"], ExpirationTime="2026-01-01T02:30:00Z")
        assert (t["ExpirationTTL"], t["ExpirationTime"]) == ("", "2026-01-01T02:30:00Z")
        r = sched.put("/v1/acl/token", json={"Type": "client", "Policies": ["eng"],
                                             "ExpirationTime": "2025-12-31T23:00:00Z"})
        assert_plain(r, 400, "token 0 invalid: 2 errors occurred:\n\t* expiration time cannot be before create "
                             "time\n\t* expiration time cannot be less than 1m0s in the future (was -1h0m0s)\n\n")


def test_update_keeps_secret_create_time_and_create_index(sched):
    policy(sched), policy(sched, "ops")
    t = create(sched, Name="a", Type="client", Policies=["eng"])
    body = dict(t, Name="b", Policies=["eng", "ops"], SecretID="ignored")
    r = sched.post(f"/v1/acl/token/{t['AccessorID']}", json=body)
    assert r.status_code == 200, r.text
    u = r.json()
    assert (u["Name"], u["Policies"], u["SecretID"], u["CreateTime"], u["CreateIndex"]) == (
        "b", ["eng", "ops"], t["SecretID"], t["CreateTime"], t["CreateIndex"])
    assert u["ModifyIndex"] == int(r.headers["X-Nomad-Index"]) > t["ModifyIndex"]
    assert_plain(sched.put(f"/v1/acl/token/{t['AccessorID']}", json=dict(body, Global=True)), 400,
                 "token 0 invalid: 1 error occurred:\n\t* cannot toggle global mode\n\n")
    assert_plain(sched.put(f"/v1/acl/token/{t['AccessorID']}", json=dict(body, ExpirationTTL="1h")), 400,
                 "token 0 invalid: 1 error occurred:\n\t* cannot update expiration TTL\n\n")
    assert_plain(sched.put(f"/v1/acl/token/{uuid.uuid4()}", json=body), 400,
                 "ACL token accessor does not match request path")


def test_update_of_an_unknown_accessor(sched):
    policy(sched)
    accessor = str(uuid.uuid4())
    assert_plain(sched.put("/v1/acl/token", json={"AccessorID": accessor, "Type": "client", "Policies": ["eng"]}),
                 400, f"cannot find token {accessor}")
    assert_plain(sched.put("/v1/acl/token", json={"AccessorID": "nope", "SecretID": str(uuid.uuid4()),
                                                  "Type": "client", "Policies": ["eng"]}), 400, "cannot find token nope")
    # both IDs UUIDs and a client token: an upload, created with these IDs
    secret = str(uuid.uuid4())
    t = create(sched, AccessorID=accessor, SecretID=secret, Type="client", Policies=["eng"])
    assert (t["AccessorID"], t["SecretID"]) == (accessor, secret)
    upload = str(uuid.uuid4())  # a management token cannot be uploaded
    assert_plain(sched.put("/v1/acl/token", json={"AccessorID": upload, "SecretID": str(uuid.uuid4()),
                                                  "Type": "management"}), 400, f"cannot find token {upload}")


def test_role_links_by_id_or_name_deduplicated_and_deleted_roles_drop_out(sched):
    policy(sched)
    role = sched.put("/v1/acl/role", json={"Name": "dev", "Policies": [{"Name": "eng"}]}).json()
    t = create(sched, Type="client", Roles=[{"Name": "dev"}, {"ID": role["ID"]}])
    assert t["Roles"] == [{"ID": role["ID"], "Name": "dev"}] and t["Policies"] is None
    assert_plain(sched.put("/v1/acl/token", json={"Type": "client", "Roles": [{"Name": "ghost"}]}), 400,
                 "cannot find role ghost")
    ghost = str(uuid.uuid4())
    assert_plain(sched.put("/v1/acl/token", json={"Type": "client", "Roles": [{"ID": ghost}]}), 400,
                 f"cannot find role {ghost}")
    listed = next(x for x in sched.get("/v1/acl/tokens").json() if x["AccessorID"] == t["AccessorID"])
    assert listed["Roles"] == [{"ID": role["ID"], "Name": ""}]  # the list shows the stored links
    assert sched.delete(f"/v1/acl/role/{role['ID']}").status_code == 200
    assert sched.get(f"/v1/acl/token/{t['AccessorID']}").json()["Roles"] is None  # fixTokenRoleLinks


def test_delete(sched):
    policy(sched)
    t = create(sched, Type="client", Policies=["eng"])
    r = sched.delete(f"/v1/acl/token/{t['AccessorID']}")
    assert (r.status_code, r.content) == (200, b"")
    assert int(r.headers["X-Nomad-Index"]) == sched.state.last_index
    assert_plain(sched.get("/v1/acl/token/self", token=t["SecretID"]), 403, "Permission denied")
    assert_plain(sched.delete(f"/v1/acl/token/{t['AccessorID']}"), 400,
                 f"Cannot delete nonexistent tokens: {t['AccessorID']}")


def test_only_management_writes_lists_and_reads_other_tokens(sched):
    policy(sched)
    me = create(sched, Type="client", Policies=["eng"])
    other = create(sched, Type="client", Policies=["eng"])
    for r in (sched.put("/v1/acl/token", json={"Type": "client", "Policies": ["eng"]}, token=me["SecretID"]),
              sched.delete(f"/v1/acl/token/{other['AccessorID']}", token=me["SecretID"]),
              sched.get("/v1/acl/tokens", token=me["SecretID"]),
              sched.get(f"/v1/acl/token/{other['AccessorID']}", token=me["SecretID"]),
              sched.get(f"/v1/acl/token/{uuid.uuid4()}", token=me["SecretID"]),
              sched.put("/v1/acl/token", json={}, token=None),
              sched.put("/v1/acl/token", json={}, token=str(uuid.uuid4()))):
        assert_plain(r, 403, "Permission denied")
    assert sched.get(f"/v1/acl/token/{me['AccessorID']}", token=me["SecretID"]).status_code == 200


def test_list_prefix_filter_pages_and_reverse(sched):
    policy(sched)
    made = [create(sched, Name=f"t{i}", Type="client", Policies=["eng"]) for i in range(5)]
    root = sched.state.get_token("root")
    listed = sched.get("/v1/acl/tokens").json()
    assert [t["AccessorID"] for t in listed] == [root.AccessorID] + [t["AccessorID"] for t in made]  # CreateIndex order
    assert "SecretID" not in listed[0] and "ExpirationTTL" not in listed[0]
    page = sched.get("/v1/acl/tokens", params={"per_page": 2})
    assert [t["Name"] for t in page.json()] == ["Bootstrap Token", "t0"]
    assert page.headers["X-Nomad-NextToken"] == f"{made[1]['CreateIndex']}.{made[1]['AccessorID']}"
    nxt = sched.get("/v1/acl/tokens", params={"per_page": 2, "next_token": page.headers["X-Nomad-NextToken"]})
    assert [t["Name"] for t in nxt.json()] == ["t1", "t2"]
    last = sched.get("/v1/acl/tokens", params={"per_page": 10, "reverse": "true"})
    assert [t["Name"] for t in last.json()][:2] == ["t4", "t3"] and "X-Nomad-NextToken" not in last.headers
    prefix = made[3]["AccessorID"][:8]
    assert [t["AccessorID"] for t in sched.get("/v1/acl/tokens", params={"prefix": prefix}).json()] == [
        made[3]["AccessorID"]]
    assert [t["Name"] for t in sched.get("/v1/acl/tokens", params={"filter": 'Name == "t2"'}).json()] == ["t2"]
    mgmt = sched.get("/v1/acl/tokens", params={"filter": 'Type == "management"'}).json()
    assert [t["Name"] for t in mgmt] == ["Bootstrap Token"]
    assert len(sched.get("/v1/acl/tokens", params={"filter": '"eng" in Policies'}).json()) == 5
    bad = sched.get("/v1/acl/tokens", params={"filter": "Name ==="})
    assert bad.status_code == 400
    assert bad.text.startswith("failed to create result paginator: failed to read filter expression: ")
    assert sched.get("/v1/acl/tokens").headers["X-Nomad-Index"] == str(made[-1]["ModifyIndex"])


@pytest.mark.parametrize(("body", "text"), [
    (b"", "Request body is empty"),
    (b"{", "unexpected EOF"),
    (b'{"Name": 1}', "json: cannot unmarshal number into Go struct field .Name of type string"),
    (b'{"ExpirationTTL": "soon"}', 'time: invalid duration "soon"'),
    (b'{"CreateTime": 5}', "Time.UnmarshalJSON: input is not a JSON string"),
    (b"[]", "json: cannot unmarshal array into Go value of type "
            "struct { ExpirationTTL interface {}; Hash string; *structs.Alias }"),
])
def test_bad_bodies(sched, body, text):
    before = sched.state.last_index
    assert_plain(sched.put("/v1/acl/token", data=body), 400, text)
    assert sched.state.last_index == before


def test_routes_and_methods(sched):
    assert_plain(sched.get("/v1/acl/token"), 405, "Invalid method")
    assert_plain(sched.put("/v1/acl/tokens", json={}), 405, "Invalid method")
    assert_plain(sched.delete("/v1/acl/token/"), 400, "Missing Token Accessor")
    assert_plain(sched.request("PATCH", f"/v1/acl/token/{uuid.uuid4()}"), 405, "Invalid method")
    assert_plain(sched.put("/v1/acl/token/self", json={}), 405, "Invalid method")
    sched.state.set_acl_enabled(False)
    try:
        assert_plain(sched.put("/v1/acl/token", json={"Type": "management"}), 400, "ACL support disabled")
        assert_plain(sched.get("/v1/acl/tokens"), 400, "ACL support disabled")
    finally:
        sched.state.set_acl_enabled(True)


@pytest.mark.parametrize("expression", ['Name matches "(?<=x)"', 'Name matches "\\\\C"', 'Nope == "x"',
                                        'Policies == "x"', "Global == maybe", "(" * 500 + 'Name == "x"' + ")" * 500])
def test_hostile_filters_answer_400_and_change_nothing(sched, expression):
    policy(sched)
    create(sched, Type="client", Policies=["eng"])
    before = sched.state.last_index
    r = sched.get("/v1/acl/tokens", params={"filter": expression})
    assert r.status_code == 400 and r.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert r.text.startswith(("failed to read result page: ", "failed to create result paginator: "))
    assert sched.state.last_index == before
