"""The certificate store of a PKI mount: ``cert/:serial`` (+ ``/raw``, ``/raw/pem``) and ``LIST certs``.

Serials are accepted colon- or hyphen-separated in any case and stored lowercase colon hex
(``model.normalize_serial``). Reads need no token (OpenBao lists them as unauthenticated paths);
``LIST certs`` does. ``cert/ca``, ``cert/crl``, ``cert/ca_chain`` belong to fetch.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization

from pytest_schedpki.secrets.framework.fields import INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, not_found
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .certstore import CertStore, hyphen_key
from .codecs.rfc3339 import format_rfc3339_nano
from .model import CertRecord, normalize_serial

if TYPE_CHECKING:  # pragma: no cover
    from .backend import PkiBackend

# OpenBao's pattern is [0-9A-Fa-f-:]+; the exact serial "ca" is the CA certificate (fetch.py)
SERIAL_RE = r"(?!ca(?:/|$))(?P<serial>[0-9A-Fa-f:-]+)"


def find_cert(backend: PkiBackend, serial: str) -> CertRecord | None:
    """The stored certificate with ``serial`` (any accepted spelling), or ``None``."""
    record = backend.state.certs.get(normalize_serial(serial))
    if record is None or not record.stored:
        return None
    return record


def cert_data(record: CertRecord) -> dict[str, Any]:
    """``cert/:serial`` data: ``certificate`` (PEM, no trailing newline), ``revocation_time`` (int unix
    seconds, 0 when valid), ``revocation_time_rfc3339`` (RFC 3339 UTC with the fraction, ``""`` when
    valid), and ``issuer_id`` only once revoked and attributed to an issuer of the mount (upstream
    omits it for a revoked certificate no issuer's signature matched)."""
    data: dict[str, Any] = {"certificate": record.pem, "revocation_time": 0, "revocation_time_rfc3339": ""}
    if record.revocation_time is not None:
        data["revocation_time"] = int(record.revocation_time.timestamp())
        data["revocation_time_rfc3339"] = format_rfc3339_nano(record.revocation_time)
        if record.issuer_id:
            data["issuer_id"] = record.issuer_id
    return data


def list_page(serials: Iterable[str], after: str, limit: int) -> list[str]:
    """Storage ``ListPage`` over colon serials: sorted by their stored hyphen form (``33-37-..``);
    ``after`` (not required to exist) is compared as given with that form, as upstream does, so a
    colon ``after`` skips every key with the same first byte; ``limit`` <= 0 means all. Sorts its
    input: :meth:`CertStore.page` does the same over the maintained index of stored certificates."""
    keys = sorted(serials, key=hyphen_key)
    if after:
        keys = [k for k in keys if hyphen_key(k) > after]
    return keys[:limit] if limit > 0 else keys


def paths(backend: PkiBackend) -> list[Path]:
    """``cert/:serial`` (JSON), ``cert/:serial/raw`` (DER, ``application/pkix-cert``),
    ``cert/:serial/raw/pem`` (``application/pem-certificate-chain``) and ``certs/`` (list).

    Unknown serial: JSON read 404 ``{"errors":[]}``; raw reads 204 with an empty body (as OpenBao).
    """

    def read(req: LogicalRequest) -> LogicalResponse:
        record = find_cert(backend, req.data.get("serial"))
        if record is None:
            raise not_found()
        return LogicalResponse(data=cert_data(record))

    def read_raw(req: LogicalRequest) -> LogicalResponse:
        pem = req.path.endswith("/pem")
        content_type = "application/pem-certificate-chain" if pem else "application/pkix-cert"
        record = find_cert(backend, req.data.get("serial"))
        if record is None:
            return LogicalResponse(status=204, raw=(b"", content_type))
        body = record.pem.encode() if pem else record.certificate.public_bytes(serialization.Encoding.DER)
        return LogicalResponse(raw=(body, content_type))

    def list_certs(req: LogicalRequest) -> LogicalResponse:
        certs = backend.state.certs
        after, limit = req.data.get("after"), req.data.get("limit")
        if isinstance(certs, CertStore):  # the maintained index: no copy or sort of the store
            keys = certs.page(after, limit)
        else:
            keys = list_page([s for s, r in certs.items() if r.stored], after, limit)
        if not keys:
            raise not_found()
        return LogicalResponse(data={"keys": keys})

    serial_field = {"serial": Field(STRING)}
    return [
        Path(rf"cert/{SERIAL_RE}/raw(/pem)?", dict(serial_field), {"read": read_raw}, unauthenticated=True),
        Path(rf"cert/{SERIAL_RE}", dict(serial_field), {"read": read}, unauthenticated=True),
        Path(r"certs/?", {"after": Field(STRING), "limit": Field(INT)}, {"list": list_certs}),
    ]
