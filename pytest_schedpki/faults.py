"""Injected faults: make a service answer badly on purpose, per service and route pattern.

A :class:`Fault` matches requests by service (``"scheduler"``, ``"secrets"`` or ``"*"``), HTTP
method (or any) and path pattern (an exact path, a glob with ``*``, or a regex starting with ``^``),
and then does one or more of: wait ``latency`` seconds (real time), ``hang`` until released,
``drop`` the connection without an answer, or answer ``status`` with ``body`` instead of the real
handler. It fires ``times`` times (``None`` = always) with ``probability`` drawn from a seeded
random generator, so flaky outages are reproducible.
"""

from __future__ import annotations

import fnmatch
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any

MAX_HANG = 300.0  # seconds; a hang never outlives this even if nobody releases it


@dataclass(eq=False)
class Fault:
    """One fault rule (see the module docstring). ``hits`` counts how often it fired."""

    service: str = "*"
    path: str = "*"
    method: str | None = None
    status: int | None = None
    body: Any = None
    content_type: str | None = None
    latency: float = 0.0
    drop: bool = False
    hang: bool = False
    times: int | None = None
    probability: float = 1.0
    seed: int | None = None
    hits: int = 0
    released: threading.Event = field(default_factory=threading.Event, repr=False)
    _random: random.Random = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def matches(self, service: str, method: str, path: str) -> bool:
        if self.service not in ("*", service):
            return False
        if self.method is not None and self.method.upper() != method.upper():
            return False
        if self.path.startswith("^"):
            return re.search(self.path, path) is not None
        return fnmatch.fnmatchcase(path, self.path)

    def release(self) -> None:
        """Let hanging requests of this fault go on (they then get the real answer or ``status``)."""
        self.released.set()

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times


class FaultSet:
    """The active faults of a double; thread-safe."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self.stopping = threading.Event()  # set by abort(): held requests drop their connection

    def abort(self) -> None:
        """The server is stopping: every request held by a ``hang`` (now or later) drops its
        connection without an answer, as a stopped server would; the faults are removed."""
        self.stopping.set()
        self.clear()

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        fault.release()
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear(self) -> None:
        """Remove every fault and release every hanging request."""
        with self._lock:
            faults, self._faults = self._faults, []
        for fault in faults:
            fault.release()

    def all(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def take(self, service: str, method: str, path: str) -> Fault | None:
        """The first live fault matching the request, counting the hit; ``None`` if none fires."""
        with self._lock:
            for fault in self._faults:
                if fault.exhausted or not fault.matches(service, method, path):
                    continue
                if fault.probability < 1.0 and fault._random.random() >= fault.probability:
                    continue
                fault.hits += 1
                return fault
        return None
