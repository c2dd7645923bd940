"""The local region's view: lag on the double's clock, pause and sync, read lag, federated replica
indexes, regions, local tokens and a missing leader (reference §11)."""

import datetime

from sched_helpers import assert_plain, mock_oidc

from pytest_schedpki.clock import ManualClock

T0 = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


def names(s, query=""):
    r = s.get(f"/v1/acl/auth-methods{query}")
    assert r.status_code == 200, r.text
    return [m["Name"] for m in r.json()], int(r.headers["X-Nomad-Index"])


def test_time_lag_on_a_manual_clock(make_sched):
    clock = ManualClock(T0)
    s = make_sched(clock=clock)
    s.state.set_lag(30)
    created = s.create(mock_oidc("late"))  # the write itself answers from the authoritative region
    assert created.json()["ModifyIndex"] == 2
    assert names(s) == ([], 1)
    missing = s.get("/v1/acl/auth-method/late")
    assert_plain(missing, 404, "ACL auth-method not found")
    assert missing.headers["X-Nomad-Index"] == "0"
    clock.advance(29.9)
    assert names(s) == ([], 1)
    clock.advance(0.1)
    assert names(s) == (["late"], 2)  # single region: the same indexes as the authoritative store
    assert s.get("/v1/acl/auth-method/late").json()["ModifyIndex"] == 2


def test_lagged_writes_appear_in_commit_order(make_sched):
    clock = ManualClock(T0)
    s = make_sched(clock=clock)
    s.state.set_lag(datetime.timedelta(seconds=10))
    s.create(mock_oidc("first"))
    clock.advance(5)
    s.create(mock_oidc("second"))
    s.create(mock_oidc("first", TokenLocality="global"))
    clock.advance(5)
    assert names(s) == (["first"], 2)
    assert s.get("/v1/acl/auth-method/first").json()["TokenLocality"] == "local"
    clock.advance(5)
    assert names(s) == (["first", "second"], 4)
    assert s.get("/v1/acl/auth-method/first").json()["TokenLocality"] == "global"


def test_paused_replication_serves_stale_reads_until_sync(sched):
    state = sched.state
    sched.create(mock_oidc("pausing"))
    state.pause_replication()
    updated = sched.put("/v1/acl/auth-method/pausing", json=mock_oidc("pausing", TokenLocality="global"))
    assert updated.json()["TokenLocality"] == "global"
    sched.create(mock_oidc("hidden"))
    for query in ("", "?stale", "?stale=true"):
        assert names(sched, query) == (["pausing"], 2)
        stale = sched.get(f"/v1/acl/auth-method/pausing{query}")
        assert (stale.json()["TokenLocality"], stale.headers["X-Nomad-Index"]) == ("local", "2")
    assert state.replicated_view().pending == 2
    assert sorted(state.authoritative_view().methods) == ["hidden", "pausing"]
    assert state.lag_settings() == {"seconds": 0.0, "after_reads": 0, "paused": True, "pending": 2, "leader": True}

    state.sync()
    assert names(sched) == (["hidden", "pausing"], 4)
    assert state.replicated_view().pending == 0 and not state.lag_settings()["paused"]
    sched.create(mock_oidc("after-sync"))  # sync resumed replication
    assert "after-sync" in names(sched)[0]


def test_read_lag_hides_a_write_from_the_next_reads(sched):
    sched.state.set_lag_reads(2)
    sched.create(mock_oidc("counted"))
    assert names(sched)[0] == []
    assert sched.get("/v1/acl/auth-method/counted").status_code == 404
    assert names(sched)[0] == ["counted"]
    assert sched.state.lag_settings()["after_reads"] == 2


def test_federated_replica_assigns_local_indexes(make_sched):
    s = make_sched(authoritative_region="global", region="europe")
    assert (s.state.region, s.state.authoritative_region) == ("europe", "global")
    a = s.create(mock_oidc("a")).json()
    assert (a["CreateIndex"], a["ModifyIndex"]) == (2, 2)
    local = s.get("/v1/acl/auth-method/a")
    assert (local.json()["CreateIndex"], local.json()["ModifyIndex"], local.headers["X-Nomad-Index"]) == (1, 1, "1")
    assert local.json()["Hash"] == a["Hash"] and local.json()["CreateTime"] == a["CreateTime"]
    remote = s.get("/v1/acl/auth-method/a?region=global")
    assert (remote.json()["ModifyIndex"], remote.headers["X-Nomad-Index"]) == (2, "2")

    s.put("/v1/acl/auth-method/a", json=mock_oidc("a", TokenLocality="global"))
    local = s.get("/v1/acl/auth-method/a").json()
    assert (local["CreateIndex"], local["ModifyIndex"], local["TokenLocality"]) == (1, 2, "global")

    # One replication pass over several writes: deletes in one local index, upserts in the next.
    s.state.pause_replication()
    s.create(mock_oidc("b"))
    s.create(mock_oidc("c"))
    s.delete("/v1/acl/auth-method/a")
    assert names(s) == (["a"], 2)
    s.state.sync()
    assert names(s) == (["b", "c"], 4)
    b = s.get("/v1/acl/auth-method/b").json()
    c = s.get("/v1/acl/auth-method/c").json()
    assert (b["CreateIndex"], c["CreateIndex"], c["ModifyIndex"]) == (4, 4, 4)
    view = s.state.replicated_view()
    assert (view.region, view.table_index, view.raft_index, view.pending) == ("europe", 4, 4, 0)
    assert s.state.authoritative_view().table_index == 6


def test_switching_regions_at_run_time_builds_a_fresh_replica(sched):
    sched.create(mock_oidc("x1"))
    sched.create(mock_oidc("x2"))
    sched.state.set_regions(region="europe")
    assert sched.state.known_regions == {"global", "europe"}
    assert names(sched) == (["x1", "x2"], 1)
    assert [m.CreateIndex for m in sched.state.list_auth_methods()] == [1, 1]
    assert [m.CreateIndex for m in sched.state.list_auth_methods("global")] == [2, 3]
    sched.state.set_regions(region="global")
    assert names(sched) == (["x1", "x2"], 3)


def test_region_parameter_routes_reads(make_sched):
    s = make_sched(region="europe")
    s.state.pause_replication()
    s.create(mock_oidc("only-upstream"))
    assert names(s) == ([], 1)
    assert names(s, "?region=europe") == ([], 1)
    assert names(s, "?region=global") == (["only-upstream"], 2)
    assert_plain(s.get("/v1/acl/auth-methods?region=mars"), 500, "No path to region")


def test_local_tokens_only_work_in_their_region(make_sched):
    s = make_sched(region="europe")
    s.create(mock_oidc("t"))
    local = s.state.add_token(type="management", global_=False)
    assert local.Global is False and local.CreateIndex == 2  # a local raft index
    assert s.get("/v1/acl/auth-method/t", token=local.SecretID).status_code == 200
    assert_plain(s.get("/v1/acl/auth-method/t?region=global", token=local.SecretID), 403, "Permission denied")
    assert_plain(s.put("/v1/acl/auth-method", json=mock_oidc("u"), token=local.SecretID), 403, "Permission denied")
    assert s.put("/v1/acl/auth-method", json=mock_oidc("u")).status_code == 200  # the global bootstrap token


def test_without_a_leader(make_sched):
    clock = ManualClock(T0)
    s = make_sched(clock=clock)
    s.create(mock_oidc("led"))
    s.state.set_leader(False)
    clock.advance(1.5)
    assert_plain(s.get("/v1/acl/auth-methods"), 500, "No cluster leader")
    assert_plain(s.get("/v1/acl/auth-method/led", token=None), 500, "No cluster leader")
    stale = s.get("/v1/acl/auth-method/led?stale")
    assert stale.status_code == 200
    assert (stale.headers["X-Nomad-KnownLeader"], stale.headers["X-Nomad-LastContact"]) == ("false", "1500")
    assert_plain(s.put("/v1/acl/auth-method", json=mock_oidc("new"), token=None), 500, "No cluster leader")
    assert_plain(s.delete("/v1/acl/auth-method/led"), 500, "No cluster leader")
    assert s.state.lag_settings()["leader"] is False
    s.state.set_leader(True)
    assert s.get("/v1/acl/auth-methods").headers["X-Nomad-KnownLeader"] == "true"


def test_a_leaderless_federated_region_still_forwards_writes_but_stops_replicating(make_sched):
    s = make_sched(region="europe")
    s.state.set_leader(False)
    assert s.create(mock_oidc("forwarded")).status_code == 200
    assert names(s, "?stale") == ([], 1)
    s.state.set_leader(True)
    assert names(s) == (["forwarded"], 1)


def test_snapshot_restores_knobs_regions_and_data(sched):
    state = sched.state
    sched.create(mock_oidc("kept"))
    baseline = state.snapshot()
    state.set_regions(region="europe")
    state.set_lag(60)
    state.set_leader(False)
    state.upsert_auth_method(mock_oidc("dropped"))
    state.add_token(secret_id="temp")
    state.restore(baseline)
    assert (state.region, state.leader, state.lag, state.last_index) == ("global", True, datetime.timedelta(0), 2)
    assert names(sched) == (["kept"], 2)
    assert state.get_token("temp") is None
    state.restore(None)
    assert (names(sched), state.last_index, state.get_token("root").Name) == (([], 1), 1, "Bootstrap Token")
