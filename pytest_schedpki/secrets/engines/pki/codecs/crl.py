"""CRLs as OpenBao signs and serves them: building (entries made once and reused), PEM and DER output
(DER encoded once per CRL).
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from .keys import (
    _pss_padding,
    signature_hash,
)

# --------------------------------------------------------------------------------------------- CRL


def build_crl(issuer_cert: x509.Certificate, issuer_key: Any,
              revoked: Iterable[tuple[int, datetime.datetime]], number: int,
              this_update: datetime.datetime, next_update: datetime.datetime,
              signature_bits: int = 0, use_pss: bool = False, delta_of: int | None = None
              ) -> x509.CertificateRevocationList:
    """A complete CRL of ``issuer_cert`` signed by ``issuer_key``: v2, issuer DN = the CA's subject,
    extensions AuthorityKeyIdentifier (the CA's SKI) + CRLNumber ``number``, one entry per
    ``(serial, revocation_time)`` without entry extensions (OpenBao writes no reason codes).
    ``this_update``/``next_update`` are aware datetimes (OpenBao: now and now + ``config/crl`` expiry).
    ``delta_of``: build a delta CRL against that complete CRL number (critical DeltaCRLIndicator)."""
    builder = (x509.CertificateRevocationListBuilder().issuer_name(issuer_cert.subject)
               .last_update(this_update).next_update(next_update))
    try:
        ski = issuer_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        builder = builder.add_extension(x509.AuthorityKeyIdentifier(ski, None, None), critical=False)
    except x509.ExtensionNotFound:
        pass
    builder = builder.add_extension(x509.CRLNumber(number), critical=False)
    if delta_of is not None:
        builder = builder.add_extension(x509.DeltaCRLIndicator(delta_of), critical=True)
    entries = [_revoked_entry(serial, when) for serial, when in revoked]
    try:  # one builder with every entry: add_revoked_certificate copies the whole list each time
        builder = x509.CertificateRevocationListBuilder(
            builder._issuer_name, builder._last_update, builder._next_update, builder._extensions, entries)
    except AttributeError:  # pragma: no cover - a cryptography without these builder attributes
        for entry in entries:
            builder = builder.add_revoked_certificate(entry)
    algorithm = signature_hash(issuer_key, signature_bits)
    return builder.sign(issuer_key, algorithm, rsa_padding=_pss_padding(issuer_key, use_pss, algorithm))


_REVOKED_ENTRIES: dict[tuple[int, datetime.datetime], x509.RevokedCertificate] = {}
_REVOKED_ENTRIES_MAX = 100_000


def _revoked_entry(serial: int, when: datetime.datetime) -> x509.RevokedCertificate:
    """The CRL entry of one revocation, made once and reused by every later rebuild (immutable)."""
    key = (serial, when)
    entry = _REVOKED_ENTRIES.get(key)
    if entry is None:
        if len(_REVOKED_ENTRIES) >= _REVOKED_ENTRIES_MAX:
            _REVOKED_ENTRIES.clear()
        entry = _REVOKED_ENTRIES[key] = (x509.RevokedCertificateBuilder().serial_number(serial)
                                         .revocation_date(when).build())
    return entry


def crl_pem(crl: x509.CertificateRevocationList) -> str:
    """The CRL as one PEM ``X509 CRL`` block, no trailing newline (from :func:`crl_der`)."""
    body = base64.encodebytes(crl_der(crl)).decode().replace("\n", "")
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join(["-----BEGIN X509 CRL-----", *lines, "-----END X509 CRL-----"])


_CRL_DER: dict[int, tuple[x509.CertificateRevocationList, bytes]] = {}
_CRL_DER_MAX = 64


def crl_der(crl: x509.CertificateRevocationList) -> bytes:
    """The CRL's DER bytes (``GET crl``); encoded once per CRL object (a CRL of thousands of entries
    costs ~1 ms to encode) and remembered for the last :data:`_CRL_DER_MAX` CRLs."""
    cached = _CRL_DER.get(id(crl))
    if cached is not None and cached[0] is crl:
        return cached[1]
    der = crl.public_bytes(serialization.Encoding.DER)
    if len(_CRL_DER) >= _CRL_DER_MAX:
        _CRL_DER.pop(next(iter(_CRL_DER)), None)
    _CRL_DER[id(crl)] = (crl, der)
    return der
