"""Challenge validation (``acme_challenge_engine.go``, ``acme_challenges.go``).

:func:`accept` (``AcceptChallenge``) refuses a non-pending authorization (malformed ``cannot accept
already validated authorization <id> (<status>)``) and a second challenge type of one authorization
(``only a single challenge within an authorization can be accepted (<type>) in status <s>``), marks the
challenge ``processing`` and starts a worker thread. The worker tries the challenge; a failure stores
the problem in the challenge's ``error`` and retries after 5, 10, 15... seconds; after the sixth failed
attempt the challenge and the authorization are ``invalid``. A success makes both ``valid`` (the
authorization ``expires`` 15 days later).

* http-01: ``GET http://<identifier>/.well-known/acme-challenge/<token>`` (port 80), body of
  ``len(token)+1+len(thumbprint)`` to 512 bytes, trimmed, equal to ``<token>.<thumbprint>``;
* dns-01: the TXT records of ``_acme-challenge.<identifier>`` (``config/acme`` ``dns_resolver`` or the
  system's), one equal to base64url(SHA-256(key authorization));
* tls-alpn-01: TLS to port 443 with ALPN ``acme-tls/1`` and the identifier as server name; the
  certificate self-signed with one DNS name (the identifier) and a critical acmeIdentifier extension
  holding SHA-256(key authorization).

The service's ACME knobs change this: ``challenge_address`` (connect there instead; for dns-01 the DNS
server asked), ``always_valid`` (valid at acceptance, nothing fetched), ``validation_delay`` (seconds
before the first attempt).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.client
import secrets
import socket
import ssl
import struct
import threading
import time
from typing import TYPE_CHECKING, Any

from cryptography import x509

from .context import AcmeContext
from .jws import JwsContext
from .problems import AcmeProblem
from .state import Authorization, Challenge, knobs, owned, rfc3339, writable

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

MAX_RETRY_ATTEMPTS = 5
FAILED_MSG = ("this may occur if the validation target was misconfigured: check that challenge responses are available "
              "at the required locations and retry.")
ACME_IDENTIFIER = x509.ObjectIdentifier("1.3.6.1.5.5.7.1.31")
TIMEOUT = 10.0


def accept(backend: PkiBackend, ctx: AcmeContext, user: JwsContext, authz: Authorization,
           challenge: Challenge) -> tuple[Authorization, Challenge]:
    """``AcceptChallenge``: the (possibly updated) authorization and challenge to answer."""
    name = f"{authz.id}-{challenge.type}"
    acme = writable(backend)
    if name in acme.validations:
        return authz, challenge
    if authz.status != "pending":
        raise AcmeProblem.lead("malformed", f"cannot accept already validated authorization {authz.id} ({authz.status})")
    for other in authz.challenges:
        if other.type != challenge.type and other.status != "pending":
            raise AcmeProblem.lead("malformed", f"only a single challenge within an authorization can be accepted "
                                                f"({other.type}) in status {other.status}")
        if other.status not in ("pending", "processing"):
            raise AcmeProblem.lead("malformed", f"challenge is in invalid state ({challenge.status}) in authorization "
                                                f"{authz.id}")
    authz = owned(acme, "authorizations", authz.id)
    challenge = next(c for c in authz.challenges if c.type == challenge.type)
    if knobs(backend).always_valid:
        _mark_valid(backend, authz, challenge)
        return authz, challenge
    acme.validations[name] = {"thumbprint": user.thumbprint(), "retries": 0}
    challenge.status = "processing"
    job = _Job(backend, authz.id, challenge.type, user.thumbprint(), ctx.config.get("dns_resolver", ""))
    threading.Thread(target=job.run, name=f"acme-validation-{name}", daemon=True).start()
    return authz, challenge


def _mark_valid(backend: PkiBackend, authz: Authorization, challenge: Challenge) -> None:
    now = backend.now()
    challenge.status, challenge.validated, challenge.error = "valid", rfc3339(now), None
    authz.status, authz.expires = "valid", rfc3339(now + datetime.timedelta(days=15))


class _Job:
    """One accepted challenge's worker (``_verifyChallenge`` with its retries)."""

    def __init__(self, backend: PkiBackend, authz_id: str, kind: str, thumbprint: str, resolver: str):
        self.backend, self.authz_id, self.kind = backend, authz_id, kind
        self.thumbprint, self.resolver = thumbprint, resolver
        self.store = backend.state.extra.get("acme")

    def _current(self) -> tuple[Authorization, Challenge] | None:
        """The authorization and challenge now stored, or None when a reset or tidy dropped them."""
        acme = self.backend.state.extra.get("acme")
        authz = acme.authorizations.get(self.authz_id) if acme is not None else None
        if authz is None or authz.status != "pending":
            return None
        challenge = next((c for c in authz.challenges if c.type == self.kind), None)
        if challenge is None or challenge.status not in ("pending", "processing"):
            return None
        return authz, challenge

    def run(self) -> None:
        delay = float(knobs(self.backend).validation_delay or 0)
        if delay:
            time.sleep(delay)
        retries = 0
        while True:
            with self.backend.service.lock:
                found = self._current()
                if found is None:
                    return
                authz, challenge = found
                token, identifier = challenge.token, authz.identifier
            try:
                _check(f"{self.authz_id}-{self.kind}", self.kind, identifier, token, self.thumbprint,
                       self.resolver, knobs(self.backend).challenge_address)
                problem = None
            except AcmeProblem as exc:
                problem = exc
            with self.backend.service.lock:
                if self._current() is None:
                    return
                acme = writable(self.backend)
                authz = owned(acme, "authorizations", self.authz_id)
                challenge = next(c for c in authz.challenges if c.type == self.kind)
                name = f"{self.authz_id}-{self.kind}"
                if problem is None:
                    _mark_valid(self.backend, authz, challenge)
                    acme.validations.pop(name, None)
                    return
                challenge.error = problem.document()
                if retries > MAX_RETRY_ATTEMPTS:
                    challenge.status, authz.status = "invalid", "invalid"
                    acme.validations.pop(name, None)
                    return
            retries += 1
            time.sleep(retries * 5)


def key_authorization(token: str, thumbprint: str) -> str:
    return f"{token}.{thumbprint}"


def _target(host: str, port: int, address: str) -> tuple[str, int]:
    if address:
        where, _, number = address.rpartition(":")
        return where.strip("[]"), int(number)
    return host, port


def _check(name: str, kind: str, identifier: Any, token: str, thumbprint: str, resolver: str, address: str) -> None:
    """One attempt; raises :class:`AcmeProblem` (incorrectResponse) with upstream's text."""
    if kind == "http-01":
        try:
            _http01(identifier, token, thumbprint, address)
        except _Failed as exc:
            raise AcmeProblem.lead("incorrectResponse", f"error validating http-01 challenge {name}: {exc}; {FAILED_MSG}") from None
    elif kind == "dns-01":
        try:
            _dns01(identifier.value, token, thumbprint, resolver, address)
        except _Failed as exc:
            raise AcmeProblem.lead("incorrectResponse", f"error validating dns-01 challenge {name}: {exc}; {FAILED_MSG}") from None
    else:
        try:
            _tls_alpn01(identifier.value, token, thumbprint, address)
        except _Failed as exc:
            raise AcmeProblem.lead("incorrectResponse", f"error validating tls-alpn-01 challenge {name}: {exc}") from None


class _Failed(Exception):
    pass


def _http01(identifier: Any, token: str, thumbprint: str, address: str) -> None:
    host = f"[{identifier.value}]" if identifier.ipv6 else identifier.value
    url = f"http://{host}/.well-known/acme-challenge/{token}"
    where, port = _target(identifier.value, 80, address)
    try:
        conn = http.client.HTTPConnection(where, port, timeout=TIMEOUT)
        conn.request("GET", f"/.well-known/acme-challenge/{token}", headers={"Host": host})
        body = conn.getresponse().read(513)
        conn.close()
    except (OSError, http.client.HTTPException) as exc:
        raise _Failed(f"http-01: failed to fetch path {url}: {exc}") from None
    minimum = len(token) + 1 + len(thumbprint)
    if len(body) > 512:
        raise _Failed(f"http-01: response too large: received {len(body)} > 512 bytes")
    if len(body) < minimum:
        raise _Failed(f"http-01: response too small: received {len(body)} < {minimum} bytes")
    parts = body.decode("utf-8", "replace").strip().split(".")
    if len(parts) != 2:
        raise _Failed(f"invalid authorization: got {len(parts)} parts, expected 2")
    if parts != [token, thumbprint]:
        raise _Failed("key authorization was invalid")


def _digest(token: str, thumbprint: str) -> bytes:
    return hashlib.sha256(key_authorization(token, thumbprint).encode()).digest()


def _nameserver(resolver: str, address: str) -> tuple[str, int]:
    if address or resolver:
        where, _, port = (address or resolver).rpartition(":")
        return where.strip("[]"), int(port)
    try:
        with open("/etc/resolv.conf") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) >= 2 and fields[0] == "nameserver":
                    return fields[1], 53
    except OSError:
        pass
    return "127.0.0.1", 53


def txt_records(name: str, server: tuple[str, int]) -> list[str]:
    """The TXT records of ``name`` asked of DNS server ``server`` over UDP (raises ``OSError``/``ValueError``)."""
    query_id = secrets.randbits(16)
    question = b"".join(bytes([len(label)]) + label.encode("idna") for label in name.rstrip(".").split(".")) + b"\0"
    packet = struct.pack(">HHHHHH", query_id, 0x0100, 1, 0, 0, 0) + question + struct.pack(">HH", 16, 1)
    family = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.settimeout(TIMEOUT)
        sock.sendto(packet, server)
        reply, _ = sock.recvfrom(65535)
    answer_id, flags, questions, answers = struct.unpack(">HHHH", reply[:8])
    if answer_id != query_id:
        raise ValueError("mismatched DNS reply")
    if flags & 0x000F == 3:
        raise ValueError("no such host")
    offset = 12
    for _ in range(questions):
        offset = _skip_name(reply, offset) + 4
    found = []
    for _ in range(answers):
        offset = _skip_name(reply, offset)
        rtype, _, _, length = struct.unpack(">HHIH", reply[offset:offset + 10])
        offset += 10
        data = reply[offset:offset + length]
        offset += length
        if rtype == 16:
            parts, i = [], 0
            while i < len(data):
                parts.append(data[i + 1:i + 1 + data[i]].decode("utf-8", "replace"))
                i += 1 + data[i]
            found.append("".join(parts))
    return found


def _skip_name(data: bytes, offset: int) -> int:
    while True:
        length = data[offset]
        if length == 0:
            return offset + 1
        if length & 0xC0 == 0xC0:
            return offset + 2
        offset += 1 + length


def _dns01(domain: str, token: str, thumbprint: str, resolver: str, address: str) -> None:
    name = "_acme-challenge." + domain
    try:
        records = txt_records(name, _nameserver(resolver, address))
    except (OSError, ValueError, IndexError, struct.error) as exc:
        raise _Failed(f"dns-01: failed to lookup TXT records for domain ({name}) via resolver {resolver}: "
                      f"lookup {name}: {exc}") from None
    expected = base64.urlsafe_b64encode(_digest(token, thumbprint)).rstrip(b"=").decode()
    if expected not in records:
        raise _Failed(f"dns-01: challenge failed against {len(records)} records")


def _tls_alpn01(domain: str, token: str, thumbprint: str, address: str) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["acme-tls/1"])
    where, port = _target(domain, 443, address)
    try:
        raw = socket.create_connection((where, port), timeout=TIMEOUT)
    except OSError as exc:
        raise _Failed(f"tls-alpn-01: failed to dial host: {exc}") from None
    try:
        with context.wrap_socket(raw, server_hostname=domain) as conn:
            protocol, der = conn.selected_alpn_protocol(), conn.getpeercert(binary_form=True)
    except (OSError, ssl.SSLError) as exc:
        raise _Failed(f"tls-alpn-01: failed to perform handshake: {exc}") from None
    if protocol != "acme-tls/1":
        raise _Failed(f"tls-alpn-01: failed to perform handshake: server under test negotiated unexpected ALPN "
                      f"protocol {protocol or ''}")
    _check_alpn_certificate(x509.load_der_x509_certificate(der), domain, _digest(token, thumbprint))


def _check_alpn_certificate(cert: x509.Certificate, domain: str, digest: bytes) -> None:
    def fail(text: str) -> _Failed:
        return _Failed(f"tls-alpn-01: failed to perform handshake: {text}")
    if cert.subject.public_bytes() != cert.issuer.public_bytes():
        raise fail("server under test returned a non-self-signed certificate: invalid subject <-> issuer match")
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = list(sans)
    except x509.ExtensionNotFound:
        names = []
    if len(names) != 1 or not isinstance(names[0], x509.DNSName):
        raise fail("server under test returned a certificate with incorrect SANs")
    if names[0].value.lower() != domain.lower():
        raise fail(f"server under test returned a certificate with unexpected identifier: {names[0].value}")
    found = [e for e in cert.extensions if e.oid == ACME_IDENTIFIER]
    if not found:
        raise fail("server under test returned a certificate without the required acmeIdentifier extension")
    if len(found) > 1:
        raise fail("server under test returned a certificate with multiple acmeIdentifier extensions")
    if not found[0].critical:
        raise fail("server under test returned a certificate with an acmeIdentifier extension marked non-Critical")
    value = found[0].value.value
    if len(value) < 2 or value[0] != 0x04 or value[1] != len(value) - 2 or value[2:] != digest:
        raise fail("server under test returned a certificate with an invalid key authorization (sha256 key "
                   "authorization was invalid)")
