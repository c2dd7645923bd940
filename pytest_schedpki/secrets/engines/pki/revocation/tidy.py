"""Tidy: ``POST tidy``, ``GET tidy-status``, ``POST tidy-cancel`` and ``config/auto-tidy``, as
OpenBao 2.7.2 answers them (``path_tidy.go``), checked against the real server.

``POST tidy`` - fields (all optional): the booleans ``tidy_cert_store``, ``tidy_revoked_certs`` (and
its deprecated synonym ``tidy_revocation_list``), ``tidy_invalid_certs``,
``tidy_revoked_cert_issuer_associations``, ``tidy_expired_issuers``, ``tidy_move_legacy_ca_bundle``,
``tidy_acme``; the durations (integer seconds or Go/``<n>d`` strings) ``safety_buffer`` (72h),
``revoked_safety_buffer`` (defaults to ``safety_buffer``), ``issuer_safety_buffer`` (8760h),
``acme_account_safety_buffer`` (720h); ``pause_duration`` (string, ``"0s"``) and ``page_size`` (1000).

Refusals, all 400, checked in this order: a value that does not convert (``Field validation failed:
error converting input for field "<f>": <why>``, e.g. a negative duration); ``safety_buffer must be
greater than zero``; ``revokedSafetyBuffer must be greater than zero``; ``issuer_safety_buffer must be
greater than zero``; ``acme_account_safety_buffer must be greater than zero`` (each when < 1 s);
``Error parsing pause_duration: <Go text>``; ``received invalid, negative pause_duration``;
``page_size must be greater than five`` (1 to 4; 0 and negatives are accepted).

Success: **202** with ``request_id: ""``, ``data: null`` and one warning: ``Tidy operation successfully
started. Any information from the operation will be printed to OpenBao's server logs.`` or, when no
operation was selected, ``Manual tidy requested but no tidy operations were set. Enable at least one
tidy operation to be run (tidy_cert_store / ... / tidy_acme).`` (the run still happens and is
reported as ``Finished``). Like upstream, whose 202 body is pre-serialised, the body has no trailing
newline and never carries the ``Endpoint ignored these unrecognized parameters`` warning.

The run (upstream: a background goroutine; here: synchronously, on the double's clock
``backend.now()``, so ``tidy-status`` is ``Finished`` as soon as the 202 is sent):

1. ``tidy_cert_store``: every stored certificate whose NotAfter is more than ``safety_buffer`` in the
   past (``revoked_safety_buffer`` for a revoked one) leaves the store (``cert/:serial`` 404, not in
   ``LIST certs``). A revoked one keeps its revocation entry (``LIST certs/revoked``, CRL) unless
   ``tidy_revoked_certs`` is also set, which removes both.
2. ``tidy_revoked_cert_issuer_associations``: every revocation entry whose issuer id is not an issuer
   of the mount counts in ``missing_issuer_cert_count`` and is re-associated by signature (or left
   unassigned; ``cert/:serial`` then has no ``issuer_id``).
3. ``tidy_revoked_certs``: every revocation entry whose certificate expired more than
   ``revoked_safety_buffer`` ago is removed with its certificate.
4. If revocation entries were removed and ``config/crl`` ``auto_rebuild`` is false, the CRLs are rebuilt.
5. ``tidy_expired_issuers``: every issuer that expired more than ``issuer_safety_buffer`` ago, except
   the default issuer, is deleted (its key stays); chains and CRLs are rebuilt.

``tidy_invalid_certs`` has nothing to do (the double stores no unparsable entries), ``tidy_acme`` and
``tidy_move_legacy_ca_bundle`` neither (no ACME, no legacy bundle); ``pause_duration`` is not slept.

``GET tidy-status`` - 200 with 28 keys before any run (``state: "Inactive"``, everything else null
except ``internal_backend_uuid``, a UUID fixed per mount) and 29 after one: the run's parameters
(buffers in seconds, ``pause_duration`` as a Go duration text, ``page_size``, the flags - with
``tidy_invalid_certs`` always false, as upstream never records it), ``state: "Finished"``,
``error``/``message`` null, ``time_started``/``time_finished``/``last_auto_tidy_finished`` (RFC 3339
UTC of the double's clock), the counters ``cert_store_deleted_count``, ``revoked_cert_deleted_count``,
``missing_issuer_cert_count``, the ACME counters (0) and ``current_cert_store_count`` /
``current_revoked_cert_count`` (null: upstream only counts on a mount initialised with
``maintain_stored_certificate_counts``).

``POST tidy-cancel`` - nothing is ever running here: 200, ``data: null``, warning ``Tidy operation
cannot be cancelled as none is currently running.``

``config/auto-tidy`` - read: the 17 fields ``enabled`` (false), ``interval_duration`` (43200 s), the 7
``tidy_*`` flags, ``safety_buffer`` (259200), ``revoked_safety_buffer`` (follows ``safety_buffer``
until set), ``issuer_safety_buffer`` (31536000), ``acme_account_safety_buffer`` (2592000),
``pause_duration`` (``"0s"``), ``page_size`` (1000), ``maintain_stored_certificate_counts``,
``publish_stored_certificate_count_metrics``. Write merges the sent fields and answers the result;
400 texts: ``given safety_buffer must be at least one second; got: <n>`` (also for
``issuer_safety_buffer``, as upstream), ``revoked_safety_buffer must be at least one second; got: <n>``,
``given acme_account_safety_buffer must be at least one second; got: <n>``, ``unable to parse given
pause_duration: <Go text>``, ``received invalid, negative pause_duration``, ``page_size must be at least
5``, ``Auto-tidy enabled but no tidy operations were requested. Enable at least one tidy operation to be
run (...).``, ``Can not publish a running storage metrics count to metrics without first maintaining
that count.  Enable `maintain_stored_certificate_counts` to enable
`publish_stored_certificate_count_metrics`.``

The double has no periodic job: an enabled auto-tidy never runs by itself. Tests call
:func:`run_auto_tidy` to do what upstream's periodic function does once the interval has passed.
"""

from __future__ import annotations

import datetime
import json
import re
import uuid
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from pytest_schedpki.golang.duration import format_duration, parse_duration
from pytest_schedpki.secrets.framework.fields import BOOL, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import delete_issuer
from ..codecs.rfc3339 import format_rfc3339_nano
from .crl import parse_duration_second, rebuild_crls, revocation_issuer_id

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend
    from ..model import PkiState

OPERATIONS = ("tidy_cert_store / tidy_revoked_certs / tidy_invalid_certs / tidy_revoked_cert_issuer_associations / "
              "tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_acme")
STARTED = ("Tidy operation successfully started. Any information from the operation will be printed to OpenBao's "
           "server logs.")
NOTHING = ("Manual tidy requested but no tidy operations were set. Enable at least one tidy operation to be run ("
           + OPERATIONS + ").")
NOT_RUNNING = "Tidy operation cannot be cancelled as none is currently running."
AUTO_NOTHING = ("Auto-tidy enabled but no tidy operations were requested. Enable at least one tidy operation to be "
                "run (" + OPERATIONS + ").")
PUBLISH_WITHOUT_COUNT = ("Can not publish a running storage metrics count to metrics without first maintaining that "
                         "count.  Enable `maintain_stored_certificate_counts` to enable "
                         "`publish_stored_certificate_count_metrics`.")
HOUR = 3600


@dataclass(frozen=True)
class TidyConfig:
    """One tidy run's parameters (also the stored ``config/auto-tidy``). Buffers and ``interval`` are
    seconds; ``revoked_safety_buffer`` ``None`` follows ``safety_buffer``; ``pause_ns`` nanoseconds."""

    enabled: bool = False
    interval: int = 12 * HOUR
    cert_store: bool = False
    revoked_certs: bool = False
    invalid_certs: bool = False
    issuer_assocs: bool = False
    expired_issuers: bool = False
    backup_bundle: bool = False
    acme: bool = False
    safety_buffer: int = 72 * HOUR
    revoked_safety_buffer: int | None = None
    issuer_safety_buffer: int = 365 * 24 * HOUR
    acme_account_safety_buffer: int = 30 * 24 * HOUR
    pause_ns: int = 0
    page_size: int = 1000
    maintain_count: bool = False
    publish_metrics: bool = False

    @property
    def revoked_buffer(self) -> int:
        return self.safety_buffer if self.revoked_safety_buffer is None else self.revoked_safety_buffer

    def any_operation(self) -> bool:
        return any((self.cert_store, self.revoked_certs, self.invalid_certs, self.issuer_assocs,
                    self.expired_issuers, self.backup_bundle, self.acme))


# state.extra keys (values are immutable and replaced, never mutated: snapshots share them)
CONFIG_KEY, STATUS_KEY, UUID_KEY = "tidy_config", "tidy_status", "tidy_backend_uuid"


def auto_tidy_config(state: PkiState) -> TidyConfig:
    """The stored ``config/auto-tidy`` (the defaults until written)."""
    return state.extra.get(CONFIG_KEY) or TidyConfig()


def backend_uuid(state: PkiState) -> str:
    """``internal_backend_uuid``: a random UUID per mount, made on first use."""
    if UUID_KEY not in state.extra:
        state.extra[UUID_KEY] = str(uuid.uuid4())
    return state.extra[UUID_KEY]


def parse_pause(text: str) -> int:
    """``pause_duration`` (``ParseDurationSecond``) in nanoseconds; ``ValueError`` with Go's text."""
    seconds = parse_duration_second(text)  # validates, with upstream's error texts
    if text == "" or re.fullmatch(r"[+-]?\d+d?", text):
        return seconds * 1_000_000_000
    return parse_duration(text)


# ------------------------------------------------------------------------------------------- the run

def _expired_for(now: datetime.datetime, not_after: datetime.datetime, buffer_seconds: int) -> bool:
    """``time.Since(NotAfter) > buffer``."""
    return now - not_after > datetime.timedelta(seconds=buffer_seconds)


def _hyphen_order(serials: Any) -> list[str]:
    """Storage listing order (upstream stores serials with hyphens)."""
    return sorted(serials, key=lambda s: s.replace(":", "-"))


def run_tidy(backend: PkiBackend, config: TidyConfig) -> dict[str, Any]:
    """Run one tidy at ``backend.now()`` with ``config`` (see the module docstring) and record it as
    the mount's tidy status; returns the counters ``{"cert_store_deleted_count",
    "revoked_cert_deleted_count", "missing_issuer_cert_count"}``. Usable directly by fixtures."""
    state, now = backend.state, backend.now()
    counts = {"cert_store_deleted_count": 0, "revoked_cert_deleted_count": 0, "missing_issuer_cert_count": 0}
    revoked_buffer = config.revoked_buffer
    rebuild = False
    if config.cert_store:
        for serial in _hyphen_order([s for s, r in state.certs.items() if r.stored]):
            record = state.certs[serial]
            if record.revocation_time is None:
                if _expired_for(now, record.certificate.not_valid_after_utc, config.safety_buffer):
                    state.certs.pop(serial)
                    counts["cert_store_deleted_count"] += 1
            elif _expired_for(now, record.certificate.not_valid_after_utc, revoked_buffer):
                if config.revoked_certs:  # certificate and revocation entry both go
                    state.certs.pop(serial)
                    counts["revoked_cert_deleted_count"] += 1
                    rebuild = True
                else:  # the revocation entry stays (LIST certs/revoked, CRL)
                    state.certs[serial] = replace(record, stored=False)
                counts["cert_store_deleted_count"] += 1
    if config.revoked_certs or config.issuer_assocs:
        revoked = [s for s, r in state.certs.items() if r.revocation_time is not None]
        for serial in _hyphen_order(revoked):
            record = state.certs[serial]
            if config.issuer_assocs and record.issuer_id not in state.issuers:
                counts["missing_issuer_cert_count"] += 1
                record = replace(record, issuer_id=revocation_issuer_id(state, record.certificate))
                state.certs[serial] = record
            if config.revoked_certs and _expired_for(now, record.certificate.not_valid_after_utc, revoked_buffer):
                state.certs.pop(serial)
                counts["revoked_cert_deleted_count"] += 1
                rebuild = True
    if rebuild and not state.config_crl.get("auto_rebuild"):
        rebuild_crls(backend, force=False)  # upstream only logs the rebuild warnings
    if config.expired_issuers:
        removed = False
        for issuer_id in sorted(state.issuers):
            issuer = state.issuers[issuer_id]
            if issuer_id == state.default_issuer_id or not _expired_for(
                    now, issuer.certificate.not_valid_after_utc, config.issuer_safety_buffer):
                continue  # upstream keeps an expired default issuer (and logs a warning)
            delete_issuer(backend, issuer_id)  # the key stays; chains are rebuilt
            removed = True
        if removed:
            rebuild_crls(backend, force=False)
    _record_status(backend, config, now, counts)
    return counts


def _record_status(backend: PkiBackend, config: TidyConfig, now: datetime.datetime, counts: dict[str, int]) -> None:
    stamp = format_rfc3339_nano(now)
    status = {
        "safety_buffer": config.safety_buffer, "revoked_safety_buffer": config.revoked_buffer,
        "issuer_safety_buffer": config.issuer_safety_buffer,
        "acme_account_safety_buffer": config.acme_account_safety_buffer,
        "tidy_cert_store": config.cert_store, "tidy_revoked_certs": config.revoked_certs,
        "tidy_invalid_certs": False,  # upstream's tidyStatusStart never copies it
        "tidy_revoked_cert_issuer_associations": config.issuer_assocs,
        "tidy_expired_issuers": config.expired_issuers, "tidy_move_legacy_ca_bundle": config.backup_bundle,
        "tidy_acme": config.acme, "pause_duration": format_duration(config.pause_ns), "page_size": config.page_size,
        "state": "Finished", "error": None, "message": None, "time_started": stamp, "time_finished": stamp,
        "last_auto_tidy_finished": stamp, **counts,
        "total_acme_account_count": 0, "acme_account_deleted_count": 0, "acme_account_revoked_count": 0,
        "acme_orders_deleted_count": 0,
    }
    backend.state.extra[STATUS_KEY] = status


def run_auto_tidy(backend: PkiBackend) -> bool:
    """What upstream's periodic function does once ``interval_duration`` has passed since the last
    tidy: run a tidy with the stored ``config/auto-tidy`` when it is enabled with an interval > 0.
    Returns whether a tidy ran. (The double never calls it by itself.)"""
    config = auto_tidy_config(backend.state)
    if not config.enabled or config.interval <= 0:
        return False
    with backend.service.lock:
        run_tidy(backend, config)
    return True


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
    return LogicalResponse(status=202, raw=(json.dumps(envelope, separators=(",", ":")).encode(), "application/json"))


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
