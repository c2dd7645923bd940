"""Runs ``acme`` family sequences (:mod:`.acme_gen`) against a real ``bao server -dev`` and the double.

Per sequence each side gets a fresh PKI mount ``a<n>`` set up as a user sets it up for ACME (tuned
for ACME's headers, an EC root, a role ``web``, ``config/cluster`` ``path``, ``config/acme``
enabled; the double reset first); set-up is not compared. Each step becomes one HTTP request per
side, built from that side's own state (:class:`AcmeSide`); a few uncompared requests keep that state
(a fresh nonce before each signed request, the authorizations of a new order, the certificate of a
finalized order).

http-01 validation: both servers fetch ``http://localhost:80/.well-known/acme-challenge/<token>``
(the double with its knobs off, as bao does), answered by :class:`Responder` on ``127.0.0.1:80`` when
the port can be bound (root; held under the contract suite's port-80 lock for the runner's life),
so orders for ``localhost`` can become valid and be finalized.

Answers are compared by :func:`.acme_compare.compare`.
"""

from __future__ import annotations

import fcntl
import http.server
import itertools
import math
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import parity_harness as h
import requests as http_requests
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from pytest_schedpki.acme.client import b64url, thumbprint_of

from . import acme_jws as J
from .acme_compare import compare, shown_body
from .acme_gen import AcmeStep
from .runner import Outcome

TUNE = {"max_lease_ttl": "87600h", "passthrough_request_headers": ["If-Modified-Since"],
        "allowed_response_headers": ["Last-Modified", "Location", "Replay-Nonce", "Link"]}
PORT80_LOCK = os.path.join(tempfile.gettempdir(), "schedpki-acme-port80.lock")
AWAIT_SECONDS = 12.0
_COUNTER = itertools.count(1)


class Responder:
    """http-01 answers on 127.0.0.1:80: ``answers[token] = key authorization``. ``bound`` is False
    when the port could not be had (then nothing validates on either side)."""

    def __init__(self):
        self.answers: dict[str, str] = {}
        self.bound = False
        self._lock_file = open(PORT80_LOCK, "w")  # noqa: SIM115 - held for the responder's life
        fcntl.flock(self._lock_file, fcntl.LOCK_EX)
        answers = self.answers

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                body = answers.get(self.path.rsplit("/", 1)[-1])
                self.send_response(200 if body else 404)
                self.end_headers()
                self.wfile.write((body or "no").encode())

            def log_message(self, *args):
                pass

        self.httpd = None
        if os.geteuid() != 0:  # not root: port 80 cannot be had, nothing validates on either side
            return
        deadline = time.monotonic() + 60  # other tests bind port 80 without the lock: wait for it
        while self.httpd is None:
            try:
                self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 80), Handler)
            except OSError:
                if time.monotonic() > deadline:
                    print("acme family: 127.0.0.1:80 stayed taken; http-01 validates nowhere", flush=True)
                    return
                time.sleep(0.5)
        self.bound = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
        fcntl.flock(self._lock_file, fcntl.LOCK_UN)
        self._lock_file.close()


@dataclass
class AcmeSide:
    """One server's view of a sequence: its base URL, mount, and what it handed out, by index."""

    side: h.Side
    mount: str
    accounts: dict[int, str] = field(default_factory=dict)  # key index -> kid URL
    orders: list[tuple[int, str, dict]] = field(default_factory=list)  # (key, URL, last order JSON)
    authzs: list[tuple[int, str]] = field(default_factory=list)
    challenges: list[tuple[int, str]] = field(default_factory=list)
    certs: list[tuple[int, bytes, Any]] = field(default_factory=list)  # (key, DER, certified key)
    eabs: list[tuple[str, str]] = field(default_factory=list)
    used_nonce: str | None = None

    def base(self, prefix: str = "acme/") -> str:
        return f"{self.side.url}/v1/{self.mount}/{prefix}"

    def nonce(self) -> str | None:
        resp = self.side.request("HEAD", f"/v1/{self.mount}/acme/new-nonce", token=None)
        return resp.headers.get("Replay-Nonce")


class AcmeRunner:
    """Both servers: ``bao_url`` and a started :class:`pytest_schedpki.Double` (or, in self-check
    mode, ``double_url`` of a second real server and ``double=None``)."""

    def __init__(self, bao_url: str, double: Any = None, double_url: str | None = None):
        self.bao_url = bao_url
        self.double = double
        self.double_url = double_url or double.secrets_url
        self.responder = Responder()

    def close(self) -> None:
        self.responder.close()

    # -- set-up -----------------------------------------------------------------------------------
    def setup(self) -> tuple[AcmeSide, AcmeSide]:
        if self.double is not None:
            self.double.reset()
            self.double.pop_handler_errors()
        mount = f"a{next(_COUNTER)}"
        sides = (AcmeSide(h.Side("bao", self.bao_url), mount), AcmeSide(h.Side("double", self.double_url), mount))
        for s in sides:
            base = f"{s.side.url}/v1/{mount}"
            for method, path, body in (
                    ("POST", f"sys/mounts/{mount}", {"type": "pki"}), ("POST", f"sys/mounts/{mount}/tune", TUNE),
                    ("POST", f"{mount}/root/generate/internal", {"common_name": "Diff ACME Root", "key_type": "ec"}),
                    ("POST", f"{mount}/roles/web", {"allow_any_name": True, "key_type": "any", "ttl": "1h"}),
                    ("POST", f"{mount}/config/cluster", {"path": base, "aia_path": base}),
                    ("POST", f"{mount}/config/acme", {"enabled": True})):
                resp = s.side.request(method, f"/v1/{path}", json=body)
                assert resp.status_code in (200, 204), (s.side.name, path, resp.status_code, resp.text)
        return sides

    def teardown(self, sides: tuple[AcmeSide, AcmeSide]) -> None:
        targets = sides[:1] if self.double is not None else sides
        for s in targets:
            try:
                s.side.request("DELETE", f"/v1/sys/mounts/{s.mount}")
            except http_requests.RequestException:
                pass

    def run(self, steps: list[AcmeStep], stop_at_first: bool = False) -> list[Outcome]:
        """Set up, send each step to both sides, compare; tear the real mounts down."""
        sides = self.setup()
        outcomes: list[Outcome] = []
        try:
            for step in steps:
                outcome = self.exchange(sides, step)
                outcomes.append(outcome)
                if stop_at_first and not outcome.agree:
                    break
        finally:
            self.teardown(sides)
            for s in sides:
                s.side.session.close()
        return outcomes

    def exchange(self, sides: tuple[AcmeSide, AcmeSide], step: AcmeStep) -> Outcome:
        started = time.monotonic()
        answers, sent = [], ""
        for s in sides:
            resp, text = self.send(s, step)
            answers.append(resp)
            sent = sent or text
        tolerance = math.ceil(time.monotonic() - started) + 2
        problems = compare(sides, answers[0], answers[1], tolerance)
        errors = [str(e) for e in self.double.pop_handler_errors()] if self.double is not None else []
        for s, resp in zip(sides, answers, strict=True):
            self.remember(s, step, resp)
        return Outcome(step, sent, answers[0], answers[1], problems, handler_errors=errors)

    # -- building and sending one step -------------------------------------------------------------
    def signed(self, s: AcmeSide, step: AcmeStep, url: str, payload: Any, key_index: int | None = None,
               force_jwk: bool = False, private_key: Any = None) -> tuple[http_requests.Response, str]:
        """POST the step's JWS (its variant applied) of ``payload`` to ``url``, signed by account key
        ``key_index`` (default the step's) with its ``kid`` when the side has that account, or by
        ``private_key`` with its ``jwk``."""
        index = step.key if key_index is None else key_index
        key = private_key or J.KEYS[index]
        kid = None if (force_jwk or private_key is not None) else s.accounts.get(index)
        if step.jws == "no_nonce":
            nonce = None
        elif step.jws == "bogus_nonce":
            nonce = J.BOGUS_NONCE
        elif step.jws == "replayed_nonce" and s.used_nonce:
            nonce = s.used_nonce
        else:
            nonce = s.nonce()
        s.used_nonce = nonce
        body = J.jws(step.jws, key, url, payload, nonce, kid, s.base() + "new-nonce",
                     s.base() + f"account/{J.ZERO_UUID}")
        data = {"not_json": b"{not json", "empty_body": b""}.get(step.jws)
        raw = data if data is not None else __import__("json").dumps(body).encode()
        ctype = "application/json" if step.jws == "json_content_type" else "application/jose+json"
        resp = s.side.request("POST", url[len(s.side.url):], data=raw, headers={"Content-Type": ctype}, token=None)
        return resp, f"POST {url.replace(s.side.url, '<server>')} {step!r} payload={payload!r}"[:1500]

    def send(self, s: AcmeSide, step: AcmeStep) -> tuple[http_requests.Response, str]:
        kind = step.kind
        if kind == "directory":
            path = f"/v1/{s.mount}/{step.param('prefix')}directory"
            return s.side.request("GET", path, token=None), f"GET {path}"
        if kind == "nonce":
            path = f"/v1/{s.mount}/acme/new-nonce"
            return s.side.request(step.method, path, token=None), f"{step.method} {path}"
        if kind == "new_eab":
            role = step.param("role")
            path = f"/v1/{s.mount}/" + (f"roles/{role}/" if role else "") + "acme/new-eab"
            return s.side.request("POST", path), f"POST {path}"
        if kind == "config_acme":
            body = {"enabled": step.param("enabled"), "eab_policy": step.param("eab_policy")}
            return s.side.request("POST", f"/v1/{s.mount}/config/acme", json=body), f"POST config/acme {body}"
        if kind == "new_account":
            url = s.base(step.param("prefix", "acme/")) + "new-account"
            payload: dict[str, Any] = {}
            if step.param("contact") is not None:
                payload["contact"] = step.param("contact")
            if step.param("tos", True) is not None:
                payload["termsOfServiceAgreed"] = step.param("tos", True)
            if step.param("only_existing"):
                payload["onlyReturnExisting"] = True
            eab = s.eabs[step.index % len(s.eabs)] if s.eabs else None
            binding = J.eab_binding(step.param("eab", "none"), J.KEYS[step.key], url, eab)
            if binding is not None:
                payload["externalAccountBinding"] = binding
            return self.signed(s, step, url, payload, force_jwk=True)
        if kind == "new_order":
            url = s.base(step.param("prefix", "acme/")) + "new-order"
            idents = step.param("identifiers", (("dns", "localhost"),))
            payload = {} if idents is None else {"identifiers": [{"type": t, "value": v} for t, v in idents]}
            if step.param("not_after"):
                payload["notAfter"] = step.param("not_after")
            return self.signed(s, step, url, payload)
        if kind == "account_update":
            url = s.accounts.get(step.key) or s.base() + f"account/{J.ZERO_UUID}"
            payload = {"contact": {"contact": ["mailto:new@example.com"]}, "deactivate": {"status": "deactivated"},
                       "empty": {}, "bogus_status": {"status": "valid"}, "post_as_get": None,
                       "contact_bad": {"contact": "mailto:x"}}[step.param("change")]
            return self.signed(s, step, url, payload)
        if kind == "key_change":
            url = s.base() + "key-change"
            new = J.KEYS[step.param("new_key")]
            inner = J.key_change_inner(step.param("inner"), new, J.KEYS[step.key], url,
                                       s.accounts.get(step.key, s.base() + f"account/{J.ZERO_UUID}"))
            return self.signed(s, step, url, inner)
        if kind == "revoke":
            return self.revoke(s, step)
        url, payload, key_index = self.object_request(s, step)
        return self.signed(s, step, url, payload, key_index)

    def object_request(self, s: AcmeSide, step: AcmeStep) -> tuple[str, Any, int]:
        """The URL, payload and signing key of get_order/get_authz/challenge/await/finalize/get_cert."""
        missing = s.base() + f"order/{J.ZERO_UUID}"
        if step.kind in ("get_authz", "await"):
            key, url = s.authzs[step.index % len(s.authzs)] if s.authzs else (step.key, s.base() + f"authorization/{J.ZERO_UUID}")
            if step.kind == "await":
                self.wait_validation(s, url, key)
            return url, None, key if step.kind == "await" else step.key
        if step.kind == "challenge":
            key, url = s.challenges[step.index % len(s.challenges)] if s.challenges else (step.key, s.base() + f"challenge/{J.ZERO_UUID}/http-01")
            return url, {}, step.key
        order = s.orders[step.index % len(s.orders)] if s.orders else (step.key, missing, {})
        if step.kind == "finalize":
            idents = order[2].get("identifiers") or []
            names = [i.get("value", "") for i in idents if i.get("type") == "dns"]
            ips = [i.get("value", "") for i in idents if i.get("type") == "ip"]
            value = J.csr(step.param("csr", "match"), names, ips, J.KEYS[step.key])
            url = order[2].get("finalize") or missing + "/finalize"
            return url, ({} if value is None else {"csr": value}), step.key
        if step.kind == "get_cert":
            return order[2].get("certificate") or missing + "/cert", None, step.key
        return order[1], None, step.key

    def revoke(self, s: AcmeSide, step: AcmeStep) -> tuple[http_requests.Response, str]:
        url = s.base() + "revoke-cert"
        by = step.param("by")
        owner, der, cert_key = s.certs[step.index % len(s.certs)] if s.certs else (0, b"\x30\x00", J.CERT_KEYS[0])
        payload: dict[str, Any] = {"certificate": b64url(b"garbage" if by == "garbage" else der)}
        if step.param("reason") is not None:
            payload["reason"] = step.param("reason")
        if by == "cert_key":
            return self.signed(s, step, url, payload, private_key=cert_key)
        return self.signed(s, step, url, payload, owner if by == "account" else None)

    def wait_validation(self, s: AcmeSide, url: str, key: int) -> None:
        """Poll (uncompared) until no challenge of the authorization is ``processing`` (bounded)."""
        deadline = time.monotonic() + AWAIT_SECONDS
        while time.monotonic() < deadline:
            resp, _ = self.signed(s, AcmeStep("get_authz", key), url, None, key)
            body = h.body_json(resp) or {}
            if resp.status_code != 200 or not any(c.get("status") == "processing" for c in body.get("challenges", [])):
                return
            time.sleep(0.5)

    # -- what each side handed out -----------------------------------------------------------------
    def remember(self, s: AcmeSide, step: AcmeStep, resp: http_requests.Response) -> None:
        body = h.body_json(resp)
        if step.kind == "new_eab" and resp.status_code == 200:
            data = body["data"]
            s.eabs.append((data["id"], data["key"]))
        if step.kind == "new_account" and resp.status_code in (200, 201) and resp.headers.get("Location") \
                and not step.param("only_existing"):
            s.accounts[step.key] = resp.headers["Location"]
        if step.kind == "key_change" and resp.status_code == 200 and step.key in s.accounts:
            s.accounts[step.param("new_key")] = s.accounts.pop(step.key)
        if step.kind == "new_order" and resp.status_code == 201 and isinstance(body, dict):
            s.orders.append((step.key, resp.headers.get("Location", ""), body))
            for url in body.get("authorizations") or []:
                s.authzs.append((step.key, url))
                got, _ = self.signed(s, AcmeStep("get_authz", step.key), url, None, step.key)
                for chall in (h.body_json(got) or {}).get("challenges", []):
                    if chall.get("type") == "http-01":
                        s.challenges.append((step.key, chall["url"]))
                        self.responder.answers[chall["token"]] = f"{chall['token']}.{thumbprint_of(J.KEYS[step.key])}"
        if step.kind in ("get_order", "finalize") and resp.status_code == 200 and isinstance(body, dict):
            self._order_update(s, step, body)

    def _order_update(self, s: AcmeSide, step: AcmeStep, body: dict) -> None:
        for i, (key, url, _) in enumerate(s.orders):
            if body.get("finalize") and body["finalize"].startswith(url):
                s.orders[i] = (key, url, body)
                if step.kind == "finalize" and body.get("certificate"):
                    got, _ = self.signed(s, AcmeStep("get_cert", key), body["certificate"], None, key)
                    certs = _certificates(got.content) if got.status_code == 200 else []
                    if certs:
                        der = certs[0].public_bytes(Encoding.DER)
                        s.certs.append((key, der, J.cert_key_of(step.param("csr", "match"), J.KEYS[step.key])))


def _certificates(pem: bytes) -> list:
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:
        return []


__all__ = ["AcmeRunner", "Responder", "shown_body"]
