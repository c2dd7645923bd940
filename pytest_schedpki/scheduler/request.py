"""Request parsing and plain-text answers shared by the scheduler's routes (Nomad's ``command/agent/http.go``).

* :func:`request_token` - the ACL token as ``parseToken`` reads it;
* :func:`parse_query` - ``stale``, ``per_page``, ``wait``, ``index`` and ``region`` with Nomad's 400 texts;
* :func:`read_body` - the raw body, None for Go's ``http.NoBody``; :func:`decode_with` - a write's body
  decoded, or the 400 answer;
* :func:`error` / :func:`meta` / :func:`pretty` / :func:`clean_path` - answers and headers;
* :class:`Reply` / :func:`reply` - a finished answer, the bytes werkzeug's ``Response`` would send;
  :data:`ANSWERS` - what a parsing step returns when it has answered the request itself.
"""

from __future__ import annotations

import posixpath
import re

from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Request, Response

from ..golang.duration import GoDurationError, parse_duration
from ..golang.strconv import NumError, decimal_in_range, parse_int, parse_uint
from ..golang.url import go_parse_query
from ..wire.bytes_response import BytesResponse
from .views import QueryResult

PLAIN = "text/plain; charset=utf-8"
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


#: A finished answer as a small WSGI application: what werkzeug's ``Response`` sends for the same answer
#: (status line, headers in order, then ``Content-Length``; no body for ``HEAD``), without building
#: one (~20-30 us a request): the secrets side's :class:`~pytest_schedpki.wire.bytes_response.BytesResponse`
Reply = BytesResponse


#: what a parsing step (:func:`parse_query`, :func:`read_body`, :func:`decode_with`) returns when it
#: has answered the request itself: ``isinstance(value, ANSWERS)``
ANSWERS = (Reply, Response)


def reply(body: str | bytes, status: int, content_type: str | None, headers: dict[str, str] | None = None):
    """What werkzeug's ``Response(body, status=status, content_type=content_type, headers=headers)``
    sends, as a :class:`Reply`: the ``headers`` in order, ``Content-Type`` appended (or, given among
    them, replaced in place: werkzeug's ``Headers.set``), then ``Content-Length``. ``content_type``
    None: no Content-Type at all (what the scheduler's empty answers send after deleting werkzeug's
    default). A status werkzeug frames specially (below 200, 204, 304) or a header value werkzeug
    would refuse or convert (not a string, or holding a line break: its ``ValueError``) goes to
    werkzeug's ``Response`` itself."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    header_list: list[tuple[str, str]] = []
    placed = content_type is None
    plain = 200 <= status and status not in (204, 304)
    if headers:
        for name, value in headers.items():
            if type(value) is not str or "\n" in value or "\r" in value:
                plain = False
            if name.lower() == "content-type":
                if not placed:
                    header_list.append(("Content-Type", content_type))
                    placed = True
                continue  # werkzeug's Headers.set: the first one replaced, the others dropped
            header_list.append((name, value))
    if not plain:
        response = Response(data, status=status, content_type=content_type or PLAIN, headers=headers)
        if content_type is None:
            del response.headers["Content-Type"]
        return response
    if not placed:
        header_list.append(("Content-Type", content_type))
    return Reply(data, status, header_list)


def error(status: int, text: str, headers: dict | None = None) -> Reply | Response:
    """Nomad's plain-text error answer: ``status``, ``text`` as the body (``text/plain; charset=utf-8``)."""
    return reply(text, status, PLAIN, headers)


class LazyRequest:
    """The request as the routes see it: ``environ`` and ``path`` at once, any other attribute
    (``args``, ``headers``, ``stream``, ``form``, ``host_url``...) from werkzeug's ``Request``, built
    on first use. The hot routes read only the environ (the token, the method, an empty query string),
    so most requests never pay werkzeug's request set-up (~3-5 us: its server tuple, header view and
    decoded paths). ``path`` is werkzeug's: ``PATH_INFO`` decoded as its ``_wsgi_decoding_dance`` does
    (the latin-1 text's bytes read as UTF-8, errors replaced), with one leading slash."""

    __slots__ = ("environ", "path", "_full")

    def __init__(self, environ: dict):
        self.environ = environ
        path = environ.get("PATH_INFO") or ""
        if not path.isascii():
            path = path.encode("latin1").decode(errors="replace")
        self.path = "/" + path.lstrip("/")
        self._full: Request | None = None

    def __getattr__(self, name: str):
        full = self._full
        if full is None:
            full = self._full = Request(self.environ)
        return getattr(full, name)


def clean_path(path: str) -> str:
    """Go's ServeMux cleanPath (which upstream answers with a 301 redirect; the double just serves it)."""
    if path.startswith("/") and "//" not in path and "/." not in path:
        return path  # no empty, "." or ".." element: already clean (a trailing slash is kept)
    if not path.startswith("/"):
        path = "/" + path
    cleaned = posixpath.normpath(_SLASHES.sub("/", path))
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    if path.endswith("/") and cleaned != "/":
        cleaned += "/"
    return cleaned


def request_token(request: Request) -> str:
    """The ACL token secret, read as Nomad's ``parseToken`` does ("" = anonymous). The headers are
    read from the environ as werkzeug's ``EnvironHeaders.get`` reads them (``HTTP_<NAME>``), without
    building the request's header view."""
    environ = request.environ
    for key in ("HTTP_X_NOMAD_TOKEN", "HTTP_X_SCHEDULER_TOKEN"):
        value = environ.get(key)
        if value:
            return value.strip()
    auth = environ.get("HTTP_AUTHORIZATION")
    if auth:
        parts = auth.split(" ")
        if len(parts) > 1 and parts[0].lower() == "bearer":
            return " ".join(parts[1:]).strip().split(" ")[0].strip()
    return ""


def go_args(request: Request) -> MultiDict:
    """The query as Nomad's ``req.URL.Query()`` reads it (``url.ParseQuery``: a pair holding ``;`` or
    an invalid escape is dropped, where werkzeug's ``request.args`` keeps it verbatim), first value
    first; parsed once per request."""
    args = request.environ.get("schedpki.go_args")
    if args is None:
        pairs = go_parse_query(request.environ.get("QUERY_STRING", ""))
        args = request.environ["schedpki.go_args"] = MultiDict([(k, v) for k, vs in pairs.items() for v in vs])
    return args


def query_arg(request: Request, name: str) -> str:
    """The first value of the query parameter ``name``, ``""`` when absent (:func:`go_args`), without parsing an empty query string or raising and catching a
    KeyError for an absent name."""
    if not request.environ.get("QUERY_STRING"):
        return ""
    args = go_args(request)
    return args[name] if name in args else ""


def pretty(request: Request) -> bool:
    """Whether ``?pretty`` asks for indented JSON (present, and not ``pretty=0``), as Nomad's ``wrap``."""
    if not request.environ.get("QUERY_STRING"):  # nothing to parse: werkzeug's args would be empty
        return False
    args = go_args(request)
    values = args.getlist("pretty")
    return "pretty" in args and bool(values) and (values[0] == "" or values[0] != "0")


def _parse_int(text: str, bits: int, signed: bool) -> int | None:
    """Go's strconv.ParseInt/ParseUint in base 10 (None when Go would fail, however long the text)."""
    try:
        return parse_int(text, 10, bits) if signed else parse_uint(text, 10, bits)
    except NumError:
        return None


def parse_query(request: Request) -> tuple[str, int, int, bool] | Reply | Response:
    """Nomad's ``parse``: returns (region, index, wait in ns, stale) or the 400 response, checked in
    order stale, per_page, wait, index."""
    if not request.environ.get("QUERY_STRING"):  # nothing sent: every default
        return "", 0, 0, False
    args = go_args(request)
    # ``x in args and args[x]`` is werkzeug's ``args.get(x, "")`` (the first value) without the
    # KeyError it raises and catches for every parameter not sent
    region = args["region"] if "region" in args else ""
    stale = False
    if "stale" in args:
        value = args["stale"]
        if value != "" and value not in _GO_BOOLS:
            return error(400, "Expect `true` or `false` for `stale` query string parameter")
        stale = value == "" or _GO_BOOLS[value]
    per_page = args["per_page"] if "per_page" in args else ""
    if per_page != "" and _parse_int(per_page, 32, signed=True) is None:
        return error(400, "Expect a number for `per_page` query string parameter")
    wait_ns = 0
    wait = args["wait"] if "wait" in args else ""
    if wait != "":
        try:
            wait_ns = parse_duration(wait)
        except GoDurationError:
            return error(400, "Invalid wait time")
    index = 0
    raw_index = args["index"] if "index" in args else ""
    if raw_index != "":
        parsed = _parse_int(raw_index, 64, signed=False)
        if parsed is None:
            return error(400, "Invalid index")
        index = parsed
    return region, index, wait_ns, stale


def decode_with(request: Request, decoder, errors: type[Exception] | tuple = ValueError):
    """``decoder(body bytes)`` for a write's body, or the 400 answer: ``Request body is empty`` (Go's
    ``http.NoBody``), the text of the decoder's ``errors`` (Go's JSON and field texts), or the body-size
    refusal of :func:`read_body`."""
    body = read_body(request)
    if isinstance(body, ANSWERS):
        return body
    if body is None:
        return error(400, "Request body is empty")
    try:
        return decoder(body)
    except errors as exc:
        return error(400, str(exc))


def meta(result: QueryResult) -> dict:
    """The blocking-query headers of a read: ``X-Nomad-Index``, ``X-Nomad-LastContact`` (ms),
    ``X-Nomad-KnownLeader`` (``setMeta``)."""
    return {"X-Nomad-Index": str(result.index), "X-Nomad-LastContact": str(result.last_contact_ms),
            "X-Nomad-KnownLeader": "true" if result.known_leader else "false"}


def read_body(request: Request) -> bytes | None | Reply | Response:
    """The raw body (never via request.form), None when Go would see ``http.NoBody``; a body over
    :data:`MAX_BODY_SIZE` is ``413 http: request body too large`` (unread when its length is announced)."""
    environ = request.environ
    chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    if not chunked:
        length = environ.get("CONTENT_LENGTH", "").strip()
        if length == "":
            return None
        if not (length.isascii() and length.isdigit()):
            return error(400, "400 Bad Request")
        size = decimal_in_range(length, 0, MAX_BODY_SIZE)  # None: larger, however many digits
        if size == 0:
            return None
        if size is None:
            return error(413, TOO_LARGE)
    try:
        data = request.stream.read(MAX_BODY_SIZE + 1)
    except HTTPException:  # the client sent less than it announced, or broke the chunked framing
        return error(400, "unexpected EOF")
    if len(data) > MAX_BODY_SIZE:
        return error(413, TOO_LARGE)
    return data
