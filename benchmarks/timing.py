"""Timed rounds: ``n`` requests by 1 or more client threads, each thread with its own keep-alive
``requests.Session``; a round's rate is requests / wall time from the start barrier to the last answer.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import requests

Op = Callable[[requests.Session, str, int], requests.Response]  # (session, base url, request number)


@dataclass
class Series:
    """Per-round rates (req/s) and every request's latency (seconds) of one operation on one server."""

    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def sessions(count: int, token: str) -> list[requests.Session]:
    """``count`` sessions sending ``X-Vault-Token: token``."""
    out = []
    for _ in range(count):
        session = requests.Session()
        session.headers["X-Vault-Token"] = token
        out.append(session)
    return out


def timed_round(pool: list[requests.Session], base: str, op: Op, n: int, threads: int, first: int = 0
                ) -> tuple[float, list[float]]:
    """Run requests ``first .. first+n-1`` of ``op`` spread over ``threads`` threads; returns
    ``(requests per second, latencies)``. Raises RuntimeError on the first failed request."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    errors: list[str] = []
    barrier = threading.Barrier(threads + 1, timeout=120)  # a failed worker cannot hang the run

    def work(index: int) -> None:
        session = pool[index]
        mine = range(first + index, first + n, threads)
        barrier.wait()
        for number in mine:
            started = time.perf_counter()
            response = op(session, base, number)
            latencies[index].append(time.perf_counter() - started)
            if response.status_code >= 300:
                errors.append(f"{response.request.method} {response.url} -> {response.status_code} {response.text[:300]}")
                return

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    started = time.perf_counter()
    for worker in workers:
        worker.join(timeout=600)
    elapsed = time.perf_counter() - started
    if errors:
        raise RuntimeError(errors[0])
    return n / elapsed, [x for part in latencies for x in part]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]
