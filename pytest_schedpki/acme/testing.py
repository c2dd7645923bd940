"""Setting a PKI mount up for ACME and answering http-01 challenges, for tests.

:func:`enable_acme` does over HTTP what an operator does on OpenBao: tune the mount so the ACME
headers pass (``allowed_response_headers`` Last-Modified, Location, Replay-Nonce, Link;
``passthrough_request_headers`` If-Modified-Since), set ``config/cluster`` ``path``/``aia_path`` to the
mount's URL and write ``config/acme`` (``enabled: true`` plus the given fields).
:class:`Http01Responder` serves ``/.well-known/acme-challenge/<token>`` from a local port; point the
double's ``challenge_address`` knob at :attr:`Http01Responder.address` so validation needs no root.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.request
from typing import Any

ACME_RESPONSE_HEADERS = ["Last-Modified", "Location", "Replay-Nonce", "Link"]


def _send(url: str, token: str, body: dict[str, Any]) -> None:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"X-Vault-Token": token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30):
        pass


def enable_acme(secrets_url: str, mount: str = "pki", token: str = "root", **config: Any) -> str:
    """Tune ``mount``, set its ``config/cluster`` and enable ``config/acme`` (extra fields: ``config``,
    e.g. ``eab_policy="new-account-required"``); returns the directory URL ``<mount URL>/acme/directory``.
    Raises ``urllib.error.HTTPError`` with the server's answer when a step is refused."""
    base = f"{secrets_url.rstrip('/')}/v1/{mount.strip('/')}"
    _send(f"{secrets_url.rstrip('/')}/v1/sys/mounts/{mount.strip('/')}/tune", token,
          {"allowed_response_headers": ACME_RESPONSE_HEADERS, "passthrough_request_headers": ["If-Modified-Since"]})
    _send(f"{base}/config/cluster", token, {"path": base, "aia_path": base})
    _send(f"{base}/config/acme", token, {"enabled": True, **config})
    return f"{base}/acme/directory"


class Http01Responder:
    """A local HTTP server answering ``GET /.well-known/acme-challenge/<token>`` with the key
    authorization registered by :meth:`serve` (404 for others). ``port`` 0 picks a free port; use as a
    context manager or call :meth:`stop`. ``requests`` lists the tokens asked for, in order."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.answers: dict[str, str] = {}
        self.requests: list[str] = []
        responder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                token = self.path.rsplit("/", 1)[-1]
                responder.requests.append(token)
                body = responder.answers.get(token) if self.path.startswith("/.well-known/acme-challenge/") else None
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write((body or "not found").encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        """``host:port`` the server listens on (the value of the ``challenge_address`` knob)."""
        host, port = self.server.server_address[:2]
        return f"{host}:{port}"

    def serve(self, token: str, key_authorization: str) -> None:
        """Answer ``token`` with ``key_authorization``."""
        self.answers[token] = key_authorization

    def stop(self) -> None:
        """Stop answering and close the listening socket (also on leaving the ``with`` block)."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Http01Responder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
