"""WSGI layer shared by both services: control endpoints, injected faults, the request journal.

Order per request: ``/_schedpki/...`` control endpoints (never journaled, never faulted) ->
the first matching :class:`~pytest_schedpki.faults.Fault` (latency, hang, drop, canned answer) ->
the service's own application -> a :class:`~pytest_schedpki.journal.Journal` entry (also for
answers a fault gave; a dropped connection is journaled with status 0). The journal keeps the
request body as the service read it (up to :data:`JOURNAL_BODY_LIMIT` bytes); nothing is read
ahead of the service. While the double stops, a request held by a ``hang`` drops its connection.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from urllib.parse import parse_qs

from werkzeug.exceptions import ClientDisconnected
from werkzeug.wrappers import Response
from werkzeug.wsgi import get_input_stream

from ..faults import MAX_HANG, Fault, FaultSet
from ..journal import Journal
from ..process import native_work
from .connections import drop_connection

CONTROL_PREFIX = "/_schedpki/"
JOURNAL_BODY_LIMIT = 64 * 1024 * 1024  # bytes of a body the journal keeps; larger bodies are cut
LOG_KIND = "schedpki.token_kind"  # environ key: the kind of token the access log shows


class _Captured(io.RawIOBase):
    """``wsgi.input`` as the application sees it: the request body, read on demand from the client,
    with the first :data:`JOURNAL_BODY_LIMIT` bytes read kept for the journal.

    Nothing is read ahead: the journal holds what the service read (a body refused unread, like a
    413 for its announced length, is not read at all). A body the client ended before its
    ``Content-Length`` or whose chunked framing broke raises werkzeug's ``ClientDisconnected`` (a
    400), so each service answers as its Go server does when the read fails (``unexpected EOF``).
    """

    def __init__(self, stream) -> None:
        self._stream = stream
        self._limit = JOURNAL_BODY_LIMIT
        self._head = bytearray()

    def readable(self) -> bool:
        return True

    def _take(self, size: int) -> bytes:
        try:
            data = self._stream.read(size)
        except ClientDisconnected:
            raise
        except (OSError, ValueError) as exc:  # a broken body from any other stream (as werkzeug's LimitedStream)
            raise ClientDisconnected() from exc
        room = self._limit - len(self._head)
        if room > 0 and data:
            self._head += data[:room]
        return data

    def readinto(self, buffer) -> int:
        data = self._take(len(buffer))
        count = len(data)
        memoryview(buffer).cast("B")[:count] = data
        return count

    def read_upto(self, limit: int) -> bytes:
        """The rest of the body, at most ``limit`` bytes, read 64 KiB at a time until it ends: what
        werkzeug's ``Request.get_data`` returns through a ``max_content_length`` of ``limit``
        (``ClientDisconnected`` for a broken body), without its 64 KiB buffer per read."""
        parts = []
        while limit > 0:
            data = self._take(min(limit, 1 << 16))
            if not data:
                break
            parts.append(data)
            limit -= len(data)
        return b"".join(parts)

    def read_head(self) -> None:
        """Read on until the journal's share is complete or the body ends (for answers given without
        the service, e.g. by a fault); a broken body just ends it."""
        try:
            while len(self._head) < self._limit and self.read(min(self._limit - len(self._head), 1 << 20)):
                pass
        except ClientDisconnected:
            pass

    @property
    def head(self) -> bytes:
        return bytes(self._head)


_ENVIRON_KEYS: dict[str, str | None] = {}  # header name asked for -> its HTTP_* environ key (see get)


class _EnvironHeaders(Mapping):
    """The request headers as the token classifiers see them: ``{"X-Vault-Token": ...}`` with the
    title-cased names of the ``HTTP_*`` environ keys, read from the environ on demand (building that
    dict for every request cost more than the lookups)."""

    def __init__(self, environ: dict):
        self._environ = environ

    def __getitem__(self, name: str) -> str:
        key = "HTTP_" + name.upper().replace("-", "_")
        if key not in self._environ or key[5:].replace("_", "-").title() != name:
            raise KeyError(name)
        return self._environ[key]

    def get(self, name: str, default=None):
        """``self[name]`` or ``default``, without raising on the way (a classifier asks for headers
        most requests lack)."""
        key = _ENVIRON_KEYS.get(name, 0)
        if key == 0:  # not seen yet: its environ key, or None for a name no environ key reads back as
            key = "HTTP_" + name.upper().replace("-", "_")
            if key[5:].replace("_", "-").title() != name:
                key = None
            if len(_ENVIRON_KEYS) < 256:  # the classifiers' names, fixed in the code; bounded all the same
                _ENVIRON_KEYS[name] = key
        value = self._environ.get(key) if key is not None else None
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        return (k[5:].replace("_", "-").title() for k in self._environ if k.startswith("HTTP_"))

    def __len__(self) -> int:
        return sum(1 for k in self._environ if k.startswith("HTTP_"))


class Instrumented:
    """Wrap ``app`` (one service) with control endpoints, faults and the journal.

    ``token_kind(headers)`` classifies the presented token for the journal; ``control`` is the
    WSGI app serving ``/_schedpki/...`` (or ``None``); ``default_content_type`` is used for canned
    fault answers whose body is text (scheduler: plain text, secrets: JSON). ``log_kind(headers)``,
    when given (``--log-requests``), classifies the token for the access log before the service runs
    (kept in ``environ[LOG_KIND]``; never the token itself).
    """

    def __init__(self, service: str, app: Callable, journal: Journal, faults: FaultSet,
                 token_kind: Callable[[dict[str, str]], str], control: Callable | None = None,
                 log_kind: Callable[[Mapping], str] | None = None):
        self.service = service
        self.app = app
        self.journal = journal
        self.faults = faults
        self.token_kind = token_kind
        self.control = control
        self.log_kind = log_kind

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if self.control is not None and path.startswith(CONTROL_PREFIX):
            return self.control(environ, start_response)
        if self.log_kind is not None:
            try:
                environ[LOG_KIND] = self.log_kind(_EnvironHeaders(environ))
            except Exception:  # noqa: BLE001 - classification must never break a request
                environ[LOG_KIND] = "unknown"
        started = time.perf_counter()
        # werkzeug's get_input_stream returns a terminated stream as is (no limit given here)
        stream = environ["wsgi.input"] if "wsgi.input_terminated" in environ else get_input_stream(environ)
        body = _Captured(stream)
        environ["wsgi.input"] = body
        environ["wsgi.input_terminated"] = True
        method = environ.get("REQUEST_METHOD", "GET")
        fault = self.faults.take(self.service, method, path) if self.faults else None
        if fault is not None:
            answered = self._apply_fault(fault, environ, start_response)
            if answered is not None:
                status, chunks = answered
                body.read_head()
                self._record(environ, method, path, body.head, status, chunks, started)
                return [chunks] if chunks else []
        captured: dict[str, object] = {}

        def capture(status: str, headers: list, exc_info=None):
            captured["status"] = int(status.split(" ", 1)[0])
            return start_response(status, headers, exc_info)

        result = self.app(environ, capture)
        try:
            chunks = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        self._record(environ, method, path, body.head, int(captured.get("status", 0)), chunks, started)
        return [chunks]

    def _record(self, environ: dict, method: str, path: str, body: bytes, status: int, response: bytes,
                started: float) -> None:
        raw_query = environ.get("QUERY_STRING", "")
        query = {k: v[0] for k, v in parse_qs(raw_query, keep_blank_values=True).items()} if raw_query else {}
        headers = _EnvironHeaders(environ)
        try:
            kind = self.token_kind(headers)
        except Exception:  # noqa: BLE001 - classification must never break a request
            kind = "unknown"
        self.journal.record(self.service, method, path, query, kind, body, status, response,
                            time.perf_counter() - started)

    def _apply_fault(self, fault: Fault, environ: dict, start_response: Callable) -> tuple[int, bytes] | None:
        """Run the fault; returns ``(status, body)`` when it answered (status 0: connection dropped)
        or ``None`` when the real handler should answer (latency or a released hang only)."""
        with native_work.waiting():  # a held request does not hold the process exit
            if fault.latency:
                time.sleep(fault.latency)
            if fault.hang:
                fault.released.wait(MAX_HANG)
        if fault.drop or (fault.hang and self.faults.stopping.is_set()):  # a stopped server answers nothing
            drop_connection(environ)
            start_response("500 Internal Server Error", [("Content-Length", "0")])
            return 0, b""
        if fault.status is None:
            return None
        body = fault.body
        content_type = fault.content_type
        if isinstance(body, (dict, list)):
            body = json.dumps(body) + "\n"
            content_type = content_type or "application/json"
        elif body is None:
            body = ""
        content_type = content_type or ("application/json" if self.service == "secrets" else "text/plain; charset=utf-8")
        response = Response(body, status=fault.status, content_type=content_type)
        chunks = b"".join(response(environ, start_response))
        return fault.status, chunks
