"""Tidy: ``POST tidy``, ``GET tidy-status``, ``POST tidy-cancel`` and ``config/auto-tidy``, as
OpenBao 2.7.2 answers them (``path_tidy.go``), checked against the real server. This module holds the
configuration and the run; the paths are served by :mod:`.tidy_paths`.

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

6. ``tidy_acme``: ACME orders, accounts and EAB keys (:mod:`..acme.tidy`).

``tidy_invalid_certs`` has nothing to do (the double stores no unparsable entries), nor
``tidy_move_legacy_ca_bundle`` (no legacy bundle); ``pause_duration`` is not slept.

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
import re
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_schedpki.golang.duration import format_duration, parse_duration

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
        stored = getattr(state.certs, "stored_serials", None)  # CertStore: kept in storage order
        for serial in stored() if stored else _hyphen_order([s for s, r in state.certs.items() if r.stored]):
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
    acme_counts = {}
    if config.acme:
        from ..acme.tidy import tidy_acme  # the ACME records' code: imported by a tidy that asks for it

        acme_counts = tidy_acme(backend, config.safety_buffer, config.acme_account_safety_buffer)
    _record_status(backend, config, now, {**counts, **acme_counts})
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
        "last_auto_tidy_finished": stamp,
        "total_acme_account_count": 0, "acme_account_deleted_count": 0, "acme_account_revoked_count": 0,
        "acme_orders_deleted_count": 0, **counts,
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


