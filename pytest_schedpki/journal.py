"""The request journal: every request either service answered, for assertions in tests.

Entries keep what a test asserts on (method, path, query, token kind, request body, status,
response body) and never the token itself; private keys and client secrets in bodies are
replaced by ``"<redacted>"`` unless the journal is told otherwise (``redact=False``).
"""

from __future__ import annotations

import datetime
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

SECRET_KEYS = {"private_key", "OIDCClientSecret", "ClientSecret", "PemKey", "client_token", "pem_bundle"}
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


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def redact(value: Any) -> Any:
    """A copy of ``value`` with secret fields and PEM private keys replaced by ``"<redacted>"``."""
    if isinstance(value, dict):
        return {k: ("<redacted>" if k in SECRET_KEYS and v not in (None, "") else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and "PRIVATE KEY-----" in value:
        return _PEM_KEY.sub("<redacted>", value)
    return value


class Journal:
    """Thread-safe list of :class:`JournalEntry`, newest last. ``redact`` (default True) hides
    secrets in recorded bodies; ``enabled`` turns recording off."""

    def __init__(self, redact: bool = True):
        self.redact = redact
        self.enabled = True
        self._entries: list[JournalEntry] = []
        self._lock = threading.Lock()

    def record(self, service: str, method: str, path: str, query: dict[str, str], token_kind: str,
               body: bytes, status: int, response: bytes) -> None:
        if not self.enabled:
            return
        req, resp = _decode(body), _decode(response)
        if self.redact:
            req, resp = redact(req), redact(resp)
        entry = JournalEntry(service, method, path, query, token_kind, req, status, resp,
                             datetime.datetime.now(datetime.timezone.utc))
        with self._lock:
            self._entries.append(entry)

    def entries(self, service: str | None = None) -> list[JournalEntry]:
        """All entries (of one service if given), oldest first."""
        with self._lock:
            return [e for e in self._entries if service is None or e.service == service]

    def clear(self) -> None:
        with self._lock:
            self._entries = []

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
