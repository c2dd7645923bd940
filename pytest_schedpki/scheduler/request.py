"""Request parsing and plain-text answers shared by the scheduler's routes (Nomad's ``command/agent/http.go``).

* :func:`request_token` - the ACL token as ``parseToken`` reads it;
* :func:`parse_query` - ``stale``, ``per_page``, ``wait``, ``index`` and ``region`` with Nomad's 400 texts;
* :func:`read_body` - the raw body, None for Go's ``http.NoBody``; :func:`decode_with` - a write's body
  decoded, or the 400 answer;
* :func:`error` / :func:`meta` / :func:`pretty` / :func:`clean_path` - answers and headers.
"""

from __future__ import annotations

import posixpath
import re

from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Request, Response

from ..golang.duration import GoDurationError, parse_duration
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


def error(status: int, text: str, headers: dict | None = None) -> Response:
    """Nomad's plain-text error answer: ``status``, ``text`` as the body (``text/plain; charset=utf-8``)."""
    return Response(text, status=status, content_type=PLAIN, headers=headers)


def clean_path(path: str) -> str:
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


def pretty(request: Request) -> bool:
    """Whether ``?pretty`` asks for indented JSON (present, and not ``pretty=0``), as Nomad's ``wrap``."""
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


def parse_query(request: Request) -> tuple[str, int, int, bool] | Response:
    """Nomad's ``parse``: returns (region, index, wait in ns, stale) or the 400 response, checked in
    order stale, per_page, wait, index."""
    args = request.args
    region = args.get("region", "")
    stale = False
    if "stale" in args:
        value = args.getlist("stale")[0]
        if value != "" and value not in _GO_BOOLS:
            return error(400, "Expect `true` or `false` for `stale` query string parameter")
        stale = value == "" or _GO_BOOLS[value]
    per_page = args.get("per_page", "")
    if per_page != "" and _parse_int(per_page, 32, signed=True) is None:
        return error(400, "Expect a number for `per_page` query string parameter")
    wait_ns = 0
    wait = args.get("wait", "")
    if wait != "":
        try:
            wait_ns = parse_duration(wait)
        except GoDurationError:
            return error(400, "Invalid wait time")
    index = 0
    raw_index = args.get("index", "")
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
    if isinstance(body, Response):
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


def read_body(request: Request) -> bytes | None | Response:
    """The raw body (never via request.form), None when Go would see ``http.NoBody``; a body over
    :data:`MAX_BODY_SIZE` is ``413 http: request body too large`` (unread when its length is announced)."""
    environ = request.environ
    chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    if not chunked:
        length = environ.get("CONTENT_LENGTH", "").strip()
        if length == "":
            return None
        if not length.isdigit():
            return error(400, "400 Bad Request")
        if int(length) == 0:
            return None
        if int(length) > MAX_BODY_SIZE:
            return error(413, TOO_LARGE)
    try:
        data = request.stream.read(MAX_BODY_SIZE + 1)
    except HTTPException:  # the client sent less than it announced, or broke the chunked framing
        return error(400, "unexpected EOF")
    if len(data) > MAX_BODY_SIZE:
        return error(413, TOO_LARGE)
    return data
