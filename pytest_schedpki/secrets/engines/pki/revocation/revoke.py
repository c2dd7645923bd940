"""Revocation: ``revoke``, ``revoke-with-key`` (POST/PUT only; GET/DELETE 405) and ``LIST certs/revoked``.

Behaviour follows OpenBao 2.7.2 (``path_revoke.go``, ``crl_util.go``), checked against the real server:

Request (both paths; fields ``serial_number``, ``certificate``, and ``private_key`` for -with-key;
a field sent as JSON ``null`` counts as given, as Go's ``GetOk`` sees it):

=============================================================  ======  ==========================================
condition (checked in this order)                              status  ``errors``
=============================================================  ======  ==========================================
neither ``serial_number`` nor ``certificate``                  400     ``The serial number or certificate to
                                                                       revoke must be provided.``
both                                                           400     ``Must provide either the certificate or
                                                                       the serial to revoke; not both.``
-with-key, no ``private_key``                                  400     ``Must have private key to revoke via the
                                                                       /revoke-with-key path.``
-with-key, ``private_key`` shorter than 64 bytes               400     ``Provided data for private_key was too
                                                                       short; perhaps a path was passed to the
                                                                       API rather than the contents of a PEM
                                                                       file?``
``certificate``: < 75 bytes / no PEM / not a certificate       500     multierror, see :mod:`.revoke_input`
``certificate``: same serial stored with other content         500     multierror ``certificate with same serial
                                                                       but unequal value already present in this
                                                                       cluster's storage; refusing to revoke``
``certificate``: not signed by any issuer of the mount         500     multierror ``unable to verify signature on
                                                                       presented cert from any present issuer in
                                                                       this mount; certificates from previous CAs
                                                                       will need to have their issuing CA and key
                                                                       re-imported if revocation is necessary``
``serial_number`` empty                                        400     ``The serial number must be provided``
``serial_number`` not stored (unknown, malformed, no_store)    400     ``certificate with serial <as sent> not
                                                                       found.``
-with-key: key unreadable / wrong type / wrong key             500     multierror, see :mod:`.revoke_input`
the serial of an issuer of this mount                          400     ``adding issuer (id: <issuer id>) to its
                                                                       own CRL is not allowed``
=============================================================  ======  ==========================================

A certificate given by PEM that the mount did not store (``no_store`` roles, or signed elsewhere by
an issuer's key) is written to the store once its signature checks out and (-with-key) the key
matches - even when it is then refused as expired - so it is afterwards readable (``cert/:serial``),
listed (``LIST certs``) and, once revoked, on the CRL.

Success: 200 ``data: {revocation_time: int unix seconds, revocation_time_rfc3339: RFC 3339 UTC with
the fraction (microseconds here, nanoseconds upstream), state: "revoked"}``; revoking again answers
the original times (no CRL rebuild). A certificate whose NotAfter is less than 2 s away (double's
clock) is not revoked unless ``config/crl`` ``allow_expired_cert_revocation``: 200 with ``data: null``
and the warning ``certificate with serial <colon> already expired; refusing to add to CRL. Enable
'AllowExpiredCertRevocation' to allow revoking expired certificates.``

The revocation time is the double's clock (:meth:`PkiBackend.now`), so freezegun or a ManualClock pin
it. The revoked certificate is attributed to the issuer whose subject and key signed it (``issuer_id``
in ``cert/:serial``); with ``auto_rebuild`` false every CRL is rebuilt at once (rebuild warnings are
returned as ``Warning <n> during CRL rebuild: ...``), with ``auto_rebuild`` true the CRLs wait for the
periodic rebuild (see :mod:`.crl`) and, with ``enable_delta``, the serial joins the delta WAL.
"""

from __future__ import annotations

import datetime
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from pytest_schedpki.secrets.framework.fields import INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import (
    LogicalError,
    LogicalResponse,
    internal_error,
    not_found,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..certs import list_page
from ..codecs.rfc3339 import format_rfc3339_nano
from ..codecs.x509 import pem_of, serial_of
from ..model import CertRecord, serial_to_hex
from .crl import rebuild_crls, rebuild_warnings, record_delta_revocation, revocation_issuer_id
from .revoke_input import (
    check_key_matches,
    check_signature_from,
    parse_revocation_key,
    parse_revoked_certificate,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

NEITHER = "The serial number or certificate to revoke must be provided."
BOTH = "Must provide either the certificate or the serial to revoke; not both."
NO_KEY = "Must have private key to revoke via the /revoke-with-key path."
KEY_TOO_SHORT = ("Provided data for private_key was too short; perhaps a path was passed to the API rather than the "
                 "contents of a PEM file?")
EMPTY_SERIAL = "The serial number must be provided"
UNEQUAL = ("certificate with same serial but unequal value already present in this cluster's storage; refusing to "
           "revoke")
FOREIGN = ("unable to verify signature on presented cert from any present issuer in this mount; certificates from "
           "previous CAs will need to have their issuing CA and key re-imported if revocation is necessary")
EXPIRED = ("certificate with serial {} already expired; refusing to add to CRL. Enable 'AllowExpiredCertRevocation' "
           "to allow revoking expired certificates.")


def stored_record(backend: PkiBackend, serial: str) -> CertRecord | None:
    """``fetchCertBySerial(certs/, serial)``: the stored certificate whose serial is ``serial`` with
    hyphens read as colons, in any case - nothing else is trimmed or fixed (`` 01:02`` is another key)."""
    record = backend.state.certs.get(serial.lower().replace("-", ":"))
    return record if record is not None and record.stored else None


def _certificate_by_pem(backend: PkiBackend, text: str) -> tuple[x509.Certificate, CertRecord | None]:
    """``pathRevokeWriteHandleCertificate``: the presented certificate and, when the mount has not
    stored it yet, the record to store (``None`` when it is already stored with equal content).
    Raises the 500s of the module table."""
    cert = parse_revoked_certificate(text)
    serial = serial_to_hex(serial_of(cert))
    record = stored_record(backend, serial)
    der = cert.public_bytes(serialization.Encoding.DER)
    if record is not None:
        if record.certificate.public_bytes(serialization.Encoding.DER) != der:
            raise internal_error(UNEQUAL)
        return record.certificate, None
    state = backend.state
    if not any(check_signature_from(cert, state.issuers[i].certificate) for i in sorted(state.issuers)):
        raise internal_error(FOREIGN)
    previous = state.certs.get(serial)  # a record kept without being stored (not listed, not readable)
    if previous is not None:
        return cert, replace(previous, stored=True)
    return cert, CertRecord(serial_number=serial, certificate=cert, pem=pem_of(cert),
                            issuer_id=revocation_issuer_id(state, cert))


def revocation_data(record: CertRecord) -> dict[str, Any]:
    """The success ``data`` of a revocation: ``revocation_time`` (int), ``revocation_time_rfc3339``,
    ``state`` ``"revoked"``."""
    return {"revocation_time": int(record.revocation_time.timestamp()),
            "revocation_time_rfc3339": format_rfc3339_nano(record.revocation_time), "state": "revoked"}


def revoke_certificate(backend: PkiBackend, cert: x509.Certificate,
                       at: datetime.datetime | None = None) -> LogicalResponse:
    """``revokeCert``: refuse an issuer of this mount (400), answer an earlier revocation as it was,
    refuse to add an (almost) expired certificate (200 + warning, ``data: null``), else record the
    revocation at the double's clock and rebuild the CRLs (or, with ``auto_rebuild``, leave them to
    the periodic rebuild and note the serial in the delta WAL when ``enable_delta``).

    ``cert`` must be stored in ``state.certs`` already (the caller stores a certificate given by PEM).
    ``at``: the revocation instant (default the double's clock now), given when a lease's expiry
    revokes the certificate after the fact. Usable directly by fixtures: ``revoke_certificate(backend, cert)``."""
    state = backend.state
    serial = serial_to_hex(serial_of(cert))
    for issuer_id in sorted(state.issuers):
        if serial_to_hex(serial_of(state.issuers[issuer_id].certificate)) == serial:
            raise user_error(f"adding issuer (id: {issuer_id}) to its own CRL is not allowed")
    record = state.certs[serial]
    if record.revocation_time is not None:
        return LogicalResponse(data=revocation_data(record))
    config = state.config_crl
    now = at if at is not None else backend.now()
    if (cert.not_valid_after_utc - now).total_seconds() < 2 and not config.get("allow_expired_cert_revocation"):
        return LogicalResponse(data=None, warnings=[EXPIRED.format(serial)])
    record = replace(record, revocation_time=now, issuer_id=revocation_issuer_id(state, cert, record.issuer_id))
    state.certs[serial] = record
    response = LogicalResponse(data=revocation_data(record))
    if not config.get("auto_rebuild"):
        response.warnings.extend(rebuild_warnings(rebuild_crls(backend, force=False)))
    elif config.get("enable_delta"):
        record_delta_revocation(backend, serial)
    return response


def _given(req: LogicalRequest, name: str) -> bool:
    """Go's ``GetOk``: the request carried ``name`` (JSON ``null`` included)."""
    return name in req.raw


def _revoke(backend: PkiBackend, req: LogicalRequest, with_key: bool) -> LogicalResponse:
    """``revoke`` / ``revoke-with-key`` (update): see the module table."""
    have_serial, have_cert = _given(req, "serial_number"), _given(req, "certificate")
    if not have_serial and not have_cert:
        raise user_error(NEITHER)
    if have_serial and have_cert:
        raise user_error(BOTH)
    key_pem = ""
    if with_key:
        if not _given(req, "private_key"):
            raise user_error(NO_KEY)
        key_pem = req.data.get("private_key")
        if len(key_pem.encode()) < 64:
            raise user_error(KEY_TOO_SHORT)
    to_store = None
    if have_cert:
        cert, to_store = _certificate_by_pem(backend, req.data.get("certificate"))
    else:
        serial = req.data.get("serial_number")
        if serial == "":
            raise user_error(EMPTY_SERIAL)
        record = stored_record(backend, serial)
        if record is None:
            raise user_error(f"certificate with serial {serial} not found.")
        cert = record.certificate
    if with_key:
        check_key_matches(parse_revocation_key(key_pem), cert)
    if to_store is not None:
        backend.state.certs[to_store.serial_number] = to_store
    try:
        return revoke_certificate(backend, cert)
    except LogicalError as exc:
        # upstream wrote the presented certificate to storage before refusing (e.g. an issuer of
        # this mount signed elsewhere): it stays stored and listed
        exc.keep_state = to_store is not None
        raise


def _list_revoked(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``LIST certs/revoked`` (also ``GET ?list=true``): colon-hex serials of revoked certificates,
    sorted; ``after``/``limit`` as ``LIST certs``; none -> 404 ``{"errors":[]}``."""
    certs = backend.state.certs
    index = getattr(certs, "revoked_serials", None)  # CertStore: no scan of every certificate
    revoked = index() if index is not None else [s for s, r in certs.items() if r.revocation_time is not None]
    keys = list_page(revoked, req.data.get("after"), req.data.get("limit"))
    if not keys:
        raise not_found()
    return LogicalResponse(data={"keys": keys})


FIELDS = {"serial_number": Field(STRING), "certificate": Field(STRING)}


def paths(backend: PkiBackend) -> list[Path]:
    """``revoke``, ``revoke-with-key`` (update only) and ``certs/revoked/?`` (list); all need a token
    and no ``sudo`` (policies decide; upstream recommends opening ``revoke-with-key`` to everyone)."""
    return [
        Path(r"revoke", dict(FIELDS), {"update": partial(_revoke, backend, with_key=False)}),
        Path(r"revoke-with-key", {**FIELDS, "private_key": Field(STRING)},
             {"update": partial(_revoke, backend, with_key=True)}),
        Path(r"certs/revoked/?", {"after": Field(STRING), "limit": Field(INT)},
             {"list": partial(_list_revoked, backend)}),
    ]
