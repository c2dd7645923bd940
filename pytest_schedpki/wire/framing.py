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

* the header block as ``textproto.ReadMIMEHeader`` reads it (when the raw lines are at hand): a line
  without a colon, an empty name, a name byte that is neither a token character nor a space, a
  control byte (but tab) in a value - a bare CR included -, a first line that starts with a blank:
  ``400``; ``Host`` sent more than once: ``400`` (``readRequest``);
* then ``net/http``'s own checks, answered with their reason: an HTTP/1.1 request without ``Host``
  (``missing required Host header``), a ``Host`` with a byte ``httpguts.ValidHostHeader`` refuses
  (``malformed Host header``), a header name with a space (``invalid header name``).

The ``400`` answer is ``400 Bad Request`` as plain text (Go's ``publicErr``, which names no reason)
but for the last three, whose reason follows ``400 Bad Request: `` in the status line and the body.
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

MISSING_HOST = b"HTTP/1.1 400 Bad Request: missing required Host header" + ERROR_HEADERS + \
    b"400 Bad Request: missing required Host header"
MALFORMED_HOST = b"HTTP/1.1 400 Bad Request: malformed Host header" + ERROR_HEADERS + \
    b"400 Bad Request: malformed Host header"
INVALID_HEADER_NAME = b"HTTP/1.1 400 Bad Request: invalid header name" + ERROR_HEADERS + \
    b"400 Bad Request: invalid header name"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z ]+")  # textproto: token bytes, and a space (go.dev/issue/34540)
_BAD_VALUE_BYTE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_HOST = re.compile(r"[0-9A-Za-z!$%&'()*+,\-.:;=\[\]_~]*")  # httpguts.validHostByte
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


def _header_block(lines: list[bytes]) -> list[tuple[bytes, bytes]] | None:
    """The ``(name, value)`` pairs of a raw header block as ``textproto`` reads it (a continuation
    line joins the value before it), or ``None`` where it refuses the block."""
    pairs: list[tuple[bytes, bytes]] = []
    for line in lines:
        body = line.rstrip(b"\n")
        body = body[:-1] if line.endswith(b"\r\n") else body
        if not body:
            break
        if body[:1] in (b" ", b"\t"):
            if not pairs or _BAD_VALUE_BYTE.search(body):
                return None
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + b" " + body.strip(b" \t"))
            continue
        name, colon, value = body.partition(b":")
        if not colon or not _NAME.fullmatch(name) or _BAD_VALUE_BYTE.search(value):
            return None
        pairs.append((name, value.strip(b" \t")))
    return pairs


def refusal(target: str, headers: Message, request_version: str, raw_lines: list[bytes] | None = None,
            method: str = "") -> bytes | None:
    """Go's answer to a request whose target, header block or framing it refuses (see the module
    doc), or ``None`` when the request may go on. ``target`` is the request target as sent (decoded as
    latin-1), ``headers`` the parsed header block, ``request_version`` ``"HTTP/1.0"`` or
    ``"HTTP/1.1"``, ``raw_lines`` the header block's lines as read (terminators included; ``None``:
    the name and Host checks are made on ``headers``), ``method`` the request method."""
    if _CONTROL.search(target):
        return BAD_REQUEST
    for raw in headers.values():
        if _CONTROL_BUT_TAB.search(_value(raw)):
            return BAD_REQUEST
    if raw_lines is not None:
        pairs = _header_block(raw_lines)
        if pairs is None:
            return BAD_REQUEST
        names = [name.decode("latin-1") for name, _ in pairs]
        hosts = [value.decode("latin-1") for name, value in pairs if name.lower() == b"host"]
    else:
        names = list(headers.keys())
        hosts = _values(headers, "Host")
    if len(hosts) > 1:
        return BAD_REQUEST
    if request_version != "HTTP/1.0":
        encodings = _values(headers, "Transfer-Encoding")
        if encodings and (len(encodings) > 1 or encodings[0].lower() != "chunked"):
            return UNSUPPORTED_TRANSFER_ENCODING
    lengths = _values(headers, "Content-Length")
    if lengths:
        if any(value != lengths[0] for value in lengths[1:]):
            return BAD_REQUEST
        # leading zeros stripped first: ParseUint reads "000...02" of any length as 2, and int()
        # refuses more than 4300 digits (a ValueError that killed the connection unanswered)
        significant = lengths[0].lstrip("0") or "0"
        if not _DIGITS.fullmatch(lengths[0]) or len(significant) > 19 or int(significant) > _MAX_LENGTH:
            return BAD_REQUEST
    if not hosts and request_version != "HTTP/1.0" and method != "CONNECT":
        return MISSING_HOST
    if hosts and not _HOST.fullmatch(hosts[0]):
        return MALFORMED_HOST
    if any(" " in name for name in names):
        return INVALID_HEADER_NAME
    return None


_PLAIN_LENGTH = re.compile(r"[0-9]{1,18}")  # below 2^63 whatever the digits


def plainly_framed(hosts: list[str], lengths: list[str], encodings: list[str]) -> bool:
    """Whether a request is certainly one :func:`refusal` lets through, from the values of its
    ``Host``, ``Content-Length`` and ``Transfer-Encoding`` headers, when its target and header block
    are known to pass the other checks (:func:`.fastparse.parse_head`'s shape: printable target,
    token names, no control character but tab in a value): one valid ``Host``, at most one plain
    ``Content-Length``, no ``Transfer-Encoding``. False means "ask :func:`refusal`", not "refused"."""
    if len(hosts) != 1 or encodings or len(lengths) > 1 or not _HOST.fullmatch(hosts[0].strip(_BLANKS)):
        return False
    return not lengths or _PLAIN_LENGTH.fullmatch(lengths[0].strip(_BLANKS)) is not None


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
        answer = refusal(self.path, self.headers, self.request_version,
                         getattr(self, "raw_header_lines", None), self.command)
        if answer is None:
            return True
        self.close_connection = True
        try:
            self.wfile.write(answer)
        except OSError:
            pass
        return False


__all__ = ["BAD_REQUEST", "FramingMixin", "INVALID_HEADER_NAME", "MALFORMED_HOST", "MISSING_HOST",
           "UNSUPPORTED_TRANSFER_ENCODING", "chunked", "plainly_framed", "refusal"]
