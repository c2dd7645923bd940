"""Nomad's blocking queries (``blockingRPC``): answer at once, or wait for a newer index.

With ``min_index`` > 0 a query re-runs until its result index exceeds ``min_index`` or the wait
ends: ``wait`` (nanoseconds; <= 0 or above 300s means 300s, Nomad's default and cap) plus a random
jitter of up to wait/16. The wait is **real time** (:func:`~pytest_schedpki.clock.real_monotonic`)
on a condition variable that is notified only when what a waiter sees can have changed - a write,
a replication sync or knob change, a lagged write becoming visible (found by any reader, or by the
waiter's own timed wake-up at the lag's expiry) - so a frozen or manual clock never makes it spin
or hang, and plain reads never wake the parked queries; on timeout the latest result is returned
with status 200 (possibly the same index). A query that is going to wait announces it
(:func:`~pytest_schedpki.process.parking.park`), so the listener serving it does not count its
connection against its bound on connection threads while it is parked.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

from ..clock import real_monotonic
from ..golang.duration import SECOND
from ..process import native_work, parking
from .views import QueryResult

MAX_QUERY_TIME_NS = 300 * SECOND
JITTER_FRACTION = 16


def wait_seconds(wait_ns: int) -> float:
    """The blocking time for ``wait`` ns, before jitter: ``wait`` if in (0, 300s], else 300s."""
    return (wait_ns if 0 < wait_ns <= MAX_QUERY_TIME_NS else MAX_QUERY_TIME_NS) / SECOND


def block_until(cond: threading.Condition, run: Callable[[], QueryResult], min_index: int, wait_ns: int,
                next_wake: Callable[[], float | None]) -> QueryResult:
    """Run ``run()`` (with ``cond`` held) until its index exceeds ``min_index`` or the deadline passes.

    ``next_wake()`` gives real seconds until something may change without a notification (a lagged
    write becoming visible), or None.
    """
    result = run()
    if min_index <= 0:
        return result
    seconds = wait_seconds(wait_ns)
    if result.index <= min_index:
        parking.park()  # the listener need not count this connection's thread while it waits
    deadline = real_monotonic() + seconds + random.uniform(0, seconds / JITTER_FRACTION)
    while result.index <= min_index:
        remaining = deadline - real_monotonic()
        if remaining <= 0:
            break
        wake = next_wake()
        with native_work.waiting(park=False):  # returns holding cond: the exit waits for the rest instead
            cond.wait(remaining if wake is None else min(remaining, wake))
        result = run()
    return result
