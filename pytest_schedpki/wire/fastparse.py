"""A fast path for ``http.server``'s request parsing, with the standard library's results.

``BaseHTTPRequestHandler.parse_request`` hands the header block to the ``email`` package, which costs
more than the rest of a simple request. :class:`FastParseMixin` parses the common shape itself - a
request line ``METHOD SP target SP HTTP/1.0|1.1`` of printable ASCII and header lines ``name: value``
(a token-like name, no folding, no line-breaking characters) - and builds the same ``HTTPMessage``
the ``email`` parser would. Anything else (a longer or shorter request line, HTTP/0.9 or 2, a header
line the ``email`` parser would treat specially, too long or too many lines) goes to the standard
``parse_request`` unchanged: the header lines already read are replayed to it, so its answers and
errors are exactly the standard ones.

:func:`parse_head` goes one step further for a keep-alive connection whose whole request head is
already in its read buffer (a client writes the head in one go): the head is matched and split by
two regular expressions over its text instead of being read line by line. It accepts a subset of
what :class:`FastParseMixin` parses (an origin-form target, header names of token characters, values
without control characters but tab, CRLF line ends, fewer than :data:`MAX_FAST_FIELDS` lines) and
gives the same fields; anything else is left in the buffer for the line-by-line path.
"""

from __future__ import annotations

import re
from typing import Any

# http.client's limits (_MAXLINE, _MAXHEADERS)
MAX_LINE = 65536
MAX_HEADERS = 100
_REQUEST_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([!-~]+) HTTP/1\.([01])\r?\n\Z")
# a header line the email parser takes as one plain header: name of printable characters but ':',
# and no character that str.splitlines or the email parser would break the line at
_HEADER_LINE = re.compile(rb"([!-9;-~]+):([^\r\n\x0b\x0c\x1c\x1d\x1e\x85]*)\r?\n\Z")
_END = (b"\r\n", b"\n", b"")

MAX_FAST_FIELDS = 64  # header lines parse_head takes (the standard limit is MAX_HEADERS)
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]"
# the head decoded as latin-1: request line with an origin-form target, then header lines whose value
# has no control character but tab and none that str.splitlines breaks at (\x85), then the blank line
_HEAD = re.compile(rf"({_TOKEN}+) (/[!-~]*) HTTP/1\.([01])\r\n((?:{_TOKEN}+:[\t\x20-\x7e\x80-\x84\x86-\xff]*\r\n)*)\r\n")
_FIELD = re.compile(rf"({_TOKEN}+):[ \t]*([^\r]*)\r\n")  # on lines _HEAD matched; blanks before the value dropped


class _Replay:
    """``rfile`` stand-in for the standard parser: the given lines first, then the real stream."""

    def __init__(self, lines: list[bytes], rfile: Any):
        self._lines = lines
        self._rfile = rfile

    def readline(self, limit: int = -1) -> bytes:
        if self._lines:
            return self._lines.pop(0)
        return self._rfile.readline(limit)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rfile, name)


class FastParseMixin:
    """``parse_request`` for a ``BaseHTTPRequestHandler`` subclass (see the module doc)."""

    def parse_request(self) -> bool:  # type: ignore[override]
        match = _REQUEST_LINE.match(self.raw_requestline)
        self.raw_header_lines = None
        if match is None:
            return super().parse_request()  # type: ignore[misc]
        lines, parsed = self._read_header_block()
        self.raw_header_lines = lines  # the header block as sent (framing.refusal reads it)
        if parsed is None:
            real = self.rfile
            self.rfile = _Replay(list(lines), real)  # a copy: the replay consumes its list
            try:
                return super().parse_request()  # type: ignore[misc]
            finally:
                self.rfile = real
        command, path, minor = match.group(1).decode("ascii"), match.group(2).decode("ascii"), match.group(3)
        self.command = command
        self.requestline = self.raw_requestline.decode("iso-8859-1").rstrip("\r\n")
        self.request_version = "HTTP/1.1" if minor == b"1" else "HTTP/1.0"
        self.close_connection = not (minor == b"1" and self.protocol_version >= "HTTP/1.1")
        if path.startswith("//"):
            path = "/" + path.lstrip("/")  # as the standard parser (gh-87389)
        self.path = path
        message = self.MessageClass()
        for name, value in parsed:
            message.set_raw(name, value)
        message.set_payload("")
        self.headers = message
        connection = message.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive" and self.protocol_version >= "HTTP/1.1":
            self.close_connection = False
        expect = message.get("Expect", "")
        if (expect.lower() == "100-continue" and self.protocol_version >= "HTTP/1.1"
                and self.request_version >= "HTTP/1.1"):
            return self.handle_expect_100()
        return True

    def _read_header_block(self) -> tuple[list[bytes], list[tuple[str, str]] | None]:
        """The raw header lines read (terminator included) and the parsed ``(name, value)`` pairs, or
        ``None`` for the pairs when the standard parser must decide (odd line, limits reached)."""
        lines: list[bytes] = []
        parsed: list[tuple[str, str]] | None = []
        while True:
            line = self.rfile.readline(MAX_LINE + 1)
            lines.append(line)
            if len(line) > MAX_LINE or len(lines) > MAX_HEADERS:
                return lines, None
            if line in _END:
                return lines, parsed
            if parsed is not None:
                header = _HEADER_LINE.match(line)
                if header is None:
                    parsed = None  # keep reading to the end of the block, the standard parser decides
                else:
                    parsed.append((header.group(1).decode("iso-8859-1"),
                                   header.group(2).decode("iso-8859-1").lstrip(" \t")))


def parse_head(buffered: bytes) -> tuple[int, str, str, str, list[tuple[str, str]]] | None:
    """The request head at the start of ``buffered`` (bytes read, not yet consumed) when it is complete
    and of the plain shape (see the module doc): ``(size, method, target, minor, fields)`` - the bytes
    the head takes (blank line included), the method, the target as sent, ``"0"`` or ``"1"`` (the
    HTTP/1.x minor version) and the ``(name, value)`` pairs in order, values without leading blanks,
    as :class:`FastParseMixin` gives them. ``None``: leave the head to :class:`FastParseMixin`."""
    end = buffered.find(b"\r\n\r\n")
    if end < 0:
        return None
    match = _HEAD.fullmatch(buffered[:end + 4].decode("latin-1"))
    if match is None:
        return None
    method, target, minor, block = match.groups()
    fields = _FIELD.findall(block)
    if len(fields) >= MAX_FAST_FIELDS:
        return None
    return end + 4, method, target, minor, fields


__all__ = ["FastParseMixin", "MAX_FAST_FIELDS", "MAX_LINE", "MAX_HEADERS", "parse_head"]
