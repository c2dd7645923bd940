"""The token table under the replication knobs, like the auth methods and binding rules: reads of the
local region (``GET /v1/acl/tokens``, ``GET /v1/acl/token/:accessor``) see a new, changed or deleted
token once the lag allows; the token itself works at once (authentication is the leader's)."""

import datetime

from sched_helpers import assert_plain

from pytest_schedpki.clock import ManualClock

T0 = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


def accessors(s):
    r = s.get("/v1/acl/tokens")
    assert r.status_code == 200, r.text
    return [t["AccessorID"] for t in r.json()], int(r.headers["X-Nomad-Index"])


def test_a_lagged_token_is_listed_and_read_after_the_lag_but_works_at_once(make_sched):
    clock = ManualClock(T0)
    s = make_sched(clock=clock)
    root = s.state.get_token("root").AccessorID
    s.state.set_lag(30)
    created = s.put("/v1/acl/token", json={"Name": "ci", "Type": "management"})
    assert created.status_code == 200  # the write answers from the authoritative table
    token = created.json()
    assert accessors(s) == ([root], 1)
    assert_plain(s.get(f"/v1/acl/token/{token['AccessorID']}"), 404, "ACL token not found")
    assert s.get("/v1/acl/token/self", token=token["SecretID"]).status_code == 200  # usable at once
    clock.advance(30)
    assert accessors(s) == ([root, token["AccessorID"]], token["ModifyIndex"])
    assert s.get(f"/v1/acl/token/{token['AccessorID']}").json()["Name"] == "ci"


def test_updates_and_deletes_follow_pause_and_sync(sched):
    made = sched.put("/v1/acl/token", json={"Name": "a", "Type": "management"}).json()
    sched.state.pause_replication()
    body = dict(made, Name="b")
    assert sched.put(f"/v1/acl/token/{made['AccessorID']}", json=body).json()["Name"] == "b"
    assert sched.get(f"/v1/acl/token/{made['AccessorID']}").json()["Name"] == "a"  # stale
    assert sched.delete(f"/v1/acl/token/{made['AccessorID']}").status_code == 200
    assert made["AccessorID"] in accessors(sched)[0]
    sched.state.sync()
    assert made["AccessorID"] not in accessors(sched)[0]


def test_read_lag_hides_a_new_token_from_the_next_read(sched):
    sched.state.set_lag_reads(1)
    made = sched.put("/v1/acl/token", json={"Name": "r", "Type": "management"}).json()
    assert made["AccessorID"] not in accessors(sched)[0]
    assert made["AccessorID"] in accessors(sched)[0]
