"""``tidy_acme`` (``path_tidy.go`` ``doTidyAcme``, ``tidyAcmeAccountByThumbprint``, ``acmeTidyOrder``),
on the double's clock.

For each account key: each order is removed (with its authorizations and its certificate link) once
its certificate expired more than ``safety_buffer`` ago, or - without a certificate - once the order
expired; when all its orders are gone and the account is older than ``acme_account_safety_buffer``
(and so is its newest certificate's expiry), a valid account is marked ``revoked`` and an account
revoked or deactivated longer ago than that buffer is deleted. EAB keys older than the buffer are
deleted. Counters: ``acme_orders_deleted_count``, ``acme_account_revoked_count``,
``acme_account_deleted_count``; ``total_acme_account_count`` stays 0 as upstream counts it (its page
length is never set).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from .state import AcmeStore, writable

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

_NEVER = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)


def _tidy_order(acme: AcmeStore, kid: str, order_id: str, now: datetime.datetime,
                buffer: datetime.timedelta) -> tuple[bool, datetime.datetime | None]:
    order = acme.orders[order_id]
    if order.cert_expiry is not None:
        expiry, due = order.cert_expiry, now > order.cert_expiry + buffer
    else:
        expiry, due = order.expires, now > order.expires
    if not due:
        return False, expiry
    for authz in order.authorizations:
        acme.authorizations.pop(authz, None)
    acme.certs.pop(f"{kid}/{order.serial}", None)
    del acme.orders[order_id]
    return True, expiry


def tidy_acme(backend: PkiBackend, safety_buffer: int, account_buffer: int) -> dict[str, Any]:
    """Tidy the mount's ACME records (see the module docstring); returns the status counters."""
    now = backend.now()
    counts = {"total_acme_account_count": 0, "acme_account_deleted_count": 0, "acme_account_revoked_count": 0,
              "acme_orders_deleted_count": 0}
    if backend.state.extra.get("acme") is None:
        return counts
    acme = writable(backend, deep=True)  # changes accounts in place
    cert_buffer, keep = datetime.timedelta(seconds=safety_buffer), datetime.timedelta(seconds=account_buffer)
    for thumbprint in sorted(acme.thumbprints):
        kid = acme.thumbprints[thumbprint]
        account = acme.accounts.get(kid)
        if account is None:
            del acme.thumbprints[thumbprint]
            counts["acme_account_deleted_count"] += 1
            continue
        all_tidied = True
        for order_id in sorted(o.id for o in acme.orders.values() if o.account == kid):
            tidied, expiry = _tidy_order(acme, kid, order_id, now, cert_buffer)
            counts["acme_orders_deleted_count"] += tidied
            all_tidied = all_tidied and tidied
            if expiry is not None and (account.max_cert_expiry or _NEVER) < expiry:
                account.max_cert_expiry = expiry
        if not (all_tidied and now > account.created + keep and now > (account.max_cert_expiry or _NEVER) + keep):
            continue
        if account.status in ("revoked", "deactivated") and now > (account.revoked_at or _NEVER) + keep:
            del acme.accounts[kid]
            del acme.thumbprints[thumbprint]
            counts["acme_account_deleted_count"] += 1
        elif account.status == "valid":
            account.status, account.revoked_at = "revoked", now
            counts["acme_account_revoked_count"] += 1
    for kid in sorted(acme.eabs):
        if now > acme.eabs[kid].created + keep:
            del acme.eabs[kid]
    return counts
