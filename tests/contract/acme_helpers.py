"""Helpers of the ACME client contract tests: a PKI mount set up for ACME over plain HTTP (as a user
does it on OpenBao), the tiny HTTP server that answers http-01 challenges, and the revocation checks
(CRL and OCSP parsed with ``cryptography``).

On a real ``bao server -dev`` the http-01 challenge is fetched from port 80 of the identifier
(OpenBao ``builtin/logical/pki/acme_challenges.go`` ``ValidateHTTP01Challenge``), so the parity
tests bind ``127.0.0.1:80`` (they need root; skipped otherwise) under an exclusive file lock
(:func:`port80`), which serialises them across xdist workers and concurrent sessions. The double
is told where to connect instead with its ``challenge_address`` knob, so its tests bind any free port.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.server
import os
import socket
import tempfile
import threading
import time

import pytest
import requests
from contract_helpers import h
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp

#: the mount tune that lets ACME's headers through bao's response filter (OpenBao's ACME docs)
ACME_TUNE = {"max_lease_ttl": "87600h", "passthrough_request_headers": ["If-Modified-Since"],
             "allowed_response_headers": ["Last-Modified", "Location", "Replay-Nonce", "Link"]}
PORT80_LOCK = os.path.join(tempfile.gettempdir(), "schedpki-acme-port80.lock")


def call(url: str, method: str, path: str, body: dict | None = None, ok=(200, 204)) -> dict:
    """``method /v1/path`` with the root token; asserts the status is in ``ok``; the JSON or ``{}``."""
    resp = requests.request(method, f"{url}/v1/{path}", json=body, headers={"X-Vault-Token": h.ROOT_TOKEN}, timeout=30)
    assert resp.status_code in ok, (method, path, resp.status_code, resp.text)
    return resp.json() if resp.content else {}


def setup_acme_mount(url: str, mount: str, eab_policy: str = "not-required") -> dict:
    """A PKI mount at ``mount`` ready for ACME: tuned for ACME's headers, an EC root, ``config/cluster``
    (``path``, ``aia_path``), ``config/urls`` (CRL and OCSP) and ``config/acme`` enabled with
    ``eab_policy``. Returns the root's ``data`` (``certificate``, ``issuer_id``...)."""
    call(url, "POST", f"sys/mounts/{mount}", {"type": "pki"})
    call(url, "POST", f"sys/mounts/{mount}/tune", ACME_TUNE)
    root = call(url, "POST", f"{mount}/root/generate/internal",
                {"common_name": "ACME Root", "ttl": "87600h", "key_type": "ec"})["data"]
    base = f"{url}/v1/{mount}"
    call(url, "POST", f"{mount}/config/cluster", {"path": base, "aia_path": base})
    call(url, "POST", f"{mount}/config/urls", {"ocsp_servers": [f"{base}/ocsp"],
                                               "crl_distribution_points": [f"{base}/crl"]})
    call(url, "POST", f"{mount}/config/acme", {"enabled": True, "eab_policy": eab_policy})
    return root


class ChallengeServer:
    """Answers ``GET /.well-known/acme-challenge/<token>`` with the key authorization set by
    :meth:`serve` (404 for any other token); records ``(path, Host header)`` of every request in
    ``seen``. Bound to ``127.0.0.1:port`` (0: a free port)."""

    def __init__(self, port: int = 0):
        self.answers: dict[str, str] = {}
        self.seen: list[tuple[str, str]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                outer.seen.append((self.path, self.headers.get("Host", "")))
                prefix = "/.well-known/acme-challenge/"
                body = outer.answers.get(self.path[len(prefix):]) if self.path.startswith(prefix) else None
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write((body or "not found").encode())

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChallengeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def serve(self, token: str, key_authorization: str) -> None:
        self.answers[token] = key_authorization


@contextlib.contextmanager
def port80(wait: float = 60.0):
    """Exclusive use of ``127.0.0.1:80``: a file lock shared by every process using this helper, then
    the port itself free (other tests bind it without the lock: waits up to ``wait`` seconds for it,
    as tests/parity/test_parity_acme_issuance.py does); skips the test when not root or still taken."""
    if os.geteuid() != 0:
        pytest.skip("bao validates http-01 on port 80 of the identifier: binding it needs root")
    with open(PORT80_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not wait_for_port80(wait):
                pytest.skip("127.0.0.1:80 stayed taken by another process")
            yield 80
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def wait_for_port80(wait: float) -> bool:
    """Whether 127.0.0.1:80 could be bound within ``wait`` seconds (the probe is closed again)."""
    deadline = time.monotonic() + wait
    while True:
        probe = socket.socket()
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", 80))
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        finally:
            probe.close()


def crl_revoked_serials(url: str, mount: str) -> set[int]:
    """Serials on the mount's CRL (``GET <mount>/crl``, DER, parsed with cryptography)."""
    resp = requests.get(f"{url}/v1/{mount}/crl", timeout=30)
    assert resp.status_code == 200, resp.text
    return {entry.serial_number for entry in x509.load_der_x509_crl(resp.content)}


def ocsp_status(url: str, mount: str, cert: x509.Certificate, issuer: x509.Certificate) -> ocsp.OCSPResponse:
    """The mount's OCSP answer about ``cert`` (POST ``application/ocsp-request``, SHA-1 CertID as
    clients send it), checked to be signed by ``issuer``."""
    der = ocsp.OCSPRequestBuilder().add_certificate(cert, issuer, hashes.SHA1()).build().public_bytes(
        serialization.Encoding.DER)
    resp = requests.post(f"{url}/v1/{mount}/ocsp", data=der, headers={"Content-Type": "application/ocsp-request"},
                         timeout=30)
    assert resp.status_code == 200 and resp.headers["Content-Type"] == "application/ocsp-response", resp.text
    answer = ocsp.load_der_ocsp_response(resp.content)
    assert answer.response_status == ocsp.OCSPResponseStatus.SUCCESSFUL
    issuer.public_key().verify(answer.signature, answer.tbs_response_bytes,
                               *_verify_args(issuer, answer.signature_hash_algorithm))
    return answer


def _verify_args(issuer: x509.Certificate, algorithm) -> tuple:
    from cryptography.hazmat.primitives.asymmetric import ec, padding

    key = issuer.public_key()
    if isinstance(key, ec.EllipticCurvePublicKey):
        return (ec.ECDSA(algorithm),)
    return (padding.PKCS1v15(), algorithm)
