"""What tests read of the double's ACME records without HTTP (``schedpki.acme``): accounts and orders
of every PKI mount as plain records, with assertions that list near misses, and the service's knobs.

The records are read from each PKI mount's engine through the service object handed in (its
``mounts`` and their ``backend.state.extra["acme"]``), duck-typed: nothing of the engine is imported.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AcmeAccount:
    """One ACME account: ``kid`` (the id in its URL), ``mount`` (without ``/``), ``directory`` (the
    prefix: ``acme/``, ``roles/web/acme/``...), ``status`` (``valid``/``deactivated``/``revoked``),
    ``contact``, ``thumbprint`` (RFC 7638 of its key), ``eab`` (the EAB key id bound, ``""``) and
    ``created`` (the double's clock)."""

    kid: str
    mount: str
    directory: str
    status: str
    contact: tuple[str, ...]
    thumbprint: str
    eab: str
    created: datetime.datetime


@dataclass(frozen=True)
class AcmeOrder:
    """One ACME order as stored: ``id``, ``mount``, ``account`` (kid), ``status`` (the stored one:
    ``pending`` until finalize unless tidied or invalid; an order whose authorizations are all valid
    reads ``ready`` over HTTP), ``identifiers`` (values as requested, wildcards included),
    ``authorizations`` (their statuses, in order), ``serial_number`` of the certificate (``""`` before
    finalize) and ``expires``."""

    id: str
    mount: str
    account: str
    status: str
    identifiers: tuple[str, ...]
    authorizations: tuple[str, ...]
    serial_number: str
    expires: datetime.datetime


_ACCOUNT_CRITERIA = ("kid", "mount", "directory", "status", "contact", "eab")
_ORDER_CRITERIA = ("id", "mount", "account", "status", "identifier", "serial_number")


class AcmeInspector:
    """``schedpki.acme``: :meth:`accounts`, :meth:`orders`, :meth:`assert_account`,
    :meth:`assert_order` over every PKI mount, and :attr:`knobs` (the service's ACME knobs)."""

    def __init__(self, service: Any):
        self.service = service

    @property
    def knobs(self) -> Any:
        """The service's :class:`~pytest_schedpki.secrets.acme_knobs.AcmeKnobs`."""
        return self.service.acme_knobs

    def _stores(self):
        with self.service.lock:
            for path, mount in self.service.mounts.items():
                store = getattr(getattr(mount.backend, "state", None), "extra", {}).get("acme")
                if mount.type == "pki" and store is not None:
                    yield path.rstrip("/"), store

    def accounts(self, **criteria: Any) -> list[AcmeAccount]:
        """Accounts matching every criterion (``kid``, ``mount``, ``directory``, ``status``, ``contact``
        - one of its contacts -, ``eab``), oldest first. TypeError for an unknown criterion."""
        _check(criteria, _ACCOUNT_CRITERIA)
        found = [AcmeAccount(a.kid, mount, a.directory, a.status, tuple(a.contact), a.thumbprint, a.eab, a.created)
                 for mount, store in self._stores() for a in store.accounts.values()]
        return sorted((a for a in found if all(_matches(a, k, v) for k, v in criteria.items())),
                      key=lambda a: (a.created, a.kid))

    def orders(self, **criteria: Any) -> list[AcmeOrder]:
        """Orders matching every criterion (``id``, ``mount``, ``account``, ``status``, ``identifier`` -
        one of its identifiers -, ``serial_number``), by expiry. TypeError for an unknown criterion."""
        _check(criteria, _ORDER_CRITERIA)
        found = []
        for mount, store in self._stores():
            for o in store.orders.values():
                states = tuple(store.authorizations[a].status for a in o.authorizations if a in store.authorizations)
                found.append(AcmeOrder(o.id, mount, o.account, o.status, tuple(i.original for i in o.identifiers),
                                       states, o.serial, o.expires))
        return sorted((o for o in found if all(_matches(o, k, v) for k, v in criteria.items())),
                      key=lambda o: (o.expires, o.id))

    def assert_account(self, **criteria: Any) -> AcmeAccount:
        """Assert an account matches ``criteria``; returns the newest. The message lists the others."""
        __tracebackhide__ = True
        found = self.accounts(**criteria)
        if found:
            return found[-1]
        raise AssertionError(f"no ACME account with {criteria}; accounts: {self.accounts() or 'none'}")

    def assert_order(self, **criteria: Any) -> AcmeOrder:
        """Assert an order matches ``criteria``; returns the latest. The message lists the others."""
        __tracebackhide__ = True
        found = self.orders(**criteria)
        if found:
            return found[-1]
        raise AssertionError(f"no ACME order with {criteria}; orders: {self.orders() or 'none'}")


def _check(criteria: dict[str, Any], known: tuple[str, ...]) -> None:
    unknown = sorted(set(criteria) - set(known))
    if unknown:
        raise TypeError(f"unknown criteria: {', '.join(unknown)}; use {', '.join(known)}")


def _matches(record: Any, key: str, value: Any) -> bool:
    if key == "contact":
        return value in record.contact
    if key == "identifier":
        return value in record.identifiers
    if key == "serial_number":
        return record.serial_number.replace("-", ":").lower() == str(value).replace("-", ":").lower()
    return getattr(record, key) == value
