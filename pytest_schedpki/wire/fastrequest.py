"""The common request of a keep-alive connection, taken from the read buffer in one step.

The standard path of a request through :class:`~.keepalive.KeepAliveHandler` reads the head line by
line (:class:`~.fastparse.FastParseMixin`, ``BaseHTTPRequestHandler``), builds an ``HTTPMessage``,
checks Go's framing rules on it (:func:`~.framing.refusal`) and has werkzeug's ``make_environ``
build the environ from it: about a third of the CPU a cheap answer (a cached CRL) costs the double.
:class:`FastRequestMixin` takes a head that :func:`~.fastparse.parse_head` found whole in the buffer
and gives the request the same attributes, the same environ (same keys, values and order) and the
same ``headers`` (built on first use: only the standard path and logging read them), in one pass over
the header fields. It steps aside, before consuming anything, for what it does not vouch for - a
fragment in the target, ``Transfer-Encoding`` or ``Expect``, a request Go's framing might refuse
(:func:`~.framing.plainly_framed`) - and the standard path reads the same bytes.
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import unquote

from .framing import plainly_framed

_PLAIN, _HOST, _LENGTH, _CONNECTION, _STANDARD = range(5)
_SPECIAL = {"HOST": _HOST, "CONTENT-LENGTH": _LENGTH, "CONNECTION": _CONNECTION,
            "TRANSFER-ENCODING": _STANDARD, "EXPECT": _STANDARD}
_KINDS: dict[str, tuple[int, str | None, bool]] = {}  # header name as sent -> what _kind says
_MAX_KINDS = 512  # names remembered (the names a client sends repeat; odd ones are not kept)


def _kind(name: str) -> tuple[int, str | None, bool]:
    """``(kind, environ key, joined)`` for a header name: its role for the framing checks, the
    environ key werkzeug's ``make_environ`` files it under (``None``: skipped, the name has a ``_``)
    and whether a repeated header is joined with a comma there (``HTTP_*``) or replaced
    (``CONTENT_TYPE``, ``CONTENT_LENGTH``)."""
    kind = _KINDS.get(name)
    if kind is None:
        upper = name.upper()
        key = None if "_" in name else upper.replace("-", "_")
        joined = key is not None and key not in ("CONTENT_TYPE", "CONTENT_LENGTH")
        if joined:
            key = "HTTP_" + key
        kind = (_SPECIAL.get(upper, _PLAIN), key, joined)
        if len(_KINDS) < _MAX_KINDS:
            _KINDS[name] = kind
    return kind


class FastRequestMixin:
    """:meth:`_fast_request` for :class:`~.keepalive.KeepAliveHandler` (see the module doc)."""

    _fields: list[tuple[str, str]] | None = None  # the fast path's header fields, until headers is read
    _prepared: dict[str, Any] | None = None  # the environ built by _fast_request, for run_wsgi
    _body_buffered = 0  # bytes of the request after its head already in rfile's buffer (fast path only)
    _template: dict[str, Any] | None = None  # the environ entries every request of the connection shares

    @property
    def headers(self) -> Any:
        """The request's ``HTTPMessage``, as the standard path builds it (on first use after the
        fast path)."""
        fields = self._fields
        if fields is not None:
            message = self.MessageClass()  # type: ignore[attr-defined]
            for name, value in fields:
                message.set_raw(name, value)
            message.set_payload("")
            self.__dict__["_headers"], self._fields = message, None
        return self.__dict__.get("_headers")

    @headers.setter
    def headers(self, message: Any) -> None:
        self.__dict__["_headers"], self._fields = message, None

    def _fast_request(self, head: tuple[int, str, str, str, list[tuple[str, str]]]) -> bool:
        """Answer the request whose head :func:`.fastparse.parse_head` read from the buffer (see the
        module doc); False, with nothing consumed, for a request the standard path must take."""
        size, command, target, minor, fields = head
        if "#" in target:
            return False
        environ = self._environ_template().copy()  # werkzeug's keys in werkzeug's order, headers after
        hosts: list[str] = []
        lengths: list[str] = []
        connection = None
        kinds = _KINDS
        for name, value in fields:  # make_environ's loop, and the values Go's framing looks at
            kind, key, joined = kinds.get(name) or _kind(name)
            if kind:
                if kind == _HOST:
                    hosts.append(value)
                elif kind == _LENGTH:
                    lengths.append(value)
                elif kind == _CONNECTION:
                    if connection is None:
                        connection = value  # Message.get: the first one
                else:
                    return False
            if key is not None and key not in environ:  # Go's Header.Get: the first value, trimmed
                environ[key] = value.strip(" \t")
        if not plainly_framed(hosts, lengths, []):
            return False
        self.rfile.read(size)  # type: ignore[attr-defined]  # from the buffer: no system call
        self._body_buffered = self._peeked - size  # type: ignore[attr-defined]
        # what FastParseMixin.parse_request sets
        version = "HTTP/1.1" if minor == "1" else "HTTP/1.0"
        self.command, self.request_version = command, version
        self.requestline = f"{command} {target} {version}"
        self.raw_requestline = (self.requestline + "\r\n").encode("latin-1")
        self.raw_header_lines = None
        close = minor != "1"  # (protocol_version is HTTP/1.1)
        if connection is not None:
            connection = connection.lower()
            if connection == "close":
                close = True
            elif connection == "keep-alive":
                close = False
        self.close_connection = close
        if target.startswith("//"):
            target = "/" + target.lstrip("/")  # as the standard parser (gh-87389)
        self.path = target
        self.__dict__["_headers"], self._fields = None, fields  # headers: built on first use
        # what make_environ sets from the request line (urlsplit of an origin-form target without a
        # fragment: the path before "?", the query after it; unquote leaves a path without "%" as is)
        path, _, query = target.partition("?")
        if "%" in path:
            path = unquote(path).encode().decode("latin-1")  # werkzeug's _wsgi_encoding_dance
        environ["wsgi.errors"] = sys.stderr
        environ["REQUEST_METHOD"] = command
        environ["PATH_INFO"] = path
        environ["QUERY_STRING"] = query
        environ["REQUEST_URI"] = environ["RAW_URI"] = target
        environ["SERVER_PROTOCOL"] = version
        self._prepared = environ
        try:  # BaseHTTPRequestHandler.handle_one_request from here (werkzeug runs every method with run_wsgi)
            self.run_wsgi()  # type: ignore[attr-defined]
        except TimeoutError as exc:
            self.log_error("Request timed out: %r", exc)  # type: ignore[attr-defined]
            self.close_connection = True
        return True

    def _environ_template(self) -> dict[str, Any]:
        """The entries of werkzeug's ``make_environ`` that are the same for every request of this
        (plain TCP) connection, in its order; per-request ones are placeholders."""
        template = self._template
        if template is None:
            if not self.client_address:  # as make_environ
                self.client_address = ("<local>", 0)
            elif isinstance(self.client_address, str):
                self.client_address = (self.client_address, 0)
            server = self.server  # type: ignore[attr-defined]
            template = self._template = {
                "wsgi.version": (1, 0),
                "wsgi.url_scheme": "http" if server.ssl_context is None else "https",
                "wsgi.input": self.rfile,  # type: ignore[attr-defined]
                "wsgi.errors": None,
                "wsgi.multithread": server.multithread,
                "wsgi.multiprocess": server.multiprocess,
                "wsgi.run_once": False,
                "werkzeug.socket": self.connection,  # type: ignore[attr-defined]
                "SERVER_SOFTWARE": self.server_version,  # type: ignore[attr-defined]
                "REQUEST_METHOD": "",
                "SCRIPT_NAME": "",
                "PATH_INFO": "",
                "QUERY_STRING": "",
                "REQUEST_URI": "",
                "RAW_URI": "",
                "REMOTE_ADDR": self.address_string(),  # type: ignore[attr-defined]
                "REMOTE_PORT": self.port_integer(),  # type: ignore[attr-defined]
                "SERVER_NAME": server.server_address[0],
                "SERVER_PORT": str(server.server_address[1]),
                "SERVER_PROTOCOL": "",
            }
        return template


def file_go_headers(environ: dict[str, Any], fields: Any) -> None:
    """File the header ``fields`` (``(name, value)`` pairs in the order sent) into ``environ`` under
    werkzeug's keys (names holding ``_`` skipped, ``CONTENT_TYPE``/``CONTENT_LENGTH``, ``HTTP_*``) with
    the value Go's handlers read: ``Header.Get`` takes the first of repeated fields (werkzeug joins
    them with commas) and ``textproto`` trims spaces and tabs around a value (werkzeug keeps trailing
    ones), so ``X-Vault-Token: root`` sent twice, or followed by a space, is the token ``root``."""
    filed: set[str] = set()
    for name, value in fields:
        if "_" in name:
            continue
        key = name.upper().replace("-", "_")
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = "HTTP_" + key
        if key in filed:
            continue
        filed.add(key)
        environ[key] = value.replace("\r\n", "").strip(" \t")


__all__ = ["FastRequestMixin", "file_go_headers"]
