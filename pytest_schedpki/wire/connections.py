"""The open client connections of one listener: what each is doing, upstream-like timeouts, and the
bound on connection threads.

Each connection has its own thread (werkzeug's threaded server) and is, at any time, in one phase:
``FRESH`` (accepted, no byte of a request yet), ``IDLE`` (keep-alive, between requests),
``HEADER`` (reading a request's line and headers), ``BODY`` (waiting for request body bytes) or
``BUSY`` (its request is being answered). :class:`ConnectionRegistry` closes a connection without an answer - what a Go server does
when a read deadline passes - once it has been

* ``FRESH`` or ``HEADER`` for :attr:`ListenerLimits.header_timeout` (counted from the accept for
  the first request, from its first byte for later ones, as Go's ``ReadHeaderTimeout``);
* ``IDLE`` for :attr:`ListenerLimits.idle_timeout` (Go's ``IdleTimeout``).

While ``BODY`` or ``BUSY``, a read or write that stalls for :attr:`ListenerLimits.read_timeout` fails (a body
stalled mid-way is then answered as a cut-short body, ``unexpected EOF``). Time the application
spends answering (a blocking query, an injected hang) is not a stall.

At most :attr:`ListenerLimits.max_connections` connections have a thread; further ones wait in the
listen queue (nothing is refused). While one waits, the server closes an idle keep-alive connection
(the longest idle first), else the one that has waited longest for its client to send (request head
or body), to make room; a connection whose request is being answered is never cut.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

FRESH, IDLE, HEADER, BUSY, BODY = "fresh", "idle", "header", "busy", "body"


@dataclass(frozen=True)
class ListenerLimits:
    """Timeouts (seconds) and the connection-thread bound of a listener.

    Defaults follow OpenBao's listener (``http_read_header_timeout`` 10s, ``http_idle_timeout`` 5m,
    ``http_read_timeout`` 30s; measured on ``bao server -dev`` 2.7.2: a half-sent header block is
    closed after 10 s, an idle keep-alive connection after 300 s, a stalled body answered after
    30 s). Nomad's agent sets no timeouts but limits each client address to 100 connections
    (``limits.http_max_conns_per_client``); the double bounds all connections together at 128.
    Raises ValueError for a value that is not positive.
    """

    header_timeout: float = 10.0
    idle_timeout: float = 300.0
    read_timeout: float = 30.0
    max_connections: int = 128

    def __post_init__(self) -> None:
        for name in ("header_timeout", "idle_timeout", "read_timeout", "max_connections"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")


def drop_connection(environ: dict) -> None:
    """End a request's connection without an answer: shut down the socket werkzeug hands the
    application (``werkzeug.socket``; the in-process transport's stand-in records it as a drop, so
    the client sees a dropped connection either way). The application then returns any answer: it
    is never read."""
    sock = environ.get("werkzeug.socket")
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _cut(sock: socket.socket) -> None:
    """Shut the connection down below TLS (reads then see EOF, writes fail); its thread closes it."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class ConnectionRegistry:
    """The open connections of one listener and their phases (see the module doc); thread-safe."""

    def __init__(self, limits: ListenerLimits | None = None) -> None:
        self.limits = limits or ListenerLimits()
        self._lock = threading.Lock()
        self._conns: dict[socket.socket, list] = {}  # socket -> [phase, since (monotonic)]

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns[sock] = [FRESH, time.monotonic()]

    def discard(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns.pop(sock, None)

    def mark(self, sock: socket.socket, phase: str) -> None:
        """Record that ``sock`` entered ``phase`` now (a first request's header time counts from the
        accept)."""
        with self._lock:
            entry = self._conns.get(sock)
            if entry is not None and entry[0] != phase:
                if not (phase == HEADER and entry[0] == FRESH):
                    entry[1] = time.monotonic()
                entry[0] = phase

    def __len__(self) -> int:
        with self._lock:
            return len(self._conns)

    def expire(self) -> int:
        """Cut every connection past its phase's timeout; returns how many."""
        now = time.monotonic()
        header, idle = self.limits.header_timeout, self.limits.idle_timeout
        with self._lock:
            late = [s for s, (phase, since) in self._conns.items()
                    if (phase == IDLE and now - since >= idle) or (phase in (FRESH, HEADER) and now - since >= header)]
            for sock in late:
                del self._conns[sock]
        for sock in late:
            _cut(sock)
        return len(late)

    def shed(self) -> bool:
        """Cut one connection to make room: the longest idle keep-alive one, else the one waiting
        longest for its client's bytes. Returns False when every connection is being answered."""
        with self._lock:
            victim = None
            for wanted in ((IDLE,), (FRESH, HEADER, BODY)):
                candidates = [(since, id(s), s) for s, (phase, since) in self._conns.items() if phase in wanted]
                if candidates:
                    victim = min(candidates)[2]
                    break
            if victim is None:
                return False
            del self._conns[victim]
        _cut(victim)
        return True

    def shutdown_all(self) -> None:
        """Cut every registered connection (a stopped listener must not go on answering)."""
        with self._lock:
            sockets, self._conns = list(self._conns), {}
        for sock in sockets:
            _cut(sock)


class BodyReader:
    """The connection's ``rfile`` as a request body stream reads it: the connection is ``BODY``
    while a read waits for the client, ``BUSY`` again once it returns."""

    def __init__(self, rfile, registry: ConnectionRegistry, sock: socket.socket) -> None:
        self._rfile, self._registry, self._sock = rfile, registry, sock

    def _wait(self, read, *args):
        self._registry.mark(self._sock, BODY)
        try:
            return read(*args)
        finally:
            self._registry.mark(self._sock, BUSY)

    def read(self, *args):
        return self._wait(self._rfile.read, *args)

    def readinto(self, buffer):
        return self._wait(self._rfile.readinto, buffer)

    def readline(self, *args):
        return self._wait(self._rfile.readline, *args)
