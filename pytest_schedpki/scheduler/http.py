"""HTTP skin of the scheduler: Nomad's ``/v1/acl/auth-method(s)`` routes over a :class:`SchedulerState`.

Routes (Nomad's mux patterns): ``/v1/acl/auth-methods`` (GET: list), ``/v1/acl/auth-method``
(PUT/POST: create) and ``/v1/acl/auth-method/<name>`` (GET read, PUT/POST update, DELETE). The
checks run in upstream order:

1. empty name on the named path: ``400 missing ACL auth-method name`` (before the method check);
2. any other HTTP method: ``405 Invalid method``;
3. writes: ``413 http: request body too large`` over :data:`MAX_BODY_SIZE` (a divergence: Nomad has
   no limit), ``400 Request body is empty`` / a Go JSON decode error (whatever the Content-Type), then
   ``400 ACL auth-method name does not match request path``, then the token (``403 Permission
   denied``), then validation; ``?region=`` is ignored - writes go to the authoritative region;
4. reads: query parameters (``stale``, ``per_page``, ``wait`` -> ``Invalid wait time``, ``index`` ->
   ``Invalid index``), ``?region=`` (unknown: ``500 No path to region``), the leader (without one
   and without ``?stale``: ``500 No cluster leader``), then the token (read only), then the
   blocking query.

Tokens come from ``X-Nomad-Token``, then ``X-Scheduler-Token`` (the API document's header), then
``Authorization: Bearer <t>``. Errors are plain text (``text/plain; charset=utf-8``); successes carry
``X-Nomad-Index`` (reads also ``X-Nomad-LastContact: 0`` and ``X-Nomad-KnownLeader: true``, which the
read 404 keeps). Paths are cleaned (``//`` collapsed, ``.``/``..`` resolved) and served directly.
"""

from __future__ import annotations

import posixpath
import re

from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Request, Response

from ..golang.duration import GoDurationError, parse_duration
from .decode import DecodeError, decode_method
from .encode import method_json, stubs_json
from .model import SchedulerError, sanitize, stub
from .state import SchedulerState
from .views import QueryResult

PLAIN = "text/plain; charset=utf-8"
LIST_PATH = "/v1/acl/auth-methods"
CREATE_PATH = "/v1/acl/auth-method"
NAMED_PREFIX = "/v1/acl/auth-method/"
_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}
_SLASHES = re.compile(r"/{2,}")
# Nomad sets no body limit; the double refuses bodies over 1 MiB (an auth method is a few KiB), so a
# stray or hostile upload is answered at once instead of holding a thread and hundreds of MiB while
# the Go-exact JSON scanner walks it (docs/divergences.md). Go's MaxBytesReader text, as OpenBao's.
MAX_BODY_SIZE = 1024 * 1024
TOO_LARGE = "http: request body too large"


def error_response(exc: BaseException) -> Response:
    """The 500 plain-text answer for an exception that escaped the app (used by the server guard)."""
    return Response(str(exc) or type(exc).__name__, status=500, content_type=PLAIN)


def _error(status: int, text: str, headers: dict | None = None) -> Response:
    return Response(text, status=status, content_type=PLAIN, headers=headers)


def _clean_path(path: str) -> str:
    """Go's ServeMux cleanPath (which upstream answers with a 301 redirect; the double just serves it)."""
    if not path.startswith("/"):
        path = "/" + path
    cleaned = posixpath.normpath(_SLASHES.sub("/", path))
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    if path.endswith("/") and cleaned != "/":
        cleaned += "/"
    return cleaned


def request_token(request: Request) -> str:
    """The ACL token secret, read as Nomad's ``parseToken`` does ("" = anonymous)."""
    for header in ("X-Nomad-Token", "X-Scheduler-Token"):
        value = request.headers.get(header)
        if value:
            return value.strip()
    auth = request.headers.get("Authorization")
    if auth:
        parts = auth.split(" ")
        if len(parts) > 1 and parts[0].lower() == "bearer":
            return " ".join(parts[1:]).strip().split(" ")[0].strip()
    return ""


def _pretty(request: Request) -> bool:
    values = request.args.getlist("pretty")
    return "pretty" in request.args and bool(values) and (values[0] == "" or values[0] != "0")


def _parse_int(text: str, bits: int, signed: bool) -> int | None:
    """Go's strconv.ParseInt/ParseUint in base 10 (None when Go would fail)."""
    body = text[1:] if signed and text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = -int(body) if text[:1] == "-" else int(body)
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return value if low <= value <= high else None


def _parse_query(request: Request) -> tuple[str, int, int, bool] | Response:
    """Nomad's ``parse``: returns (region, index, wait in ns, stale) or the 400 response, checked in
    order stale, per_page, wait, index."""
    args = request.args
    region = args.get("region", "")
    stale = False
    if "stale" in args:
        value = args.getlist("stale")[0]
        if value != "" and value not in _GO_BOOLS:
            return _error(400, "Expect `true` or `false` for `stale` query string parameter")
        stale = value == "" or _GO_BOOLS[value]
    per_page = args.get("per_page", "")
    if per_page != "" and _parse_int(per_page, 32, signed=True) is None:
        return _error(400, "Expect a number for `per_page` query string parameter")
    wait_ns = 0
    wait = args.get("wait", "")
    if wait != "":
        try:
            wait_ns = parse_duration(wait)
        except GoDurationError:
            return _error(400, "Invalid wait time")
    index = 0
    raw_index = args.get("index", "")
    if raw_index != "":
        parsed = _parse_int(raw_index, 64, signed=False)
        if parsed is None:
            return _error(400, "Invalid index")
        index = parsed
    return region, index, wait_ns, stale


def _meta(result: QueryResult) -> dict:
    return {"X-Nomad-Index": str(result.index), "X-Nomad-LastContact": str(result.last_contact_ms),
            "X-Nomad-KnownLeader": "true" if result.known_leader else "false"}


def _read_body(request: Request) -> bytes | None | Response:
    """The raw body (never via request.form), None when Go would see ``http.NoBody``; a body over
    :data:`MAX_BODY_SIZE` is ``413 http: request body too large`` (unread when its length is announced)."""
    environ = request.environ
    chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    if not chunked:
        length = environ.get("CONTENT_LENGTH", "").strip()
        if length == "":
            return None
        if not length.isdigit():
            return _error(400, "400 Bad Request")
        if int(length) == 0:
            return None
        if int(length) > MAX_BODY_SIZE:
            return _error(413, TOO_LARGE)
    try:
        data = request.stream.read(MAX_BODY_SIZE + 1)
    except HTTPException:  # the client sent less than it announced, or broke the chunked framing
        return _error(400, "unexpected EOF")
    if len(data) > MAX_BODY_SIZE:
        return _error(413, TOO_LARGE)
    return data


def _upsert(state: SchedulerState, request: Request, name: str) -> Response:
    body = _read_body(request)
    if isinstance(body, Response):
        return body
    if body is None:
        return _error(400, "Request body is empty")
    try:
        method = decode_method(body)
    except DecodeError as exc:
        return _error(400, str(exc))
    if name and name != method.Name:
        return _error(400, "ACL auth-method name does not match request path")
    result = state.apply_upsert(method, request_token(request), check_token=True)
    text = method_json(sanitize(result.method)) + ("\n" if _pretty(request) else "")
    return Response(text, status=200, content_type="application/json",
                    headers={"X-Nomad-Index": str(result.index)})


def _delete(state: SchedulerState, request: Request, name: str) -> Response:
    index = state.delete_auth_method(name, request_token(request), check_token=True)
    response = Response(b"", status=200, headers={"X-Nomad-Index": str(index)})
    del response.headers["Content-Type"]
    return response


def _read(state: SchedulerState, request: Request, name: str) -> Response:
    parsed = _parse_query(request)
    if isinstance(parsed, Response):
        return parsed
    region, index, wait_ns, stale = parsed
    result = state.query_get(name, region, request_token(request), index, wait_ns, stale)
    if result.value is None:
        return _error(404, "ACL auth-method not found", _meta(result))
    text = method_json(sanitize(result.value)) + ("\n" if _pretty(request) else "")
    return Response(text, status=200, content_type="application/json", headers=_meta(result))


def _list(state: SchedulerState, request: Request) -> Response:
    parsed = _parse_query(request)
    if isinstance(parsed, Response):
        return parsed
    region, index, wait_ns, stale = parsed
    result = state.query_list(region, index, wait_ns, stale)
    text = stubs_json([stub(m) for m in result.value], pretty=_pretty(request))
    return Response(text, status=200, content_type="application/json", headers=_meta(result))


def _dispatch(state: SchedulerState, request: Request) -> Response:
    path = _clean_path(request.path)
    verb = request.environ.get("REQUEST_METHOD", "")  # as sent: Go's method match is case-sensitive
    if path == LIST_PATH:
        return _list(state, request) if verb == "GET" else _error(405, "Invalid method")
    if path == CREATE_PATH:
        return _upsert(state, request, "") if verb in ("PUT", "POST") else _error(405, "Invalid method")
    if path.startswith(NAMED_PREFIX):
        name = path[len(NAMED_PREFIX):]
        if not name:
            return _error(400, "missing ACL auth-method name")
        if verb == "GET":
            return _read(state, request, name)
        if verb == "DELETE":
            return _delete(state, request, name)
        if verb in ("PUT", "POST"):
            return _upsert(state, request, name)
        return _error(405, "Invalid method")
    response = Response(b"", status=404)
    del response.headers["Content-Type"]
    return response


def make_app(state: SchedulerState):
    """The scheduler's WSGI application over ``state``.

    :class:`~.model.SchedulerError` raised by the state becomes its plain-text status and body;
    any other exception escapes to the server guard (recorded, answered with :func:`error_response`).
    """
    def app(environ, start_response):
        request = Request(environ)
        try:
            response = _dispatch(state, request)
        except SchedulerError as exc:
            response = _error(exc.status, exc.text)
        return response(environ, start_response)

    return app
