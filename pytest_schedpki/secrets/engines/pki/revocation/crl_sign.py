"""CRLs signed on request, outside the mount's own CRLs: ``issuer/:ref/sign-revocation-list`` (a CRL of
the revoked certificates and extensions given) and ``issuer/:ref/resign-crls`` (the entries of CRLs the
issuer signed, merged and signed again). Nothing is stored.

OpenBao 2.7.2 ``path_resign_crls.go``, checked against the real server. Fields: ``crl_number`` (int,
0), ``delta_crl_base_number`` (int, -1: no Delta CRL Indicator), ``next_update`` (duration, ``72h``),
``format`` (``pem``/``der``, any case), and ``revoked_certs`` (maps of ``serial_number`` (hex, ``:``,
``.``, ``-`` and spaces ignored), ``revocation_time`` (RFC 3339 or Unix seconds) and ``extensions``)
plus ``extensions`` (maps of ``id``, ``critical``, ``value`` base64) / ``crls`` (PEM CRLs). Refusals
(400, in this order; resign-crls checks ``format`` first):

* ``invalid value for next_update: <Go's parse error>``, ``next_update parameter must be greater than 0``,
  ``crl_number parameter must be 0 or greater``, ``delta_crl_base_number parameter must be -1 or greater``,
  ``unknown format value of <format>``;
* an entry: ``failed parsing serial_number from entry <i>: ...``, ``failed parsing revocation_time from
  entry <i>: ...``, ``failed parsing extensions from entry <i>: ...`` (entries that are not maps are
  skipped; duplicate serials are kept, as upstream's check compares pointers);
* an extension: ``extension entry <i> not a map``, ``failed parsing extension entry <i>: <why>`` (the
  AKI, CRL number and delta CRL OIDs are reserved), ``duplicate extension id: <oid>``;
* a CRL: ``failed decoding crl <i>: invalid crl; should be one PEM block only`` / Go's parse error,
  ``CRL index: <i> was not signed by requested issuer``;
* the issuer: ``failed to resolve issuer issuer_ref: <why>``, ``error while attempting to use issuer ...``
  (no ``crl-signing``), ``unable to fetch corresponding key for issuer ...``.

The CRL (v2): the issuer's subject, AKI, CRL Number, the extensions asked for, the Delta CRL Indicator
(critical) when ``delta_crl_base_number`` >= 0, thisUpdate the double's clock, nextUpdate that plus
``next_update``; signed with the issuer's revocation signature algorithm. resign-crls drops entry
extensions and keeps, for a serial listed with different times, the oldest (with the warning
``Duplicate serial <colon hex> with different revocation times detected, using oldest revocation time``).
Answer: 200 ``data: {crl: PEM with a trailing newline | base64 DER}``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from cryptography import x509 as cx509
from cryptography.hazmat.primitives import serialization

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.secrets.framework.fields import ANY, INT, STRING, STRING_SLICE, Field
from pytest_schedpki.secrets.framework.go_values import ConversionError, JsonNumber, parse_go_bool, to_string
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import REF, IssuerNotFound, issuer_key, resolve_issuer
from ..codecs.goder import asn1_marshalable, asn1_marshaled_oid, go_oid_arcs
from ..codecs.keys import _pss_padding, signature_hash
from ..codecs.rfc3339 import Rfc3339Error, parse_rfc3339
from ..model import Issuer, serial_to_hex
from .crl import _signature, parse_duration_second

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

RESERVED = {"2.5.29.35": "authority key object identifier", "2.5.29.20": "crl number object identifier",
            "2.5.29.27": "delta crl object identifier"}
COMMON_FIELDS = {"issuer_ref": Field(STRING, "default"), "crl_number": Field(INT, 0),
                 "delta_crl_base_number": Field(INT, -1), "next_update": Field(STRING, "72h"),
                 "format": Field(STRING, "pem")}


def _slice(value: Any) -> list:
    """mapstructure's weak decode into ``[]interface{}``: a single value becomes a one-element slice."""
    return [] if value is None else value if isinstance(value, list) else [value]


def _go_hex(text: str) -> bytes:
    """``hex.DecodeString`` with Go's errors (invalid byte first, then odd length)."""
    raw = text.encode("utf-8", "surrogatepass")
    for byte in raw:
        if chr(byte) not in "0123456789abcdefABCDEF":
            char = chr(byte)
            shown = f"U+{byte:04X} '{char}'" if char.isprintable() else f"U+{byte:04X}"
            raise ValueError(f"encoding/hex: invalid byte: {shown}")
    if len(raw) % 2:
        raise ValueError("encoding/hex: odd length hex string")
    return bytes.fromhex(raw.decode())


def _parse_string(value: Any, name: str) -> str:
    try:
        return to_string(value)
    except ConversionError as exc:
        raise ValueError(f"'{name}' field value was not a string: {exc}") from None


def _serial(entry: dict) -> int:
    if "serial_number" not in entry:
        raise ValueError("missing 'serial_number' field")
    text = _parse_string(entry["serial_number"], "serial_number")
    for separator in (":", ".", "-", " "):
        text = text.replace(separator, "")
    try:
        return int.from_bytes(_go_hex(text), "big")
    except ValueError as exc:
        raise ValueError(f"'serial_number' failed converting to bytes: {exc}") from None


def _revocation_time(entry: dict) -> datetime.datetime:
    """``parseutil.ParseAbsoluteTime``: RFC 3339 or Unix seconds (string or number)."""
    if "revocation_time" not in entry:
        raise ValueError("missing 'revocation_time' field")
    raw = entry["revocation_time"]
    try:
        if isinstance(raw, str) and not isinstance(raw, JsonNumber):
            try:
                return parse_rfc3339(raw)
            except Rfc3339Error:
                if raw.lstrip("+-").isdigit():
                    return datetime.datetime.fromtimestamp(int(raw), datetime.timezone.utc)
                raise ValueError("could not parse string as date and time") from None
        if isinstance(raw, JsonNumber) and not raw.lstrip("-").isdigit():
            raise ValueError(f"strconv.ParseInt: parsing {go_quote(raw)}: invalid syntax")
        if isinstance(raw, (int, JsonNumber)) and not isinstance(raw, bool):
            return datetime.datetime.fromtimestamp(int(raw), datetime.timezone.utc)
    except (OverflowError, OSError, ValueError) as exc:
        raise ValueError(f"failed parsing time {_go_value(raw)}: {exc}") from None
    raise ValueError(f"failed parsing time {_go_value(raw)}: could not parse time from input type")


def _go_value(raw: Any) -> str:
    """``%v`` of a decoded JSON value (booleans lower case, null ``<nil>``)."""
    return "<nil>" if raw is None else str(raw).lower() if isinstance(raw, bool) else str(raw)


def _extension(entry: dict) -> tuple[list[int], bool, bytes]:
    if "id" not in entry:
        raise ValueError("missing id field")
    oid_text = _parse_string(entry["id"], "id")
    if not oid_text:
        raise ValueError("zero length object identifier")
    arcs = []
    for i, part in enumerate(oid_text.split(".")):
        try:
            arcs += go_oid_arcs(part)
        except ValueError as exc:
            raise ValueError(f"failed parsing asn1 index element {i} value {part}: {exc}") from None
    dotted = ".".join(map(str, arcs))
    if dotted in RESERVED:
        raise ValueError(f"{RESERVED[dotted]} ({dotted}) is reserved")
    critical = entry.get("critical")
    if critical is None or critical == "":
        critical = False
    elif isinstance(critical, str) and not isinstance(critical, JsonNumber):
        try:
            critical = parse_go_bool(critical)
        except ConversionError:
            raise ValueError(f"critical field value failed to be parsed: cannot parse '' as bool: "
                             f"strconv.ParseBool: parsing {go_quote(critical)}: invalid syntax") from None
    else:
        critical = bool(critical) if isinstance(critical, bool) else float(critical) != 0
    if "value" not in entry:
        raise ValueError("missing 'value' field")
    text = _parse_string(entry["value"], "value")
    try:
        value = base64.b64decode(text, validate=True) if text else b""
    except (binascii.Error, ValueError):
        raise ValueError("failed base64 decoding 'value' field: illegal base64 data at input byte 0") from None
    return arcs, critical, value


def _written(key: str, arcs: list[int], taken: set[str]) -> cx509.ObjectIdentifier:
    """The extension id as Go's ``CreateRevocationList`` writes it (``encoding/asn1``: a negative arc
    is written as no bytes, :func:`asn1_marshaled_oid`). Raises OverflowError (a 500 ``error creating
    new CRL: ...``) for an id ``encoding/asn1`` refuses, and, as a written divergence, for an id
    written empty or onto an id the CRL already holds: OpenBao signs those CRLs, which no parser
    reads (cryptography cannot write them)."""
    if not asn1_marshalable(arcs):
        raise OverflowError("asn1: structure error: invalid object identifier")
    dotted = asn1_marshaled_oid(arcs)
    if dotted is None:
        raise OverflowError(f"extension id {key} would be written as an empty OBJECT IDENTIFIER")
    if dotted in taken:
        raise OverflowError(f"extension id {key} would be written as {dotted}, an extension the CRL already holds")
    taken.add(dotted)
    return cx509.ObjectIdentifier(dotted)


def _extensions(raw: list, message: str = "failed parsing extension entry {}: {}") -> list[tuple]:
    """``parseExtensionsParam``: every entry parsed and checked (400s; duplicates compared on the ids
    as given): ``(id as given, arcs, critical, value)`` for :func:`_write_extensions`."""
    parsed, seen = [], set()
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ValueError(f"extension entry {i} not a map")
        try:
            arcs, critical, value = _extension(entry)
        except ValueError as exc:
            raise ValueError(message.format(i, exc)) from None
        key = ".".join(map(str, arcs))
        if key in seen:
            raise ValueError(f"duplicate extension id: {key}")
        seen.add(key)
        parsed.append((key, arcs, critical, value))
    return parsed


def _write_extensions(parsed: list[tuple], taken: frozenset[str] = frozenset()) -> list[cx509.Extension]:
    """The parsed extensions as ``CreateRevocationList`` writes them, after every field is parsed
    (:func:`_written`; ``taken``: the ids the CRL writes itself)."""
    written = set(taken)
    out = []
    for key, arcs, critical, value in parsed:
        oid = _written(key, arcs, written)
        out.append(cx509.Extension(oid, critical, cx509.UnrecognizedExtension(oid, value)))
    return out


def _revoked_certs(raw: list) -> list[tuple[int, datetime.datetime, list[tuple]]]:
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            continue
        try:
            serial = _serial(entry)
        except ValueError as exc:
            raise ValueError(f"failed parsing serial_number from entry {i}: {exc}") from None
        try:
            when = _revocation_time(entry)
        except ValueError as exc:
            raise ValueError(f"failed parsing revocation_time from entry {i}: {exc}") from None
        extensions = entry.get("extensions")
        if extensions is None or extensions == "":
            parsed: list = []
        elif not isinstance(extensions, list):
            raise ValueError(f"failed parsing extensions from entry {i}: 'extensions' field did not contain a slice")
        else:
            try:
                parsed = _extensions(extensions)
            except ValueError as exc:
                raise ValueError(f"failed parsing extensions from entry {i}: {exc}") from None
        out.append((serial, when, parsed))
    return out


def _common(backend: PkiBackend, req: LogicalRequest, format_first: bool) -> tuple[str, int]:
    """The checks both paths share: ``(format, next_update seconds)``."""
    data = req.data
    fmt = data.get("format").lower()
    if format_first and fmt not in ("pem", "der"):
        raise user_error(f"unknown format value of {data.get('format')}")
    try:
        offset = parse_duration_second(data.get("next_update"))
    except ValueError as exc:
        raise user_error(f"invalid value for next_update: {exc}") from None
    if offset <= 0:
        raise user_error("next_update parameter must be greater than 0")
    if data.get("crl_number") < 0:
        raise user_error("crl_number parameter must be 0 or greater")
    if data.get("delta_crl_base_number") < -1:
        raise user_error("delta_crl_base_number parameter must be -1 or greater")
    if not data.get("issuer_ref"):
        raise user_error("issuer_ref parameter cannot be blank")
    if fmt not in ("pem", "der"):
        raise user_error(f"unknown format value of {data.get('format')}")
    return fmt, offset


def _crl_issuer(backend: PkiBackend, ref: str) -> Issuer:
    """``getCaBundle``: the issuer with its key and the ``crl-signing`` usage."""
    try:
        issuer = resolve_issuer(backend.state, ref)
    except IssuerNotFound as exc:
        raise user_error(f"failed to resolve issuer issuer_ref: {exc.message}") from None
    usages = [u for u in issuer.usage.split(",") if u]
    if "crl-signing" not in usages:
        name = f"id:{issuer.issuer_id}" + (f" / name:{issuer.issuer_name}" if issuer.issuer_name else "")
        raise user_error(f"error while attempting to use issuer {issuer.issuer_id}: requested usage crl-signing for "
                         f"issuer [{name}] but only had usage {','.join(sorted(usages))}")
    if issuer_key(backend.state, issuer) is None:
        raise user_error(f"unable to fetch corresponding key for issuer {issuer.issuer_id}; unable to use this issuer "
                         "for signing")
    return issuer


def _sign(backend: PkiBackend, issuer: Issuer, entries: list, extensions: list[cx509.Extension], number: int,
          offset: int, fmt: str, warnings: list[str] | None = None) -> LogicalResponse:
    now = backend.now()
    builder = (cx509.CertificateRevocationListBuilder().issuer_name(issuer.certificate.subject)
               .last_update(now).next_update(now + datetime.timedelta(seconds=offset)))
    try:
        ski = issuer.certificate.extensions.get_extension_for_class(cx509.SubjectKeyIdentifier).value.digest
        builder = builder.add_extension(cx509.AuthorityKeyIdentifier(ski, None, None), critical=False)
    except cx509.ExtensionNotFound:
        raise internal_error("error creating new CRL: x509: issuer certificate doesn't contain a subject key "
                             "identifier") from None
    builder = builder.add_extension(cx509.CRLNumber(number), critical=False)
    for extension in extensions:
        builder = builder.add_extension(extension.value, critical=extension.critical)
    for serial, when, entry_extensions in entries:
        entry = cx509.RevokedCertificateBuilder().serial_number(serial).revocation_date(when)
        for extension in entry_extensions:
            entry = entry.add_extension(extension.value, critical=extension.critical)
        builder = builder.add_revoked_certificate(entry.build())
    key = issuer_key(backend.state, issuer).private_key
    bits, pss = _signature(issuer)
    algorithm = signature_hash(key, bits)
    try:
        crl = builder.sign(key, algorithm, rsa_padding=_pss_padding(key, pss, algorithm))
    except ValueError as exc:
        raise internal_error(f"error creating new CRL: {exc}") from None
    der = crl.public_bytes(serialization.Encoding.DER)
    if fmt == "der":
        body = base64.b64encode(der).decode()
    else:
        body = crl.public_bytes(serialization.Encoding.PEM).decode()
    response = LogicalResponse(data={"crl": body})
    for warning in warnings or []:
        response.add_warning(warning)
    return response


def _delta(req: LogicalRequest) -> list[cx509.Extension]:
    base = req.data.get("delta_crl_base_number")
    if base < 0:
        return []
    return [cx509.Extension(cx509.DeltaCRLIndicator.oid, True, cx509.DeltaCRLIndicator(base))]


def _sign_revocation_list(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    fmt, offset = _common(backend, req, format_first=False)
    try:
        entries = _revoked_certs(_slice(req.data.get("revoked_certs")))
        taken = {"2.5.29.35", "2.5.29.20"} | ({"2.5.29.27"} if req.data.get("delta_crl_base_number") >= 0 else set())
        parsed = _extensions(_slice(req.data.get("extensions")))
        entries = [(serial, when, _write_extensions(entry_extensions)) for serial, when, entry_extensions in entries]
        extensions = _write_extensions(parsed, frozenset(taken))
    except ValueError as exc:
        raise user_error(str(exc)) from None
    except OverflowError as exc:
        raise internal_error(f"error creating new CRL: {exc}") from None
    issuer = _crl_issuer(backend, req.data.get("issuer_ref"))
    return _sign(backend, issuer, entries, extensions + _delta(req), req.data.get("crl_number"), offset, fmt)


def _pem_crl(index: int, text: str) -> cx509.CertificateRevocationList:
    blocks = text.count("-----BEGIN ")
    if blocks != 1 or not text.strip().startswith("-----BEGIN ") or not text.rstrip().endswith("-----"):
        raise user_error(f"failed decoding crl {index}: invalid crl; should be one PEM block only")
    try:
        return cx509.load_pem_x509_crl(text.encode())
    except ValueError as exc:
        raise user_error(f"failed decoding crl {index}: x509: malformed crl ({exc})") from None


def _resign_crls(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    fmt, offset = _common(backend, req, format_first=True)
    crls = [_pem_crl(i, text) for i, text in enumerate(req.data.get("crls"))]
    issuer = _crl_issuer(backend, req.data.get("issuer_ref"))
    public_key = issuer.certificate.public_key()
    for i, crl in enumerate(crls):
        if not crl.is_signature_valid(public_key):
            raise user_error(f"CRL index: {i} was not signed by requested issuer")
    oldest: dict[int, datetime.datetime] = {}
    warnings = []
    for crl in crls:
        for entry in crl:
            serial, when = entry.serial_number, entry.revocation_date_utc
            if serial in oldest and oldest[serial] != when:
                warnings.append(f"Duplicate serial {serial_to_hex(serial)} with different revocation times detected, "
                                "using oldest revocation time")
                when = min(when, oldest[serial])
            oldest[serial] = when
    entries = [(serial, when, []) for serial, when in oldest.items()]
    return _sign(backend, issuer, entries, _delta(req), req.data.get("crl_number"), offset, fmt, warnings)


def paths(backend: PkiBackend) -> list[Path]:
    """``issuer/:ref/sign-revocation-list`` and ``issuer/:ref/resign-crls`` (update only)."""
    return [
        Path(rf"issuer/{REF}/sign-revocation-list",
             {**COMMON_FIELDS, "revoked_certs": Field(ANY), "extensions": Field(ANY)},
             {"update": partial(_sign_revocation_list, backend)}),
        Path(rf"issuer/{REF}/resign-crls", {**COMMON_FIELDS, "crls": Field(STRING_SLICE)},
             {"update": partial(_resign_crls, backend)}),
    ]
