"""One werkzeug listener per service, served from a daemon thread.

:class:`ServiceServer` binds (port 0 picks a free port), serves with werkzeug's threaded server (with
HTTP/1.1 keep-alive, see :mod:`.keepalive`) and answers every request through a guard that turns an
exception escaping the application into the service's own 500 error shape (never a traceback or an
HTML page) and records it in ``handler_errors``, so the pytest plugin can fail the test that caused it.
"""

from __future__ import annotations

import functools
import os
import re
import socket
import socketserver
import ssl
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from werkzeug.serving import ThreadedWSGIServer
from werkzeug.wrappers import Response

from ..journal import redact_query
from ..process import native_work, parking
from .connections import ConnectionRegistry, ListenerLimits
from .keepalive import KeepAliveHandler
from .middleware import LOG_KIND

POLL_INTERVAL = 0.05  # seconds; bounds how long shutdown() waits for serve_forever to notice
LISTEN_BACKLOG = 1024  # connections the kernel queues while every connection thread is taken
EXPIRE_INTERVAL = 0.25  # seconds between checks of the connection timeouts


@dataclass
class HandlerError:
    """An exception raised inside a request handler: where, what, and the formatted traceback."""

    service: str
    method: str
    path: str
    exception: BaseException
    traceback: str = field(repr=False)

    def __str__(self) -> str:
        return f"{self.service}: {self.method} {self.path} raised:\n{self.traceback}"


TLS_HANDSHAKE_TIMEOUT = 10.0  # seconds a client may take to complete the TLS handshake
PLAIN_HTTP_TO_TLS = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"


class _TLSHandshakeMixin:
    """The TLS handshake of an HTTPS listener, in the connection's own thread and bounded by
    :data:`TLS_HANDSHAKE_TIMEOUT`. A plain HTTP request gets Go's ``net/http`` answer
    (:data:`PLAIN_HTTP_TO_TLS`, unencrypted); any other failed handshake just closes the connection."""

    def handle(self):
        sock = self.connection
        if isinstance(sock, ssl.SSLSocket):
            try:
                previous = sock.gettimeout()
                sock.settimeout(TLS_HANDSHAKE_TIMEOUT)
                sock.do_handshake()
                sock.settimeout(previous)
            except ssl.SSLError as exc:
                if exc.reason == "HTTP_REQUEST":
                    try:
                        socket.socket.sendall(sock, PLAIN_HTTP_TO_TLS)  # below TLS, as Go writes it
                    except OSError:
                        pass
                self.close_connection = True
                return
            except OSError:  # timeout, reset
                self.close_connection = True
                return
        super().handle()


class _GoErrorsMixin:
    """Requests too broken to reach the application (bad request line, bad HTTP version, header
    overflow) are answered as Go's net/http server answers them - both upstreams are Go servers:
    ``400 Bad Request`` (or the code) as plain text, ``Connection: close``, no ``Content-Length`` - never
    an HTML page. (Requests Go refuses for their target or body framing: see :mod:`.framing`.)"""

    def send_error(self, code, message=None, explain=None):  # noqa: D401 - stdlib signature
        try:
            reason = self.responses.get(code, ("Error",))[0]
        except AttributeError:
            reason = "Error"
        body = f"{code} {reason}".encode()
        self.close_connection = True
        self.request_version = "HTTP/1.1"  # Go answers with a status line even to garbage
        try:
            self.send_response_only(code, reason)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Connection", "close")  # no Content-Length: Go's answer ends with the connection
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass


class _QuietHandler(_TLSHandshakeMixin, _GoErrorsMixin, KeepAliveHandler):
    """werkzeug's request handler without the per-request access log line."""

    def log_request(self, code="-", size="-"):  # noqa: D401 - werkzeug signature
        return None

    def log_error(self, format, *args):  # noqa: A002 - stdlib signature
        return None


class _VerboseHandler(_TLSHandshakeMixin, _GoErrorsMixin, KeepAliveHandler):
    """werkzeug's access log, without the values of secret query parameters (``?token=...``), each
    line ending with the kind of token presented and the time to the answer's headers::

        127.0.0.1 - - [28/Nov/2026 10:00:00] "POST /v1/pki/issue/web HTTP/1.1" 200 - token=root 3.2ms

    Kinds: secrets ``root``, ``service``, ``none``, ``invalid``; scheduler ``management``, ``client``,
    ``expired``, ``unknown``, ``none``; ``-`` for a control endpoint or a request too broken to reach
    the service. Never the token itself."""

    _started: float | None = None
    _suffix: str | None = None

    def run_wsgi(self) -> None:
        self._started = time.perf_counter()
        try:
            super().run_wsgi()
        finally:
            self._started = None

    def log_request(self, code="-", size="-"):  # noqa: D401 - werkzeug signature
        environ = getattr(self, "environ", None) or {}
        took = f" {(time.perf_counter() - self._started) * 1000:.1f}ms" if self._started is not None else ""
        self._suffix = f"token={environ.get(LOG_KIND, '-')}{took}"
        path = getattr(self, "path", "")
        try:
            if "?" not in path:
                return super().log_request(code, size)
            base, _, query = path.partition("?")
            self.path = f"{base}?{redact_query(query)}"
            try:
                return super().log_request(code, size)
            finally:
                self.path = path
        finally:
            self._suffix = None

    def log(self, type: str, message: str, *args) -> None:  # noqa: A002 - werkzeug signature
        if self._suffix is not None and type == "info":
            message, args = message + " %s", (*args, self._suffix)
        super().log(type, message, *args)


@functools.cache
def werkzeug_software() -> str:
    """``Werkzeug/<version>``, the ``SERVER_SOFTWARE`` werkzeug's server gives its requests, with the
    version read from the name of werkzeug's ``werkzeug-<version>.dist-info`` beside the package (what
    an installed wheel has; ``importlib.metadata.version`` reads the same version from that directory's
    METADATA after importing itself and scanning every ``sys.path`` entry). Any other layout (no such
    directory, or several): ``importlib.metadata``, as werkzeug does."""
    import werkzeug

    site = os.path.dirname(os.path.dirname(os.path.abspath(werkzeug.__file__)))
    try:
        found = [m.group(1) for m in map(_WERKZEUG_DIST_INFO.fullmatch, os.listdir(site)) if m]
    except OSError:
        found = []
    if len(found) == 1:
        return f"Werkzeug/{found[0]}"
    from importlib.metadata import version

    return f"Werkzeug/{version('werkzeug')}"


_WERKZEUG_DIST_INFO = re.compile(r"werkzeug-([^-]+)\.dist-info", re.IGNORECASE)


def _listen(host: str, port: int) -> socket.socket:
    """Bind and listen ourselves, so a taken port raises OSError (werkzeug would sys.exit)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


class _BoundedServer(ThreadedWSGIServer):
    """werkzeug's threaded server with at most ``connections.limits.max_connections`` connection
    threads holding a slot, plus ``max_parked`` whose request is a parked blocking query (see
    :mod:`.connections`: further connections wait in the listen queue while idle ones are cut to make
    room), the per-client-address bound, and the registry's timeouts checked from the accept loop.

    Every thread past a few dozen costs all the others: each waits for the GIL on a timed futex, so
    thousands of threads woken at once (2,000 half-sent requests closed together) starved the accept
    loop and the main thread for 8-30 s. The bound keeps that cost small."""

    block_on_close = False  # stopping never waits for connection threads (they are daemons)

    def __init__(self, host: str, app: Callable, handler: type, sock: socket.socket, *,
                 connections: ConnectionRegistry):
        # werkzeug's BaseWSGIServer.__init__ (3.x) for a socket already bound and listening (``sock``,
        # passed to werkzeug as ``fd``: the only way the double makes one) without TLS, less two steps that change nothing
        # the double does and cost start-up time: socketserver's throw-away socket (werkzeug closes it
        # at once) and ``importlib.metadata.version("werkzeug")`` for SERVER_SOFTWARE (importing
        # importlib.metadata and scanning sys.path: ~27 M instructions, 4 % of ``schedpki serve``'s start;
        # :func:`werkzeug_software` reads the same version from werkzeug's own dist-info).
        # tests/core/test_listener_server.py compares the attributes with werkzeug's own constructor.
        if "protocol_version" not in vars(handler):  # werkzeug: keep-alive and chunking when threaded
            handler.protocol_version = "HTTP/1.1"
        self.host = host
        self.app = app
        self.passthrough_errors = False
        socketserver.BaseServer.__init__(self, None, handler)
        self.address_family = sock.family
        self.socket = socket.fromfd(sock.fileno(), sock.family, socket.SOCK_STREAM)  # werkzeug's own duplicate
        self.server_address = self.socket.getsockname()
        self.port = self.server_address[1]
        self.ssl_context = None
        self._server_version = werkzeug_software()
        self.connections = connections
        self._accepted = False
        self._next_expiry = 0.0

    def _handle_request_noblock(self) -> None:
        if not self.connections.take_slot(POLL_INTERVAL):
            return  # serve_forever polls again (and notices a shutdown request)
        self._accepted = False
        try:
            super()._handle_request_noblock()
        finally:
            if not self._accepted:  # nothing accepted: the slot is still the loop's
                self.connections.slots.release()

    def get_request(self):
        request, client_address = super().get_request()
        self._accepted = True
        self.connections.hold(request, client_address)  # from now on shutdown_request releases it
        return request, client_address

    def verify_request(self, request, client_address) -> bool:
        return self.connections.admit(request)

    def process_request_thread(self, request, client_address) -> None:
        registry = self.connections
        with parking.hooked(lambda: registry.park(request)):  # a parked blocking query leaves the slots
            super().process_request_thread(request, client_address)

    def shutdown_request(self, request) -> None:
        try:
            super().shutdown_request(request)
        finally:
            self.connections.release(request)

    def service_actions(self) -> None:
        super().service_actions()
        now = time.monotonic()
        if now >= self._next_expiry:
            self._next_expiry = now + EXPIRE_INTERVAL
            self.connections.expire()


class ServiceServer:
    """A werkzeug WSGI server for one service, in a daemon thread.

    ``app`` is a WSGI callable; ``error_response(exc)`` builds the service's 500 answer for an
    exception that escaped ``app`` (scheduler: plain text; secrets: ``{"errors": [...]}``).
    ``port=0`` binds a free port; :attr:`url` tells which. ``limits`` sets the connection timeouts,
    the bounds on connection threads and the per-client-address bound
    (:class:`~.connections.ListenerLimits`, defaults like OpenBao's and Nomad's listeners). :meth:`stop` returns within about :data:`POLL_INTERVAL` seconds.
    """

    def __init__(
        self,
        name: str,
        app: Callable,
        error_response: Callable[[BaseException], Response],
        host: str = "127.0.0.1",
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        log_requests: bool = False,
        limits: ListenerLimits | None = None,
    ):
        self.name = name
        self.limits = limits or ListenerLimits()
        self.app = app
        self.error_response = error_response
        self.host = host
        self.requested_port = port
        self.ssl_context = ssl_context
        self.log_requests = log_requests
        self.handler_errors: list[HandlerError] = []
        self._lock = threading.Lock()
        self._server: _BoundedServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def server_software(self) -> str:
        """The ``SERVER_SOFTWARE`` of this listener's requests: werkzeug's ``Werkzeug/<version>``, as
        its server computed it when it started (the in-process transport gives the same)."""
        server = self._server
        return server._server_version if server is not None else werkzeug_software()

    # -- WSGI guard ---------------------------------------------------------------------------
    def _guarded(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        try:
            with native_work.busy():  # the process exit waits for requests being answered
                return self.app(environ, start_response)
        except Exception as exc:  # noqa: BLE001 - any escape is a double bug: record, answer 500
            tb = traceback.format_exc()
            with self._lock:
                self.handler_errors.append(
                    HandlerError(self.name, environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""), exc, tb)
                )
            if self.log_requests:
                print(tb, file=sys.stderr)
            exc_info = sys.exc_info()

            def restart(status: str, headers: list, _exc_info=None):
                # exc_info lets the error answer replace headers the app already set (not yet sent)
                return start_response(status, headers, exc_info)

            return self.error_response(exc)(environ, restart)

    def pop_handler_errors(self) -> list[HandlerError]:
        """Return and forget the handler errors recorded so far."""
        with self._lock:
            errors, self.handler_errors = self.handler_errors, []
        return errors

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> ServiceServer:
        """Bind and start serving; returns once the socket listens (requests are accepted)."""
        handler = _VerboseHandler if self.log_requests else _QuietHandler
        sock = _listen(self.host, self.requested_port)
        try:
            self._server = _BoundedServer(self.host, self._guarded, handler, sock,
                                          connections=ConnectionRegistry(self.limits))
            if self.ssl_context is not None:  # werkzeug would handshake inside accept(), on the serving
                # thread, where one silent client blocks every other: handshake in each connection's thread
                self._server.socket = self.ssl_context.wrap_socket(
                    self._server.socket, server_side=True, do_handshake_on_connect=False)
                self._server.ssl_context = self.ssl_context
        finally:
            sock.close()  # werkzeug works on its own duplicate of the descriptor
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL},
            name=f"schedpki-{self.name}", daemon=True,
        )
        self._thread.start()
        return self

    @property
    def connections(self) -> ConnectionRegistry | None:
        """The open connections of the running listener (their phases, slots, parked blocking
        queries and client addresses; :class:`~.connections.ConnectionRegistry`), or None when stopped."""
        server = self._server
        return server.connections if server is not None else None

    @property
    def port(self) -> int:
        """The bound port (resolved when started with port 0)."""
        if self._server is None:
            raise RuntimeError(f"{self.name} server is not started")
        return self._server.port

    @property
    def url(self) -> str:
        """Base URL such as ``http://127.0.0.1:4646`` (https when an SSL context is set)."""
        scheme = "https" if self.ssl_context else "http"
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"{scheme}://{host}:{self.port}"

    def stop(self) -> None:
        """Stop serving and close the socket; idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        server.connections.shutdown_all()  # idle keep-alive connections, requests being read
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
