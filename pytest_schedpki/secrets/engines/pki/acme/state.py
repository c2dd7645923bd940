"""The mount's ACME records and the running engine's in-memory parts.

Records (OpenBao's ``acme/accounts/...``, ``acme/account-thumbprints/...``, ``acme/eab/...`` storage)
live in :class:`AcmeStore`, kept in ``PkiState.extra["acme"]`` so baselines, resets and refused writes
cover them; a handler that changes them calls :func:`writable` first, and :func:`owned` before it
changes a stored record in place (copy-on-write: the savepoint of the request and any baseline keep
the old objects). Nonces are in memory as upstream's ``nonceutil`` service (a reset or
a restart forgets them) in :class:`Runtime`, with the ACME knobs of the service.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import datetime
import os
import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

_KEY = "acme"
NONCE_LIFETIME = datetime.timedelta(seconds=90)  # nonceutil's default validity
MAX_NONCES = 100_000  # memory bound: the oldest unredeemed nonces are forgotten first


@dataclass
class Identifier:
    """``ACMEIdentifier``: ``type`` ``dns``/``ip``; ``value`` without a wildcard's ``*.``."""

    type: str
    value: str
    original: str
    wildcard: bool = False
    ipv6: bool = False

    def network(self, original: bool) -> dict[str, str]:
        return {"type": self.type, "value": self.original if original else self.value}


@dataclass
class Challenge:
    """``ACMEChallenge``: ``error`` is the stored problem document of the last failed attempt."""

    type: str
    token: str
    status: str = "pending"
    validated: str = ""
    error: dict[str, Any] | None = None


@dataclass
class Authorization:
    id: str
    account: str
    identifier: Identifier
    challenges: list[Challenge]
    status: str = "pending"
    expires: str = ""
    wildcard: bool = False


@dataclass
class Order:
    id: str
    account: str
    expires: datetime.datetime
    identifiers: list[Identifier]
    authorizations: list[str]
    status: str = "pending"
    serial: str = ""  # hex with colons, as the PKI engine keys certificates
    cert_expiry: datetime.datetime | None = None
    issuer_id: str = ""


@dataclass
class Account:
    kid: str
    jwk: dict[str, Any]
    jwk_raw: str  # the JWK's JSON text as the client sent it (EAB compares these bytes)
    thumbprint: str
    directory: str
    created: datetime.datetime
    status: str = "valid"
    contact: list[str] = field(default_factory=list)
    terms_agreed: bool = False
    revoked_at: datetime.datetime | None = None
    max_cert_expiry: datetime.datetime | None = None
    eab: str = ""  # the EAB key id bound at creation


@dataclass
class Eab:
    kid: str
    key: bytes
    directory: str  # the ACME directory prefix it was made for (``acme/``, ``roles/web/acme/``...)
    created: datetime.datetime
    key_type: str = "hs"


@dataclass
class AcmeStore:
    accounts: dict[str, Account] = field(default_factory=dict)
    thumbprints: dict[str, str] = field(default_factory=dict)  # key thumbprint -> kid
    orders: dict[str, Order] = field(default_factory=dict)
    authorizations: dict[str, Authorization] = field(default_factory=dict)
    eabs: dict[str, Eab] = field(default_factory=dict)
    certs: dict[str, str] = field(default_factory=dict)  # "<kid>/<serial>" -> order id (TrackIssuedCert)
    validations: dict[str, dict[str, Any]] = field(default_factory=dict)  # "<authz>-<type>" -> queue entry


def store(backend: PkiBackend) -> AcmeStore:
    """The mount's records, for reading."""
    found = backend.state.extra.get(_KEY)
    return found if found is not None else AcmeStore()


_TABLES = tuple(f.name for f in dataclasses.fields(AcmeStore))


def writable(backend: PkiBackend, *tables: str, deep: bool = False) -> AcmeStore:
    """The mount's records, copied before a change (copy-on-write: the request's savepoint and the
    baselines hold the old :class:`AcmeStore`). The copy has new tables that share the records (a
    dict copy per table, not a deep copy of every account, order and authorization, which made each
    ACME write cost O(stored records) in Python); a caller that changes a stored record in place
    takes its own copy first with :func:`owned`. Adding, replacing or deleting table entries needs
    no more. ``tables``: the only tables the caller changes (``"accounts"``, ``"orders"``...), copied
    while the others are shared with the old store (a copy costs ~10 us per 1,000 records, on every
    write: new-order changes two of the seven tables); none named: every table. ``deep``: copy every
    record too (tidy, which walks and changes many)."""
    found = backend.state.extra.get(_KEY)
    if found is None:
        copied = AcmeStore()
    elif deep:
        copied = copy.deepcopy(found)
    else:
        copied = AcmeStore(**{name: getattr(found, name) for name in _TABLES})
        for name in tables or _TABLES:
            if name not in _TABLES:
                raise ValueError(f"no ACME table {name!r}")
            setattr(copied, name, dict(getattr(found, name)))
    backend.state.extra[_KEY] = copied
    return copied


def owned(acme: AcmeStore, table: str, key: str) -> Any:
    """Record ``key`` of ``acme``'s ``table`` (``accounts``, ``orders``, ``authorizations``...), put
    back as a deep copy the caller may change in place; ``acme`` comes from :func:`writable`, whose
    copy still shares the record with the savepoint and the baselines. ``KeyError`` when absent."""
    records = getattr(acme, table)
    record = records[key] = copy.deepcopy(records[key])
    return record


def rfc3339(moment: datetime.datetime) -> str:
    """Go's ``time.Format(time.RFC3339)`` of a UTC instant: ``2026-01-02T03:04:05Z``."""
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_UUID_V4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))  # the version and variant bits of a 128-bit UUID
_UUID_V4_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


def new_uuid() -> str:
    """``genUuid``: a random (version 4) UUID text, ``str(uuid.uuid4())`` formatted without building
    the ``UUID`` object (a third of its cost; new-order makes two): the same 122 bits of
    ``os.urandom`` (orders, authorizations and accounts are named by these ids)."""
    text = "%032x" % ((int.from_bytes(os.urandom(16), "big") & _UUID_V4_CLEAR) | _UUID_V4_SET)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def new_token() -> str:
    """``getACMEToken``: 21 random bytes, unpadded base64url (upstream reads 21 bytes whatever it asks)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(21)).rstrip(b"=").decode()


class Nonces:
    """``nonceutil.NonceService``: single-use nonces valid :data:`NONCE_LIFETIME` (real time, as
    upstream's encrypted nonces). The text starts with ``dmF1bHQw`` (``vault0``) like bao's."""

    def __init__(self) -> None:
        self._issued: dict[str, float] = {}
        self._lock = threading.Lock()

    def get(self, now: float) -> str:
        nonce = "dmF1bHQw" + base64.urlsafe_b64encode(secrets.token_bytes(40)).rstrip(b"=").decode()
        with self._lock:
            if len(self._issued) >= MAX_NONCES:
                for old in list(self._issued)[: MAX_NONCES // 10]:
                    del self._issued[old]
            self._issued[nonce] = now + NONCE_LIFETIME.total_seconds()
        return nonce

    def redeem(self, nonce: Any, now: float) -> bool:
        if not isinstance(nonce, str):
            return False
        with self._lock:
            expiry = self._issued.pop(nonce, None)
        return expiry is not None and now <= expiry

    def tidy(self, now: float) -> None:
        with self._lock:
            for nonce in [n for n, expiry in self._issued.items() if expiry < now]:
                del self._issued[nonce]


class Runtime:
    """What a running engine keeps in memory: its nonces."""

    def __init__(self) -> None:
        self.nonces = Nonces()


def runtime(backend: PkiBackend) -> Runtime:
    """The engine's :class:`Runtime` (made on first use; a reset drops it with the engine's attributes)."""
    found = vars(backend).get("acme_runtime")
    if found is None:
        found = vars(backend)["acme_runtime"] = Runtime()
    return found


class _NoKnobs:
    """The knobs of a host without ACME knobs: all off."""

    challenge_address = ""
    always_valid = False
    validation_delay = 0.0
    bad_nonce_share = 0.0

    def refuse_nonce(self) -> bool:
        return False


def knobs(backend: PkiBackend) -> Any:
    """The service's ACME knobs (``SecretsService.acme_knobs``: challenge_address, always_valid,
    validation_delay, bad_nonce_share, refuse_nonce()); all off when the host has none."""
    return getattr(backend.service, "acme_knobs", None) or _NoKnobs()
