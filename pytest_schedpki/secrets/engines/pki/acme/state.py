"""The mount's ACME records and the running engine's in-memory parts.

Records (OpenBao's ``acme/accounts/...``, ``acme/account-thumbprints/...``, ``acme/eab/...`` storage)
live in :class:`AcmeStore`, kept in ``PkiState.extra["acme"]`` so baselines, resets and refused writes
cover them; a handler that changes them calls :func:`writable` first, and :func:`owned` before it
changes a stored record in place (the record is replaced by a copy: a baseline may share the old
one). A request's write is undone, if refused, from the store's undo log (:meth:`AcmeStore.begin`,
:meth:`AcmeStore.end`, called by the engine's ``begin_write``/``end_write``), and a baseline holds its
own tables (:meth:`AcmeStore.detached`), so a write costs O(its changes), not O(stored records).
Nonces are in memory as upstream's ``nonceutil`` service (a reset or a restart forgets them) in
:class:`Runtime`, with the ACME knobs of the service.
"""

from __future__ import annotations

import base64
import copy
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


_MISSING: Any = object()


class Table(dict):
    """One table of an :class:`AcmeStore`: a plain dict to its users, whose every change is logged
    (key, value before) in the store's undo log while a write is open."""

    __slots__ = ("_store",)

    def __init__(self, store: AcmeStore, *args: Any):
        super().__init__(*args)
        self._store = store

    def _log(self, key: Any) -> None:
        log = self._store._undo
        if log is not None:
            log.append((self, key, dict.get(self, key, _MISSING)))

    def __setitem__(self, key: Any, value: Any) -> None:
        self._log(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        if key not in self:
            raise KeyError(key)
        self._log(key)
        dict.__delitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            self._log(key)
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[Any, Any]:
        if self:
            self._log(next(reversed(self)))
        return dict.popitem(self)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Any) -> Table:
        self.update(other)
        return self

    def clear(self) -> None:
        for key in list(self):
            del self[key]

    def __reduce__(self) -> Any:  # a copy is a plain dict: the store it belongs to is the copier's business
        return dict, (dict(self),)


@dataclass
class AcmeStore:
    """The mount's ACME records by table (each a :class:`Table`). ``certs``: ``"<kid>/<serial>"`` ->
    order id (``TrackIssuedCert``); ``validations``: ``"<authz>-<type>"`` -> the queue entry."""

    accounts: dict[str, Account] = field(default_factory=dict)
    thumbprints: dict[str, str] = field(default_factory=dict)  # key thumbprint -> kid
    orders: dict[str, Order] = field(default_factory=dict)
    authorizations: dict[str, Authorization] = field(default_factory=dict)
    eabs: dict[str, Eab] = field(default_factory=dict)
    certs: dict[str, str] = field(default_factory=dict)
    validations: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._undo: list[tuple[Table, Any, Any]] | None = None  # while a write is open
        self._open = 0  # writes begun and not ended
        for name in _TABLES:
            setattr(self, name, Table(self, getattr(self, name)))

    def begin(self) -> int:
        """Open a write: changes are logged until the matching :meth:`end`; returns its mark. Nests."""
        if self._undo is None:
            self._undo = []
        self._open += 1
        return len(self._undo)

    def end(self, mark: int, rollback: bool = False) -> None:
        """Close the write opened at ``mark``; ``rollback``: undo its changes first (newest first)."""
        log = self._undo or []
        if rollback:
            while len(log) > mark:
                table, key, old = log.pop()
                if old is _MISSING:
                    dict.pop(table, key, None)
                else:
                    dict.__setitem__(table, key, old)
        self._open = max(0, self._open - 1)
        if not self._open:
            self._undo = None

    def detached(self, deep: bool = False) -> AcmeStore:
        """A store of its own: new tables holding the same records (``deep``: copies of them), for a
        baseline or the live state restored from one. O(stored records)."""
        tables = {name: dict(getattr(self, name)) for name in _TABLES}
        return AcmeStore(**(copy.deepcopy(tables) if deep else tables))

    def __deepcopy__(self, memo: dict[int, Any]) -> AcmeStore:
        """``copy.deepcopy``: :meth:`detached` with copied records, so the copy's tables log its own
        writes (a field-by-field copy would hold plain dicts, whose changes no rollback could undo)."""
        return self.detached(deep=True)


def store(backend: PkiBackend) -> AcmeStore:
    """The mount's records, for reading."""
    found = backend.state.extra.get(_KEY)
    return found if found is not None else AcmeStore()


_TABLES = ("accounts", "thumbprints", "orders", "authorizations", "eabs", "certs", "validations")


def writable(backend: PkiBackend, deep: bool = False) -> AcmeStore:
    """The mount's records, to change (made on first use). Changes are made in place: the request's
    write undoes them if it is refused, and a baseline holds its own tables, so adding, replacing or
    deleting table entries needs no more; a caller that changes a stored record in place takes its
    own copy first with :func:`owned`. ``deep``: the live store is replaced by a copy of every
    record (tidy, which walks and changes many in place); the old one stays the savepoint's."""
    extra = backend.state.extra
    found = extra.get(_KEY)
    if found is None:
        found = extra[_KEY] = AcmeStore()
    elif deep:
        found = extra[_KEY] = found.detached(deep=True)
    return found


def owned(acme: AcmeStore, table: str, key: str) -> Any:
    """Record ``key`` of ``acme``'s ``table`` (``accounts``, ``orders``, ``authorizations``...), put
    back as a deep copy the caller may change in place; ``acme`` comes from :func:`writable`, whose
    tables still share the record with the write's undo log and the baselines. ``KeyError`` when
    absent."""
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
