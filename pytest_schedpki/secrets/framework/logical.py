"""HTTP conventions of the secrets service, as OpenBao 2.7 writes them.

* Success: the 8-key envelope ``request_id, lease_id, renewable, lease_duration, data, wrap_info,
  warnings, auth`` (compact JSON + ``\\n``, keys inside ``data`` sorted, ``warnings`` null or a
  non-empty list).
* Errors: ``{"errors": [...]}`` with ``Content-Type: application/json`` exactly (hvac compares it
  literally), in three flavours: a plain message, a Go multierror text, or an empty list.

Handlers raise :class:`LogicalError` and return :class:`LogicalResponse`; nothing else of werkzeug
leaks into the backends.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from werkzeug.wrappers import Response

from pytest_schedpki.wire.bytes_response import BytesResponse, bytes_response

JSON_HEADERS = {
    "Cache-Control": "no-store",
    "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
}
#: the header list ``bytes_response(body, status, "application/json", JSON_HEADERS)`` builds, built once:
#: a BytesResponse never changes its list (its ``headers`` view is a copy), so answers may share it
_JSON_HEADER_LIST = bytes_response(b"", 200, "application/json", JSON_HEADERS).header_list


def multierror_text(*messages: str) -> str:
    """go-multierror's ListFormatFunc text: ``"1 error occurred:\\n\\t* msg\\n\\n"``."""
    noun = "error" if len(messages) == 1 else "errors"
    body = "\n\t".join(f"* {m}" for m in messages)
    return f"{len(messages)} {noun} occurred:\n\t{body}\n\n"


def multierror_inner(text: str) -> str:
    """The message inside a one-error go-multierror text (``text`` itself when it is not one)."""
    prefix, suffix = "1 error occurred:\n\t* ", "\n\n"
    if text.startswith(prefix) and text.endswith(suffix):
        return text[len(prefix):-len(suffix)]
    return text


class LogicalError(Exception):
    """An error answered as ``{"errors": errors}`` with ``status``.

    Build one with the helpers: :func:`user_error` (400 plain), :func:`internal_error` (500
    multierror), :func:`not_found` (404 ``[]``), :func:`unsupported_path` (404 multierror),
    :func:`unsupported_operation` (405 multierror), :func:`permission_denied` (403).
    """

    def __init__(self, status: int, errors: list[str], headers: dict[str, str] | None = None, body: bytes | None = None):
        super().__init__(errors[0] if errors else f"HTTP {status}")
        self.status = status
        self.errors = errors
        self.headers = headers or {}
        self.body = body
        self.keep_state = False  # True: the writes made before the error stand (upstream stored them)

    def to_response(self) -> Response:
        """The werkzeug response: JSON errors (or a raw body, e.g. HEAD's empty 405)."""
        if self.body is not None:
            return Response(self.body, status=self.status, headers=self.headers)
        return json_response({"errors": self.errors}, self.status, self.headers)


def user_error(message: str) -> LogicalError:
    """400 ``{"errors": [message]}`` - what ``logical.ErrorResponse`` gives."""
    return LogicalError(400, [message])


def internal_error(message: str) -> LogicalError:
    """500 ``{"errors": ["1 error occurred:\\n\\t* <message>\\n\\n"]}`` - a Go error returned by a handler."""
    return LogicalError(500, [multierror_text(message)])


def not_found() -> LogicalError:
    """404 ``{"errors": []}`` - a read with no result or an empty LIST."""
    return LogicalError(404, [])


def unsupported_path() -> LogicalError:
    """404 multierror ``unsupported path``."""
    return LogicalError(404, [multierror_text("unsupported path")])


def unsupported_operation() -> LogicalError:
    """405 multierror ``unsupported operation``."""
    return LogicalError(405, [multierror_text("unsupported operation")])


def permission_denied(multierror: bool = False) -> LogicalError:
    """403 ``permission denied``: plain for a missing/unknown token, multierror for a token that lacks
    the capability (as OpenBao answers)."""
    return LogicalError(403, [multierror_text("permission denied") if multierror else "permission denied"])


@dataclass
class LogicalResponse:
    """What a handler returns.

    * ``data`` - the envelope's ``data`` (``None`` for a 204);
    * ``warnings`` - added warnings (the envelope shows ``null`` when empty);
    * ``status`` - 200 by default; 204 sends an empty body; 202 blanks ``request_id`` (unless
      ``keeps_request_id``);
    * ``raw`` - ``(bytes, content_type)`` for non-JSON bodies (PEM, DER, CRL);
    * ``lease_id``/``lease_duration`` (seconds)/``auth`` for leased and auth responses;
    * ``extra_top`` - extra top-level keys (``sys/mounts/:path/tune`` repeats its data there).
    """

    data: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    status: int = 200
    raw: tuple[bytes, str] | None = None
    lease_id: str = ""
    lease_duration: int = 0
    auth: dict[str, Any] | None = None
    extra_top: dict[str, Any] | None = None
    bare: bool = False  # the body is ``data`` itself, with no envelope (sys/health, sys/seal-status)
    keeps_request_id: bool = False  # a 202 that still carries its request_id (AppRole's tidy)
    wrap_info: dict[str, Any] | None = None  # the envelope's ``wrap_info`` (sys/wrapping/rewrap)
    #: response headers of a ``raw`` answer (a list value: the header once per item) (``logical.Response.Headers``: ACME's Replay-Nonce, Link,
    #: Location); the HTTP layer keeps only those the mount's ``allowed_response_headers`` tune names
    headers: dict[str, Any] | None = None
    #: ``data`` already encoded, as ``dumps`` writes it with its keys sorted (set by a handler that keeps
    #: the text of an unchanged object, e.g. a PKI role read); ``data`` must hold the same values
    data_json: str | None = None

    def add_warning(self, text: str) -> None:
        self.warnings.append(text)

    def to_response(self) -> Response:
        """The werkzeug response for this result."""
        if self.raw is not None:
            body, content_type = self.raw
            headers = {**JSON_HEADERS, **self.headers} if self.headers else JSON_HEADERS
            if self.headers and (lines := _raw_header_lines(headers, content_type, self.status)) is not None:
                return BytesResponse(body, self.status, lines)
            if any(isinstance(v, list) for v in headers.values()):  # a header sent twice (ACME's two Links)
                lines = [(k, item) for k, v in headers.items() for item in (v if isinstance(v, list) else [v])]
                response = Response(body, status=self.status, headers=lines, content_type=content_type or None)
                if not content_type:
                    del response.headers["Content-Type"]
                return response
            if not content_type:  # OpenBao's raw answer with an empty HTTPContentType: no Content-Type at all
                response = Response(body, status=self.status, headers=headers)
                del response.headers["Content-Type"]
                return response
            return bytes_response(body, self.status, content_type, headers)
        if self.status == 204:
            return Response(b"", status=204, mimetype="application/json", headers=JSON_HEADERS)
        if self.bare:
            return json_response(self.data, self.status)
        request_id = "" if (self.status == 202 and not self.keeps_request_id) or self.wrap_info else _request_id()
        if self.data_json is not None and self.extra_top is None and self.data is not None:
            # the envelope's text around the data's kept text: the bytes dumps(envelope) gives
            if not (self.lease_id or self.lease_duration or self.wrap_info or self.warnings or self.auth):
                body = _PLAIN_ENVELOPE % (request_id, self.data_json)  # a request id is hex digits and dashes
            else:
                head = dumps({"request_id": request_id, "lease_id": self.lease_id, "renewable": False,
                              "lease_duration": self.lease_duration})
                tail = dumps({"wrap_info": self.wrap_info, "warnings": list(self.warnings) or None,
                              "auth": self.auth})
                body = f'{head[:-1]},"data":{self.data_json},{tail[1:]}\n'
            if self.status >= 200 and self.status != 304:  # 204 was answered above
                return BytesResponse(body.encode(), self.status, _JSON_HEADER_LIST)
            return bytes_response(body.encode(), self.status, "application/json", JSON_HEADERS)
        envelope: dict[str, Any] = {
            "request_id": request_id,
            "lease_id": self.lease_id,
            "renewable": False,
            "lease_duration": self.lease_duration,
            "data": _sorted(self.data) if self.data is not None else None,
            "wrap_info": self.wrap_info,
            "warnings": list(self.warnings) or None,
            "auth": self.auth,
        }
        if self.extra_top:
            envelope = {**self.extra_top, **envelope}
        return json_response(envelope, self.status)


_CONTROL = re.compile("[\r\n]")


def _raw_header_lines(headers: dict[str, Any], content_type: str, status: int) -> list[tuple[str, str]] | None:
    """The header lines werkzeug's ``Response`` sends for a raw answer with handler ``headers`` (ACME's
    ``Replay-Nonce``, ``Link``, ``Location``; a list value: the header once per item), built without
    it (a ``Response`` costs ~30 us, on every ACME request): the lines in order, ``Content-Type`` set
    in place of the first one (``Headers.set``) or, for an empty ``content_type``, removed with every
    other (``del headers["Content-Type"]``: OpenBao's raw answer with an empty ``HTTPContentType``
    has none); :class:`BytesResponse` adds ``Content-Length``. ``None`` where werkzeug would do more
    than that, which the caller then leaves to it: a status werkzeug frames specially (under 200,
    204, 304), a value that is not a string or holds CR/LF (werkzeug refuses it), a handler's own
    ``Content-Length``."""
    if status < 200 or status in (204, 304):
        return None
    lines: list[tuple[str, str]] = []
    replaced = not content_type
    for name, value in headers.items():
        lower = name.lower()
        if lower == "content-length":
            return None
        for item in value if isinstance(value, list) else (value,):
            if not isinstance(item, str) or _CONTROL.search(item):
                return None
            if lower == "content-type":
                if not replaced:
                    lines.append(("Content-Type", content_type))
                    replaced = True
                continue
            lines.append((name, item))
    if not replaced:
        lines.append(("Content-Type", content_type))
    return lines


#: dumps() of an envelope with no lease, wrap info, warnings or auth, with its request id and data text to fill
_PLAIN_ENVELOPE = ('{"request_id":"%s","lease_id":"","renewable":false,"lease_duration":0,"data":%s,'
                   '"wrap_info":null,"warnings":null,"auth":null}\n')

_IDS = random.Random()  # request ids need to be unique, not secret: os.urandom costs ~12 us per call here


_UUID_V4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))  # the version and variant bits of a 128-bit UUID
_UUID_V4_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


def _request_id() -> str:
    """A random version-4 UUID for the envelope's ``request_id``: the text of
    ``str(uuid.UUID(int=bits, version=4))``, formatted without building the UUID (half the time)."""
    text = "%032x" % ((_IDS.getrandbits(128) & _UUID_V4_CLEAR) | _UUID_V4_SET)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _sorted(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in sorted(data)}


# json.dumps(payload, separators=(",", ":"), ensure_ascii=False) without building an encoder per call and
# without the circular-reference markers (answers are trees built per request): the same text, ~30% less time
_ENCODE = json.encoder.c_make_encoder(None, json.JSONEncoder().default, json.encoder.encode_basestring, None, ":", ",",
                                      False, False, True) if json.encoder.c_make_encoder is not None else None


# Go's encoding/json (OpenBao's jsonutil.EncodeJSON) escapes these inside strings; they never occur outside one
_GO_ESCAPED = re.compile("[<>&\u2028\u2029]")
_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                             "\u2029": "\\u2029"})


def dumps(payload: Any) -> str:
    """``json.dumps(payload, separators=(",", ":"), ensure_ascii=False)`` with ``<``, ``>``, ``&``,
    U+2028 and U+2029 escaped as Go's ``encoding/json`` writes them (``\\u003c`` ...): the text of
    every JSON answer (a ``str``; ``TypeError`` for a value JSON cannot hold, as ``json.dumps``)."""
    if _ENCODE is None:
        text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    else:
        text = "".join(_ENCODE(payload, 0))
    if "<" in text or ">" in text or "&" in text or (not text.isascii() and _GO_ESCAPED.search(text)):
        return text.translate(_GO_ESCAPES)  # (substring tests: a regex search of a 4 KB answer costs ~18 us)
    return text


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Compact JSON plus a newline, ``Content-Type: application/json`` exactly."""
    body = dumps(payload) + "\n"
    return bytes_response(body.encode(), status, "application/json", {**JSON_HEADERS, **(headers or {})})
