"""Blocking queries: they block until a relevant write from another thread, else until the wait deadline."""

import threading
import time

import pytest
from freezegun import freeze_time
from sched_helpers import assert_plain, mock_oidc

from pytest_schedpki.clock import real_monotonic

DELAY = 0.25


def later(delay: float, action) -> threading.Thread:
    """A thread, not started yet, that runs ``action`` ``delay`` real seconds after it starts. Hand it to
    :func:`timed`, which starts it once its clock runs: the time measured then always covers the whole
    delay, however late the thread gets to run."""
    def run():
        time.sleep(delay)
        action()
    return threading.Thread(target=run, daemon=True)


def timed(call, writer: threading.Thread | None = None):
    """``(call(), real seconds it took)``; ``writer`` is started right after the clock starts."""
    start = real_monotonic()
    if writer is not None:
        writer.start()
    result = call()
    return result, real_monotonic() - start


def test_blocking_list_wakes_on_upsert_then_on_delete(sched):
    index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=10s"),
                       later(DELAY, lambda: sched.state.upsert_auth_method(mock_oidc("blocked"))))
    assert DELAY <= elapsed < 5
    upsert_index = int(r.headers["X-Nomad-Index"])
    assert upsert_index > index and [m["Name"] for m in r.json()] == ["blocked"]

    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={upsert_index}&wait=10s"),
                       later(DELAY, lambda: sched.state.delete_auth_method("blocked")))
    assert DELAY <= elapsed < 5
    assert int(r.headers["X-Nomad-Index"]) == upsert_index + 1 and r.json() == []


def test_blocking_read_ignores_unrelated_writes(sched):
    watched = sched.state.upsert_auth_method(mock_oidc("watched"))

    def writes():
        time.sleep(DELAY)
        sched.state.upsert_auth_method(mock_oidc("unrelated"))  # higher index, other method
        time.sleep(DELAY)
        sched.state.upsert_auth_method(mock_oidc("watched", TokenLocality="global"))

    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-method/watched?index={watched.ModifyIndex}&wait=10s"),
                       threading.Thread(target=writes, daemon=True))
    assert 2 * DELAY <= elapsed < 5
    assert r.status_code == 200 and r.json()["TokenLocality"] == "global"
    assert int(r.headers["X-Nomad-Index"]) == r.json()["ModifyIndex"] == watched.ModifyIndex + 2

    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-method/watched?index={watched.ModifyIndex + 2}&wait=10s"),
                       later(DELAY, lambda: sched.state.delete_auth_method("watched")))
    assert DELAY <= elapsed < 5
    assert_plain(r, 404, "ACL auth-method not found")
    assert int(r.headers["X-Nomad-Index"]) == watched.ModifyIndex + 3


def test_blocking_returns_at_the_wait_deadline_with_the_same_index(sched):
    index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=300ms"))
    assert r.status_code == 200 and r.headers["X-Nomad-Index"] == str(index)
    # at the deadline (wait + jitter of at most wait/16), not Nomad's 300 s default; the slack is for a
    # loaded 2-core machine (the jitter bound itself is pinned without timing in test_wait_jitter_bound)
    assert 0.3 <= elapsed < 0.3 + 0.3 / 16 + 2.5


def test_a_lower_index_answers_at_once(sched):
    sched.state.upsert_auth_method(mock_oidc("present"))
    r, elapsed = timed(lambda: sched.get("/v1/acl/auth-methods?index=1&wait=10s"))
    assert elapsed < 1 and r.json()[0]["Name"] == "present"
    _, elapsed = timed(lambda: sched.get("/v1/acl/auth-methods?index=0&wait=10s"))
    assert elapsed < 1


def test_no_op_upserts_do_not_wake_a_blocked_list(sched):
    body = mock_oidc("same")
    sched.state.upsert_auth_method(body)
    index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=400ms"),
                       later(0.05, lambda: sched.state.upsert_auth_method(body)))
    assert elapsed >= 0.4 and r.headers["X-Nomad-Index"] == str(index)


@pytest.mark.parametrize("tick", [False, True])
def test_blocking_under_a_frozen_clock(sched, tick):
    with freeze_time("2030-01-01T00:00:00Z", tick=tick):
        index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
        r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=250ms"))
        assert r.headers["X-Nomad-Index"] == str(index) and 0.25 <= elapsed < 1.5
        r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=10s"),
                           later(DELAY, lambda: sched.state.upsert_auth_method(mock_oidc("frozen"))))
        assert DELAY <= elapsed < 5 and r.json()[0]["Name"] == "frozen"
        read = sched.get("/v1/acl/auth-method/frozen").json()
        assert read["CreateTime"].startswith("2030-01-01T00:00:0")


def test_a_lagged_write_wakes_a_blocked_reader_when_it_becomes_visible(sched):
    sched.state.set_lag(0.4)
    index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
    sched.state.upsert_auth_method(mock_oidc("lagged"))
    r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=10s"))
    assert 0.3 <= elapsed < 3  # woke when visible, long before the 10s deadline
    assert [m["Name"] for m in r.json()] == ["lagged"]


def test_a_lagged_write_under_a_frozen_clock_waits_for_the_deadline(sched):
    with freeze_time("2030-01-01T00:00:00Z"):
        sched.state.set_lag(0.1)
        index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
        sched.state.upsert_auth_method(mock_oidc("frozen-lag"))
        r, elapsed = timed(lambda: sched.get(f"/v1/acl/auth-methods?index={index}&wait=300ms"))
        assert 0.3 <= elapsed < 1.5 and r.json() == []  # frozen: the lag never expires


def test_blocked_readers_do_not_hold_the_lock(sched):
    index = int(sched.get("/v1/acl/auth-methods").headers["X-Nomad-Index"])
    results = []
    readers = [threading.Thread(target=lambda: results.append(
        sched.get(f"/v1/acl/auth-methods?index={index}&wait=10s")), daemon=True) for _ in range(3)]
    for t in readers:
        t.start()
    time.sleep(0.2)
    _, elapsed = timed(lambda: sched.create(mock_oidc("unblock")))
    assert elapsed < 1
    for t in readers:
        t.join(5)
    assert [r.json()[0]["Name"] for r in results] == ["unblock"] * 3



def test_wait_jitter_bound(monkeypatch):
    """``block_until`` waits ``wait`` plus a jitter drawn from [0, wait/16] (Nomad's ``blockingRPC``),
    on real monotonic time, re-checking after each wake-up."""
    from pytest_schedpki.scheduler import blocking
    from pytest_schedpki.scheduler.views import QueryResult

    drawn = []
    monkeypatch.setattr(blocking.random, "uniform", lambda low, high: drawn.append((low, high)) or high)
    times = [0.0, 0.0, 0.5, 2.0]  # deadline computed, a wake-up at 0.5 s, then one past the deadline
    monkeypatch.setattr(blocking, "real_monotonic", lambda: times.pop(0))  # a 5th call fails the test
    waits = []

    class Cond:
        def wait(self, seconds):
            waits.append(seconds)

    unchanged = QueryResult(index=5, value=None)
    result = blocking.block_until(Cond(), lambda: unchanged, min_index=5, wait_ns=1_600_000_000, next_wake=lambda: None)
    assert result is unchanged
    assert drawn == [(0, 0.1)]  # 1.6 s / 16
    assert waits == pytest.approx([1.7, 1.2])  # deadline = 1.6 s + the whole jitter
