"""Certificate revocation lists: one real CRL per issuer (signed with ``cryptography``), the
``config/crl`` record, and the paths ``crl``, ``crl/pem``, ``cert/crl``, ``issuer/:ref/crl[/pem|/der]``
and ``crl/rotate``.

A CRL lists the revoked certificates of ``state.certs`` whose ``issuer_id`` is that issuer, without
entry extensions; extensions AuthorityKeyIdentifier + CRLNumber; nextUpdate = thisUpdate +
``config/crl`` ``expiry`` (72h). Like OpenBao, every rebuild increments each issuer's CRL number
(root generation, imports, issuer deletion, ``crl/rotate``); the revocation paths call
:func:`rebuild_crls` after revoking, and a fetch also rebuilds a CRL whose revoked set is stale.
"""

from __future__ import annotations

import datetime
import re
from functools import partial
from typing import TYPE_CHECKING, Any

from cryptography import x509 as cx509

from ...godur import GoDurationError, format_seconds, go_quote, parse_duration
from ..fields import BOOL, STRING, Field
from ..router import LogicalRequest, Path
from ..wire import LogicalError, LogicalResponse, user_error
from .issuers import REF, IssuerNotFound, issuer_key, resolve_issuer
from .model import Issuer, PkiState
from .x509 import build_crl, crl_der, crl_pem

if TYPE_CHECKING:  # pragma: no cover
    from .backend import PkiBackend

PEM_FILE = "application/x-pem-file"
PKIX_CRL = "application/pkix-crl"


def parse_duration_second(text: str) -> int:
    """go-secure-stdlib ``ParseDurationSecond`` for the string fields of ``config/crl``: integer
    seconds, ``<n>d`` days, else a Go duration. ``ValueError`` carries Go's text, e.g.
    ``strconv.ParseInt: parsing "ba": invalid syntax`` or ``time: invalid duration "soon"``."""
    if text == "":
        return 0
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if text.endswith("d"):
        days = text[:-1]
        if not re.fullmatch(r"[+-]?\d+", days):
            raise ValueError(f"strconv.ParseInt: parsing {go_quote(days)}: invalid syntax")
        return int(days) * 86400
    try:
        return parse_duration(text) // 1_000_000_000
    except GoDurationError as exc:
        raise ValueError(str(exc)) from None


def _revoked_for(state: PkiState, issuer_id: str) -> list[tuple[int, datetime.datetime]]:
    return sorted((int(r.serial_number.replace(":", ""), 16), r.revocation_time)
                  for r in state.certs.values() if r.revocation_time is not None and r.issuer_id == issuer_id)


def _signature(issuer: Issuer) -> tuple[int, bool]:
    name = issuer.revocation_signature_algorithm
    bits = next((b for b in (256, 384, 512) if str(b) in name), 0)
    return bits, name.endswith("PSS")


def _can_sign_crls(state: PkiState, issuer: Issuer) -> bool:
    return issuer_key(state, issuer) is not None and "crl-signing" in issuer.usage


def build_issuer_crl(backend: PkiBackend, issuer: Issuer) -> cx509.CertificateRevocationList | None:
    """Build (and remember) a fresh complete CRL and its (empty) delta CRL for ``issuer``; ``None``
    when the issuer cannot sign CRLs (no key, or no ``crl-signing`` usage). Like upstream, a rebuild
    uses two CRL numbers: ``n`` for the complete CRL, ``n + 1`` for the delta (indicator ``n``); the
    first CRL of an issuer is number 1."""
    state = backend.state
    if not _can_sign_crls(state, issuer):
        return None
    revoked = [] if state.config_crl.get("disable") else _revoked_for(state, issuer.issuer_id)
    number = state.crl_numbers.get(issuer.issuer_id, 1)
    now = backend.now()
    try:
        expiry = parse_duration_second(str(state.config_crl.get("expiry", "72h")))
    except ValueError:
        expiry = 72 * 3600
    bits, pss = _signature(issuer)
    key = issuer_key(state, issuer).private_key
    next_update = now + datetime.timedelta(seconds=expiry)
    crl = build_crl(issuer.certificate, key, revoked, number, now, next_update, signature_bits=bits, use_pss=pss)
    delta = build_crl(issuer.certificate, key, [], number + 1, now, next_update, signature_bits=bits, use_pss=pss,
                      delta_of=number)
    state.crl_numbers[issuer.issuer_id] = number + 2
    state.crls[issuer.issuer_id] = {"crl": crl, "delta": delta, "revoked": revoked}
    return crl


def rebuild_crls(backend: PkiBackend) -> None:
    """Rebuild the CRLs of every issuer that can sign one (what upstream does after each revocation,
    root generation, import, issuer deletion and ``crl/rotate``)."""
    for issuer_id in sorted(backend.state.issuers):
        build_issuer_crl(backend, backend.state.issuers[issuer_id])


def current_crl(backend: PkiBackend, issuer: Issuer, delta: bool = False) -> cx509.CertificateRevocationList | None:
    """The issuer's complete (or delta) CRL as last built; when its revoked set changed since (a
    revocation not followed by :func:`rebuild_crls`) every CRL is rebuilt first, as a revocation
    would have done."""
    state = backend.state
    cached = state.crls.get(issuer.issuer_id)
    expected = [] if state.config_crl.get("disable") else _revoked_for(state, issuer.issuer_id)
    if cached is None or cached["revoked"] != expected:
        rebuild_crls(backend)
        cached = state.crls.get(issuer.issuer_id)
    if cached is None:
        return None
    return cached["delta" if delta else "crl"]


# ------------------------------------------------------------------------------------------- paths

def _mount_crl(backend: PkiBackend, req: LogicalRequest, form: str, delta: bool = False) -> LogicalResponse:
    """``crl`` (DER), ``crl/pem`` (PEM, no trailing newline) and ``crl/delta[/pem]``: the default
    issuer's CRL; 204 when there is none. ``cert/crl`` / ``cert/delta-crl``: JSON ``certificate`` +
    ``revocation_time`` 0; 500 plain ``no default issuer currently configured``."""
    try:
        crl = current_crl(backend, resolve_issuer(backend.state, "default"), delta)
    except IssuerNotFound as exc:
        if form == "json":
            raise LogicalError(500, [exc.message]) from None
        crl = None
    if form == "json":
        return LogicalResponse(data={"certificate": crl_pem(crl) if crl is not None else "", "revocation_time": 0,
                                     "revocation_time_rfc3339": ""})
    body = b"" if crl is None else (crl_der(crl) if form == "der" else crl_pem(crl).encode())
    return LogicalResponse(raw=(body, PKIX_CRL if form == "der" else PEM_FILE), status=200 if body else 204)


def _issuer_crl(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``issuer/:ref/crl[/delta]`` (JSON ``crl``), ``.../pem``, ``.../der``; PEMs end with a newline
    here. Unknown issuer: 500 plain ``unable to find PKI issuer for reference: <ref>``."""
    try:
        issuer = resolve_issuer(backend.state, req.data.get("issuer_ref"))
    except IssuerNotFound as exc:
        raise LogicalError(500, [exc.message]) from None
    crl = current_crl(backend, issuer, delta=bool(req.data.get("delta")))
    form = req.data.get("form")
    if form == "/der":
        body = crl_der(crl) if crl is not None else b""
        return LogicalResponse(raw=(body, PKIX_CRL), status=200 if body else 204)
    text = crl_pem(crl) + "\n" if crl is not None else ""
    if form == "/pem":
        return LogicalResponse(raw=(text.encode(), PEM_FILE), status=200 if text else 204)
    return LogicalResponse(data={"crl": text})


def _rotate(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    rebuild_crls(backend)
    return LogicalResponse(data={"success": True})


CONFIG_FIELDS = {
    "expiry": Field(STRING, "72h"), "disable": Field(BOOL, False), "ocsp_disable": Field(BOOL, False),
    "ocsp_expiry": Field(STRING, "12h"), "auto_rebuild": Field(BOOL, False),
    "auto_rebuild_grace_period": Field(STRING, "12h"), "enable_delta": Field(BOOL, False),
    "delta_rebuild_interval": Field(STRING, "15m"), "allow_expired_cert_revocation": Field(BOOL, False),
}


def _read_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=dict(backend.state.config_crl))


def _write_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """Merge the sent fields into ``config/crl`` with upstream's checks (400): ``given <field> could not
    be decoded: <why>``, ``ocsp_expiry must be greater than or equal to 0 got: <d>``, the grace period
    and delta window rules, ``Delta CRLs cannot be enabled when auto rebuilding is disabled as the
    complete CRL is always regenerated!``. Changing ``disable`` rebuilds the CRLs."""
    data, old = req.data, backend.state.config_crl
    config: dict[str, Any] = dict(old)
    for name in CONFIG_FIELDS:
        if not data.sent(name):
            continue
        value = data.get(name)
        if CONFIG_FIELDS[name].type == STRING:
            try:
                seconds = parse_duration_second(value)
            except ValueError as exc:
                raise user_error(f"given {name} could not be decoded: {exc}") from None
            if name == "ocsp_expiry" and seconds < 0:
                raise user_error(f"ocsp_expiry must be greater than or equal to 0 got: {format_seconds(seconds)}")
        config[name] = value
    expiry = parse_duration_second(config["expiry"])
    if config["auto_rebuild"] and parse_duration_second(config["auto_rebuild_grace_period"]) >= expiry:
        raise user_error(f"CRL auto-rebuilding grace period ({config['auto_rebuild_grace_period']}) must be strictly "
                         f"shorter than CRL expiry ({config['expiry']}) value when auto-rebuilding of CRLs is enabled")
    if config["enable_delta"] and parse_duration_second(config["delta_rebuild_interval"]) >= expiry:
        raise user_error(f"CRL delta rebuild window ({config['delta_rebuild_interval']}) must be strictly shorter "
                         f"than CRL expiry ({config['expiry']}) value when delta CRLs are enabled")
    if not config["auto_rebuild"] and config["enable_delta"]:
        raise user_error("Delta CRLs cannot be enabled when auto rebuilding is disabled as the complete CRL is "
                         "always regenerated!")
    backend.state.config_crl = config
    if old.get("disable") != config["disable"] or (old.get("auto_rebuild") and not config["auto_rebuild"]) \
            or old.get("enable_delta") != config["enable_delta"]:
        rebuild_crls(backend)
    return LogicalResponse(data=dict(config))


def paths(backend: PkiBackend) -> list[Path]:
    """CRL paths; the fetch ones are unauthenticated as upstream lists them."""
    return [
        Path(r"crl", {}, {"read": partial(_mount_crl, backend, form="der")}, unauthenticated=True),
        Path(r"crl/pem", {}, {"read": partial(_mount_crl, backend, form="pem")}, unauthenticated=True),
        Path(r"cert/crl", {}, {"read": partial(_mount_crl, backend, form="json")}, unauthenticated=True),
        Path(r"crl/delta", {}, {"read": partial(_mount_crl, backend, form="der", delta=True)}, unauthenticated=True),
        Path(r"crl/delta/pem", {}, {"read": partial(_mount_crl, backend, form="pem", delta=True)}, unauthenticated=True),
        Path(r"cert/delta-crl", {}, {"read": partial(_mount_crl, backend, form="json", delta=True)},
             unauthenticated=True),
        Path(r"crl/rotate", {}, {"read": partial(_rotate, backend)}),
        Path(rf"issuer/{REF}/crl(?P<delta>/delta)?(?P<form>/pem|/der)?",
             {"issuer_ref": Field(STRING), "form": Field(STRING), "delta": Field(STRING)},
             {"read": partial(_issuer_crl, backend)}, unauthenticated=True),
        Path(r"config/crl", CONFIG_FIELDS, {"read": partial(_read_config, backend),
                                            "update": partial(_write_config, backend)}),
    ]
