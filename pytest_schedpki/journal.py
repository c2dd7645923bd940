"""The request journal: every request either service answered, for assertions in tests.

Entries keep what a test asserts on (method, path, query, token kind, request body, status,
response body) and never the token itself; private keys and client secrets in bodies are
replaced by ``"<redacted>"`` unless the journal is told otherwise (``redact=False``).

Recording is cheap: the raw body bytes are kept, and decoded (JSON) and redacted the first time the
entries are read; whether to redact is decided when the request is recorded. The journal keeps the
bodies of the newest entries up to :data:`BODY_BUDGET` bytes (request + response); older entries
keep everything else and show :data:`DROPPED` as their bodies, so a long-running ``schedpki serve``
does not grow without bound. The pytest plugin clears the journal before every test.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any

SECRET_KEYS = {"private_key", "OIDCClientSecret", "ClientSecret", "PemKey", "client_token", "pem_bundle",
               "token", "id", "SecretID", "secret_id"}  # token: wrap_info, lookup/unwrap bodies; id: a token's own
# id; secret_id: AppRole's secret IDs (generated, custom, login and lookup bodies)
TOO_DEEP = "<redacted: nested too deeply to check for secrets>"
BODY_BUDGET = 32 * 1024 * 1024  # bytes of request and response bodies kept, newest entries first
DROPPED = "<dropped: the journal keeps the bodies of its newest entries only>"
_PEM_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)


@dataclass(frozen=True)
class JournalEntry:
    """One answered request.

    ``service`` is ``"scheduler"`` or ``"secrets"``; ``query`` maps names to the first value;
    ``token_kind`` says which token was presented (scheduler: ``management``, ``client``,
    ``anonymous``, ``unknown``; secrets: ``root``, ``token``, ``none``, ``invalid``); ``body`` and
    ``response`` are parsed JSON when they were JSON, else text; ``time`` is real UTC time.
    """

    service: str
    method: str
    path: str
    query: dict[str, str]
    token_kind: str
    body: Any
    status: int
    response: Any
    time: datetime.datetime = field(compare=False)

    def summary(self) -> str:
        """``"secrets POST /v1/pki/issue/web -> 200"``."""
        return f"{self.service} {self.method} {self.path} -> {self.status}"


def _decode(raw: bytes, redacting: bool = False) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except ValueError:
        return text
    except RecursionError:  # nested deeper than Python's json decodes: keep the text unless redacting
        return TOO_DEEP if redacting else text
    if redacting:
        try:
            return redact(value)
        except RecursionError:
            return TOO_DEEP
    return value


def redact_query(query: str) -> str:
    """A query string with the values of secret parameters (``?token=...``) replaced by ``<redacted>``."""
    from urllib.parse import parse_qsl, urlencode

    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(k in SECRET_KEYS for k, _ in pairs):
        return query
    return urlencode([(k, "<redacted>" if k in SECRET_KEYS and v else v) for k, v in pairs], safe="<>")


def redact(value: Any) -> Any:
    """A copy of ``value`` with secret fields and PEM private keys replaced by ``"<redacted>"``."""
    if isinstance(value, dict):
        return {k: ("<redacted>" if k in SECRET_KEYS and v not in (None, "") else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and "PRIVATE KEY-----" in value:
        return _PEM_KEY.sub("<redacted>", value)
    return value


class _Raw(tuple):
    """A recorded request not decoded yet: the arguments of :meth:`Journal.record`, the time and
    whether to redact."""

    def decode(self) -> JournalEntry:
        service, method, path, query, token_kind, body, status, response, when, redacting = self
        if body is None:  # bodies dropped (over the budget)
            return JournalEntry(service, method, path, query, token_kind, DROPPED, status, DROPPED, when)
        return JournalEntry(service, method, path, query, token_kind, _decode(body, redacting), status,
                            _decode(response, redacting), when)

    def without_bodies(self) -> _Raw:
        return _Raw((*self[:5], None, self[6], None, *self[8:]))


class Journal:
    """Thread-safe list of :class:`JournalEntry`, newest last. ``redact`` (default True) hides
    secrets in recorded bodies; ``enabled`` turns recording off; ``body_budget`` (bytes, default
    :data:`BODY_BUDGET`) bounds the bodies kept (see the module doc)."""

    def __init__(self, redact: bool = True, body_budget: int = BODY_BUDGET):
        self.redact = redact
        self.enabled = True
        self.body_budget = body_budget
        self._entries: list[JournalEntry | _Raw] = []
        self._sizes: list[int] = []  # body bytes of each entry as recorded
        self._kept = 0  # body bytes of the entries that still have their bodies
        self._first_kept = 0  # index of the oldest entry that still has its bodies
        self._lock = threading.Lock()

    def record(self, service: str, method: str, path: str, query: dict[str, str], token_kind: str,
               body: bytes, status: int, response: bytes) -> None:
        """Record one answered request; ``body``/``response`` are the raw bytes (decoded on read)."""
        if not self.enabled:
            return
        if self.redact and query and not SECRET_KEYS.isdisjoint(query):  # ?token=... of wrapping lookups
            query = {k: "<redacted>" if k in SECRET_KEYS and v else v for k, v in query.items()}
        raw = _Raw((service, method, path, query, token_kind, body, status, response,
                    datetime.datetime.now(datetime.timezone.utc), self.redact))
        size = len(body) + len(response)
        with self._lock:
            self._entries.append(raw)
            self._sizes.append(size)
            self._kept += size
            while self._kept > self.body_budget and self._first_kept < len(self._entries) - 1:
                self._drop_bodies_locked(self._first_kept)

    def _drop_bodies_locked(self, index: int) -> None:
        entry = self._entries[index]
        if type(entry) is _Raw:
            self._entries[index] = entry.without_bodies()
        else:
            self._entries[index] = replace(entry, body=DROPPED, response=DROPPED)
        self._kept -= self._sizes[index]
        self._first_kept = index + 1

    def entries(self, service: str | None = None) -> list[JournalEntry]:
        """All entries (of one service if given), oldest first."""
        with self._lock:
            out = []
            for i, entry in enumerate(self._entries):
                if type(entry) is _Raw:
                    entry = self._entries[i] = entry.decode()
                if service is None or entry.service == service:
                    out.append(entry)
            return out

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries = []
            self._sizes = []
            self._kept = 0
            self._first_kept = 0

    def find(self, method: str | None = None, path: str | None = None, service: str | None = None,
             status: int | None = None, token_kind: str | None = None, body: dict | None = None) -> list[JournalEntry]:
        """Entries matching every given criterion. ``path`` is an exact path or a regex when it
        starts with ``^``; ``body`` matches when each of its keys has that value in the request."""
        out = []
        for entry in self.entries(service):
            if method is not None and entry.method != method.upper():
                continue
            if path is not None and not (re.search(path, entry.path) if path.startswith("^") else entry.path == path):
                continue
            if status is not None and entry.status != status:
                continue
            if token_kind is not None and entry.token_kind != token_kind:
                continue
            if body is not None and not (isinstance(entry.body, dict) and all(entry.body.get(k) == v for k, v in body.items())):
                continue
            out.append(entry)
        return out

    def assert_request_made(self, method: str | None = None, path: str | None = None, *, count: int | None = None,
                            service: str | None = None, status: int | None = None, token_kind: str | None = None,
                            body: dict | None = None) -> list[JournalEntry]:
        """Assert that matching requests were made (``count`` of them, if given; else at least one).

        Raises AssertionError listing the near misses: requests to the same path, or with the same
        method, so a typo or a wrong verb shows at once. Returns the matching entries.
        """
        found = self.find(method, path, service, status, token_kind, body)
        if (count is None and found) or (count is not None and len(found) == count):
            return found
        wanted = " ".join(str(x) for x in (method, path) if x) or "any request"
        extras = {k: v for k, v in {"service": service, "status": status, "token_kind": token_kind, "body": body}.items() if v is not None}
        near = [e for e in self.entries(service) if (path and (e.path == path or (path.startswith("^") and re.search(path, e.path))))
                or (method and e.method == method.upper())]
        lines = [f"expected {count if count is not None else 'at least 1'} request(s) {wanted} {extras or ''}".rstrip()
                 + f", found {len(found)}"]
        if near:
            lines.append("near misses:")
            lines += [f"  {e.summary()} token={e.token_kind} body={e.body!r}"[:300] for e in near[-10:]]
        else:
            lines.append("requests made: " + (", ".join(e.summary() for e in self.entries()[-10:]) or "none"))
        raise AssertionError("\n".join(lines))

    def assert_no_request(self, method: str | None = None, path: str | None = None, **criteria: Any) -> None:
        """Assert that no matching request was made; the message lists the offending ones."""
        found = self.find(method, path, **criteria)
        if found:
            raise AssertionError("unexpected request(s):\n" + "\n".join("  " + e.summary() for e in found))
