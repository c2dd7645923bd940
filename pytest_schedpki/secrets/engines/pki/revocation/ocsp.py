"""The OCSP responder: ``GET <mount>/ocsp/<base64 DER request>`` and ``POST``/``PUT <mount>/ocsp`` (body:
the DER request, ``Content-Type: application/ocsp-request``), both unauthenticated.

Behaviour of OpenBao 2.7.2 (``path_ocsp.go``, ``ocspHandler``), checked against the real server; every
answer has ``Content-Type: application/ocsp-response`` (and the service's ``Cache-Control: no-store``):

====================================================================  ======  ================================
condition (in this order)                                             status  body
====================================================================  ======  ================================
``config/crl`` ``ocsp_disable``                                       401     ``unauthorized``
GET: ``req`` empty, 2048 characters or more, or not standard base64   400     ``malformedRequest``
POST: no ``application/ocsp-request`` body (another Content-Type: the
service decoded it as JSON/form), or 2048 bytes or more               400     ``malformedRequest``
not one OCSP request (trailing bytes, no certificate, a CertID hash
other than SHA-1/256/384/512)                                         400     ``malformedRequest``
an issuer of the mount with a key matches the CertID's name and key
hashes and has the ``ocsp-signing`` usage                             200     signed by it: ``revoked`` when
                                                                              the serial is revoked (the
                                                                              revocation time, no reason),
                                                                              else ``good`` - whether or not
                                                                              the mount knows the serial
only matching issuers without ``ocsp-signing``                        401     ``unauthorized``
no issuer matches: the default issuer (with a key and
``ocsp-signing``) signs an ``unknown``; without one                   200 /   ``unknown`` / ``unauthorized``
                                                                      401
the signing key is ed25519 (x/crypto/ocsp signs RSA and ECDSA only)   500     ``internalError``
====================================================================  ======  ================================

For a revoked serial only the issuer its revocation is attributed to is tried (a request naming another
issuer of the mount gets the default issuer's ``unknown``). ``thisUpdate`` is the double's clock
(:meth:`PkiBackend.now`), ``nextUpdate`` that plus ``config/crl`` ``ocsp_expiry`` (none when 0);
``producedAt`` is set by cryptography from the wall clock (see docs/divergences.md). The response's
CertID, responder id and signature: :mod:`..codecs.ocsp`.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from functools import partial
from typing import TYPE_CHECKING

from cryptography.x509 import ocsp

from pytest_schedpki.secrets.framework.fields import STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import issuer_key
from ..codecs.ocsp import (
    INTERNAL_ERROR,
    MALFORMED,
    UNAUTHORIZED,
    MalformedRequest,
    OcspQuery,
    UnsupportedSigner,
    parse_request,
    request_matches,
    sign_response,
)
from ..model import Issuer, serial_to_hex
from .crl import parse_duration_second

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

OCSP_RESPONSE = "application/ocsp-response"
MAXIMUM_REQUEST_SIZE = 2048  # path_ocsp.go maximumRequestSize: a request of this size or more is refused


def _answer(body: bytes, status: int) -> LogicalResponse:
    return LogicalResponse(raw=(body, OCSP_RESPONSE), status=status)


def _der_request(req: LogicalRequest) -> bytes:
    """``fetchDerEncodedRequest``: the DER request of a GET (base64 ``req``) or a POST (the raw body);
    raises :class:`MalformedRequest`."""
    if req.operation == "read":
        text = req.data.get("req") or ""
        if not text:
            raise MalformedRequest("no base64 encoded ocsp request was found")
        if len(text) >= MAXIMUM_REQUEST_SIZE:
            raise MalformedRequest("request is too large")
        try:  # Go's StdEncoding: padding required, line breaks skipped
            return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MalformedRequest(str(exc)) from None
    body = req.http_body
    if body is None:
        raise MalformedRequest("no data in request")
    if len(body) >= MAXIMUM_REQUEST_SIZE:
        raise MalformedRequest("request is too large")
    return body


def _revocation(backend: PkiBackend, serial: int) -> tuple[datetime.datetime | None, str]:
    """``getOcspStatus``: ``(revocation time, issuer id of the revocation)`` of ``serial`` (read as Go's
    ``big.Int.Bytes``: its absolute value), ``(None, "")`` when it is not revoked."""
    if serial == 0:
        return None, ""
    record = backend.state.certs.get(serial_to_hex(abs(serial)))
    if record is None or record.revocation_time is None:
        return None, ""
    return record.revocation_time, record.issuer_id


def _usable(backend: PkiBackend, issuer_id: str) -> Issuer | None:
    """``getOcspIssuerParsedBundle``: the issuer when it exists and has its key."""
    issuer = backend.state.issuers.get(issuer_id)
    if issuer is None or issuer_key(backend.state, issuer) is None:
        return None
    return issuer


def _matching_issuer(backend: PkiBackend, query: OcspQuery, revoked_by: str) -> Issuer | str:
    """``lookupOcspIssuer``: the issuer to sign with, or ``"unauthorized"`` (matched only without the
    ``ocsp-signing`` usage) / ``"unknown"`` (no match)."""
    candidates = [revoked_by] if revoked_by else sorted(backend.state.issuers)
    matched_without_usage = False
    for issuer_id in candidates:
        issuer = _usable(backend, issuer_id)
        if issuer is None or not request_matches(issuer.certificate, query):
            continue
        if "ocsp-signing" not in issuer.usage.split(","):
            matched_without_usage = True
            continue
        return issuer
    return "unauthorized" if matched_without_usage else "unknown"


def _signature_bits(issuer: Issuer) -> int:
    name = issuer.revocation_signature_algorithm
    return next((b for b in (256, 384, 512) if str(b) in name), 0)


def _signed(backend: PkiBackend, issuer: Issuer, query: OcspQuery, status: ocsp.OCSPCertStatus,
            revoked_at: datetime.datetime | None = None) -> LogicalResponse:
    """``genResponse``: 200 with the response signed by ``issuer`` (500 ``internalError`` for an
    ed25519 key or an ``ocsp_expiry`` that does not parse)."""
    now = backend.now()
    try:
        expiry = parse_duration_second(str(backend.state.config_crl.get("ocsp_expiry", "12h")))
        next_update = now + datetime.timedelta(seconds=expiry) if expiry > 0 else None
        body = sign_response(issuer.certificate, issuer_key(backend.state, issuer).private_key, query, status,
                             now, next_update, revoked_at, _signature_bits(issuer))
    except (UnsupportedSigner, ValueError, OverflowError):
        return _answer(INTERNAL_ERROR, 500)
    return _answer(body, 200)


def _unknown(backend: PkiBackend, query: OcspQuery) -> LogicalResponse:
    """``generateUnknownResponse``: ``unknown`` signed by the default issuer, or 401 without a usable one."""
    issuer = _usable(backend, backend.state.default_issuer_id)
    if issuer is None or "ocsp-signing" not in issuer.usage.split(","):
        return _answer(UNAUTHORIZED, 401)
    return _signed(backend, issuer, query, ocsp.OCSPCertStatus.UNKNOWN)


def _ocsp(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``ocspHandler``: see the module table."""
    if backend.state.config_crl.get("ocsp_disable"):
        return _answer(UNAUTHORIZED, 401)
    try:
        query = parse_request(_der_request(req))
    except MalformedRequest:
        return _answer(MALFORMED, 400)
    revoked_at, revoked_by = _revocation(backend, query.serial)
    issuer = _matching_issuer(backend, query, revoked_by)
    if issuer == "unknown":
        return _unknown(backend, query)
    if issuer == "unauthorized":
        return _answer(UNAUTHORIZED, 401)
    assert isinstance(issuer, Issuer)
    status = ocsp.OCSPCertStatus.REVOKED if revoked_at is not None else ocsp.OCSPCertStatus.GOOD
    return _signed(backend, issuer, query, status, revoked_at)


def paths(backend: PkiBackend) -> list[Path]:
    """``ocsp`` (update) and ``ocsp/<req>`` (read), unauthenticated as upstream's ``PathsSpecial``."""
    handler = partial(_ocsp, backend)
    return [
        Path(r"ocsp", {}, {"update": handler}, unauthenticated=True),
        Path(r"ocsp/(?P<req>.*)", {"req": Field(STRING)}, {"read": handler}, unauthenticated=True),
    ]
