"""How long a token lives: the TTL chosen at creation and at each renewal (OpenBao's token store).

Both follow OpenBao: creation in ``vault/token_store.go`` (``handleCreateCommon``), renewal through
``sdk/framework/lease.go`` (``CalculateTTL``). All values are whole seconds; 0 means "none".
"""

from __future__ import annotations

import datetime

from ...golang.duration import format_seconds
from ..framework.logical import internal_error
from ..service import SYSTEM_DEFAULT_LEASE_TTL, SYSTEM_MAX_LEASE_TTL

SYSTEM_LEASE_TTLS = (SYSTEM_DEFAULT_LEASE_TTL, SYSTEM_MAX_LEASE_TTL)  # an untuned mount's (default, max), seconds

CAPPED = 'TTL of "{}" exceeded the effective max_ttl of "{}"; TTL value is capped accordingly'
PERIOD_CAPPED = 'period of "{}" exceeded the effective max_ttl of "{}"; period value is capped accordingly'


def token_mount_ttls(service) -> tuple[int, int]:
    """The token auth mount's effective ``(default_lease_ttl, max_lease_ttl)`` in seconds (its tuned
    values, else the system's), which token creation and renewal use as ``CalculateTTL``'s system view."""
    mount = service.token_auth
    return mount.effective_default_ttl(), mount.effective_max_ttl()


def human_duration(seconds: int) -> str:
    """OpenBao's ``humanDuration``: Go's ``Duration.String()`` without zero minutes/seconds
    (``1800`` -> ``"30m"``, ``7200`` -> ``"2h"``, ``5400`` -> ``"1h30m"``, ``90`` -> ``"1m30s"``)."""
    text = format_seconds(seconds)
    if text.endswith("m0s"):
        text = text[:-2]
    index = text.find("h0m")
    if index > 0:
        text = text[:index + 1] + text[index + 3:]
    return text


def creation_ttl(ttl: int, period: int, explicit_max_ttl: int, root_policy: bool,
                 now: datetime.datetime, mount: tuple[int, int] = SYSTEM_LEASE_TTLS) -> tuple[int, list[str]]:
    """The TTL (seconds) of a new token and the warnings to answer with, as ``handleCreateCommon``
    decides it: ``CalculateTTL`` (:func:`renewal_ttl` with no increment, started ``now``) for a
    periodic token, a token with ``ttl``, or any non-root token (the system default, 768h, when
    ``ttl`` is 0); a ``period`` or TTL above the effective max (the system's 768h, or a smaller
    ``explicit_max_ttl``) is capped with its warning (``period of "87600h" exceeded the effective
    max_ttl of "768h"; period value is capped accordingly``). A root-policy token without ``ttl`` and
    ``period`` lives forever (0) unless ``explicit_max_ttl`` is set, which then is its TTL. ``mount``:
    the token auth mount's effective ``(default_lease_ttl, max_lease_ttl)`` (tuned on ``auth/token``),
    which stand in for the system's 768h (see :func:`renewal_ttl`).
    """
    warnings: list[str] = []
    if period or ttl or not root_policy:
        ttl, warnings = renewal_ttl(0, ttl, period, explicit_max_ttl, now, now, mount)
    if ttl == 0 and explicit_max_ttl:
        ttl = explicit_max_ttl
    return ttl, warnings


def renewal_ttl(increment: int, token_ttl: int, period: int, explicit_max_ttl: int,
                start: datetime.datetime, now: datetime.datetime,
                mount: tuple[int, int] = SYSTEM_LEASE_TTLS) -> tuple[int, list[str]]:
    """The TTL (seconds) a renewal grants and its warnings (``CalculateTTL``).

    ``increment`` (0: ``token_ttl``, the TTL the lease was last given) for ordinary tokens, ``period`` for
    periodic ones (the increment is ignored). The result never reaches past ``start`` (the token's
    creation) + the effective max TTL (``explicit_max_ttl`` when set and smaller than the system's
    768h; for periodic tokens only ``explicit_max_ttl``); a capped TTL warns ``TTL of "3h" exceeded
    the effective max_ttl of "1h59m59s"; TTL value is capped accordingly`` (the remaining time: the
    token's creation and now are each truncated to the second first, as ``CalculateTTL`` in
    ``sdk/framework/lease.go`` does, so a renewal one wall-clock second boundary after creation has
    ``2h - 1s`` left however little time has passed).

    ``mount`` is the token auth mount's effective ``(default_lease_ttl, max_lease_ttl)`` in seconds
    (``sysView.DefaultLeaseTTL()``/``MaxLeaseTTL()``: the system's 768h unless ``auth/token`` is tuned);
    a max that is not positive (a negative tune) raises LogicalError 500 ``max TTL must be greater than
    zero``, as ``CalculateTTL`` does.
    """
    warnings: list[str] = []
    mount_default, max_ttl = mount
    if explicit_max_ttl and explicit_max_ttl < max_ttl:
        max_ttl = explicit_max_ttl
    if max_ttl <= 0:
        raise internal_error("max TTL must be greater than zero")
    limit: datetime.datetime | None
    if period:
        if period > max_ttl:
            warnings.append(PERIOD_CAPPED.format(human_duration(period), human_duration(max_ttl)))
            period = max_ttl
        ttl = period
        limit = start + datetime.timedelta(seconds=explicit_max_ttl) if explicit_max_ttl else None
    else:
        ttl = increment or token_ttl or mount_default
        limit = start + datetime.timedelta(seconds=max_ttl)
    if limit is not None:  # both instants truncated to the second first, as CalculateTTL does
        remaining = int((limit.replace(microsecond=0) - now.replace(microsecond=0)).total_seconds())
        if remaining <= 0:
            return 0, warnings
        if remaining < ttl:
            warnings.append(CAPPED.format(human_duration(ttl), human_duration(remaining)))
            ttl = remaining
    return ttl, warnings
