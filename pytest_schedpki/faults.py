"""Injected faults: make a service answer badly on purpose, per service and route pattern.

A :class:`Fault` matches requests by service (``"scheduler"``, ``"secrets"`` or ``"*"``), HTTP
method (or any) and path pattern (an exact path, a glob with ``*``, or a regex starting with ``^``),
and then does one or more of: wait ``latency`` seconds (real time), ``hang`` until released,
``drop`` the connection without an answer, or answer ``status`` with ``body`` instead of the real
handler. It fires ``times`` times (``None`` = always) with ``probability`` drawn from a seeded
random generator, so flaky outages are reproducible.

A fault that could never fire is refused when it is made (``ValueError`` naming the field and its
valid values): an unknown ``service``, a ``path`` that cannot match a request path (request paths
start with ``/``: write ``/v1/sys/health``, a glob such as ``*/health`` or a regex ``^/v1/``), an
invalid regex, an unknown ``method``, a ``status`` outside 100-599, ``status``/``body``/
``content_type`` together with ``drop`` (a dropped connection answers nothing), ``body`` or
``content_type`` without ``status``, ``times`` below 1, ``probability`` outside 0 < p <= 1, a negative
``latency``. The pytest plugin warns (:class:`UnusedFaultWarning`) at the end of a test about every
fault that no request matched.
"""

from __future__ import annotations

import fnmatch
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any

MAX_HANG = 300.0  # seconds; a hang never outlives this even if nobody releases it
SERVICES = ("*", "scheduler", "secrets")
# the methods either service's clients send (LIST: Vault's list operation, as the bao CLI sends it)
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "LIST", "OPTIONS")
_PATH_STARTS = ("/", "*", "?", "[", "^")  # a request path starts with "/"; globs and regexes may say so


class UnusedFaultWarning(UserWarning):
    """A fault added during a test matched no request of that test (pytest plugin, at teardown)."""


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
    matched: int = field(default=0, init=False, repr=False)  # requests matched (fired or not)

    def __post_init__(self) -> None:
        self._validate()
        self._random = random.Random(self.seed)

    def _validate(self) -> None:
        """Refuse a fault that could never fire or whose fields contradict each other (ValueError)."""
        if self.service not in SERVICES:
            raise ValueError(f"Fault service must be one of {', '.join(map(repr, SERVICES))}, got {self.service!r}")
        if not isinstance(self.path, str) or not self.path.startswith(_PATH_STARTS):
            raise ValueError(f"Fault path must be a request path starting with '/' (e.g. '/v1/sys/health'), a glob "
                             f"(e.g. '*/health') or a regex starting with '^', got {self.path!r}")
        if self.path.startswith("^"):
            try:
                re.compile(self.path)
            except re.error as exc:
                raise ValueError(f"Fault path {self.path!r} is not a valid regex: {exc}") from None
        if self.method is not None and str(self.method).upper() not in METHODS:
            raise ValueError(f"Fault method must be None (any) or one of {', '.join(METHODS)}, got {self.method!r}")
        if self.status is not None and (isinstance(self.status, bool) or not isinstance(self.status, int)
                                        or not 100 <= self.status <= 599):
            raise ValueError(f"Fault status must be an HTTP status 100-599 (or None: the real answer), got {self.status!r}")
        answer = [name for name in ("status", "body", "content_type") if getattr(self, name) is not None]
        if self.drop and answer:
            raise ValueError(f"Fault drop=True closes the connection without an answer: {', '.join(answer)} would "
                             "never be sent; use drop or status, not both")
        if self.status is None and (self.body is not None or self.content_type is not None):
            raise ValueError("Fault body and content_type are the canned answer of status: set status too")
        if self.times is not None and (isinstance(self.times, bool) or not isinstance(self.times, int) or self.times < 1):
            raise ValueError(f"Fault times must be a whole number >= 1 (or None: always), got {self.times!r}")
        if not (isinstance(self.probability, (int, float)) and 0 < self.probability <= 1):
            raise ValueError(f"Fault probability must be a number with 0 < probability <= 1, got {self.probability!r}")
        if not (isinstance(self.latency, (int, float)) and self.latency >= 0):
            raise ValueError(f"Fault latency must be a number of seconds >= 0, got {self.latency!r}")

    def describe(self) -> str:
        """``Fault(service='secrets', path='/v1/sys/health', status=503)``: the fields that differ
        from the defaults (for warnings and messages)."""
        defaults = Fault()
        shown = [f"{name}={getattr(self, name)!r}" for name in ("service", "method", "path", "status", "body",
                                                               "content_type", "latency", "drop", "hang", "times",
                                                               "probability", "seed")
                 if getattr(self, name) != getattr(defaults, name)]
        return f"Fault({', '.join(shown)})"

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

    def __bool__(self) -> bool:
        """Whether any fault is set (a read of the list without the lock: a request racing with an
        add may miss that fault, as it would had it come a moment earlier)."""
        return bool(self._faults)

    def unmatched(self) -> list[Fault]:
        """The faults no request has matched since they were added (whether or not they fired)."""
        with self._lock:
            return [fault for fault in self._faults if fault.matched == 0]

    def take(self, service: str, method: str, path: str) -> Fault | None:
        """The first live fault matching the request, counting the hit; ``None`` if none fires."""
        with self._lock:
            for fault in self._faults:
                if fault.exhausted or not fault.matches(service, method, path):
                    continue
                fault.matched += 1
                if fault.probability < 1.0 and fault._random.random() >= fault.probability:
                    continue
                fault.hits += 1
                return fault
        return None
