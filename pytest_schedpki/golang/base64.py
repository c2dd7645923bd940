"""Go's ``encoding/base64``: the text of a ``StdEncoding.Decode`` failure, byte for byte.
"""

from __future__ import annotations

import re

# what decodes without error and holds no line breaks: whole quanta, padding only in the last one
_VALID = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def go_base64_error(data: bytes) -> str | None:
    """Go's ``base64.StdEncoding.Decode`` failure text (``illegal base64 data at input byte N``) or None."""
    if _VALID.fullmatch(data):  # the common case, decided without the byte-by-byte walk below
        return None
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    si, n = 0, len(data)
    while si < n:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return f"illegal base64 data at input byte {si - j}"
            c = data[si]
            si += 1
            if c in alphabet:
                j += 1
                continue
            if c in b"\r\n":
                continue
            if c != 0x3D or j < 2:  # not '=' or padding too early
                return f"illegal base64 data at input byte {si - 1}"
            if j == 2:  # "==" expected; the first '=' is consumed
                while si < n and data[si] in b"\r\n":
                    si += 1
                if si == n:
                    return f"illegal base64 data at input byte {n}"
                if data[si] != 0x3D:
                    return f"illegal base64 data at input byte {si - 1}"
                si += 1
            while si < n and data[si] in b"\r\n":
                si += 1
            return f"illegal base64 data at input byte {si}" if si < n else None
    return None
