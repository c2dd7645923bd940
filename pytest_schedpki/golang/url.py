"""Go's ``net/url``: ``url.Parse(s)`` followed by ``(*URL).String()``, for URI SANs.

OpenBao parses every requested URI SAN with ``url.Parse`` (an error is a 400 ``... is not a valid
URI``) and ``x509.CreateCertificate`` writes ``uri.String()``, so the certificate holds Go's
re-encoding: the scheme lowercased (``HTTPS://Example.COM/Path`` -> ``https://Example.COM/Path``),
the path escaped (``not a uri`` -> ``not%20a%20uri``), non-ASCII host bytes percent-encoded, a
valid original escaping kept (``/%41%2f`` stays).

:func:`go_url_string` returns that text or raises :class:`GoURLError` (``str()`` is Go's reason).
Covered: scheme, opaque URIs (``urn:...``, ``mailto:...``), authority with userinfo (RFC 3986
characters only: ``net/url: invalid userinfo``), host (bracketed IPv6, port digits, invalid host
characters, %-escapes of non-ASCII bytes only), path with ``RawPath``, query (kept verbatim,
``ForceQuery``) and fragment with ``RawFragment``. Not covered: Go 1.26's strict colons in a host
(``http://localhost:80:80``) and the ``netip`` check of a bracketed address.

:func:`go_url_parse_error`, :func:`go_url_hostname` and :func:`go_url_string_without_port` give
``url.Parse``'s full error text, ``Hostname()`` and a port-less ``String()`` (cap's redirect check).
"""

from __future__ import annotations

import re

from .duration import go_quote

__all__ = ["GoURLError", "go_url_hostname", "go_url_parse_error", "go_url_string", "go_url_string_without_port"]


class GoURLError(ValueError):
    """``url.Parse`` refused the text; ``str()`` is Go's reason (``missing protocol scheme``, ...)."""


_PATH, _HOST, _USER, _FRAGMENT = "path", "host", "user", "fragment"
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _should_escape(c: int, mode: str) -> bool:
    if c in _ALNUM:
        return False
    ch = chr(c)
    if mode == _HOST and ch in "!$&'()*+,;=:[]<>\"":
        return False
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        if mode == _PATH:
            return ch == "?"
        if mode == _USER:
            return ch in "@/?:"
        if mode == _FRAGMENT:
            return False
    if mode == _FRAGMENT and ch in "!()*":
        return False
    return True


def _escape(text: str, mode: str) -> str:
    out = []
    for c in text.encode("utf-8", "surrogatepass"):
        out.append(f"%{c:02X}" if _should_escape(c, mode) else chr(c))
    return "".join(out)


def _unescape(text: str, mode: str) -> str:
    raw = text.encode("utf-8", "surrogatepass")
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x25:  # '%'
            if i + 2 >= len(raw) or raw[i + 1] not in _HEX or raw[i + 2] not in _HEX:
                bad = raw[i:i + 3].decode("utf-8", "replace")
                raise GoURLError(f"invalid URL escape {_quote(bad)}")
            if mode == _HOST and int(raw[i + 1:i + 2], 16) < 8 and raw[i:i + 3] != b"%25":
                raise GoURLError(f"invalid URL escape {_quote(raw[i:i + 3].decode('ascii'))}")
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
            continue
        if mode == _HOST and c < 0x80 and _should_escape(c, mode):
            raise GoURLError(f"invalid character {_quote(chr(c))} in host name")
        out.append(c)
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _quote(text: str) -> str:
    return go_quote(text)


def _valid_encoded(text: str, mode: str) -> bool:
    for c in text.encode("utf-8", "surrogatepass"):
        if chr(c) in "!$&'()*+,;=:@[]%":
            continue
        if _should_escape(c, mode):
            return False
    return True


def _scheme(raw: str) -> tuple[str, str]:
    for i, ch in enumerate(raw):
        if ch.isascii() and ch.isalpha():
            continue
        if ch.isascii() and (ch.isdigit() or ch in "+-."):
            if i == 0:
                return "", raw
            continue
        if ch == ":":
            if i == 0:
                raise GoURLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


_PORT = re.compile(r"(:[0-9]*)?")
_USERINFO = re.compile(r"[A-Za-z0-9\-._:~!$&'()*+,;=%@]*")  # RFC 3986 userinfo (Go's validUserinfo)


def _host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise GoURLError("missing ']' in host")
        if not _PORT.fullmatch(host[end + 1:]):
            raise GoURLError(f"invalid port {_quote(host[end + 1:])} after host")
    elif ":" in host:
        colon = host.rfind(":")
        if not _PORT.fullmatch(host[colon:]):
            raise GoURLError(f"invalid port {_quote(host[colon:])} after host")
    return _unescape(host, _HOST)


def go_url_string(raw: str) -> str:
    """``url.Parse(raw).String()``; raises :class:`GoURLError` where ``url.Parse`` fails."""
    return _string(*_parse(raw))


def go_url_parse_error(raw: str) -> str | None:
    """The text of ``url.Parse(raw)``'s error, ``parse "<url>": <reason>`` (the URL without its
    fragment unless the fragment is what fails), or None when Go parses it."""
    try:
        _parse(raw)
    except GoURLError as exc:
        try:
            _parse(raw.partition("#")[0])
        except GoURLError:
            return f"parse {_quote(raw.partition('#')[0])}: {exc}"
        return f"parse {_quote(raw)}: {exc}"
    return None


def go_url_hostname(raw: str) -> str:
    """``url.Parse(raw).Hostname()``: the host without a valid ``:port`` and without IPv6
    brackets, case kept (raises GoURLError)."""
    return _hostname(_parse(raw)[3] or "")


def go_url_string_without_port(raw: str) -> str:
    """``u.Host = u.Hostname(); u.String()`` for ``u = url.Parse(raw)`` (what cap's
    ``validRedirect`` compares for loopback redirects; userinfo, path, query and fragment kept)."""
    parts = list(_parse(raw))
    parts[3] = _hostname(parts[3] or "")
    return _string(*parts)


def _hostname(host: str) -> str:
    colon = host.rfind(":")
    if colon >= 0 and _PORT.fullmatch(host[colon:]):
        host = host[:colon]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def x509_uri_invalid(uri: str) -> bool:
    """Whether Go's x509 parser refuses a certificate holding URI SAN ``uri`` (as written by
    :func:`go_url_string`): ``x509: cannot parse URI "<uri>": invalid domain`` when the host
    (port included) has an empty label, a trailing dot, or a byte outside ``!``..``~``."""
    try:
        host = _parse(uri)[3]
    except GoURLError:
        return True
    if not host:
        return False
    labels = host.split(".")
    return any(not label or any(not 33 <= ord(c) <= 126 for c in label) for label in labels)


def _parse(raw: str) -> tuple:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise GoURLError("net/url: invalid control character in URL")
    rest, _, fragment = raw.partition("#")
    has_fragment = "#" in raw
    scheme, rest = _scheme(rest)
    scheme = scheme.lower()
    force_query = rest.endswith("?") and rest.count("?") == 1
    if force_query:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    opaque = ""
    user = host = None
    if not rest.startswith("/"):
        if scheme:
            opaque = rest
        elif ":" in rest.split("/", 1)[0]:
            raise GoURLError("first path segment in URL cannot contain colon")
    if not opaque and (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        at = authority.rfind("@")
        host = _host(authority[at + 1:])
        if at >= 0:
            user = authority[:at]
            if not _USERINFO.fullmatch(user):
                raise GoURLError("net/url: invalid userinfo")
            _unescape(user, _USER)
    path = raw_path = ""
    if not opaque:
        path = _unescape(rest, _PATH)
        raw_path = "" if _escape(path, _PATH) == rest else rest
    frag = raw_frag = ""
    if has_fragment:
        frag = _unescape(fragment, _FRAGMENT)
        raw_frag = "" if _escape(frag, _FRAGMENT) == fragment else fragment
    return scheme, opaque, user, host, path, raw_path, query, force_query, frag, raw_frag


def _string(scheme, opaque, user, host, path, raw_path, query, force_query, frag, raw_frag) -> str:
    out = scheme + ":" if scheme else ""
    if opaque:
        out += opaque
    else:
        if scheme or host or user is not None:
            if host or path or user is not None:
                out += "//"
            if user is not None:
                name, colon, password = user.partition(":")
                out += _escape(_unescape(name, _USER), _USER)
                if colon:
                    out += ":" + _escape(_unescape(password, _USER), _USER)
                out += "@"
            if host:
                out += _escape(host, _HOST)
        if raw_path and _valid_encoded(raw_path, _PATH) and _unescape(raw_path, _PATH) == path:
            escaped = raw_path
        elif path == "*":
            escaped = "*"
        else:
            escaped = _escape(path, _PATH)
        if escaped and not escaped.startswith("/") and host:
            out += "/"
        if not out and ":" in escaped.split("/", 1)[0]:
            out += "./"
        out += escaped
    if force_query or query:
        out += "?" + query
    if frag:
        if raw_frag and _valid_encoded(raw_frag, _FRAGMENT) and _unescape(raw_frag, _FRAGMENT) == frag:
            out += "#" + raw_frag
        else:
            out += "#" + _escape(frag, _FRAGMENT)
    return out


_QUERY_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


def _query_unescape(part: str) -> str | None:
    """``url.QueryUnescape``: ``+`` is a space, ``%XX`` a byte (the bytes read as UTF-8, invalid
    sequences replaced); None for an invalid escape (a ``%`` not followed by two hex digits)."""
    raw = part.encode("latin-1", "replace").replace(b"+", b" ")
    if raw.count(b"%") != len(_QUERY_ESCAPE.findall(raw)):
        return None
    return _QUERY_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode("utf-8", "replace")


def go_parse_query(query: str) -> dict[str, list[str]]:
    """``url.ParseQuery`` as ``r.URL.Query()`` and ``r.ParseForm`` use it (errors ignored): pairs split
    on ``&``; a pair holding a ``;`` is dropped (Go >= 1.17), so is one whose key or value has an
    invalid escape (``list=%zz`` is no ``list``); empty pairs are skipped; values keep their order.
    ``query`` is the raw text (bytes as latin-1 code points)."""
    values: dict[str, list[str]] = {}
    for pair in query.split("&"):
        if not pair or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        key_text, value_text = _query_unescape(key), _query_unescape(value)
        if key_text is None or value_text is None:
            continue
        values.setdefault(key_text, []).append(value_text)
    return values
