"""HTTP/1.1 persistent connections for werkzeug's request handler.

werkzeug's development server answers every request with ``Connection: close`` (it cannot tell
where an unread request body ends), so each request of a client pays a TCP handshake and a new
server thread. Both upstreams are Go servers, which keep connections alive. :class:`KeepAliveHandler`
does the same: the request body is bounded by ``Content-Length`` (or de-chunked), whatever the
application leaves unread is drained after the answer, and the connection then serves the next
request. The status line, headers and the first body chunk go out in one ``send`` with Nagle off.

The connection is closed after the answer when the client asks for it (``Connection: close``, or
HTTP/1.0 without ``keep-alive``), when the request framing is unreliable (a broken chunked body, a
body left unread beyond :data:`MAX_DRAIN` bytes), and when writing fails. A request whose framing Go
refuses (two different ``Content-Length`` values, a ``Transfer-Encoding`` other than ``chunked``, ...)
never reaches the application: :mod:`.framing` answers it as Go does and the connection closes.
Chunked bodies are read by :class:`~.chunked.ChunkedBody`; each connection reports its phase to the
listener's :class:`~.connections.ConnectionRegistry`, which applies the header, idle and read timeouts.

System calls per request: every call releases and retakes the interpreter lock, a hand-over to
another connection's thread when several are busy. On a plain TCP connection a request without a
body costs two: the ``recv`` that brings it (its head then goes through
:class:`~.fastrequest.FastRequestMixin` when it is whole in the buffer) and a non-blocking ``send`` of
the answer. The read timeout is set on the socket only when it can matter - a request with a body,
an answer the socket's buffer did not take at once - and taken off after the answer (setting it
costs a system call, and a socket with a timeout polls before every read and write). TLS
connections keep the timeout on for every request.
"""

from __future__ import annotations

import email.utils
import socket
import ssl
import time
from typing import Any

from werkzeug.exceptions import InternalServerError
from werkzeug.serving import WSGIRequestHandler
from werkzeug.wsgi import LimitedStream

from .bytes_response import go_reason
from .chunked import ChunkedBody
from .connections import BUSY, FRESH, HEADER, IDLE, BodyReader, ConnectionRegistry  # noqa: F401 - re-exported
from .fastparse import FastParseMixin, parse_head
from .fastrequest import FastRequestMixin, file_go_headers
from .framing import FramingMixin, chunked

MAX_DRAIN = 64 * 1024 * 1024  # bytes of unread request body discarded to keep a connection; above: close
_DRAIN_CHUNK = 64 * 1024
LINGER = 1.0  # seconds a closing connection swallows an unread request body (Go: 500 ms, then a reset)
_EMPTY = b""


_DATE: tuple[int, str] = (0, "")


def _http_date() -> str:
    """The ``Date`` header value for now (formatted once per second)."""
    global _DATE
    now = int(time.time())
    cached = _DATE
    if cached[0] != now:
        cached = _DATE = (now, email.utils.formatdate(now, usegmt=True))
    return cached[1]


class KeepAliveHandler(FramingMixin, FastParseMixin, FastRequestMixin, WSGIRequestHandler):
    """werkzeug's WSGI request handler with keep-alive (see the module doc), the fast request
    parser of :mod:`.fastparse`, the one-step path of :mod:`.fastrequest` for a whole head in the
    buffer, and Go's request framing of :mod:`.framing` (a request Go refuses gets Go's answer and no
    application runs).

    The server may carry a ``connections`` attribute (:class:`~.connections.ConnectionRegistry`);
    each handled connection registers itself there while it is open and reports its phase, so the
    registry can apply the listener's timeouts (see :mod:`.connections`).
    """

    _served = False  # a request was answered on this connection
    _registry: ConnectionRegistry | None = None
    _plain = False  # a plain TCP connection (not TLS): the fast paths below apply
    _timed = False  # the socket carries the read timeout now (else it blocks: the registry times the waits)
    _peeked = 0  # bytes in rfile's buffer when the request's head was parsed from it

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        self._registry = registry = getattr(self.server, "connections", None)
        self._plain = not isinstance(self.connection, ssl.SSLSocket)
        self._timed = self.connection.gettimeout() is not None  # (a default timeout: cleared after a request)
        if registry is not None:
            registry.add(self.connection)

    def handle_one_request(self) -> None:
        registry = self._registry
        if registry is None:
            try:
                super().handle_one_request()
            finally:
                self._served = True
            return
        sock = self.connection
        registry.mark(sock, IDLE if self._served else FRESH)
        try:
            buffered = self.rfile.peek(1)  # wait for a request's first byte (the registry times this)
        except (OSError, ValueError):
            self.close_connection = True
            return
        if not buffered:
            self.close_connection = True
            return
        self._peeked = len(buffered)
        try:
            head = parse_head(buffered) if self._plain else None
            if head is None or not self._fast_request(head):
                registry.mark(sock, HEADER)
                super().handle_one_request()
        finally:
            self._served = True
            registry.unpark(sock)  # a parked blocking query was answered: back to a slot
            if self._timed:
                self._timed = False
                try:
                    sock.settimeout(None)  # the registry times the wait for the next request
                except OSError:
                    pass

    def finish(self) -> None:
        registry = self._registry
        if registry is not None:
            registry.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    # -- request body ---------------------------------------------------------------------------
    def handle_expect_100(self) -> bool:
        """``Expect: 100-continue``: nothing yet; :meth:`run_wsgi` sends ``100 Continue`` once the
        request passed the framing checks (the standard handler sent it while parsing: twice in all)."""
        return True

    def make_environ(self) -> dict[str, Any]:  # type: ignore[override]
        """werkzeug's environ, its header entries holding the values Go's handlers read
        (:func:`~.fastrequest.file_go_headers`: the first of repeated fields, trimmed)."""
        environ = super().make_environ()
        fields: dict[str, Any] = {}
        file_go_headers(fields, self.headers.items())
        for key, value in fields.items():
            if key in environ:
                environ[key] = value
        return environ

    def _bound_input(self, environ: dict[str, Any], is_chunked: bool) -> Any:
        """Put a stream on ``wsgi.input`` that ends where this request's body ends (``is_chunked``: as
        :func:`.framing.chunked` frames it; the framing checks let only valid lengths through) and
        return it. A request with a body gets the read timeout on its socket."""
        if is_chunked:  # ends at the last chunk, never reads past the data
            self._read_timeout()
            stream = environ["wsgi.input"] = ChunkedBody(self._body_source())  # not werkzeug's DechunkedInput: see .chunked
        else:
            environ.pop("HTTP_TRANSFER_ENCODING", None)  # HTTP/1.0: Go ignores (and drops) it
            # framing checked the digits (at most 19 after leading zeros); the canonical number
            # replaces the text so werkzeug's own int() of it never meets thousands of zeros
            length = int((environ.get("CONTENT_LENGTH") or "0").lstrip("0") or "0")
            if "CONTENT_LENGTH" in environ:
                environ["CONTENT_LENGTH"] = str(length)
            if length and length <= self._body_buffered:
                # the whole body came with the head (one segment, as most clients send a small request):
                # reading it cannot wait, so no read timeout to set and no BODY phase to report
                stream = LimitedStream(self.rfile, length)
            elif length:
                self._read_timeout()
                stream = LimitedStream(self._body_source(), length)
            else:
                stream = LimitedStream(self.rfile, 0)  # reads nothing from rfile
            environ["wsgi.input"] = stream
        environ["wsgi.input_terminated"] = True
        return stream

    def _read_timeout(self) -> None:
        """Give the socket the listener's read timeout, until the request is answered: a stalled read
        or write fails. Without a body to read, only a write can stall: :meth:`_send` sets it then."""
        registry = self._registry
        if registry is not None and not self._timed:
            self.connection.settimeout(registry.limits.read_timeout)
            self._timed = True

    def _send(self, data: bytes) -> None:
        """Write ``data`` to the client. On a plain TCP socket a non-blocking ``send`` first (the whole
        answer fits in the socket's buffer but for large bodies or a client that stopped reading):
        one system call and no timeout to set; the rest, if any, with the read timeout."""
        if self._plain:
            try:
                sent = self.connection.send(data, socket.MSG_DONTWAIT)
            except BlockingIOError:
                sent = 0
            if sent == len(data):
                return
            data = memoryview(data)[sent:]
            self._read_timeout()
        self.wfile.write(data)

    def _body_source(self) -> Any:
        """``rfile`` for a body stream: reads report the ``BODY`` phase to the registry, if any."""
        registry = self._registry
        return self.rfile if registry is None else BodyReader(self.rfile, registry, self.connection)

    def _drain(self, stream: Any) -> None:
        """Discard the unread rest of the request body, or mark the connection for closing."""
        if self.close_connection:
            return
        try:
            if isinstance(stream, LimitedStream):
                if not stream.limit:
                    return
                if stream.limit - stream.tell() > MAX_DRAIN:
                    self.close_connection = True
                    return
                while not stream.is_exhausted:
                    if not stream.read(_DRAIN_CHUNK):
                        break
            elif isinstance(stream, ChunkedBody):
                total = 0
                while True:
                    chunk = stream.read(_DRAIN_CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > MAX_DRAIN:
                        self.close_connection = True
                        return
        except Exception:  # noqa: BLE001 - a broken body (short read, bad chunk) ends the connection
            self.close_connection = True

    def _linger(self, stream: Any) -> None:
        """Before closing a connection whose request body was not read to its end: stop writing and
        swallow what the client still sends for up to :data:`LINGER` seconds, so a client that is
        still sending reads the answer (e.g. a 413) instead of a connection reset (what Go's server
        does in ``closeWriteAndWait``)."""
        if isinstance(stream, LimitedStream):
            if stream.is_exhausted:
                return
        elif not isinstance(stream, ChunkedBody) or stream.done:
            return
        sock = self.connection
        self._timed = True  # the timeouts below
        try:
            self.wfile.flush()
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER
            while (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                if not sock.recv(_DRAIN_CHUNK):
                    break
        except (OSError, ValueError):
            pass

    # -- one request ----------------------------------------------------------------------------
    def run_wsgi(self) -> None:
        registry = self._registry
        if registry is not None:
            registry.mark(self.connection, BUSY)
            if not self._plain:
                self._read_timeout()  # a stalled read or write fails (plain TCP: see _bound_input, _send)
        environ, self._prepared = self._prepared, None
        if environ is None:
            self._body_buffered = 0  # the standard parser read the head: what is buffered is not known
            if self.headers.get("Expect", "").lower().strip() == "100-continue":
                self._send(b"HTTP/1.1 100 Continue\r\n\r\n")
            environ = self.make_environ()
            is_chunked = chunked(self.headers, self.request_version)
        else:
            is_chunked = False  # _fast_request takes no Transfer-Encoding
        self.environ = environ
        stream = self._bound_input(environ, is_chunked)
        state: dict[str, Any] = {"status": None, "headers": None, "sent": False, "chunked": False, "input": stream}

        def start_response(status: str, headers: list, exc_info: Any = None):
            if exc_info:
                try:
                    if state["sent"]:
                        raise exc_info[1].with_traceback(exc_info[2])
                finally:
                    exc_info = None
            elif state["headers"] is not None:
                raise AssertionError("Headers already set")
            state["status"], state["headers"] = status, headers
            return write

        def write(data: bytes) -> None:
            assert state["headers"] is not None, "write() before start_response"
            out = data
            if not state["sent"]:
                out = self._head(environ, state) + (self._frame(data, state) if data else _EMPTY)
                state["sent"] = True
            elif data:
                out = self._frame(data, state)
            if out:
                self._send(out)

        def execute(app: Any) -> None:
            result = app(environ, start_response)
            try:
                for data in result:
                    write(data)
                if not state["sent"]:
                    write(_EMPTY)
                if state["chunked"]:
                    self._send(b"0\r\n\r\n")
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()

        try:
            execute(self.server.app)
        except (ConnectionError, TimeoutError, OSError):
            self.close_connection = True
            return
        except Exception:  # noqa: BLE001 - as werkzeug: a 500 page if nothing was sent yet
            self.close_connection = True
            if not state["sent"]:
                state.update(status=None, headers=None)
                try:
                    execute(InternalServerError())
                except Exception:  # noqa: BLE001
                    pass
            return
        self._drain(stream)
        if self.close_connection:
            self._linger(stream)

    def _head(self, environ: dict[str, Any], state: dict[str, Any]) -> bytes:
        """Status line and headers (``Date``, the application's, then framing and ``Connection``), as
        bytes ending with the blank line. No ``Server`` header: Go's net/http (bao, Nomad) sends none."""
        status: str = state["status"]
        code = int(status.partition(" ")[0])
        self.log_request(code)
        http10 = self.request_version == "HTTP/1.0"  # Go answers an HTTP/1.0 request in HTTP/1.0
        version = "HTTP/1.0" if http10 else self.protocol_version
        lines = [f"{version} {code} {go_reason(code)}\r\n", f"Date: {_http_date()}\r\n"]
        has_length = False
        for key, value in state["headers"]:
            lower = key.lower()
            if lower == "content-length":
                has_length = True
            elif lower == "connection" and value.lower() == "close":
                self.close_connection = True
            lines.append(f"{key}: {value}\r\n")
        if not (has_length or environ["REQUEST_METHOD"] == "HEAD" or 100 <= code < 200 or code in (204, 304)):
            if http10:  # no chunked body in HTTP/1.0: the connection's end ends the body, as Go does
                self.close_connection = True
            else:
                state["chunked"] = True
                lines.append("Transfer-Encoding: chunked\r\n")
        stream = state["input"]
        if isinstance(stream, LimitedStream) and stream.limit > MAX_DRAIN and stream.limit - stream.tell() > MAX_DRAIN:
            self.close_connection = True  # too much unread body to drain: say so before closing
        if self.close_connection:
            if not http10:  # closing is HTTP/1.0's default: Go says nothing
                lines.append("Connection: close\r\n")
        elif http10:
            lines.append("Connection: keep-alive\r\n")
        lines.append("\r\n")
        return "".join(lines).encode("latin-1")

    @staticmethod
    def _frame(data: bytes, state: dict[str, Any]) -> bytes:
        if state["chunked"]:
            return b"%x\r\n%s\r\n" % (len(data), data)
        return data
