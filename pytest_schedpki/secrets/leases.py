"""Leases handed out with secrets (OpenBao's expiration manager, reduced to what PKI needs).

A PKI role with ``generate_lease`` answers ``issue``/``sign`` with a ``lease_id``
(``<mount>issue/<role>/<24 chars>``); the HTTP layer records it here with the token that asked for
it. Revoking the lease (``sys/leases/revoke*``, or revoking that token) revokes the certificate, as
the PKI engine's secret revocation does. Certificate leases are not renewable (as on OpenBao).

Expiry (:func:`expire_due`) is a visibility rule applied when the service is used, not a timer: before
each request, every token whose lease has expired by ``clock.now()`` is revoked with its whole tree
and the leases of those tokens (OpenBao's expiration manager, ``revokeTree`` + ``RevokeByToken``), and
every lease past its ``expire_time`` is revoked; each at the instant it expired, so a certificate
revoked with its token carries that revocation time however late the next request comes.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .auth.token.store import remaining_ttl, rfc3339_nano

if TYPE_CHECKING:  # pragma: no cover
    from .service import SecretsService


@dataclass(frozen=True)
class Lease:
    """One lease: ``lease_id``, the ``mount`` path (``pki/``), the certificate ``serial``
    (colon hex), the issuing ``token`` id, ``issue_time`` and ``expire_time`` (aware UTC)."""

    lease_id: str
    mount: str
    serial: str
    token: str
    issue_time: datetime.datetime
    expire_time: datetime.datetime

    @property
    def path(self) -> str:
        """The request path the lease came from (the id without its last segment)."""
        return self.lease_id.rsplit("/", 1)[0]

    def lookup_data(self, now: datetime.datetime) -> dict[str, Any]:
        """``data`` of ``sys/leases/lookup``: ``ttl`` is the remaining whole seconds (OpenBao's
        ``leaseEntry.ttl()``, :func:`~.auth.token.store.remaining_ttl`)."""
        return {"expire_time": rfc3339_nano(self.expire_time), "id": self.lease_id,
                "issue_time": rfc3339_nano(self.issue_time), "last_renewal": None, "path": self.path,
                "renewable": False, "ttl": remaining_ttl(self.expire_time, now)}


def record_lease(service: SecretsService, lease_id: str, mount_path: str, serial: str, token_id: str,
                 ttl: int) -> None:
    """Remember a lease the engine handed out (``ttl`` in seconds). Caller holds the service lock."""
    now = service.clock.now()
    lease = Lease(lease_id, mount_path, serial, token_id, now, now + datetime.timedelta(seconds=ttl))
    service.tokens.leases[lease_id] = lease
    service.tokens.expect(lease.expire_time)


def revoke_lease(service: SecretsService, lease_id: str, at: datetime.datetime | None = None) -> bool:
    """Drop a lease and let its mount's engine revoke what it handed out (``revoke_secret``, when
    the engine has it: PKI revokes the certificate, at ``at`` when given, else now); ``False`` when
    there was no such lease. Caller holds the service lock."""
    lease = service.tokens.leases.pop(lease_id, None)
    if lease is None:
        return False
    mount = service.mounts.get(lease.mount)
    revoke_secret = getattr(mount.backend, "revoke_secret", None) if mount is not None else None
    if revoke_secret is not None:  # the engine's Secret.Revoke: PKI revokes the certificate
        if at is None:
            revoke_secret(lease.serial)
        else:
            revoke_secret(lease.serial, at=at)
    return True


def revoke_prefix(service: SecretsService, prefix: str) -> int:
    """Revoke every lease whose id starts with ``prefix`` (as a path: ``pki/issue`` matches
    ``pki/issue/...``); returns how many."""
    prefix = prefix.strip("/")
    chosen = [lid for lid in service.tokens.leases if lid == prefix or lid.startswith(prefix + "/")]
    for lease_id in chosen:
        revoke_lease(service, lease_id)
    return len(chosen)


def revoke_token_leases(service: SecretsService, token_ids: set[str], at: datetime.datetime | None = None) -> None:
    """Revoke the leases of revoked tokens (OpenBao revokes a token's leases with it), at ``at``
    (default: now)."""
    for lease_id in [lid for lid, lease in service.tokens.leases.items() if lease.token in token_ids]:
        revoke_lease(service, lease_id, at)


def expire_due(service: SecretsService) -> datetime.datetime:
    """Apply every expiry up to ``clock.now()`` (see the module docstring): expired tokens are revoked
    with their trees and those tokens' leases, then expired leases are revoked, each at its own
    expiry instant; wrapped responses whose wrapping token is gone are dropped. O(1) while nothing
    is due (:attr:`~.auth.token.store.TokenStore.due`). Caller holds the service lock. Returns the
    instant expiries were applied up to (a request's "now": one clock read serves both)."""
    store = service.tokens
    now = service.clock.now()
    if store.due is None or now < store.due:
        return now
    for when, removed in store.expire(now):
        revoke_token_leases(service, {token.id for token in removed}, at=when)
    for lease in sorted((lease for lease in store.leases.values() if lease.expire_time <= now),
                        key=lambda lease: lease.expire_time):
        revoke_lease(service, lease.lease_id, at=lease.expire_time)
    for lease in store.leases.values():
        store.expect(lease.expire_time)
    for token_id in [t for t in service.wrapped if t not in store.tokens]:
        del service.wrapped[token_id]
    return now
