"""The CRL paths: ``crl``, ``crl/delta``, ``cert/crl``, ``issuer/:ref/crl...`` (PEM, DER, JSON),
``crl/rotate``, ``crl/rotate-delta`` and ``config/crl``; the CRLs themselves are built in :mod:`.crl`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from pytest_schedpki.golang.duration import format_seconds
from pytest_schedpki.secrets.framework.fields import BOOL, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalError, LogicalResponse, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import REF, IssuerNotFound, resolve_issuer
from ..codecs.x509 import crl_der, crl_pem
from .crl import (
    PEM_FILE,
    PKIX_CRL,
    current_crl,
    parse_duration_second,
    rebuild_crls,
    rebuild_delta_crls,
    rebuild_warnings,
    refresh_crls,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


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
    """``crl/rotate``: ``{success: true}``; rebuilds every CRL (no-op while ``disable``)."""
    return LogicalResponse(data={"success": True}, warnings=rebuild_warnings(rebuild_crls(backend, force=False)))


def _rotate_delta(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``crl/rotate-delta``: ``{success: true}``; rebuilds the delta CRLs when ``enable_delta`` (from the
    delta WAL, numbers +1), else warning ``requested rebuild of delta CRL when delta CRL is not enabled;
    this is a no-op``."""
    response = LogicalResponse(data={"success": True})
    if backend.state.config_crl.get("enable_delta"):
        refresh_crls(backend)
        rebuild_delta_crls(backend)
    else:
        response.add_warning("requested rebuild of delta CRL when delta CRL is not enabled; this is a no-op")
    return response


CONFIG_FIELDS = {
    "expiry": Field(STRING, "72h"), "disable": Field(BOOL, False), "ocsp_disable": Field(BOOL, False),
    "ocsp_expiry": Field(STRING, "12h"), "auto_rebuild": Field(BOOL, False),
    "auto_rebuild_grace_period": Field(STRING, "12h"), "enable_delta": Field(BOOL, False),
    "delta_rebuild_interval": Field(STRING, "15m"), "allow_expired_cert_revocation": Field(BOOL, False),
}


def _stored_config(backend: PkiBackend) -> dict[str, Any]:
    """A copy of ``config/crl`` as upstream's ``getRevocationConfig`` returns it: an empty ``expiry``
    (written as ``""`` or ``null``) reads back as the default ``72h``."""
    config = dict(backend.state.config_crl)
    if not config.get("expiry"):
        config["expiry"] = CONFIG_FIELDS["expiry"].default
    return config


def _read_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=_stored_config(backend))


def _write_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """Merge the sent fields into ``config/crl`` with upstream's checks (400): ``given <field> could not
    be decoded: <why>``, ``ocsp_expiry must be greater than or equal to 0 got: <d>``, the grace period
    and delta window rules, ``Delta CRLs cannot be enabled when auto rebuilding is disabled as the
    complete CRL is always regenerated!``. Changing ``disable`` rebuilds the CRLs."""
    data, old = req.data, backend.state.config_crl
    config = _stored_config(backend)
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
        Path(r"crl/rotate-delta", {}, {"read": partial(_rotate_delta, backend)}),
        Path(rf"issuer/{REF}/crl(?P<delta>/delta)?(?P<form>/pem|/der)?",
             {"issuer_ref": Field(STRING), "form": Field(STRING), "delta": Field(STRING)},
             {"read": partial(_issuer_crl, backend)}, unauthenticated=True),
        Path(r"config/crl", CONFIG_FIELDS, {"read": partial(_read_config, backend),
                                            "update": partial(_write_config, backend)}),
    ]
