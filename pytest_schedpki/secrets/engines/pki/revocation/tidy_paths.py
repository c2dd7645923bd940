"""The tidy paths: ``tidy``, ``tidy-status``, ``tidy-cancel`` and ``config/auto-tidy``; the run itself and
its configuration are in :mod:`.tidy`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from pytest_schedpki.golang.duration import format_duration
from pytest_schedpki.secrets.framework.fields import BOOL, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, dumps, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .tidy import (
    AUTO_NOTHING,
    CONFIG_KEY,
    HOUR,
    NOT_RUNNING,
    NOTHING,
    PUBLISH_WITHOUT_COUNT,
    STARTED,
    STATUS_KEY,
    TidyConfig,
    auto_tidy_config,
    backend_uuid,
    parse_pause,
    run_tidy,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


# ------------------------------------------------------------------------------------------- paths

TIDY_FIELDS = {
    "tidy_cert_store": Field(BOOL), "tidy_revocation_list": Field(BOOL), "tidy_revoked_certs": Field(BOOL),
    "tidy_invalid_certs": Field(BOOL), "tidy_revoked_cert_issuer_associations": Field(BOOL),
    "tidy_expired_issuers": Field(BOOL), "tidy_move_legacy_ca_bundle": Field(BOOL), "tidy_acme": Field(BOOL, False),
    "safety_buffer": Field(DURATION, 72 * HOUR), "revoked_safety_buffer": Field(DURATION),
    "issuer_safety_buffer": Field(DURATION, 365 * 24 * HOUR),
    "acme_account_safety_buffer": Field(DURATION, 30 * 24 * HOUR),
    "page_size": Field(INT, 1000), "pause_duration": Field(STRING, "0s"),
}
AUTO_TIDY_FIELDS = {
    **TIDY_FIELDS, "enabled": Field(BOOL), "interval_duration": Field(DURATION, 12 * HOUR),
    "maintain_stored_certificate_counts": Field(BOOL, False),
    "publish_stored_certificate_count_metrics": Field(BOOL, False),
}


def _accepted(warning: str) -> LogicalResponse:
    """The 202 answer: upstream sends a pre-serialised envelope (no trailing newline, no warnings the
    framework adds afterwards)."""
    envelope = {"request_id": "", "lease_id": "", "renewable": False, "lease_duration": 0, "data": None,
                "wrap_info": None, "warnings": [warning], "auth": None}
    return LogicalResponse(status=202, raw=(dumps(envelope).encode(), "application/json"))


def _tidy(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``POST tidy``: validate (module table), run synchronously, answer 202."""
    d = req.data
    safety = d.get("safety_buffer")
    revoked, sent = d.get_ok("revoked_safety_buffer")
    if not sent:
        revoked = safety
    if safety < 1:
        raise user_error("safety_buffer must be greater than zero")
    if revoked < 1:
        raise user_error("revokedSafetyBuffer must be greater than zero")
    if d.get("issuer_safety_buffer") < 1:
        raise user_error("issuer_safety_buffer must be greater than zero")
    if d.get("acme_account_safety_buffer") < 1:
        raise user_error("acme_account_safety_buffer must be greater than zero")
    pause = 0
    if d.get("pause_duration") != "":
        try:
            pause = parse_pause(d.get("pause_duration"))
        except ValueError as exc:
            raise user_error(f"Error parsing pause_duration: {exc}") from None
        if pause < 0:
            raise user_error("received invalid, negative pause_duration")
    page_size = d.get("page_size")
    if 0 < page_size < 5:
        raise user_error("page_size must be greater than five")
    config = TidyConfig(
        enabled=True, interval=0, cert_store=d.get("tidy_cert_store"),
        revoked_certs=d.get("tidy_revoked_certs") or d.get("tidy_revocation_list"),
        invalid_certs=d.get("tidy_invalid_certs"), issuer_assocs=d.get("tidy_revoked_cert_issuer_associations"),
        expired_issuers=d.get("tidy_expired_issuers"), backup_bundle=d.get("tidy_move_legacy_ca_bundle"),
        acme=d.get("tidy_acme"), safety_buffer=safety, revoked_safety_buffer=revoked,
        issuer_safety_buffer=d.get("issuer_safety_buffer"),
        acme_account_safety_buffer=d.get("acme_account_safety_buffer"), pause_ns=pause, page_size=page_size)
    backend_uuid(backend.state)
    run_tidy(backend, config)
    return _accepted(STARTED if config.any_operation() else NOTHING)


_INACTIVE_KEYS = (  # tidy-status keys that are null before any run (besides state and internal_backend_uuid)
    "safety_buffer revoked_safety_buffer issuer_safety_buffer acme_account_safety_buffer tidy_cert_store "
    "tidy_revoked_certs tidy_invalid_certs tidy_revoked_cert_issuer_associations tidy_expired_issuers "
    "tidy_move_legacy_ca_bundle tidy_acme pause_duration page_size error time_started time_finished message "
    "cert_store_deleted_count revoked_cert_deleted_count missing_issuer_cert_count current_cert_store_count "
    "current_revoked_cert_count total_acme_account_count acme_account_deleted_count acme_account_revoked_count "
    "acme_orders_deleted_count").split()


def tidy_status(backend: PkiBackend) -> dict[str, Any]:
    """``tidy-status`` data: 28 keys (all null but ``state: "Inactive"`` and ``internal_backend_uuid``)
    before any run, 29 after one (see the module docstring)."""
    data: dict[str, Any] = dict.fromkeys(_INACTIVE_KEYS)
    data.update(state="Inactive", internal_backend_uuid=backend_uuid(backend.state))
    data.update(backend.state.extra.get(STATUS_KEY) or {})
    return data


def _status(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=tidy_status(backend))


def _cancel(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``POST tidy-cancel``: a tidy never runs in the background here, so always the warning."""
    return LogicalResponse(data=None, warnings=[NOT_RUNNING])


def auto_tidy_data(config: TidyConfig) -> dict[str, Any]:
    """``config/auto-tidy`` data (17 keys; seconds as ints, ``pause_duration`` a Go duration text)."""
    return {
        "enabled": config.enabled, "interval_duration": config.interval, "tidy_cert_store": config.cert_store,
        "tidy_revoked_certs": config.revoked_certs, "tidy_invalid_certs": config.invalid_certs,
        "tidy_revoked_cert_issuer_associations": config.issuer_assocs,
        "tidy_expired_issuers": config.expired_issuers, "tidy_move_legacy_ca_bundle": config.backup_bundle,
        "tidy_acme": config.acme, "safety_buffer": config.safety_buffer,
        "revoked_safety_buffer": config.revoked_buffer, "issuer_safety_buffer": config.issuer_safety_buffer,
        "acme_account_safety_buffer": config.acme_account_safety_buffer,
        "pause_duration": format_duration(config.pause_ns), "page_size": config.page_size,
        "publish_stored_certificate_count_metrics": config.publish_metrics,
        "maintain_stored_certificate_counts": config.maintain_count,
    }


def _read_auto_tidy(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=auto_tidy_data(auto_tidy_config(backend.state)))


# config/auto-tidy fields in upstream's order of handling: (field, TidyConfig attribute, refusal as
# (minimum, text) or None); pause_duration is parsed on its own
_AUTO_STEPS = (
    ("enabled", "enabled", None), ("interval_duration", "interval", None),
    ("tidy_cert_store", "cert_store", None), ("tidy_revoked_certs", "revoked_certs", None),
    ("tidy_invalid_certs", "invalid_certs", None), ("tidy_revoked_cert_issuer_associations", "issuer_assocs", None),
    ("safety_buffer", "safety_buffer", (1, "given safety_buffer must be at least one second; got: {}")),
    ("revoked_safety_buffer", "revoked_safety_buffer", (1, "revoked_safety_buffer must be at least one second; got: {}")),
    ("pause_duration", "pause_ns", None),
    ("page_size", "page_size", (5, "page_size must be at least 5")),
    ("tidy_expired_issuers", "expired_issuers", None),
    ("issuer_safety_buffer", "issuer_safety_buffer", (1, "given safety_buffer must be at least one second; got: {}")),
    ("tidy_move_legacy_ca_bundle", "backup_bundle", None), ("tidy_acme", "acme", None),
    ("acme_account_safety_buffer", "acme_account_safety_buffer",
     (1, "given acme_account_safety_buffer must be at least one second; got: {}")),
)


def _write_auto_tidy(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """Merge the sent fields into ``config/auto-tidy`` in upstream's order of checks (module docstring);
    a refused write stores nothing."""
    d = req.data
    changes: dict[str, Any] = {}
    for field, attr, refusal in _AUTO_STEPS:
        value, sent = d.get_ok(field)
        if not sent:
            continue
        if field == "pause_duration":
            try:
                value = parse_pause(value)
            except ValueError as exc:
                raise user_error(f"unable to parse given pause_duration: {exc}") from None
            if value < 0:
                raise user_error("received invalid, negative pause_duration")
        elif refusal is not None and value < refusal[0]:
            raise user_error(refusal[1].format(value))
        changes[attr] = value
    config = replace(auto_tidy_config(backend.state), **changes)
    if config.enabled and not config.any_operation():
        raise user_error(AUTO_NOTHING)
    for field, attr in (("maintain_stored_certificate_counts", "maintain_count"),
                        ("publish_stored_certificate_count_metrics", "publish_metrics")):
        value, sent = d.get_ok(field)
        if sent:
            config = replace(config, **{attr: value})
    if config.publish_metrics and not config.maintain_count:
        raise user_error(PUBLISH_WITHOUT_COUNT)
    backend.state.extra[CONFIG_KEY] = config
    return LogicalResponse(data=auto_tidy_data(config))


def paths(backend: PkiBackend) -> list[Path]:
    """``tidy`` (update), ``tidy-status`` (read), ``tidy-cancel`` (update), ``config/auto-tidy``
    (read, update); other operations 405 as upstream."""
    return [
        Path(r"tidy", dict(TIDY_FIELDS), {"update": partial(_tidy, backend)}),
        Path(r"tidy-status", {}, {"read": partial(_status, backend)}),
        Path(r"tidy-cancel", {}, {"update": partial(_cancel, backend)}),
        Path(r"config/auto-tidy", dict(AUTO_TIDY_FIELDS), {"read": partial(_read_auto_tidy, backend),
                                                          "update": partial(_write_auto_tidy, backend)}),
    ]
