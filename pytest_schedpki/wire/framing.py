"""Where a request's body ends, decided as Go's ``net/http`` server decides it, or the request refused.

Both upstreams are Go servers. Before a handler runs, Go's server reads the request line and the
header block and frames the body (``net/http`` ``readRequest``, ``readTransfer``); a request that
fails there gets a fixed answer written straight to the connection, which then closes - no
``Date``, no ``Content-Length``. Measured on ``bao server -dev`` 2.7.2 (Nomad's agent is the same
Go server):

* a byte below 0x20 or 0x7f (DEL) in the request target (path or query) - ``url.ParseRequestURI``
  refuses control characters - or in a header value other than a horizontal tab (a folded header's
  line break is no such byte: Go joins the continuation line): ``400``;
* HTTP/1.1 and later: a ``Transfer-Encoding`` header sent more than once, or whose value is not
  ``chunked`` (ASCII case ignored, surrounding blanks trimmed; ``identity``, ``gzip``,
  ``identity, chunked``, empty): ``501`` with the text ``Unsupported transfer encoding``. HTTP/1.0
  ignores ``Transfer-Encoding`` altogether (no chunked body);
* ``Content-Length`` sent more than once with values that differ once trimmed: ``400`` (equal
  values count as one, RFC 9110 section 8.6); a value that is not 1 to 19 ASCII digits below
  2^63 (empty, signed, ``5, 5``, ``1_0``): ``400``. Both apply with a chunked body too, which
  otherwise wins over ``Content-Length``.

The ``400`` answer is ``400 Bad Request`` as plain text (Go's ``publicErr``, which names no reason).
Without this, werkzeug framed a request with the *last* ``Content-Length`` and kept the connection:
the rest of the body was answered as a second request (request smuggling). Only the listeners'
sockets frame requests; the in-process transport hands the application a client's already framed
request and never comes here.
"""

from __future__ import annotations

import re
from email.message import Message

ERROR_HEADERS = b"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
BAD_REQUEST = b"HTTP/1.1 400 Bad Request" + ERROR_HEADERS + b"400 Bad Request"
UNSUPPORTED_TRANSFER_ENCODING = b"HTTP/1.1 501 Not Implemented" + ERROR_HEADERS + b"Unsupported transfer encoding"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_BUT_TAB = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_FOLD = re.compile(r"\r?\n(?=[ \t])")  # an obs-fold line break: Go joins the continuation line
_DIGITS = re.compile(r"[0-9]+")
_MAX_LENGTH = (1 << 63) - 1  # strconv.ParseUint(cl, 10, 63)
_BLANKS = " \t"  # textproto.TrimString


def _value(raw: str) -> str:
    """A header value as Go's ``textproto`` reads it: folded lines joined, blanks trimmed."""
    return _FOLD.sub(" ", raw).replace("\r\n ", " ").strip(_BLANKS)


def _values(headers: Message, name: str) -> list[str]:
    return [_value(raw) for raw in headers.get_all(name) or []]


def refusal(target: str, headers: Message, request_version: str) -> bytes | None:
    """Go's answer to a request whose target or framing it refuses (see the module doc), or ``None``
    when the request may go on. ``target`` is the request target as sent (decoded as latin-1),
    ``headers`` the parsed header block, ``request_version`` ``"HTTP/1.0"`` or ``"HTTP/1.1"``."""
    if _CONTROL.search(target):
        return BAD_REQUEST
    for raw in headers.values():
        if _CONTROL_BUT_TAB.search(_value(raw)):
            return BAD_REQUEST
    if request_version != "HTTP/1.0":
        encodings = _values(headers, "Transfer-Encoding")
        if encodings and (len(encodings) > 1 or encodings[0].lower() != "chunked"):
            return UNSUPPORTED_TRANSFER_ENCODING
    lengths = _values(headers, "Content-Length")
    if lengths:
        if any(value != lengths[0] for value in lengths[1:]):
            return BAD_REQUEST
        if not _DIGITS.fullmatch(lengths[0]) or int(lengths[0]) > _MAX_LENGTH:
            return BAD_REQUEST
    return None


def chunked(headers: Message, request_version: str) -> bool:
    """Whether the body of a request :func:`refusal` let through is chunked (else it is
    ``Content-Length`` bytes long, none without the header). HTTP/1.0 has no chunked body."""
    return request_version != "HTTP/1.0" and headers.get("Transfer-Encoding") is not None


class FramingMixin:
    """``parse_request`` for a ``BaseHTTPRequestHandler`` subclass: after the header block is parsed,
    a request :func:`refusal` refuses gets Go's answer, written as Go writes it, and the connection
    closes (``parse_request`` returns False, so no application runs)."""

    def parse_request(self) -> bool:  # type: ignore[override]
        if not super().parse_request():  # type: ignore[misc]
            return False
        answer = refusal(self.path, self.headers, self.request_version)
        if answer is None:
            return True
        self.close_connection = True
        try:
            self.wfile.write(answer)
        except OSError:
            pass
        return False


__all__ = ["BAD_REQUEST", "FramingMixin", "UNSUPPORTED_TRANSFER_ENCODING", "chunked", "refusal"]
