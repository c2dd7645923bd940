"""Headers at the secrets service's HTTP edge: the request as the HTTP layer reads it (its operation and
query parameters too), the request's headers as the handlers see them, and the response headers a mount lets through (OpenBao
``routing/router.go`` ``filteredHeaders``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from werkzeug.wrappers import Request, Response

from ..golang.url import go_parse_query
from .framework.fields import ConversionError, parse_go_bool
from .framework.logical import LogicalError, user_error


class EdgeRequest:
    """The request as :func:`.http.handle` reads it: ``environ``, ``path``, ``method``,
    ``query_string`` and ``remote_addr`` at once, computed from the environ as werkzeug's ``Request``
    computes them (``path``: ``PATH_INFO`` decoded by its ``_wsgi_decoding_dance``, the latin-1 text's
    bytes read as UTF-8 with errors replaced, after one leading slash; ``method`` upper-cased;
    ``query_string`` the latin-1 bytes). Any other attribute (``get_data``, ``headers``, ``stream``...)
    comes from werkzeug's ``Request``, built on first use with ``max_content_length`` (bytes): a read
    with no body never pays its set-up (its server tuple, header view and decoded root path).

    The werkzeug request is not filed in ``environ["werkzeug.request"]`` (nothing reads it there): that
    environ <-> request cycle would leave every request's objects to the garbage collector."""

    __slots__ = ("environ", "path", "method", "query_string", "remote_addr", "max_content_length", "_full")

    def __init__(self, environ: dict, max_content_length: int | None = None) -> None:
        self.environ = environ
        path = environ.get("PATH_INFO") or ""
        if not path.isascii():
            path = path.encode("latin1").decode(errors="replace")
        self.path = "/" + path.lstrip("/")
        self.method = environ.get("REQUEST_METHOD", "GET").upper()
        self.query_string = environ.get("QUERY_STRING", "").encode("latin1")
        self.remote_addr = environ.get("REMOTE_ADDR")
        self.max_content_length = max_content_length
        self._full: Request | None = None

    def __getattr__(self, name: str):
        full = self._full
        if full is None:
            full = self._full = Request(self.environ, populate_request=False)
            full.max_content_length = self.max_content_length
        return getattr(full, name)


def unprintable_path(path: str) -> Response | None:
    """go-cleanhttp's ``PrintablePathCheckHandler``, OpenBao's outermost handler: a decoded path with
    a rune Go's ``unicode.IsPrint`` refuses (control characters, spaces other than U+0020, format
    characters such as U+200B; a byte that is not UTF-8 reads as U+FFFD, which is printable) is
    answered 400 with no body and no header of OpenBao's own (``Content-Length: 0``), before any
    other check. None for a printable path. (Nomad has no such check.)"""
    if path.isascii() and path.isprintable():
        return None
    if all(ch == " " or unicodedata.category(ch)[0] in "LMNPS" for ch in path):
        return None
    response = Response(b"", status=400)
    del response.headers["Content-Type"]
    return response


def allowed_headers(mount, headers: dict[str, str]) -> dict[str, str] | None:
    """The response headers a handler set that the mount lets through: those named (any case) by its
    ``allowed_response_headers`` tune, none without it (OpenBao ``routing/router.go``
    ``filteredHeaders``; ACME's Replay-Nonce, Link and Location need the tune)."""
    allowed = {name.strip().lower() for name in (mount.tune_lists.get("allowed_response_headers") or [])
               if isinstance(name, str)} if mount is not None else set()
    kept = {name: value for name, value in headers.items() if name.lower() in allowed}
    return kept or None


def request_headers(environ: dict) -> dict[str, str]:
    """``dict(request.headers.items())`` (werkzeug's ``EnvironHeaders`` order and names) in one pass."""
    out = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            if key != "HTTP_CONTENT_TYPE" and key != "HTTP_CONTENT_LENGTH":
                out[key[5:].replace("_", "-").title()] = value
        elif (key == "CONTENT_TYPE" or key == "CONTENT_LENGTH") and value:
            out[key.replace("_", "-").title()] = value
    return out


class RequestHeaders(Mapping):
    """The request's headers as :func:`request_headers` gives them, built from the WSGI environ on
    first use: most handlers never read them (``LogicalRequest.headers``)."""

    __slots__ = ("_environ", "_headers")

    def __init__(self, environ: dict) -> None:
        self._environ = environ
        self._headers: dict[str, str] | None = None

    def _built(self) -> dict[str, str]:
        if self._headers is None:
            self._headers = request_headers(self._environ)
        return self._headers

    def __getitem__(self, name: str) -> str:
        return self._built()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def request_operation(request: Request, path: str, query: dict[str, Any]) -> tuple[str, str]:
    """The logical operation of ``request`` (``read``, ``list``, ``update``, ``patch``, ``delete``, ``head``)
    and its path (``list``: with a trailing ``/``), as OpenBao's ``buildLogicalRequestNoAuth`` maps the
    method; a ``GET`` with a true ``list`` parameter (taken out of ``query``) is a list. Raises
    :class:`LogicalError`: 400 for a ``list`` value that is no Go bool, 400 ``cannot handle internal-only
    request operation`` for ``OPTIONS``, 405 for any other method."""
    method = request.environ.get("REQUEST_METHOD", "GET")  # as sent: Go's "get" is unknown (werkzeug upper-cases)
    if method == "GET":
        list_value = query.pop("list", None)
        if list_value not in (None, ""):
            try:
                is_list = parse_go_bool(list_value if isinstance(list_value, str) else list_value[0])
            except ConversionError:
                raise LogicalError(400, []) from None
            if is_list:
                return "list", path if path.endswith("/") else path + "/"
        return "read", path
    if method == "LIST":
        return "list", path if path.endswith("/") else path + "/"
    if method in ("POST", "PUT"):
        return "update", path
    if method == "PATCH":
        return "patch", path
    if method == "DELETE":
        return "delete", path
    if method == "HEAD":
        return "head", path
    if method == "OPTIONS":
        raise user_error("cannot handle internal-only request operation")
    raise LogicalError(405, [])


def request_query(request: Request) -> dict[str, Any]:
    """The query parameters as Go's ``url.ParseQuery`` reads them (a single value as a string, repeated
    ones as a list), ``help`` left out (the path help reads it)."""
    data: dict[str, Any] = {}
    if not request.query_string:
        return data
    for key, values in go_parse_query(request.query_string.decode("latin-1")).items():
        if key == "help":
            continue
        data[key] = values[0] if len(values) == 1 else values
    return data
