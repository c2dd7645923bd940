"""The in-process transport: one HTTP exchange with a listener's WSGI application, without a socket.

A Python client in the test's own process can reach a listener (:class:`~.server.ServiceServer`)
through :func:`exchange` instead of TCP: the request becomes the same WSGI environ the listener's
handler (:mod:`.keepalive`, werkzeug's ``make_environ``) would build, it runs through the same guard
(an escaped exception is recorded as a handler error and answered with the service's own 500) and the
same middleware (control endpoints, faults, journal, tokens), and the answer carries the status line
and headers the listener would send (``Server``, ``Date``, the application's, framing,
``Connection: close`` when the listener would close). :mod:`.clients` hooks the HTTP clients into it.

What has no socket to act on is reported instead of done: a fault that drops the connection (or a
request held by ``hang`` while the double stops) sets :attr:`Answer.dropped`; a client read timeout
that passes first sets :attr:`Answer.timed_out` (the handler runs on in its thread, as it does over TCP
when the client gives up). The client hooks turn both into the client's own exception.

:data:`ROUTES` maps ``(scheme, host, port)`` to the listener served in-process.
"""

from __future__ import annotations

import io
import socket
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

from .bytes_response import go_reason
from .fastrequest import file_go_headers
from .keepalive import MAX_DRAIN, _http_date

if TYPE_CHECKING:
    from .server import ServiceServer

_NO_BODY_STATUS = (204, 304)


@dataclass
class Answer:
    """What the client receives: ``status`` (int), ``reason``, ``headers`` (``[(name, value)]`` in
    the listener's order), ``body`` (bytes, de-chunked), or ``dropped``/``timed_out`` (no answer)."""

    status: int = 0
    reason: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    dropped: bool = False
    timed_out: bool = False
    close: bool = False  # the listener closes the connection after this answer


class _DropSensor:
    """``werkzeug.socket`` of an in-process request: a fault's ``shutdown()`` marks the exchange dropped."""

    def __init__(self) -> None:
        self.dropped = False

    def shutdown(self, how: int = socket.SHUT_RDWR) -> None:
        self.dropped = True


class Routes:
    """Listeners served in-process, by ``(scheme, host, port)`` (host lower-cased); thread-safe."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str, int], ServiceServer] = {}
        self._lock = threading.Lock()

    def add(self, server: ServiceServer) -> None:
        """Serve ``server``'s URL (its scheme, host and port) in-process from now on."""
        scheme = server.url.partition("://")[0]
        with self._lock:
            self._routes[(scheme, server.host.lower().strip("[]"), server.port)] = server

    def remove(self, server: ServiceServer) -> None:
        """Stop serving ``server`` in-process (every key that maps to it); unknown servers are ignored."""
        with self._lock:
            for key in [k for k, v in self._routes.items() if v is server]:
                del self._routes[key]

    def get(self, scheme: str, host: str | None, port: int | None) -> ServiceServer | None:
        """The listener at ``scheme://host:port`` (``None``: not routed; also when stopped)."""
        if not self._routes or host is None:
            return None
        if port is None:
            port = 443 if scheme == "https" else 80
        return self._routes.get((scheme, host.lower().strip("[]"), int(port)))

    def __bool__(self) -> bool:
        return bool(self._routes)


ROUTES = Routes()


def _dance(text: str) -> str:
    """A WSGI environ string as werkzeug makes it (UTF-8 bytes read as latin-1)."""
    return text if text.isascii() else text.encode().decode("latin-1")


def _environ(server: ServiceServer, method: str, target: str, headers: list[tuple[str, str]], body: bytes,
             chunked: bool) -> tuple[dict, _DropSensor]:
    """The environ werkzeug's ``make_environ`` builds for this request on ``server``'s listener."""
    path, _, query = target.partition("?")
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    sensor = _DropSensor()
    environ = {
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "https" if server.ssl_context is not None else "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "werkzeug.socket": sensor,
        "SERVER_SOFTWARE": server.server_software,
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": _dance(unquote(path)),
        "QUERY_STRING": _dance(query),
        "REQUEST_URI": _dance(target),
        "RAW_URI": _dance(target),
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": 0,
        "SERVER_NAME": server.host,
        "SERVER_PORT": str(server.port),
        "SERVER_PROTOCOL": "HTTP/1.1",
    }
    file_go_headers(environ, headers)
    environ["wsgi.input_terminated"] = True
    if chunked:
        environ.pop("CONTENT_LENGTH", None)
    return environ, sensor


def _run(server: ServiceServer, environ: dict, answer: Answer) -> None:
    """Call the guarded application; fill ``answer`` (status, reason, headers, body)."""
    state: dict = {}

    def start_response(status: str, headers: list, exc_info=None):
        if exc_info and state.get("sent"):
            raise exc_info[1].with_traceback(exc_info[2])
        state["status"], state["headers"] = status, headers
        return lambda data: state.setdefault("written", []).append(data)

    try:
        result = server._guarded(environ, start_response)
        try:
            body = b"".join([*state.get("written", []), *result])
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
    except Exception:  # noqa: BLE001 - as the listener: werkzeug's 500 page when the guard itself fails
        from werkzeug.exceptions import InternalServerError

        state.clear()
        body = b"".join(InternalServerError()(environ, start_response))
        state["close"] = True
    code = int(state["status"].partition(" ")[0])
    answer.status, answer.reason, answer.body = code, go_reason(code), body
    answer.headers = state["headers"]
    answer.dropped = environ["werkzeug.socket"].dropped
    answer.close = state.get("close", False)


def _head(answer: Answer, environ: dict, request_close: bool, unread: int) -> list[tuple[str, str]]:
    """The listener's header block (see :meth:`.keepalive.KeepAliveHandler._head`)."""
    out = [("Date", _http_date())]
    has_length = close = False
    for key, value in answer.headers:
        lower = key.lower()
        if lower == "content-length":
            has_length = True
        elif lower == "connection" and value.lower() == "close":
            close = True
        out.append((key, value))
    code = answer.status
    if not (has_length or environ["REQUEST_METHOD"] == "HEAD" or 100 <= code < 200 or code in _NO_BODY_STATUS):
        out.append(("Transfer-Encoding", "chunked"))
    if close or request_close or unread > MAX_DRAIN or answer.close:
        out.append(("Connection", "close"))
    return out


def exchange(server: ServiceServer, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b"",
             chunked: bool = False, read_timeout: float | None = None) -> Answer:
    """One request to ``server``'s application in this process (see the module doc).

    ``target`` is the request target as sent (path and query, percent-encoded); ``headers`` the
    header lines the client sends (``Host`` and the framing headers included); ``body`` the whole
    request body (``chunked``: sent with ``Transfer-Encoding: chunked``, no ``Content-Length``);
    ``read_timeout`` (seconds, ``None``: wait as long as it takes) bounds the wait for the answer when
    something may hold it (an active fault, a blocking query), as a socket read timeout would.
    """
    environ, _ = _environ(server, method, target, headers, body, chunked)
    stream = environ["wsgi.input"]
    answer = Answer()
    faults = getattr(server.app, "faults", None)
    may_wait = bool(faults) or "index=" in environ["QUERY_STRING"]
    if read_timeout is not None and may_wait:
        worker = threading.Thread(target=_run, args=(server, environ, answer), daemon=True,
                                  name=f"schedpki-{server.name}-inprocess")
        worker.start()
        worker.join(read_timeout)
        if worker.is_alive():
            return Answer(timed_out=True)
    else:
        _run(server, environ, answer)
    if answer.dropped:
        return Answer(dropped=True)
    request_close = environ.get("HTTP_CONNECTION", "").lower() == "close"
    unread = 0 if chunked else len(body) - stream.tell()
    answer.headers = _head(answer, environ, request_close, unread)
    if method == "HEAD" or answer.status in _NO_BODY_STATUS:
        answer.body = b""
    return answer
