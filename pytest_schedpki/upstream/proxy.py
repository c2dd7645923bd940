"""A recording pass-through in front of the upstream secrets server.

Clients of the test talk to this listener; every request goes to the real server unchanged (method,
raw path and query, headers except hop-by-hop ones, body) and its answer comes back unchanged. On
the way it notes what only the traffic shows: for each certificate issued or signed through a role
(``<mount>/issue/<role>``, ``<mount>/sign/<role>``, and the ``issuer/<ref>/...`` forms) its role,
its private key (issue only) and when it was issued, so that ``schedpki.certs`` can match on
``role=`` and hand out ``private_key`` as it does with the double; whether the test sent
anything but a read (so the reset between tests can skip the work when nothing changed). Requests
that need the double - its control endpoints (``/_schedpki/...``, answered 404) and any request
made while freezegun freezes time (answered 400: the real server keeps real time) - are not sent;
the proxy answers them with an error naming the knob, and the plugin reports a test that then fails
as skipped (a double-only knob) rather than failed.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
from dataclasses import dataclass

from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request

from ..clock import is_frozen, real_now
from .client import Client

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
               "transfer-encoding", "upgrade", "host", "content-length"}
_ROLE_PATH = re.compile(r"^/v1/(?P<mount>.+?)/(?:issuer/[^/]+/)?(?:issue|sign)/(?P<role>[^/?]+)$")
_READS = {"GET", "HEAD", "LIST", "OPTIONS"}


@dataclass
class Learned:
    """What the traffic showed about one certificate: ``role``, ``private_key`` (PEM or ``""``),
    ``issued_at`` (real UTC time of the answer)."""

    role: str
    private_key: str
    issued_at: datetime.datetime


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs) -> None:  # the test output is not a request log
        pass


class RecordingProxy:
    """The pass-through listener on ``host`` (a free port); :attr:`url` is what the test's clients use.

    ``learned`` maps lower-case colon serials to :class:`Learned`; ``writes`` counts requests that
    were not reads (GET, HEAD, LIST, OPTIONS) since :meth:`clear_writes`. Per test (since
    :meth:`begin_test`): ``forwarded`` counts the requests sent on to the real server and
    ``double_only`` names the knob of each request answered here instead (refused)."""

    intercept_control = True  # answer /_schedpki/ itself (the upstream is a real server)

    def __init__(self, upstream: Client, host: str = "127.0.0.1"):
        self.upstream = upstream
        self.learned: dict[str, Learned] = {}
        self.writes = 0
        self.forwarded = 0  # requests sent on since begin_test()
        self.double_only: list[str] = []  # double-only knobs requests needed since begin_test()
        self._lock = threading.Lock()
        self._server = make_server(host, 0, self, threaded=True, request_handler=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="schedpki-upstream-proxy", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> RecordingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def clear_writes(self) -> None:
        """Forget the writes (the servers were reset: nothing to undo)."""
        with self._lock:
            self.writes = 0

    def begin_test(self) -> None:
        """A new test starts: forget the last test's ``forwarded`` count and refused requests (they
        must never decide the report of another test)."""
        with self._lock:
            self.forwarded = 0
            self.double_only = []

    def __call__(self, environ, start_response):
        request = Request(environ)
        method = request.method.upper()
        target = environ.get("RAW_URI") or environ.get("REQUEST_URI") or request.full_path
        body = request.get_data()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        refused = ""
        if self.intercept_control and request.path.startswith("/_schedpki/"):  # the double's: not forwarded
            refused, status = f"the control endpoint {request.path}", "404 Not Found"
        elif self.intercept_control and is_frozen():  # the real server would answer at its own time
            refused, status = "freezegun time travel (a request made under freeze_time)", "400 Bad Request"
        if refused:
            with self._lock:
                self.double_only.append(refused)
            payload = json.dumps({"errors": [f"schedpki upstream mode: {refused} exists only in the double; "
                                             "this request was not sent to the real server"]}).encode()
            start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
            return [payload]
        with self._lock:
            self.forwarded += 1
            if method not in _READS:
                self.writes += 1
        conn = self.upstream.connection()
        try:
            conn.request(method, target, body if body or method not in _READS else None, headers)
            resp = conn.getresponse()
            payload = resp.read()
            status, reason, answer_headers = resp.status, resp.reason, resp.getheaders()
        except OSError as exc:
            payload = json.dumps({"errors": [f"schedpki upstream proxy: {self.upstream.url} unreachable: {exc}"]}).encode()
            status, reason, answer_headers = 502, "Bad Gateway", [("Content-Type", "application/json")]
        finally:
            conn.close()
        self.observe(method, target, request.path, headers, body, status, answer_headers, payload)
        out = [(k, v) for k, v in answer_headers if k.lower() not in _HOP_BY_HOP]
        out.append(("Content-Length", str(len(payload))))
        start_response(f"{status} {reason}", out)
        return [payload]

    def observe(self, method: str, target: str, path: str, headers: dict[str, str], body: bytes, status: int,
                answer_headers: list[tuple[str, str]], payload: bytes) -> None:
        """Called after each forwarded exchange (``target`` is the raw path and query)."""
        if status == 200 and method in ("POST", "PUT"):
            self._learn(path, payload)

    def _learn(self, path: str, payload: bytes) -> None:
        match = _ROLE_PATH.match(path)
        if not match:
            return
        try:
            data = json.loads(payload).get("data") or {}
        except (ValueError, AttributeError):
            return
        serial = str(data.get("serial_number") or "").lower()
        if serial:
            with self._lock:
                self.learned[serial] = Learned(match["role"], str(data.get("private_key") or ""), real_now())
