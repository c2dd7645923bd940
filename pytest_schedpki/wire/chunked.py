"""Request bodies sent with ``Transfer-Encoding: chunked``, de-chunked without reading past the data.

werkzeug's ``DechunkedInput`` (3.1.x, and its main branch as of 2026-05) assigns
``rfile.read(n)`` to a slice of the caller's buffer without checking that ``n`` bytes came. When the
client's body ends inside a chunk, a ``bytearray`` buffer shrinks while ``readinto`` still reports
``n`` bytes, and ``RawIOBase.read`` then copies ``n`` bytes out of the shrunken buffer: heap bytes
that never arrived become part of the body, and for a chunk as large as the read (a chunk that
announces 64 MiB or more, read by the journal) the process dies with SIGSEGV. :class:`ChunkedBody`
replaces it on both listeners (see :mod:`.keepalive`).

Framing follows Go's ``net/http/internal/chunked.go``, which both upstreams use: the size line is
hexadecimal (at most 16 digits), optionally followed by ``;extension``; a chunk's data ends with
CRLF; the zero-size chunk ends the body after the trailer lines and a blank line. A body that
ends early or breaks the framing raises :class:`BrokenChunkedBody`, a werkzeug
``ClientDisconnected``, which each service answers as its Go server answers a failed body read
(``unexpected EOF``); the keep-alive handler then closes the connection.
"""

from __future__ import annotations

import io
from typing import IO

from werkzeug.exceptions import ClientDisconnected

MAX_LINE = 4096  # bytes of a chunk-size or trailer line (Go: maxLineLength)
MAX_TRAILER_LINES = 100


class BrokenChunkedBody(ClientDisconnected):
    """The chunked body ended early or broke the framing (``description`` says how)."""


class ChunkedBody(io.RawIOBase):
    """A readable stream over ``rfile`` that yields the de-chunked body and then EOF.

    ``readinto`` never reports more bytes than it stored. Raises :class:`BrokenChunkedBody` for a
    body cut short (EOF inside the size line, the data or the trailer), a bad size line (not hex,
    more than 16 digits, over :data:`MAX_LINE`) or chunk data not followed by a line end.
    """

    def __init__(self, rfile: IO[bytes]) -> None:
        self._rfile = rfile
        self._left = 0  # bytes of the current chunk not read yet
        self._crlf_due = False  # the current chunk's data is read, its line end is not
        self._done = False

    def readable(self) -> bool:
        return True

    @property
    def done(self) -> bool:
        """True once the last chunk and the trailer were read."""
        return self._done

    def readinto(self, buffer) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        filled = 0
        while filled < len(view) and not self._done:
            if self._left == 0:
                if self._crlf_due:
                    self._end_of_chunk()
                size = self._size_line()
                if size == 0:
                    self._trailer()
                    self._done = True
                    break
                self._left = size
            want = min(self._left, len(view) - filled)
            data = self._rfile.read(want)
            if not data:
                raise BrokenChunkedBody("unexpected EOF inside a chunk")
            got = len(data)
            view[filled:filled + got] = data
            filled += got
            self._left -= got
            if self._left == 0:
                self._crlf_due = True
        return filled

    def _line(self) -> bytes:
        line = self._rfile.readline(MAX_LINE + 1)
        if not line.endswith(b"\n"):
            raise BrokenChunkedBody("unexpected EOF" if len(line) <= MAX_LINE else "header line too long")
        return line

    def _size_line(self) -> int:
        text = self._line().rstrip(b"\r\n").split(b";", 1)[0].rstrip(b" \t")
        if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF"):
            raise BrokenChunkedBody("invalid byte in chunk length" if len(text) <= 16 else "http chunk length too large")
        return int(text, 16)

    def _end_of_chunk(self) -> None:
        if self._rfile.readline(3) != b"\r\n":
            raise BrokenChunkedBody("malformed chunked encoding")
        self._crlf_due = False

    def _trailer(self) -> None:
        for _ in range(MAX_TRAILER_LINES):
            if self._line() in (b"\r\n", b"\n"):
                return
        raise BrokenChunkedBody("too many trailer lines")
