"""Raft and table indexes (``state_store_acl_sso_test.go``), meta headers and query parameters (reference §9)."""

import pytest
from sched_helpers import assert_plain, mock_oidc


def list_index(sched) -> int:
    r = sched.get("/v1/acl/auth-methods")
    assert r.status_code == 200
    return int(r.headers["X-Nomad-Index"])


def test_empty_list_reports_index_one(sched):
    r = sched.get("/v1/acl/auth-methods")
    assert (r.headers["X-Nomad-Index"], r.headers["X-Nomad-KnownLeader"], r.headers["X-Nomad-LastContact"]) == \
        ("1", "true", "0")


def test_identical_reupsert_is_a_noop_that_still_consumes_an_index(sched):
    one, two = mock_oidc("one"), mock_oidc("two")
    first = sched.create(one).json()
    sched.create(two)
    table = list_index(sched)
    again = sched.put("/v1/acl/auth-method", json=one)
    assert again.status_code == 200
    assert int(again.headers["X-Nomad-Index"]) == table + 1  # newer than the returned object
    assert again.json() == first  # same ModifyIndex, ModifyTime, CreateTime
    assert list_index(sched) == table
    assert sched.create(mock_oidc("three")).json()["CreateIndex"] == table + 2


def test_changed_upsert_keeps_create_index_and_moves_the_table(sched):
    body = mock_oidc("changing")
    first = sched.create(body).json()
    sched.create(mock_oidc("other"))
    changed = sched.put("/v1/acl/auth-method", json={**body, "Type": "JWT"})
    out = changed.json()
    index = int(changed.headers["X-Nomad-Index"])
    assert (out["CreateIndex"], out["ModifyIndex"], out["CreateTime"]) == (first["CreateIndex"], index, first["CreateTime"])
    assert list_index(sched) == index
    assert len(sched.get("/v1/acl/auth-methods").json()) == 2


def test_deletes_move_the_table_and_unknown_deletes_only_burn_an_index(sched):
    sched.create(mock_oidc("d1"))
    sched.create(mock_oidc("d2"))
    table = list_index(sched)
    assert_plain(sched.delete("/v1/acl/auth-method/nope"), 500, "ACL auth method not found")
    assert list_index(sched) == table
    first = sched.delete("/v1/acl/auth-method/d1")
    assert int(first.headers["X-Nomad-Index"]) == table + 2
    assert list_index(sched) == table + 2
    second = sched.delete("/v1/acl/auth-method/d2")
    assert list_index(sched) == int(second.headers["X-Nomad-Index"]) == table + 3
    assert sched.get("/v1/acl/auth-methods").json() == []


def test_default_method_is_flagged_in_the_list(sched):
    sched.create(mock_oidc("plain"))
    sched.create(mock_oidc("chosen", Default=True))
    assert [(m["Name"], m["Default"]) for m in sched.get("/v1/acl/auth-methods").json()] == \
        [("chosen", True), ("plain", False)]


@pytest.mark.parametrize("query, text", [
    ("stale=maybe", "Expect `true` or `false` for `stale` query string parameter"),
    ("per_page=ten", "Expect a number for `per_page` query string parameter"),
    ("per_page=2147483648", "Expect a number for `per_page` query string parameter"),
    ("wait=abc", "Invalid wait time"),
    ("wait=5", "Invalid wait time"),
    ("index=abc", "Invalid index"),
    ("index=-1", "Invalid index"),
    ("index=%2B1", "Invalid index"),
    ("index=18446744073709551616", "Invalid index"),
    ("index=x&wait=x&per_page=x&stale=x", "Expect `true` or `false` for `stale` query string parameter"),
    ("index=x&wait=x&per_page=x", "Expect a number for `per_page` query string parameter"),
    ("index=x&wait=x", "Invalid wait time"),
])
@pytest.mark.parametrize("path", ["/v1/acl/auth-methods", "/v1/acl/auth-method/any"])
def test_bad_query_parameters(sched, path, query, text):
    r = sched.get(f"{path}?{query}", token=None)
    assert_plain(r, 400, text)
    assert "X-Nomad-Index" not in r.headers


@pytest.mark.parametrize("query", ["stale", "stale=", "stale=true", "stale=0", "stale=T", "per_page=-5",
                                   "per_page=%2B5", "wait=", "wait=-1s", "index=", "index=007&wait=1ms",
                                   "prefix=zzz&filter=garbage((&reverse=true&next_token=x&namespace=*"])
def test_accepted_query_parameters_and_ignored_filters(sched, query):
    sched.create(mock_oidc("kept"))
    r = sched.get(f"/v1/acl/auth-methods?{query}")
    assert r.status_code == 200 and [m["Name"] for m in r.json()] == ["kept"]


def test_unknown_region_on_reads_is_500_before_the_token(sched):
    assert_plain(sched.get("/v1/acl/auth-methods?region=mars"), 500, "No path to region")
    assert_plain(sched.get("/v1/acl/auth-method/x?region=mars", token=None), 500, "No path to region")
    assert sched.get("/v1/acl/auth-methods?region=global").status_code == 200


def test_writes_ignore_the_region_parameter(sched):
    body = mock_oidc("anywhere")
    assert sched.put("/v1/acl/auth-method?region=mars", json=body).status_code == 200
    assert sched.delete("/v1/acl/auth-method/anywhere?region=mars").status_code == 200


def test_method_names_are_case_sensitive_keys(sched):
    sched.create(mock_oidc("Case"))
    sched.create(mock_oidc("case"))
    assert [m["Name"] for m in sched.get("/v1/acl/auth-methods").json()] == ["Case", "case"]
    assert sched.get("/v1/acl/auth-method/CASE").status_code == 404
