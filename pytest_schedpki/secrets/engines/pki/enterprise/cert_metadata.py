"""Certificate metadata (Vault Enterprise, EMULATED; OpenBao has no such feature).

Vault Enterprise (1.17+) lets issue/sign/sign-verbatim callers attach an opaque base64 value to the
serial of the certificate they obtain (``cert_metadata``), readable later with
``GET cert-metadata/:serial`` and listed with ``LIST cert-metadata``. A role opts in with
``no_store_metadata=false`` (the documented default); sign-verbatim needs a role. Sources: the PKI
API document (https://developer.hashicorp.com/vault/api-docs/secret/pki, "cert_metadata" on Generate
certificate and key / Sign certificate / Sign verbatim, "Read Certificate Metadata", "List
Certificate Metadata", role ``no_store_metadata``).

Everything here is inert while ``SecretsService.enterprise`` is off: :func:`take_cert_metadata`
returns ``None`` (the router has already warned ``Endpoint ignored these unrecognized parameters:
[cert_metadata]``, as OpenBao does) and the ``cert-metadata`` paths do not exist (404
``unsupported path``).

Stored records live in ``state.extra["cert_metadata"]`` (serial -> dict), replaced (never mutated)
on write so snapshots stay intact. Texts marked *unverified* below are the double's own wording: no
Vault Enterprise server could be run to capture the real ones.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

from cryptography import x509

from pytest_schedpki.secrets.framework.fields import STRING, ConversionError, Field, to_string
from pytest_schedpki.secrets.framework.logical import LogicalResponse, not_found, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..codecs.rfc3339 import format_rfc3339_nano
from ..model import normalize_serial
from .gate import enterprise_only, is_enterprise

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

# the request field the Enterprise variants of issue/sign/sign-verbatim declare
CERT_METADATA_FIELDS: dict[str, Field] = {"cert_metadata": Field(STRING, "")}
PATH_KINDS = ("issue", "sign", "sign-verbatim", "external-policy")
STORE_KEY = "cert_metadata"

# unverified texts (400)
ROLE_REFUSES = "cert_metadata cannot be stored: role {name} has no_store_metadata set to true"
NO_ROLE = ("cert_metadata cannot be stored: sign-verbatim needs a role (sign-verbatim/:role) whose "
           "no_store_metadata is false")
BAD_BASE64 = "cert_metadata must be base64 encoded: illegal base64 data at input byte {index}"

_B64_ALPHABET = re.compile(r"[A-Za-z0-9+/=]")


def _go_base64_error_index(text: str) -> int:
    """Where Go's ``base64.StdEncoding`` would report the first error (approximation: the first
    character outside the alphabet, else the start of the last incomplete 4-character quantum)."""
    for index, ch in enumerate(text):
        if ch in "\r\n":
            continue
        if not _B64_ALPHABET.match(ch):
            return index
    stripped = text.replace("\r", "").replace("\n", "")
    if "=" in stripped.rstrip("="):
        return stripped.index("=")
    return max(0, len(stripped) - (len(stripped) % 4 or 4))


def decode_cert_metadata(value: str) -> bytes:
    """The bytes behind a ``cert_metadata`` value (standard base64 with padding, CR/LF ignored as Go
    does). Raises 400 ``cert_metadata must be base64 encoded: illegal base64 data at input byte <n>``
    (unverified wording; ``illegal base64 data at input byte <n>`` is Go's)."""
    stripped = value.replace("\r", "").replace("\n", "")
    try:
        return base64.b64decode(stripped, validate=True)
    except (binascii.Error, ValueError):
        raise user_error(BAD_BASE64.format(index=_go_base64_error_index(value))) from None


def take_cert_metadata(backend: PkiBackend, req: LogicalRequest, role: Any, path_kind: str) -> str | None:
    """The ``cert_metadata`` of ``req`` to store with the certificate about to be issued, or ``None``.

    ``role`` is the role record in effect (``None`` for sign-verbatim without a role); ``path_kind``
    is ``"issue"``, ``"sign"``, ``"sign-verbatim"`` or ``"external-policy"``. Call it after the role
    was looked up and before signing; pass the result to :func:`store_cert_metadata`.

    * Enterprise off, parameter absent, or ``external-policy`` (Vault passes those bodies verbatim to
      the policy service without parsing them): ``None``.
    * Sent (``""`` included, which Vault also stores): the canonical base64 text of its bytes.

    Raises (400, unverified wording): ``cert_metadata cannot be stored: role <name> has
    no_store_metadata set to true``; for sign-verbatim without role ``cert_metadata cannot be
    stored: sign-verbatim needs a role (sign-verbatim/:role) whose no_store_metadata is false``;
    ``cert_metadata must be base64 encoded: illegal base64 data at input byte <n>``; and the
    framework's ``Field validation failed: error converting input for field "cert_metadata": ...``
    for a value that is not a string (paths whose schema lacks the field).
    """
    if path_kind not in PATH_KINDS:
        raise ValueError(f"unknown path kind {path_kind!r}")
    if not is_enterprise(backend) or path_kind == "external-policy":
        return None
    if "cert_metadata" in req.data.schema:
        value, sent = req.data.get_ok("cert_metadata")
    else:
        raw = req.raw.get("cert_metadata")
        sent = raw is not None
        try:
            value = to_string(raw)
        except ConversionError as exc:
            raise user_error(f'Field validation failed: error converting input for field "cert_metadata": {exc}') from None
    if not sent:
        return None
    if role is None:
        raise user_error(NO_ROLE)
    if getattr(role, "no_store_metadata", False):
        raise user_error(ROLE_REFUSES.format(name=getattr(role, "name", "")))
    return base64.b64encode(decode_cert_metadata(value)).decode()


def store_cert_metadata(backend: PkiBackend, serial_hex: str, value: str | None, *,
                        certificate: x509.Certificate | None = None, issuer_id: str | None = None,
                        role: str | None = None) -> None:
    """Keep ``value`` (from :func:`take_cert_metadata`; ``None`` does nothing) for ``serial_hex``.

    ``certificate``/``issuer_id``/``role`` fill the record's ``expiration``, ``issuer_id`` and
    ``role``; when omitted they are taken from the stored certificate of that serial (a role with
    ``no_store`` stores no certificate: pass them, metadata is kept independently of ``no_store``).
    """
    if value is None:
        return
    serial = normalize_serial(serial_hex)
    stored = backend.state.certs.get(serial)
    if certificate is None and stored is not None:
        certificate = stored.certificate
    if issuer_id is None:
        issuer_id = stored.issuer_id if stored is not None else ""
    if role is None:
        role = stored.role if stored is not None else ""
    record = {
        "serial_number": serial,
        "issuer_id": issuer_id,
        "role": role,
        "expiration": format_rfc3339_nano(certificate.not_valid_after_utc) if certificate is not None else "",
        "cert_metadata": value,
    }
    backend.state.extra[STORE_KEY] = {**backend.state.extra.get(STORE_KEY, {}), serial: record}


def read_cert_metadata(backend: PkiBackend, serial: str) -> dict[str, Any] | None:
    """The ``data`` of ``cert-metadata/:serial`` (``serial_number``, ``issuer_id``, ``role``,
    ``expiration`` RFC 3339, ``cert_metadata`` base64 - omitted when empty), or ``None``."""
    record = backend.state.extra.get(STORE_KEY, {}).get(normalize_serial(serial))
    if record is None:
        return None
    data = dict(record)
    if not data["cert_metadata"]:
        del data["cert_metadata"]
    return data


def paths(backend: PkiBackend) -> list[Path]:
    """``cert-metadata/:serial`` (read) and ``cert-metadata/`` (list), Enterprise only; both need a
    token. Unknown serial / nothing stored: 404 ``{"errors":[]}``."""

    def read(req: LogicalRequest) -> LogicalResponse:
        data = read_cert_metadata(backend, req.data.get("serial"))
        if data is None:
            raise not_found()
        return LogicalResponse(data=data)

    def list_metadata(req: LogicalRequest) -> LogicalResponse:
        keys = sorted(backend.state.extra.get(STORE_KEY, {}))
        if not keys:
            raise not_found()
        return LogicalResponse(data={"keys": keys})

    return [
        enterprise_only(backend, Path(r"cert-metadata/(?P<serial>[0-9A-Fa-f:-]+)", {"serial": Field(STRING)},
                                      {"read": read})),
        enterprise_only(backend, Path(r"cert-metadata/?", {}, {"list": list_metadata})),
    ]


__all__ = ["CERT_METADATA_FIELDS", "take_cert_metadata", "store_cert_metadata", "read_cert_metadata",
           "decode_cert_metadata"]
