"""Scheduler rates on the double (no real Nomad runs here): create, read, list, update and delete of
ACL auth methods, create, read and list of ACL tokens, and how fast a blocking query wakes after a write.
"""

from __future__ import annotations

import statistics
import threading
import time

import requests
from timing import timed_round

TOKEN = "root"


def _method(name: str, ttl: str = "1h") -> dict:
    return {"Name": name, "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": ttl,
            "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "bench",
                       "BoundAudiences": ["bench"]}}


def _sessions(count: int) -> list[requests.Session]:
    out = []
    for _ in range(count):
        session = requests.Session()
        session.headers["X-Nomad-Token"] = TOKEN
        out.append(session)
    return out


def rates(base: str, rounds: int, per_round: int, threads: int, offset: int) -> dict[str, list[float]]:
    """Per-round req/s of create, read, list, update, delete (``per_round`` methods per round, names
    unique thanks to ``offset``)."""
    pool = _sessions(threads)
    out: dict[str, list[float]] = {k: [] for k in ("create", "read", "list", "update", "delete")}
    for r in range(rounds):
        first = offset + r * per_round

        def create(s, b, n):
            return s.put(f"{b}/v1/acl/auth-method", json=_method(f"bench-{n}"))

        def read(s, b, n):
            return s.get(f"{b}/v1/acl/auth-method/bench-{n}")

        def list_(s, b, n):
            return s.get(f"{b}/v1/acl/auth-methods")

        def update(s, b, n):
            return s.post(f"{b}/v1/acl/auth-method/bench-{n}", json=_method(f"bench-{n}", "2h"))

        def delete(s, b, n):
            return s.delete(f"{b}/v1/acl/auth-method/bench-{n}")

        for key, op in (("create", create), ("read", read), ("list", list_), ("update", update), ("delete", delete)):
            rate, _ = timed_round(pool, base, op, per_round, threads, first=first)
            out[key].append(rate)
    return out


def token_rates(base: str, rounds: int, per_round: int, threads: int, offset: int) -> dict[str, list[float]]:
    """Per-round req/s of the ACL token paths: create a management token (``PUT /v1/acl/token``), read
    it by accessor (``GET /v1/acl/token/<accessor>``) and list the tokens (``GET /v1/acl/tokens``, the
    list growing by ``per_round`` a round); the tokens created are deleted, untimed, at the end."""
    pool = _sessions(threads)
    out: dict[str, list[float]] = {k: [] for k in ("create", "read", "list")}
    made: dict[int, str] = {}
    for r in range(rounds):
        first = offset + r * per_round

        def create(s, b, n):
            answer = s.put(f"{b}/v1/acl/token", json={"Name": f"bench-{n}", "Type": "management"})
            made[n] = answer.json()["AccessorID"] if answer.ok else ""
            return answer

        def read(s, b, n):
            return s.get(f"{b}/v1/acl/token/{made[n]}")

        def list_(s, b, n):
            return s.get(f"{b}/v1/acl/tokens")

        for key, op in (("create", create), ("read", read), ("list", list_)):
            rate, _ = timed_round(pool, base, op, per_round, threads, first=first)
            out[key].append(rate)
    for accessor in made.values():
        pool[0].delete(f"{base}/v1/acl/token/{accessor}")
    return out


def wakeups(base: str, count: int) -> list[float]:
    """Seconds from sending a write to the answer of a blocking list query waiting on the previous
    index (``count`` trials)."""
    writer, reader = _sessions(2)
    out: list[float] = []
    for trial in range(count):
        index = writer.get(f"{base}/v1/acl/auth-methods").headers["X-Nomad-Index"]
        woke: list[float] = []

        def block(index: str = index, woke: list[float] = woke) -> None:
            reader.get(f"{base}/v1/acl/auth-methods", params={"index": index, "wait": "10s"})
            woke.append(time.perf_counter())

        thread = threading.Thread(target=block, daemon=True)
        thread.start()
        time.sleep(0.02)  # let the reader block
        started = time.perf_counter()
        writer.put(f"{base}/v1/acl/auth-method", json=_method(f"wake-{trial}")).raise_for_status()
        thread.join(timeout=15)
        if woke:
            out.append(woke[0] - started)
        writer.delete(f"{base}/v1/acl/auth-method/wake-{trial}")
    return out


def summary(values: list[float]) -> tuple[float, float, float]:
    """``(median, min, max)``."""
    return statistics.median(values), min(values), max(values)
