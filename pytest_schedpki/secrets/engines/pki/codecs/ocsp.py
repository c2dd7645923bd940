"""OCSP (RFC 6960) requests read and responses signed as OpenBao's responder does, on
``cryptography.x509.ocsp``.

Upstream (``path_ocsp.go``) reads requests with ``golang.org/x/crypto/ocsp.ParseRequest`` and signs with
``ocsp.CreateResponse``; what that gives, and what this module does:

* a request names its certificate by a CertID hashed with SHA-1, SHA-256, SHA-384 or SHA-512; any other
  hash (SHA-224 included), bytes that are not one DER ``OCSPRequest`` (trailing bytes too), or a request
  without a certificate are malformed (:class:`MalformedRequest`); the first certificate of a request is
  answered. Request extensions (the nonce) are never read nor echoed (:func:`parse_request` reads the
  DER as Go's ``encoding/asn1`` does, on :mod:`.cryptobyte`'s reads);
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
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509 import ocsp

from .cryptobyte import (
    BIT_STRING,
    INTEGER,
    OCTET_STRING,
    OID,
    SEQUENCE,
    SET,
    is_bit_string,
    is_integer,
    oid_arcs,
    read_any,
)
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


#: x/crypto/ocsp's ``hashOIDs``: the CertID hash algorithms it reads, by their DER OID content
_HASH_OIDS = {bytes.fromhex("2b0e03021a"): "sha1", bytes.fromhex("608648016503040201"): "sha256",
              bytes.fromhex("608648016503040202"): "sha384", bytes.fromhex("608648016503040203"): "sha512"}


def _element(data: bytes, pos: int, tag: int | None = None) -> tuple[int, bytes, int]:
    """One element as Go's ``encoding/asn1`` reads it (definite, minimal length): ``(identifier octet,
    content, next position)``; raises :class:`MalformedRequest`. ``tag``: the identifier octet wanted."""
    element = read_any(data, pos)
    if element is None or (tag is not None and element[0] != tag):
        raise MalformedRequest("asn1: structure error")
    return element


def _integer(content: bytes) -> int:
    if not is_integer(content):
        raise MalformedRequest("asn1: structure error: integer not minimally-encoded")
    return int.from_bytes(content, "big", signed=True)


def _oid(content: bytes) -> bytes:
    if oid_arcs(content) is None:
        raise MalformedRequest("asn1: syntax error: invalid object identifier")
    return content


def _requestor_name(content: bytes) -> None:
    """``pkix.RDNSequence``: SETs of (OID, any value) SEQUENCEs."""
    pos = 0
    while pos < len(content):
        _, rdn, pos = _element(content, pos, SET)
        at = 0
        while at < len(rdn):
            _, pair, at = _element(rdn, at, SEQUENCE)
            _, oid, rest = _element(pair, 0, OID)
            _oid(oid)
            _element(pair, rest)


def _optional_signature(outer: bytes, pos: int) -> None:
    """The element after the TBSRequest, probed as Go probes the optional ``[0] EXPLICIT`` signature: a
    zero-length element there is refused (``explicit tag has no child`` when it ends the request, ``zero
    length explicit tag was not an asn1.Flag`` for ``[0]``); a constructed ``[0]`` must hold a SEQUENCE of
    an AlgorithmIdentifier and a BIT STRING; anything else is ignored."""
    tag, content, end = _element(outer, pos)
    if end - len(content) == len(outer) or (tag in (0x80, 0xA0) and not content):
        raise MalformedRequest("asn1: structure error: explicit tag has no child")
    if tag == 0xA0:
        _, signature, _ = _element(content, 0, SEQUENCE)
        _, algorithm, step = _element(signature, 0, SEQUENCE)
        _oid(_element(algorithm, 0, OID)[1])
        _, bits, _ = _element(signature, step, BIT_STRING)
        if not is_bit_string(bits):
            raise MalformedRequest("asn1: syntax error: invalid padding bits in BIT STRING")


def parse_request(der: bytes) -> OcspQuery:
    """``ocsp.ParseRequest``: the query of a DER OCSP request, read as Go's ``encoding/asn1`` reads its
    ``ocspRequest`` struct: one SEQUENCE and nothing after it; in it the TBSRequest (Version ``[0]``,
    RequestorName ``[1]``, the request list; the request extensions are never read: a damaged nonce is
    no error) and the optional signature (:func:`_optional_signature`); of the first request (its
    extensions unread) the CertID: hash algorithm, name hash, key hash, serial. Raises
    :class:`MalformedRequest`.

    Read here rather than with ``cryptography.x509.ocsp.load_der_ocsp_request``, which checks the
    extensions Go never reads (a request whose nonce is damaged is answered upstream) and refuses a
    request for several certificates (upstream answers for the first)."""
    _, outer, end = _element(der, 0, SEQUENCE)
    if end != len(der):
        raise MalformedRequest("trailing data in OCSP request")
    _, tbs, after = _element(outer, 0, SEQUENCE)
    if after < len(outer):
        _optional_signature(outer, after)
    pos = 0
    if pos < len(tbs) and tbs[pos] == 0xA0:
        _, version, pos = _element(tbs, pos)
        _, number, rest = _element(version, 0, INTEGER)
        if rest != len(version) or len(number) > 8:
            raise MalformedRequest("asn1: structure error: version")
        _integer(number)
    if pos < len(tbs) and tbs[pos] == 0xA1:
        _, name, pos = _element(tbs, pos)
        _, rdns, _ = _element(name, 0, SEQUENCE)
        _requestor_name(rdns)
    _, requests, _ = _element(tbs, pos, SEQUENCE)
    queries, at = [], 0
    while at < len(requests):
        _, request, at = _element(requests, at, SEQUENCE)
        _, cert_id, _ = _element(request, 0, SEQUENCE)
        _, algorithm, step = _element(cert_id, 0, SEQUENCE)
        _, name_hash, step = _element(cert_id, step, OCTET_STRING)
        _, key_hash, step = _element(cert_id, step, OCTET_STRING)
        _, serial, step = _element(cert_id, step, INTEGER)
        _, oid, rest = _element(algorithm, 0, OID)
        if rest < len(algorithm):
            _element(algorithm, rest)  # the parameters (any), read whole
        queries.append((_oid(oid), name_hash, key_hash, _integer(serial)))
    if not queries:
        raise MalformedRequest("OCSP request contains no request body")
    oid, name_hash, key_hash, serial = queries[0]
    if oid not in _HASH_OIDS:
        raise MalformedRequest("OCSP request uses unknown hash function")
    return OcspQuery(_HASH_OIDS[oid], name_hash, key_hash, serial)


def issuer_hashes(issuer: x509.Certificate, hash_name: str) -> tuple[bytes, bytes]:
    """``(issuerNameHash, issuerKeyHash)`` of ``issuer`` under ``hash_name``: the hash of its subject's
    DER and, as cryptography computes it for a CertID, of its public key's bit string."""
    algorithm = REQUEST_HASHES[hash_name]()
    digest = hashes.Hash(algorithm)
    digest.update(issuer.subject.public_bytes())
    probe = ocsp.OCSPRequestBuilder().add_certificate(issuer, issuer, algorithm).build()
    return digest.finalize(), probe.issuer_key_hash


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
