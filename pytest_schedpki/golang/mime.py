"""Go's ``mime.ParseMediaType``, as OpenBao applies it to the ``Content-Type`` of a ``PATCH``.

OpenBao (``internal/http/logical.go``) parses the header with ``mime.ParseMediaType``: a parse error is
``400`` with Go's error text (``mime: no media type`` for a missing header), and only then is the
lower-cased media type compared with ``application/merge-patch+json`` (``415`` otherwise).
RFC 2231 continuations are accepted but not decoded (only errors and the media type matter here).
"""

from __future__ import annotations

TSPECIALS = frozenset('()<>@,;:\\"/[]?=')


class MediaTypeError(ValueError):
    """A Go ``mime`` parse error; ``str()`` is Go's text."""


def _is_token_char(ch: str) -> bool:
    return 0x20 < ord(ch) < 0x7F and ch not in TSPECIALS


def _consume_token(v: str) -> tuple[str, str]:
    for i, ch in enumerate(v):
        if not _is_token_char(ch):
            return v[:i], v[i:]
    return v, ""


def _consume_value(v: str) -> tuple[str, str]:
    if not v:
        return "", ""
    if v[0] != '"':
        return _consume_token(v)
    out = []
    i = 1
    while i < len(v):
        ch = v[i]
        if ch == '"':
            return "".join(out), v[i + 1:]
        if ch == "\\" and i + 1 < len(v) and v[i + 1] in TSPECIALS:
            out.append(v[i + 1])
            i += 2
            continue
        if ch in "\r\n":
            return "", v
        out.append(ch)
        i += 1
    return "", v  # no closing quote


def _consume_param(v: str) -> tuple[str, str, str]:
    rest = v.lstrip()
    if not rest.startswith(";"):
        return "", "", v
    param, rest = _consume_token(rest[1:].lstrip())
    param = param.lower()
    if not param:
        return "", "", v
    rest = rest.lstrip()
    if not rest.startswith("="):
        return "", "", v
    rest = rest[1:].lstrip()
    value, rest2 = _consume_value(rest)
    if value == "" and rest2 == rest:
        return "", "", v
    return param, value, rest2


def _check_media_type(media_type: str) -> None:
    typ, rest = _consume_token(media_type)
    if not typ:
        raise MediaTypeError("mime: no media type")
    if not rest:
        return
    if not rest.startswith("/"):
        raise MediaTypeError("mime: expected slash after first token")
    subtype, rest = _consume_token(rest[1:])
    if not subtype:
        raise MediaTypeError("mime: expected token after slash")
    if rest:
        raise MediaTypeError("mime: unexpected content after media subtype")


def parse_media_type(value: str) -> tuple[str, dict[str, str]]:
    """``(media type lower-cased, parameters)``; raises :class:`MediaTypeError` with Go's text."""
    base = value.split(";", 1)[0]
    media_type = base.lower().strip()
    _check_media_type(media_type)
    params: dict[str, str] = {}
    v = value[len(base):]
    while v:
        v = v.lstrip()
        if not v:
            break
        key, val, rest = _consume_param(v)
        if not key:
            if rest.strip() == ";":
                break  # a trailing semicolon is not an error
            raise MediaTypeError("mime: invalid media parameter")
        if key in params and params[key] != val:
            raise MediaTypeError("mime: duplicate parameter name")
        params[key] = val
        v = rest
    return media_type, params


__all__ = ["MediaTypeError", "parse_media_type"]
