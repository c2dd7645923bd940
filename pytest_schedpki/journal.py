"""The request journal: every request either service answered, for assertions in tests.

Entries keep what a test asserts on (method, path, query, token kind, request body, status,
response body) and never the token itself. Secrets are replaced by ``"<redacted>"`` unless the
journal is told otherwise (``redact=False``), whatever the body's encoding (:func:`redact_body`):
JSON (by field, at any depth), form-urlencoded (by field, keys and values percent-decoded),
anything else - invalid JSON included - by field-looking text (``"id": "..."``, ``id=...``) and by
PEM private-key blocks, cut short or not; query strings by parameter. Responses are redacted the
same way (``auth.client_token``, ``private_key``, ``wrap_info.token``, ``SecretID``, login JWTs,
OIDC codes, PKCE verifiers, ID and access tokens, the HMAC ``key`` of an ACME external account
binding...).

**Bounded.** The journal keeps its newest :attr:`Journal.max_entries` entries (default
:data:`MAX_ENTRIES`) and at most :attr:`Journal.max_bytes` bytes (default :data:`MAX_BYTES`), where an
entry counts its raw request and response bodies, its path and query, plus :data:`ENTRY_OVERHEAD`
bytes for its metadata (the record, its time, its query mapping). Older entries are evicted, oldest
first, in O(1) per request; :attr:`Journal.evicted` counts them. An entry whose bodies alone exceed
``max_bytes`` keeps its metadata and shows :data:`DROPPED` as its bodies. Both bounds are knobs:
``Double(journal_max_entries=, journal_max_bytes=)``, the ini options
``schedpki_journal_max_entries``/``schedpki_journal_max_bytes``, ``schedpki serve
--journal-max-entries/--journal-max-bytes`` and ``$SCHEDPKI_JOURNAL_MAX_ENTRIES``/
``$SCHEDPKI_JOURNAL_MAX_BYTES``. The pytest plugin clears the journal before every test.

Recording is cheap: the raw body bytes are kept, and decoded (JSON) and redacted each time the
entries are read; whether to redact is decided when the request is recorded.
"""

from __future__ import annotations

import collections
import datetime
import json
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

SECRET_KEYS = frozenset({
    "private_key", "OIDCClientSecret", "ClientSecret", "PemKey", "client_token", "pem_bundle", "token", "id",
    "SecretID", "secret_id", "client_secret", "password", "key",  # key: an ACME EAB's HMAC key (new-eab)
    "LoginToken", "Code", "code", "code_verifier", "access_token", "id_token",  # Nomad SSO login and the IdP
})  # token: wrap_info, lookup/unwrap bodies; id: a token's own id
REDACTED = "<redacted>"
TOO_DEEP = "<redacted: nested too deeply to check for secrets>"
MAX_ENTRIES = 10_000  # entries kept by default, newest first
MAX_BYTES = 16 * 1024 * 1024  # bytes kept by default (bodies, path, query and ENTRY_OVERHEAD per entry)
ENTRY_OVERHEAD = 512  # bytes counted per entry for its metadata (tracemalloc: ~340, plus path and body objects)
DROPPED = "<dropped: the bodies of this entry alone exceed the journal's byte bound>"
# a PEM private-key block, also cut short (no END line): everything from BEGIN to END or to the end
_PEM_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S)
_KEY_NAMES = "|".join(sorted(map(re.escape, SECRET_KEYS), key=len, reverse=True))
# "key": "value" (or 'key': 'value', or an unquoted value) in text that is not valid JSON
_JSONISH_FIELD = re.compile(
    r"""(?P<key>(?P<q>["'])(?:""" + _KEY_NAMES
    + r""")(?P=q)\s*:\s*)(?P<value>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|[^\s,}\]]+)""")


def same_method(method: str) -> str:
    """The method as the journal's ``method=`` criterion compares it: upper case, ``PUT`` read as
    ``POST``. Both services treat the two alike: Vault/OpenBao map both to the ``update`` operation
    (``vault/http/logical.go``, ``buildLogicalRequestNoAuth``), so hvac's POST and the ``bao`` CLI's
    PUT are the same write; every write endpoint of Nomad's ACL API accepts either
    (``command/agent/acl_endpoint.go``: ``case http.MethodPut, http.MethodPost``). The entries keep
    the method literally (:attr:`JournalEntry.method`)."""
    method = method.upper()
    return "POST" if method == "PUT" else method


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"${name} must be a whole number, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"${name} must not be negative, got {value}")
    return value


@dataclass(frozen=True)
class JournalEntry:
    """One answered request.

    ``service`` is ``"scheduler"`` or ``"secrets"``; ``query`` maps names to the first value;
    ``token_kind`` says which token was presented (scheduler: ``management``, ``client``,
    ``anonymous``, ``unknown``; secrets: ``root``, ``token``, ``none``, ``invalid``); ``body`` and
    ``response`` are parsed JSON when they were JSON, else text; ``time`` is real UTC time;
    ``duration`` the seconds from the request reaching the middleware to its answer (faults' latency
    included; 0.0 when the recorder did not measure it).
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
    duration: float = field(default=0.0, compare=False)  # seconds the service took to answer (0: not measured)

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
        return redact_text(text) if redacting else text
    except RecursionError:  # nested deeper than Python's json decodes: keep the text unless redacting
        return TOO_DEEP if redacting else text
    if redacting:
        try:
            return redact(value)
        except RecursionError:
            return TOO_DEEP
    return value


def _secret_value(key: str, value: str) -> str:
    if key in SECRET_KEYS and value:
        return REDACTED
    return _PEM_KEY.sub(REDACTED, value) if "PRIVATE KEY" in value else value


def redact_query(query: str) -> str:
    """A query string (or form body) with the values of secret parameters (``?token=...``) and PEM
    private keys in any value replaced by ``<redacted>``; unchanged when there is none."""
    pairs = parse_qsl(query, keep_blank_values=True)
    cleaned = [(k, _secret_value(k, v)) for k, v in pairs]
    if cleaned == pairs:
        return query
    return urlencode(cleaned, safe="<>")


def redact_text(text: str) -> str:
    """Text that is not valid JSON (form-urlencoded, cut-short or malformed JSON, plain text) with
    its secrets replaced by ``<redacted>``: PEM private-key blocks (also without their END line),
    the values of secret fields written JSON-style (``"id": "..."``, ``'id': '...'``, unquoted),
    and, when the text parses as ``key=value&...``, the values of secret parameters and PEM keys in
    any value (percent-decoded first, so ``%69d=`` or ``%2D%2D%2D%2D%2DBEGIN`` hide nothing)."""
    text = _PEM_KEY.sub(REDACTED, text)
    text = _JSONISH_FIELD.sub(lambda m: m.group("key") + '"<redacted>"', text)
    if "=" in text:
        text = redact_query(text)
    return text


def redact(value: Any) -> Any:
    """A copy of ``value`` (parsed JSON) with secret fields and PEM private keys replaced by
    ``"<redacted>"``."""
    if isinstance(value, dict):
        return {k: (REDACTED if k in SECRET_KEYS and v not in (None, "") else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and "PRIVATE KEY" in value:
        return _PEM_KEY.sub(REDACTED, value)
    return value


def redact_body(raw: bytes) -> Any:
    """A raw body as the journal shows it when redacting: parsed JSON with secrets redacted, or
    text redacted by :func:`redact_text` (``None`` for an empty body)."""
    return _decode(raw, True)


class _Raw(tuple):
    """A recorded request not decoded yet: the arguments of :meth:`Journal.record`, the time,
    whether to redact and the duration (``body`` and ``response`` are ``None`` when dropped)."""

    __slots__ = ()

    def decode(self) -> JournalEntry:
        service, method, path, query, token_kind, body, status, response, when, redacting, duration = self
        if redacting and query:
            query = {k: _secret_value(k, v) for k, v in query.items()}
        if body is None:  # bodies dropped (over the byte bound on their own)
            return JournalEntry(service, method, path, query, token_kind, DROPPED, status, DROPPED, when, duration)
        return JournalEntry(service, method, path, query, token_kind, _decode(body, redacting), status,
                            _decode(response, redacting), when, duration)


class Journal:
    """Thread-safe, bounded list of :class:`JournalEntry`, newest last (see the module doc).

    ``redact`` (default True) hides secrets in recorded bodies and queries; ``enabled`` turns
    recording off; ``max_entries`` and ``max_bytes`` bound what is kept (``None``: the environment's
    ``SCHEDPKI_JOURNAL_MAX_ENTRIES``/``SCHEDPKI_JOURNAL_MAX_BYTES``, else :data:`MAX_ENTRIES` and
    :data:`MAX_BYTES`; 0 keeps nothing). Raises ValueError for a negative bound.
    """

    def __init__(self, redact: bool = True, max_entries: int | None = None, max_bytes: int | None = None):
        self.redact = redact
        self.enabled = True
        self.max_entries = _env_int("SCHEDPKI_JOURNAL_MAX_ENTRIES", MAX_ENTRIES) if max_entries is None else max_entries
        self.max_bytes = _env_int("SCHEDPKI_JOURNAL_MAX_BYTES", MAX_BYTES) if max_bytes is None else max_bytes
        if self.max_entries < 0 or self.max_bytes < 0:
            raise ValueError("journal bounds must not be negative")
        self.evicted = 0  # entries evicted since the last clear()
        self.recorded = 0  # entries recorded since the journal was made (never goes back: a change marker)
        self._entries: collections.deque[tuple[_Raw, int]] = collections.deque()  # (entry, counted bytes)
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The number of kept entries."""
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """The bytes the kept entries count against :attr:`max_bytes`."""
        return self._bytes

    def record(self, service: str, method: str, path: str, query: dict[str, str], token_kind: str,
               body: bytes, status: int, response: bytes, duration: float = 0.0) -> None:
        """Record one answered request; ``body``/``response`` are the raw bytes (decoded on read),
        ``duration`` the seconds it took. Evicts the oldest entries beyond the bounds (O(1) per
        request, amortised)."""
        if not self.enabled:
            return
        meta = ENTRY_OVERHEAD + len(path) + (sum(len(k) + len(v) for k, v in query.items()) if query else 0)
        if meta + len(body) + len(response) > self.max_bytes:
            body = response = None  # too big on its own: keep what a test asserts on besides the bodies
            size = meta
        else:
            size = meta + len(body) + len(response)
        raw = _Raw((service, method, path, query, token_kind, body, status, response,
                    datetime.datetime.now(datetime.timezone.utc), self.redact, duration))
        with self._lock:
            self.recorded += 1
            self._entries.append((raw, size))
            self._bytes += size
            while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
                self._bytes -= self._entries.popleft()[1]
                self.evicted += 1

    def entries(self, service: str | None = None) -> list[JournalEntry]:
        """All kept entries (of one service if given), oldest first, decoded (and redacted) anew."""
        with self._lock:
            kept = [raw for raw, _ in self._entries if service is None or raw[0] == service]
        return [raw.decode() for raw in kept]

    def newest(self, limit: int, service: str | None = None, path: str | None = None,
               status: int | None = None) -> list[JournalEntry]:
        """At most ``limit`` kept entries, newest first, of ``service``, whose path contains ``path``
        and whose status is ``status`` (each criterion optional); only those are decoded, so the cost
        is one pass over the kept entries' metadata plus ``limit`` decodes."""
        found: list[_Raw] = []
        with self._lock:
            for raw, _ in reversed(self._entries):
                if len(found) >= limit:
                    break
                if ((service is None or raw[0] == service) and (path is None or path in raw[2])
                        and (status is None or raw[6] == status)):
                    found.append(raw)
        return [raw.decode() for raw in found]

    def clear(self) -> None:
        """Forget every entry (and the eviction count)."""
        with self._lock:
            self.recorded += 1  # a change readers polling :attr:`recorded` must see
            self._entries.clear()
            self._bytes = 0
            self.evicted = 0

    def find(self, method: str | None = None, path: str | None = None, service: str | None = None,
             status: int | None = None, token_kind: str | None = None, body: dict | None = None) -> list[JournalEntry]:
        """Entries matching every given criterion. ``method`` matches PUT and POST alike (both services
        treat them as one write, see :func:`same_method`; ``entry.method`` is what was sent); ``path`` is
        an exact path or a regex when it starts with ``^``; ``body`` matches when each of its keys has
        that value in the request."""
        out = []
        wanted_method = same_method(method) if method is not None else None
        for entry in self.entries(service):
            if wanted_method is not None and same_method(entry.method) != wanted_method:
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
        Criteria as for :meth:`find` (``"POST"`` also matches a PUT: the same write to either service).

        Raises AssertionError listing the near misses: requests to the same path, or with the same
        method, so a typo or a wrong verb shows at once. Returns the matching entries.
        """
        __tracebackhide__ = True  # pytest shows the caller's line, not this helper's source
        found = self.find(method, path, service, status, token_kind, body)
        if (count is None and found) or (count is not None and len(found) == count):
            return found
        wanted = " ".join(str(x) for x in (method, path) if x) or "any request"
        extras = {k: v for k, v in {"service": service, "status": status, "token_kind": token_kind, "body": body}.items() if v is not None}
        near = [e for e in self.entries(service) if (path and (e.path == path or (path.startswith("^") and re.search(path, e.path))))
                or (method and same_method(e.method) == same_method(method))]
        expected = "at least 1 request" if count is None else f"{count} request{'' if count == 1 else 's'}"
        lines = [f"expected {expected} {wanted} {extras or ''}".rstrip() + f", found {len(found)}"]
        if self.evicted:
            lines.append(f"({self.evicted} older request(s) were evicted: the journal keeps {self.max_entries} "
                         f"entries and {self.max_bytes} bytes; see Journal.max_entries/max_bytes)")
        if near:
            lines.append("near misses:")
            lines += [f"  {e.summary()} token={e.token_kind} body={e.body!r}"[:300] for e in near[-10:]]
        else:
            lines.append("requests made: " + (", ".join(e.summary() for e in self.entries()[-10:]) or "none"))
        raise AssertionError("\n".join(lines))

    def assert_no_request(self, method: str | None = None, path: str | None = None, **criteria: Any) -> None:
        """Assert that no matching request was made; the message lists the offending ones."""
        __tracebackhide__ = True
        found = self.find(method, path, **criteria)
        if found:
            raise AssertionError("unexpected request(s):\n" + "\n".join("  " + e.summary() for e in found))
