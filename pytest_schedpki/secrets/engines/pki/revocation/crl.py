"""Certificate revocation lists: one real CRL per issuer (signed with ``cryptography``) and the
``config/crl`` record. The paths ``crl``, ``crl/pem``, ``crl/delta[/pem]``, ``cert/crl``,
``cert/delta-crl``, ``issuer/:ref/crl[/delta][/pem|/der]``, ``crl/rotate``, ``crl/rotate-delta`` and
``config/crl`` are served by :mod:`.crl_paths`.

A CRL lists the revoked certificates of ``state.certs`` attributed to that issuer (unattributable ones
go to the default issuer, as upstream), in storage order, without entry extensions; extensions
AuthorityKeyIdentifier + CRLNumber; nextUpdate = thisUpdate + ``config/crl`` ``expiry`` (72h). Like
OpenBao, every rebuild takes two CRL numbers (complete + delta) for each issuer (root generation,
imports, issuer deletion, ``crl/rotate``, and each revocation while ``auto_rebuild`` is false).

With ``auto_rebuild`` true a revocation does not touch the CRLs: upstream's periodic function (every
~60 s) rebuilds them once one is within ``auto_rebuild_grace_period`` of its nextUpdate (observed on
OpenBao 2.7.2: a revoked serial stays off the CRL until then). The double has no background job and
runs that check lazily when a CRL is served (:func:`refresh_crls`), as if the periodic function had
just run; the delta CRLs (``enable_delta``) follow ``delta_rebuild_interval`` the same way, and
``crl/rotate-delta`` forces them.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cryptography import x509 as cx509

from pytest_schedpki.golang.duration import GoDurationError, parse_duration
from pytest_schedpki.golang.strconv import NumError, parse_int
from pytest_schedpki.secrets.framework.go_values import overflow_mul

from ..authority.issuers import issuer_key
from ..codecs.x509 import build_crl, serial_of
from ..model import CertRecord, Issuer, PkiState
from .revoke_input import check_signature_from

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

PEM_FILE = "application/x-pem-file"
PKIX_CRL = "application/pkix-crl"


def parse_duration_second(text: str) -> int:
    """go-secure-stdlib ``ParseDurationSecond`` for the string fields of ``config/crl``: integer
    seconds, ``<n>d`` days, else a Go duration. ``ValueError`` carries Go's text, e.g.
    ``strconv.ParseInt: parsing "ba": invalid syntax``, ``time: invalid duration "soon"`` or
    ``multiplication of durations resulted in overflow, one operand may be too large``."""
    if text == "":
        return 0
    try:  # strconv.ParseInt(text, 10, 64); a failure (syntax or range) tries the next reading
        return overflow_mul(parse_int(text, 10, 64), 1)
    except NumError:
        pass
    if text.endswith("d"):
        try:
            return overflow_mul(parse_int(text[:-1], 10, 64), 86400)
        except NumError as exc:
            raise ValueError(str(exc)) from None
    try:
        return parse_duration(text) // 1_000_000_000
    except GoDurationError as exc:
        raise ValueError(str(exc)) from None


def revocation_issuer_id(state: PkiState, cert: cx509.Certificate, preferred: str = "") -> str:
    """``associateRevokedCertWithIsssuer``: the id of an issuer of the mount whose subject is the
    certificate's issuer DN and whose key verifies its signature (``preferred`` first, then by id), or
    ``""`` when none does (the revocation is then "unassigned")."""
    candidates = ([preferred] if preferred in state.issuers else []) + sorted(state.issuers)
    for issuer_id in candidates:
        parent = state.issuers[issuer_id].certificate
        if cert.issuer.public_bytes() == parent.subject.public_bytes() and check_signature_from(cert, parent):
            return issuer_id
    return ""


def crl_owner(state: PkiState, record: CertRecord) -> str:
    """The issuer whose CRL lists a revoked ``record``: its recorded ``issuer_id`` while that issuer
    exists, else the issuer found by signature, else ``""`` (listed on the default issuer's CRL)."""
    if record.issuer_id in state.issuers:
        return record.issuer_id
    return revocation_issuer_id(state, record.certificate)


_NUMBERS: dict[str, tuple[cx509.Certificate, int]] = {}  # colon serial -> (certificate, its serial number)
_NUMBERS_MAX = 100_000


def _number(serial: str, cert: cx509.Certificate) -> int:
    """``cert.serial_number``, remembered per stored serial: every CRL rebuild reads it for each revoked
    certificate, and cryptography makes a new int of it on each read (~1 us)."""
    known = _NUMBERS.get(serial)
    if known is not None and known[0] is cert:
        return known[1]
    if len(_NUMBERS) >= _NUMBERS_MAX:
        _NUMBERS.clear()
    number = serial_of(cert)
    _NUMBERS[serial] = (cert, number)
    return number


def revoked_entries(state: PkiState, issuer_id: str, serials: Iterable[str] | None = None
                    ) -> list[tuple[int, datetime.datetime]]:
    """``(serial, revocation time)`` of the revoked certificates on ``issuer_id``'s CRL, in storage
    order (colon serials sorted as strings); unassigned ones go to the default issuer. ``serials``
    restricts to those serials (the delta CRL's WAL). As upstream, the revocation entry of a
    certificate that is itself an issuer of the mount is skipped; the complete CRL instead ends with
    the revoked issuers (``issuer/:ref/revoke``) that ``issuer_id``'s key signed, other than itself."""
    out = []
    index = getattr(state.certs, "revoked_serials", None)  # CertStore; a plain dict is scanned
    revoked = index() if index is not None else {s for s, r in state.certs.items() if r.revocation_time is not None}
    issuer_certs = {serial_of(i.certificate): i.certificate for i in state.issuers.values()}
    # unassigned revocations go to the default issuer as of the last complete rebuild: changing the
    # default does not rebuild upstream, so they move only with the next rebuild
    default = state.extra.get("crl_default_issuer", state.default_issuer_id)
    certs, issuers = state.certs, state.issuers
    for serial in sorted(revoked if serials is None else set(serials) & revoked):
        record = certs[serial]
        number = _number(serial, record.certificate)
        if number in issuer_certs and issuer_certs[number] == record.certificate:
            continue
        owner = record.issuer_id if record.issuer_id in issuers else crl_owner(state, record)
        if owner == issuer_id or (not owner and issuer_id == default):
            out.append((number, record.revocation_time))
    parent = state.issuers.get(issuer_id)
    if serials is None and parent is not None:  # upstream's augmentWithRevokedIssuers
        for other_id in sorted(state.issuers):
            other = state.issuers[other_id]
            if other.revoked and other_id != issuer_id and other.revocation_time is not None \
                    and check_signature_from(other.certificate, parent.certificate):
                out.append((other.certificate.serial_number, other.revocation_time))
    return out


def _persist_associations(state: PkiState) -> None:
    """What upstream's CRL build writes back: a revoked certificate (not an issuer's own) whose
    recorded issuer is gone gets the issuer now found by signature, if any."""
    index = getattr(state.certs, "revoked_serials", None)
    revoked = index() if index is not None else {s for s, r in state.certs.items() if r.revocation_time is not None}
    issuer_certs = {serial_of(i.certificate): i.certificate for i in state.issuers.values()}
    for serial in sorted(revoked):
        record = state.certs[serial]
        if record.issuer_id in state.issuers or issuer_certs.get(record.certificate.serial_number) == record.certificate:
            continue
        found = revocation_issuer_id(state, record.certificate)
        if found:
            state.certs[serial] = replace(record, issuer_id=found)


def _signature(issuer: Issuer) -> tuple[int, bool]:
    name = issuer.revocation_signature_algorithm
    bits = next((b for b in (256, 384, 512) if str(b) in name), 0)
    return bits, name.endswith("PSS")


def _can_sign_crls(state: PkiState, issuer: Issuer) -> bool:
    return issuer_key(state, issuer) is not None and "crl-signing" in issuer.usage


def _seconds(config: dict[str, Any], name: str, default: str) -> int:
    try:
        return parse_duration_second(str(config.get(name, default)))
    except ValueError:
        return parse_duration_second(default)


def _next_update(backend: PkiBackend) -> datetime.datetime:
    """now + ``config/crl`` ``expiry``, at full precision (what upstream's auto-rebuild check compares;
    the CRL itself carries whole seconds)."""
    expiry = backend.state.config_crl.get("expiry") or "72h"  # getRevocationConfig: an empty expiry is 72h
    return backend.now() + datetime.timedelta(seconds=_seconds({"expiry": expiry}, "expiry", "72h"))


def _sign(backend: PkiBackend, issuer: Issuer, revoked: list, number: int, delta_of: int | None = None
          ) -> cx509.CertificateRevocationList:
    now, next_update = backend.now(), _next_update(backend)
    bits, pss = _signature(issuer)
    key = issuer_key(backend.state, issuer).private_key
    return build_crl(issuer.certificate, key, revoked, number, now, next_update, signature_bits=bits, use_pss=pss,
                     delta_of=delta_of)


def build_issuer_crl(backend: PkiBackend, issuer: Issuer) -> cx509.CertificateRevocationList | None:
    """Build (and remember) a fresh complete CRL and its delta CRL for ``issuer``; ``None`` when the
    issuer cannot sign CRLs (no key, or no ``crl-signing`` usage). Like upstream, a rebuild uses two
    CRL numbers: ``n`` for the complete CRL, ``n + 1`` for the delta (indicator ``n``, empty: the
    delta WAL is cleared by a complete rebuild); the first CRL of an issuer is number 1. With
    ``config/crl`` ``disable`` the CRL is empty."""
    state = backend.state
    if not _can_sign_crls(state, issuer):
        return None
    revoked = [] if state.config_crl.get("disable") else revoked_entries(state, issuer.issuer_id)
    number = state.crl_numbers.get(issuer.issuer_id, 1)
    crl = _sign(backend, issuer, revoked, number)
    delta = _sign(backend, issuer, [], number + 1, delta_of=number)
    state.crl_numbers[issuer.issuer_id] = number + 2
    state.crls[issuer.issuer_id] = {"crl": crl, "delta": delta, "revoked": revoked, "next_update": _next_update(backend)}
    return crl


NO_CRL_SIGNING = ("warning from local CRL rebuild: Issuer equivalency set with associated keys lacked an issuer with "
                  "CRL Signing KeyUsage; refusing to rebuild CRL for this group of issuers: {}")


def rebuild_crls(backend: PkiBackend, force: bool = True) -> list[str]:
    """Rebuild the CRLs of every issuer that can sign one; returns upstream's rebuild warnings (one
    ``... lacked an issuer with CRL Signing KeyUsage; refusing to rebuild CRL for this group of
    issuers: <ids>`` per key+subject group of keyed issuers without ``crl-signing``).

    ``force=True`` is upstream's ``rebuild(forceNew=true)`` (root generation, import, issuer
    deletion, ``config/crl`` changes): with ``disable`` it writes an empty CRL. ``force=False`` is what
    a revocation and ``crl/rotate`` do: nothing at all while ``disable`` is set. A complete rebuild
    clears the delta WAL and counts as a delta rebuild check."""
    state = backend.state
    if not force and state.config_crl.get("disable"):
        return []
    if not state.config_crl.get("disable"):
        _persist_associations(state)
    state.extra["crl_default_issuer"] = state.default_issuer_id
    groups: dict[tuple[str, bytes], list[Issuer]] = {}
    for issuer_id in sorted(state.issuers):
        issuer = state.issuers[issuer_id]
        build_issuer_crl(backend, issuer)
        if issuer_key(state, issuer) is not None:
            groups.setdefault((issuer.key_id or "", issuer.certificate.subject.public_bytes()), []).append(issuer)
    state.extra["crl_delta_wal"] = ()
    state.extra["crl_delta_checked"] = backend.now()
    return [NO_CRL_SIGNING.format(",".join(i.issuer_id for i in members)) for members in groups.values()
            if not any("crl-signing" in i.usage for i in members)]


def rebuild_delta_crls(backend: PkiBackend) -> None:
    """Build a new delta CRL for every CRL-signing issuer from the delta WAL (revocations since the
    last complete CRL, recorded while ``auto_rebuild`` + ``enable_delta``): number = the issuer's next
    CRL number (+1 each time), DeltaCRLIndicator = its complete CRL's number."""
    state = backend.state
    wal = state.extra.get("crl_delta_wal", ())
    for issuer_id in sorted(state.issuers):
        issuer, cached = state.issuers[issuer_id], state.crls.get(issuer_id)
        if cached is None or not _can_sign_crls(state, issuer):
            continue
        complete = cached["crl"].extensions.get_extension_for_class(cx509.CRLNumber).value.crl_number
        number = state.crl_numbers.get(issuer_id, complete + 1)
        delta = _sign(backend, issuer, revoked_entries(state, issuer_id, wal), number, delta_of=complete)
        state.crl_numbers[issuer_id] = number + 1
        # replaced, never mutated: snapshots share the dict
        state.crls[issuer_id] = {**cached, "delta": delta, "next_update": _next_update(backend)}
    state.extra["crl_delta_built"] = wal
    state.extra["crl_delta_checked"] = backend.now()


def record_delta_revocation(backend: PkiBackend, serial: str) -> None:
    """Append a revoked serial to the delta WAL (upstream writes it only with ``auto_rebuild`` and
    ``enable_delta``)."""
    state = backend.state
    state.extra["crl_delta_wal"] = (*state.extra.get("crl_delta_wal", ()), serial)


def _auto_rebuild_due(backend: PkiBackend) -> bool:
    """``checkForAutoRebuild``: the CRL of some CRL-signing issuer has its nextUpdate (of the last one
    built, delta included, at full precision) within ``auto_rebuild_grace_period`` of now. (Upstream
    also counts the frozen CRL of an issuer that lost ``crl-signing``, and so rebuilds every minute.)"""
    state = backend.state
    grace = datetime.timedelta(seconds=_seconds(state.config_crl, "auto_rebuild_grace_period", "12h"))
    now = backend.now()
    signing = [state.crls[i] for i, issuer in state.issuers.items() if i in state.crls and _can_sign_crls(state, issuer)]
    return any(now > cached.get("next_update", cached["crl"].next_update_utc) - grace for cached in signing)


def refresh_crls(backend: PkiBackend) -> None:
    """What upstream's periodic CRL function (every ~60 s) would have done by now, run lazily before
    a CRL is served:

    * an issuer that can sign but has no CRL yet gets one;
    * ``auto_rebuild`` true: the CRLs are rebuilt (numbers +2) once one is within the grace period of
      its nextUpdate - revocations are NOT on the CRL before that; with ``enable_delta`` the delta
      CRLs are rebuilt when ``delta_rebuild_interval`` has passed since the last check and there were
      revocations since the last delta;
    * ``auto_rebuild`` false: revocations rebuild at once; the CRLs are rebuilt here only if the
      revoked set changed behind the API's back (state edited directly by a test or a seed).
    """
    state, config = backend.state, backend.state.config_crl
    signers = [i for _, i in sorted(state.issuers.items()) if _can_sign_crls(state, i)]
    if any(state.crls.get(i.issuer_id) is None for i in signers):
        rebuild_crls(backend)
    elif config.get("disable"):
        return
    elif config.get("auto_rebuild"):
        if _auto_rebuild_due(backend):
            rebuild_crls(backend)
        elif config.get("enable_delta"):
            interval = datetime.timedelta(seconds=_seconds(config, "delta_rebuild_interval", "15m"))
            checked = state.extra.get("crl_delta_checked") or backend.now()
            if backend.now() >= checked + interval:
                wal = state.extra.get("crl_delta_wal", ())
                if wal and wal != state.extra.get("crl_delta_built"):
                    rebuild_delta_crls(backend)
                else:
                    state.extra["crl_delta_checked"] = backend.now()
    elif _revoked_set_changed(state, signers):
        rebuild_crls(backend)


def _revoked_set_changed(state: PkiState, signers: list[Issuer]) -> bool:
    """Whether some signer's CRL no longer lists what :func:`revoked_entries` gives. The answer
    "unchanged" is remembered on the CertStore with a fingerprint of what it depends on (the store's
    version, the issuers and their certificates, the default issuer, the CRLs), so reading a CRL again
    costs no scan of the certificates."""
    certs = state.certs
    fingerprint = (getattr(certs, "version", None), state.default_issuer_id,
                   tuple((k, id(v), id(v.certificate)) for k, v in sorted(state.issuers.items())),
                   tuple(id(state.crls.get(i.issuer_id)) for i in signers))
    if fingerprint[0] is not None and getattr(certs, "crl_checked", None) == fingerprint:
        return False
    changed = any(state.crls[i.issuer_id]["revoked"] != revoked_entries(state, i.issuer_id) for i in signers)
    if not changed and fingerprint[0] is not None:
        certs.crl_checked = fingerprint
    return changed


def current_crl(backend: PkiBackend, issuer: Issuer, delta: bool = False) -> cx509.CertificateRevocationList | None:
    """The issuer's complete (or delta) CRL as last built, after :func:`refresh_crls`; ``None`` when
    the issuer never had one."""
    refresh_crls(backend)
    cached = backend.state.crls.get(issuer.issuer_id)
    if cached is None:
        return None
    return cached["delta" if delta else "crl"]


def rebuild_warnings(warnings: list[str]) -> list[str]:
    """Rebuild warnings as revoke and ``crl/rotate`` report them: ``Warning <n> during CRL rebuild: <w>``."""
    return [f"Warning {n} during CRL rebuild: {w}" for n, w in enumerate(warnings, 1)]


