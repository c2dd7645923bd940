"""Issue 11, defect 7: parked blocking queries are woken only when what they wait for can have
changed (a write, a sync, a lagged write becoming visible), never by a plain read of the local
region. Wake-ups are counted, not timed."""

from __future__ import annotations

import threading

import pytest

from pytest_schedpki import Double
from pytest_schedpki.golang.duration import SECOND

WAITERS = 20
LONG_WAIT = 60 * SECOND  # the parked queries' own deadline: never reached in these tests


class CountingCondition(threading.Condition):
    """A condition variable that counts, under its lock, the parked waiters and the wake-ups it
    sends them (``wakeups``: the waiters parked at each notification, added up)."""

    def __init__(self, lock):
        super().__init__(lock)
        self.parked = 0
        self.wakeups = 0

    def wait(self, timeout=None):
        self.parked += 1
        try:
            return super().wait(timeout)
        finally:
            self.parked -= 1

    def notify_all(self):  # the state notifies with notify_all only
        self.wakeups += self.parked
        super().notify_all()


def _method(name: str) -> dict:
    return {"Name": name, "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
            "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "c",
                       "BoundAudiences": ["c"], "AllowedRedirectURIs": ["http://localhost/cb"]}}


@pytest.fixture
def state():
    double = Double()
    state = double.scheduler
    state.upsert_auth_method(_method("first"))
    cond = CountingCondition(state._lock)
    state._cond = cond  # the state waits on and notifies its _cond attribute
    return state


def _park(state, count: int = WAITERS) -> tuple[list[threading.Thread], list]:
    """Start ``count`` blocking list queries at the current index; return once all are parked."""
    index = state.query_list().index
    results: list = []

    def blocked():
        results.append(state.query_list(min_index=index, wait_ns=LONG_WAIT).index)

    threads = [threading.Thread(target=blocked, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    parked = threading.Event()

    def all_parked():
        with state._cond:
            return state._cond.parked == count
    for _ in range(2000):  # each check yields to the starting threads
        if all_parked():
            parked.set()
            break
        parked.wait(0.005)
    assert parked.is_set(), "the blocking queries did not park"
    return threads, results


def _join(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.join(30)  # a safety net only: the assertions count, they do not time
    assert not [t for t in threads if t.is_alive()], "blocking queries still parked"


def test_plain_reads_do_not_wake_parked_queries_and_a_write_does(state):
    threads, results = _park(state)
    before = state._cond.wakeups
    for _ in range(50):
        assert state.query_list().index == state.last_index  # non-blocking reads of the local region
        assert state.query_get("first", secret="root").value.Name == "first"
        assert len(state.list_auth_methods()) == 1
    with state._cond:
        assert state._cond.wakeups == before and state._cond.parked == WAITERS
    written = state.upsert_auth_method(_method("second"))
    assert state._cond.wakeups - before == WAITERS  # the write wakes every parked query
    _join(threads)
    assert results == [written.ModifyIndex] * WAITERS


def test_read_lag_releases_parked_queries_on_the_read_that_shows_the_write(state):
    state.set_lag_reads(2)
    threads, results = _park(state)
    before = state._cond.wakeups
    written = state.upsert_auth_method(_method("second"))
    assert state._cond.wakeups - before == WAITERS  # the write notified; the lag hides it from them
    assert state.query_list().index < written.ModifyIndex  # 1st read: still hidden, wakes nobody
    assert state._cond.wakeups - before == WAITERS
    state.query_list()  # 2nd read: counted; the write is visible from now on, the waiters are woken
    assert state._cond.wakeups - before > WAITERS
    _join(threads)
    assert results == [written.ModifyIndex] * WAITERS


def test_time_lag_expiry_releases_parked_queries(state):
    state.clock.use("real")
    state.set_lag(0.2)  # real seconds: the waiters wake themselves when the write becomes visible
    threads, results = _park(state, 5)
    written = state.upsert_auth_method(_method("second"))
    _join(threads)
    assert results == [written.ModifyIndex] * 5


def test_sync_releases_paused_replication(state):
    state.pause_replication()
    threads, results = _park(state, 5)
    written = state.upsert_auth_method(_method("second"))
    for _ in range(10):
        assert state.query_list().index < written.ModifyIndex
    state.sync()
    _join(threads)
    assert results == [written.ModifyIndex] * 5
