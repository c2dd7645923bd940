"""A small JSON-over-HTTP client of a real Vault/OpenBao or Nomad server (standard library only)."""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    """One response: ``status``, raw ``body`` bytes, ``headers`` (lower-case names)."""

    status: int
    body: bytes
    headers: dict[str, str]

    def json(self) -> Any:
        """The body parsed as JSON (``None`` for an empty body)."""
        return json.loads(self.body) if self.body.strip() else None

    def data(self) -> dict[str, Any]:
        """A Vault response's ``data`` object (``{}`` when absent)."""
        payload = self.json()
        return (payload or {}).get("data") or {} if isinstance(payload, dict) else {}


class UpstreamError(RuntimeError):
    """A request to the upstream server answered with an unexpected status (text: method, path,
    status and the server's errors)."""

    def __init__(self, method: str, path: str, answer: Answer):
        self.answer = answer
        try:
            errors = answer.json().get("errors")
        except (ValueError, AttributeError):
            errors = None
        detail = "; ".join(str(e).strip() for e in errors) if errors else answer.body[:500].decode("utf-8", "replace")
        super().__init__(f"{method} {path}: HTTP {answer.status}: {detail}")


class Client:
    """Requests to ``url`` (``http://host:port`` or ``https://...``, no ``/v1``) with ``token`` sent in
    the ``token_header`` (``X-Vault-Token`` or ``X-Nomad-Token``). ``cafile`` verifies HTTPS."""

    def __init__(self, url: str, token: str, token_header: str = "X-Vault-Token", cafile: str | None = None,
                 timeout: float = 60.0):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"expected an http:// or https:// URL, got {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.token_header = token_header
        self._https = parsed.scheme == "https"
        self._netloc = parsed.netloc
        self._context = ssl.create_default_context(cafile=cafile) if self._https else None
        self.timeout = timeout

    def connection(self) -> http.client.HTTPConnection:
        """A new connection to the server (the caller closes it)."""
        if self._https:
            return http.client.HTTPSConnection(self._netloc, timeout=self.timeout, context=self._context)
        return http.client.HTTPConnection(self._netloc, timeout=self.timeout)

    def request(self, method: str, path: str, body: Any = None, token: bool = True) -> Answer:
        """Send ``method path`` (``path`` starts with ``/``) with ``body`` as JSON (a PATCH as JSON merge
        patch, as Vault expects); returns the Answer."""
        content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
        headers = {"Content-Type": content_type} if body is not None else {}
        if token and self.token:
            headers[self.token_header] = self.token
        conn = self.connection()
        try:
            conn.request(method, path, None if body is None else json.dumps(body).encode(), headers)
            resp = conn.getresponse()
            return Answer(resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()})
        finally:
            conn.close()

    def call(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 204)) -> Answer:
        """:meth:`request`, raising :class:`UpstreamError` unless the status is in ``ok``."""
        answer = self.request(method, path, body)
        if answer.status not in ok:
            raise UpstreamError(method, path, answer)
        return answer

    def keys(self, path: str) -> list[str]:
        """``LIST path``'s ``data.keys`` (``[]`` for Vault's 404 of an empty list)."""
        answer = self.call("LIST", path, ok=(200, 404))
        return list(answer.data().get("keys") or []) if answer.status == 200 else []
