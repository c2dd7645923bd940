"""The TTL a lease or a token gets, as OpenBao's ``CalculateTTL`` (``sdk/framework/lease.go``) decides it
from the request, the backend, the token and the mount: :func:`calculate_ttl`, with its capping
warnings (:data:`CAPPED`, :data:`PERIOD_CAPPED`) in ``humanDuration`` form (:func:`human_duration`).
All values are whole seconds; 0 means "none". The token store (``secrets/system``) and auth methods'
logins use it.
"""

from __future__ import annotations

import datetime

from ...golang.duration import format_seconds
from .logical import internal_error

CAPPED = 'TTL of "{}" exceeded the effective max_ttl of "{}"; TTL value is capped accordingly'
PERIOD_CAPPED = 'period of "{}" exceeded the effective max_ttl of "{}"; period value is capped accordingly'


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


def mount_ttls(mount, backend_max: int = 0) -> tuple[int, int]:
    """A mount's (``Mount``: ``effective_default_ttl()``/``effective_max_ttl()``) effective ``(default_lease_ttl, max_lease_ttl)`` in seconds, the max lowered to
    ``backend_max`` (a role's ``token_max_ttl``) when that is set and smaller, as ``CalculateTTL`` folds
    its ``backendMaxTTL`` into the system view's max."""
    default_ttl, max_ttl = mount.effective_default_ttl(), mount.effective_max_ttl()
    if 0 < backend_max < max_ttl:
        max_ttl = backend_max
    return default_ttl, max_ttl


def calculate_ttl(increment: int, token_ttl: int, period: int, explicit_max_ttl: int,
                  start: datetime.datetime, now: datetime.datetime, mount: tuple[int, int]) -> tuple[int, list[str]]:
    """The TTL (seconds) a lease or token gets at creation or renewal, and its warnings (``CalculateTTL``).

    ``increment`` (the request's; 0: ``token_ttl``, the backend's TTL, e.g. the TTL the lease was last
    given or a role's ``token_ttl``; 0 again: the mount's default) for ordinary tokens, ``period`` for
    periodic ones (the increment is ignored). ``mount`` is the mount's effective ``(default_lease_ttl,
    max_lease_ttl)`` (``sysView.DefaultLeaseTTL()``/``MaxLeaseTTL()``, a backend max already folded in:
    :func:`mount_ttls`). The effective max is the mount's, or ``explicit_max_ttl`` when set and smaller;
    one that is not positive (a negative tune) raises LogicalError 500 ``max TTL must be greater than
    zero``. A period above it is capped (``period of "87600h" exceeded the effective max_ttl of "768h";
    period value is capped accordingly``); otherwise the result never reaches past ``start`` (the
    token's creation) + the effective max (for periodic tokens: + ``explicit_max_ttl`` only); a capped
    TTL warns ``TTL of "3h" exceeded the effective max_ttl of "1h59m59s"; TTL value is capped
    accordingly`` (the remaining time: creation and now are each truncated to the second first, as
    ``CalculateTTL`` does, so a renewal one wall-clock second boundary after creation has ``2h - 1s``
    left however little time has passed).
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
