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

At most :attr:`ListenerLimits.max_connections` connections hold a *slot*; further ones wait in the
listen queue. While one waits, the server closes an idle keep-alive connection holding a slot (the
longest idle first), else the one that has waited longest (at least :data:`SHED_GRACE`) for its
client to send (request head or body), to make room; a connection whose request is being answered
is never cut.

A request that parks - a blocking query waiting for a change, announced through
:func:`pytest_schedpki.process.parking.park` - gives its slot back and takes one of
:attr:`ListenerLimits.max_parked` parking places instead (when none is free it keeps its slot);
after its answer the connection takes a slot again if one is free. So a plain request is served
while hundreds of blocking queries wait, and the threads stay bounded: at most ``max_connections +
max_parked`` per listener.

A client address may hold :attr:`ListenerLimits.max_connections_per_client` connections (Nomad's
``limits.http_max_conns_per_client``, default 100; 0: no limit). One more is answered as Nomad's
agent answers it (``command/agent/http.go`` ``connLimiter`` over ``hashicorp/go-connlimit``): the
bytes of :data:`TOO_MANY_CONNECTIONS`, written at once without reading the request, then closed -
at most 10 such answers a second after a burst of 100, beyond that and over TLS closed without one.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from dataclasses import dataclass

FRESH, IDLE, HEADER, BUSY, BODY = "fresh", "idle", "header", "busy", "body"

_TOO_MANY_TEXT = b"Your IP is issuing too many concurrent connections, please rate limit your calls\n"
TOO_MANY_CONNECTIONS = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n%s" % (len(_TOO_MANY_TEXT), _TOO_MANY_TEXT))
ANSWER_RATE, ANSWER_BURST = 10.0, 100  # Nomad's rate.NewLimiter(10, 100) on the 429 answers
SHED_GRACE = 1.0  # seconds a connection may wait for its client's bytes before it may be cut to make room:
# a connection just accepted, whose request is already in its buffer, is no slow client


@dataclass(frozen=True)
class ListenerLimits:
    """Timeouts (seconds) and the connection-thread bound of a listener.

    Defaults follow OpenBao's listener (``http_read_header_timeout`` 10s, ``http_idle_timeout`` 5m,
    ``http_read_timeout`` 30s; measured on ``bao server -dev`` 2.7.2: a half-sent header block is
    closed after 10 s, an idle keep-alive connection after 300 s, a stalled body answered after
    30 s). Nomad's agent sets no timeouts but limits each client address to 100 connections
    (``limits.http_max_conns_per_client``): ``max_connections_per_client`` (0: no limit; the double
    applies it on the scheduler listener only, OpenBao has no such limit). The double also bounds the
    connection threads of a listener: ``max_connections`` slots (128) plus ``max_parked`` places
    (1024) for parked blocking queries (see the module doc). Raises ValueError for a value that is not
    positive (``max_connections_per_client``: negative).
    """

    header_timeout: float = 10.0
    idle_timeout: float = 300.0
    read_timeout: float = 30.0
    max_connections: int = 128
    max_connections_per_client: int = 100
    max_parked: int = 1024

    def __post_init__(self) -> None:
        for name in ("header_timeout", "idle_timeout", "read_timeout", "max_connections", "max_parked"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        if not self.max_connections_per_client >= 0:
            raise ValueError(f"max_connections_per_client must be >= 0, got {self.max_connections_per_client!r}")


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


def _answer_too_many(sock: socket.socket) -> None:
    """Nomad's 429 for a connection over its client's bound, without waiting for the client."""
    if isinstance(sock, ssl.SSLSocket):
        return  # the answer would need the handshake first (Nomad tries it for 10 ms): closed without one
    try:
        sock.setblocking(False)
        sock.send(TOO_MANY_CONNECTIONS)
    except OSError:
        pass


class ConnectionRegistry:
    """The open connections of one listener, their phases, slots and client addresses (see the
    module doc); thread-safe.

    The listener's accept loop takes a slot (:meth:`take_slot`) before it accepts, hands it to the
    accepted connection (:meth:`hold`), asks :meth:`admit` whether the client may have one more, and
    gives everything back with :meth:`release` when the connection ends. The connection's thread
    registers it (:meth:`add`), reports its phases (:meth:`mark`), and moves it out of the slots and
    back (:meth:`park`, :meth:`unpark`)."""

    def __init__(self, limits: ListenerLimits | None = None) -> None:
        self.limits = limits or ListenerLimits()
        self._lock = threading.Lock()
        self._conns: dict[socket.socket, list] = {}  # socket -> [phase, since (monotonic)]
        self.slots = threading.BoundedSemaphore(self.limits.max_connections)
        self._places = threading.BoundedSemaphore(self.limits.max_parked)
        self._owners: dict[socket.socket, list] = {}  # socket -> [client address, parked]
        self._per_client: dict[str, int] = {}
        self._answers, self._answered_at = float(ANSWER_BURST), time.monotonic()

    # -- slots, parking places, client addresses ---------------------------------------------------
    def take_slot(self, timeout: float) -> bool:
        """Take a slot for the next connection to accept, cutting an idle one to make room if none is
        free; waits up to ``timeout`` seconds. False: none came (give the caller a chance to stop)."""
        if self.slots.acquire(blocking=False):
            return True
        self.shed()
        return self.slots.acquire(timeout=timeout)

    def hold(self, sock: socket.socket, address) -> None:
        """The connection just accepted from ``address`` holds the slot taken for it."""
        host = address[0] if isinstance(address, tuple) else str(address)
        with self._lock:
            self._owners[sock] = [host, False]
            self._per_client[host] = self._per_client.get(host, 0) + 1

    def admit(self, sock: socket.socket) -> bool:
        """Whether ``sock``'s client address is within its bound; if not, Nomad's 429 is written
        (within the answer rate) and the caller closes the connection (then :meth:`release`)."""
        limit = self.limits.max_connections_per_client
        with self._lock:
            owner = self._owners.get(sock)
            if not limit or owner is None or self._per_client[owner[0]] <= limit:
                return True
            now = time.monotonic()
            self._answers = min(float(ANSWER_BURST), self._answers + (now - self._answered_at) * ANSWER_RATE)
            self._answered_at = now
            answer = self._answers >= 1
            if answer:
                self._answers -= 1
        if answer:
            _answer_too_many(sock)
        return False

    def release(self, sock: socket.socket) -> None:
        """``sock`` is closed: give back its slot (or parking place) and its client's count."""
        with self._lock:
            owner = self._owners.pop(sock, None)
            if owner is None:
                return
            host, parked = owner
            left = self._per_client[host] - 1
            if left:
                self._per_client[host] = left
            else:
                del self._per_client[host]
        (self._places if parked else self.slots).release()

    def park(self, sock: socket.socket) -> None:
        """``sock``'s request waits long: give its slot back for a parking place, if one is free;
        if none is, cut the longest-idle keep-alive connection holding one (the next query to park
        finds it free). Never blocks (it is called with the application's lock held)."""
        victim = None
        with self._lock:
            owner = self._owners.get(sock)
            if owner is None or owner[1]:
                return
            owner[1] = parked = self._places.acquire(blocking=False)
            if not parked:
                idle = [(entry[1], id(s), s) for s, entry in self._conns.items()
                        if entry[0] == IDLE and self._owners.get(s, ("", False))[1]]
                if idle:
                    victim = min(idle)[2]
                    del self._conns[victim]
        if parked:
            self.slots.release()
        elif victim is not None:
            _cut(victim)

    def unpark(self, sock: socket.socket) -> None:
        """``sock``'s request was answered: back to a slot if one is free (else it keeps its place)."""
        owner = self._owners.get(sock)
        if owner is None or not owner[1]:  # not parked (only sock's own thread parks it): no lock needed
            return
        with self._lock:
            owner = self._owners.get(sock)
            if owner is None or not owner[1] or not self.slots.acquire(blocking=False):
                return
            owner[1] = False
        self._places.release()

    def parked(self) -> int:
        """How many connections hold a parking place now."""
        with self._lock:
            return sum(1 for _, parked in self._owners.values() if parked)

    def client_connections(self, host: str) -> int:
        """How many accepted connections ``host`` (a client IP address) has open now."""
        with self._lock:
            return self._per_client.get(host, 0)

    # -- phases and timeouts -----------------------------------------------------------------------
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
        """Cut one connection holding a slot to make room: the longest idle keep-alive one, else the
        one waiting longest - at least :data:`SHED_GRACE` seconds - for its client's bytes. Returns
        False when there is none."""
        now = time.monotonic()
        with self._lock:
            victim = None
            for wanted, grace in (((IDLE,), 0.0), ((FRESH, HEADER, BODY), SHED_GRACE)):
                candidates = [(since, id(s), s) for s, (phase, since) in self._conns.items()
                              if phase in wanted and now - since >= grace
                              and not self._owners.get(s, ("", False))[1]]
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
