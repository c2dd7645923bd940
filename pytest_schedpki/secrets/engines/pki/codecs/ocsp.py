"""OCSP (RFC 6960) requests read and responses signed as OpenBao's responder does, on
``cryptography.x509.ocsp``.

Upstream (``path_ocsp.go``) reads requests with ``golang.org/x/crypto/ocsp.ParseRequest`` and signs with
``ocsp.CreateResponse``; what that gives, and what this module does:

* a request names its certificate by a CertID hashed with SHA-1, SHA-256, SHA-384 or SHA-512; any other
  hash (SHA-224 included), bytes that are not one DER ``OCSPRequest`` (trailing bytes too), or a request
  without a certificate are malformed (:class:`MalformedRequest`). Request extensions (the nonce) are
  ignored and never echoed;
* a response is ``successful`` with one ``SingleResponse``: the CertID hashed with the request's hash
  over the *signing* issuer (not copied from the request), the requested serial, the status (good,
  revoked with its time and no reason - Go omits ``unspecified``, revoked or unknown), ``thisUpdate``
  and, when asked, ``nextUpdate``; responder id by name (the issuer's subject); no certificates; no
  response extensions; signed by the issuer's key with its revocation signature hash (RSA-PSS
  downgraded to PKCS#1 v1.5, as upstream; ed25519 keys are refused, x/crypto/ocsp signs only RSA and
  ECDSA: :class:`UnsupportedSigner`);
* the refusals are the fixed unsuccessful responses :data:`MALFORMED`, :data:`INTERNAL_ERROR` and
  :data:`UNAUTHORIZED` (``30 03 0a 01 0N``), built with cryptography.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509 import ocsp

from .keys import signature_hash

#: the CertID hashes x/crypto/ocsp knows (its ``hashOIDs``), by cryptography's hash name
REQUEST_HASHES: dict[str, type[hashes.HashAlgorithm]] = {
    "sha1": hashes.SHA1, "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


def _unsuccessful(status: ocsp.OCSPResponseStatus) -> bytes:
    return ocsp.OCSPResponseBuilder.build_unsuccessful(status).public_bytes(serialization.Encoding.DER)


MALFORMED = _unsuccessful(ocsp.OCSPResponseStatus.MALFORMED_REQUEST)
INTERNAL_ERROR = _unsuccessful(ocsp.OCSPResponseStatus.INTERNAL_ERROR)
UNAUTHORIZED = _unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED)


class MalformedRequest(ValueError):
    """The bytes are not an OCSP request OpenBao answers (upstream: ``malformedRequest``, HTTP 400)."""


class UnsupportedSigner(ValueError):
    """The issuer's key cannot sign an OCSP response upstream (ed25519; upstream: ``internalError``, 500)."""


@dataclass(frozen=True)
class OcspQuery:
    """The first certificate a request asks about: ``hash_name`` (``sha1``...), the issuer's name and
    key hashes, and ``serial`` (as encoded: may be 0 or negative)."""

    hash_name: str
    issuer_name_hash: bytes
    issuer_key_hash: bytes
    serial: int


def parse_request(der: bytes) -> OcspQuery:
    """``ocsp.ParseRequest``: the query of one DER OCSP request; raises :class:`MalformedRequest`.

    A request for several certificates is refused here too (cryptography reads only single ones;
    upstream answers for the first, see docs/divergences.md)."""
    try:
        request = ocsp.load_der_ocsp_request(der)
        algorithm = request.hash_algorithm
        query = OcspQuery(algorithm.name, request.issuer_name_hash, request.issuer_key_hash, request.serial_number)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise MalformedRequest(str(exc)) from None
    if query.hash_name not in REQUEST_HASHES:
        raise MalformedRequest("OCSP request uses unknown hash function")
    return query


def issuer_hashes(issuer: x509.Certificate, hash_name: str) -> tuple[bytes, bytes]:
    """``(issuerNameHash, issuerKeyHash)`` of ``issuer`` under ``hash_name`` (the hash of its subject's
    DER and of its public key's bit string), as cryptography computes them for a CertID."""
    request = ocsp.OCSPRequestBuilder().add_certificate(issuer, issuer, REQUEST_HASHES[hash_name]()).build()
    return request.issuer_name_hash, request.issuer_key_hash


def request_matches(issuer: x509.Certificate, query: OcspQuery) -> bool:
    """``doesRequestMatchIssuer``: both of the request's issuer hashes are ``issuer``'s."""
    return issuer_hashes(issuer, query.hash_name) == (query.issuer_name_hash, query.issuer_key_hash)


def _whole_seconds(when: datetime.datetime) -> datetime.datetime:
    return when.astimezone(datetime.timezone.utc).replace(microsecond=0)


def sign_response(issuer: x509.Certificate, key: Any, query: OcspQuery, status: ocsp.OCSPCertStatus,
                  this_update: datetime.datetime, next_update: datetime.datetime | None = None,
                  revoked_at: datetime.datetime | None = None, signature_bits: int = 0) -> bytes:
    """``genResponse``: the DER of a successful response about ``query.serial`` signed by ``issuer``
    with ``key`` (see the module docstring). Times are aware datetimes, written in whole seconds;
    ``signature_bits`` is the issuer's revocation signature hash size (0: the key's default).
    Raises :class:`UnsupportedSigner` for a key that is neither RSA nor ECDSA."""
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        raise UnsupportedSigner("x509: only RSA and ECDSA keys supported")
    name_hash, key_hash = issuer_hashes(issuer, query.hash_name)
    builder = ocsp.OCSPResponseBuilder().add_response_by_hash(
        issuer_name_hash=name_hash, issuer_key_hash=key_hash, serial_number=query.serial,
        algorithm=REQUEST_HASHES[query.hash_name](), cert_status=status, this_update=_whole_seconds(this_update),
        next_update=_whole_seconds(next_update) if next_update is not None else None,
        revocation_time=_whole_seconds(revoked_at) if revoked_at is not None else None, revocation_reason=None,
    ).responder_id(ocsp.OCSPResponderEncoding.NAME, issuer)
    response = builder.sign(key, signature_hash(key, signature_bits))
    return response.public_bytes(serialization.Encoding.DER)
