"""How long a token lives: the TTL chosen at creation and at each renewal (OpenBao's token store).

Both follow OpenBao: creation in ``vault/token_store.go`` (``handleCreateCommon``), renewal through
``sdk/framework/lease.go`` (``CalculateTTL``). All values are whole seconds; 0 means "none".
"""

from __future__ import annotations

import datetime

from ..framework.lease_ttl import CAPPED, PERIOD_CAPPED, calculate_ttl, human_duration, mount_ttls
from ..service import SYSTEM_DEFAULT_LEASE_TTL, SYSTEM_MAX_LEASE_TTL

SYSTEM_LEASE_TTLS = (SYSTEM_DEFAULT_LEASE_TTL, SYSTEM_MAX_LEASE_TTL)  # an untuned mount's (default, max), seconds


def token_mount_ttls(service) -> tuple[int, int]:
    """The token auth mount's effective ``(default_lease_ttl, max_lease_ttl)`` in seconds (its tuned
    values, else the system's), which token creation and renewal use as ``CalculateTTL``'s system view."""
    mount = service.token_auth
    return mount.effective_default_ttl(), mount.effective_max_ttl()


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
    """A token store token's TTL at a renewal: :func:`~..framework.lease_ttl.calculate_ttl` with the
    token auth mount's ``(default, max)`` (the system's 768h unless given)."""
    return calculate_ttl(increment, token_ttl, period, explicit_max_ttl, start, now, mount)


__all__ = ["CAPPED", "PERIOD_CAPPED", "SYSTEM_LEASE_TTLS", "creation_ttl", "human_duration", "mount_ttls",
           "renewal_ttl", "token_mount_ttls"]
