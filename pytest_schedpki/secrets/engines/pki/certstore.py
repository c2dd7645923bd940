"""``PkiState.certs``: the certificates of one PKI mount by serial, with the indexes and the undo log
that keep every request independent of how many certificates are stored.

* a plain ``dict`` (colon serial -> :class:`~.model.CertRecord`) to its users; every mutating method
  keeps the indexes up to date; its iteration order means nothing (an undone delete puts the record
  back at the end): readers sort, by serial or issue time;
* the serials of the stored records in storage order (OpenBao keeps ``certs/<hyphen serial>`` keys
  and lists them sorted), maintained on each change: ``LIST certs`` pages with a binary search and
  copies only the page (:meth:`CertStore.page`);
* the set of revoked serials (a CRL build or check does not scan every certificate);
* an undo log while a write is open (:meth:`CertStore.begin` / :meth:`CertStore.end`): a refused write
  is undone in O(its changes), as OpenBao discards the storage transaction of a failed request;
* :meth:`CertStore.checkout`: the live store a baseline is restored to, reused from one restore to the
  next with its changes undone, so resetting to a baseline costs O(changes since), not O(stored).
"""

from __future__ import annotations

import bisect
from typing import Any

_MISSING: Any = object()
UNDO_KEPT_MIN = 4096  # a checked-out store keeps its log while it is shorter than this or the store


def hyphen_key(serial: str) -> str:
    """The storage key of a colon serial (``"7a-26-..."``): OpenBao's listing order and what ``after``
    is compared with."""
    return serial.replace(":", "-")


def _revoked(value: Any) -> bool:
    return value is not _MISSING and getattr(value, "revocation_time", None) is not None


def _stored(value: Any) -> bool:
    return value is not _MISSING and bool(getattr(value, "stored", False))


class CertStore(dict):
    """CertRecords by colon serial, a plain dict to its users, plus the indexes described in the module
    docstring and ``version``, a count of its changes (undoing one counts too)."""

    __slots__ = ("version", "crl_checked", "_revoked", "_sorted", "_undo", "_open", "_keep", "_child")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.version = 0
        self.crl_checked: Any = None  # crl.py: the state fingerprint its last CRL check found in order
        self._revoked = {k for k, v in self.items() if _revoked(v)}
        self._sorted = sorted((k for k, v in self.items() if _stored(v)), key=hyphen_key)
        self._undo: list[tuple[str, Any]] | None = None  # (serial, value before) while logging
        self._open = 0  # writes begun and not ended
        self._keep = False  # a checked-out store logs every change (until the next checkout)
        self._child: CertStore | None = None  # the live store last checked out of this one

    # -- the one place that changes the dict ---------------------------------------------------
    def _index(self, key: str, old: Any, new: Any) -> None:
        self.version += 1
        if _revoked(new):
            self._revoked.add(key)
        else:
            self._revoked.discard(key)
        was, now = _stored(old), _stored(new)
        if was == now:
            return
        listing = self._sorted
        if now:
            bisect.insort(listing, key, key=hyphen_key)
        else:
            at = bisect.bisect_left(listing, hyphen_key(key), key=hyphen_key)
            if at < len(listing) and listing[at] == key:
                del listing[at]

    def _put(self, key: str, value: Any) -> None:
        old = dict.get(self, key, _MISSING)
        dict.__setitem__(self, key, value)
        if self._undo is not None:
            self._undo.append((key, old))
        self._index(key, old, value)

    def _drop(self, key: str) -> Any:
        old = dict.pop(self, key)  # KeyError for an unknown key, as a dict
        if self._undo is not None:
            self._undo.append((key, old))
        self._index(key, old, _MISSING)
        return old

    # -- dict methods ----------------------------------------------------------------------------
    def __setitem__(self, key: str, value: Any) -> None:
        self._put(key, value)

    def __delitem__(self, key: str) -> None:
        self._drop(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        return self._drop(key)

    def popitem(self) -> tuple[str, Any]:
        if not self:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self))
        return key, self._drop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Any) -> CertStore:
        self.update(other)
        return self

    def clear(self) -> None:
        for key in list(self):
            self._drop(key)

    def copy(self) -> CertStore:
        """An independent store with the same records (shared: they are immutable) and indexes; O(n)."""
        new = CertStore()
        dict.update(new, self)
        new._revoked = set(self._revoked)
        new._sorted = list(self._sorted)
        return new

    # -- reads -------------------------------------------------------------------------------------
    def stored_serials(self) -> tuple[str, ...]:
        """The serials of the records with ``stored`` set, in storage order (a copy)."""
        return tuple(self._sorted)

    def page(self, after: str = "", limit: int = 0) -> list[str]:
        """Storage ``ListPage`` over the stored serials: those whose hyphen form sorts after ``after``
        (compared as given, need not exist: a colon ``after`` skips every key that shares its first
        byte, as upstream), at most ``limit`` of them (<= 0: all). O(log n + page)."""
        listing = self._sorted
        start = bisect.bisect_right(listing, after, key=hyphen_key) if after else 0
        end = len(listing) if limit <= 0 else min(len(listing), start + limit)
        return listing[start:end]

    def revoked_serials(self) -> set[str]:
        """The serials whose record has a ``revocation_time`` (a copy)."""
        return set(self._revoked)

    # -- writes as transactions ----------------------------------------------------------------------
    def begin(self) -> int:
        """Open a write: changes from now on are logged until the matching :meth:`end`. Returns the
        mark to pass to it. Writes nest."""
        if self._undo is None:
            self._undo = []
        self._open += 1
        return len(self._undo)

    def end(self, mark: int, rollback: bool = False) -> None:
        """Close the write opened at ``mark``; ``rollback``: undo its changes first (newest first)."""
        if rollback:
            self._undo_to(mark)
        self._open -= 1
        if self._open:
            return
        if self._keep and len(self._undo or ()) > max(UNDO_KEPT_MIN, len(self)):
            self._keep = False  # more changes than records: the next checkout copies instead
        if not self._keep:
            self._undo = None

    def _undo_to(self, mark: int) -> None:
        log = self._undo or []
        while len(log) > mark:
            key, old = log.pop()
            current = dict.get(self, key, _MISSING)
            if old is _MISSING:
                dict.__delitem__(self, key)
            else:
                dict.__setitem__(self, key, old)
            self._index(key, current, old)

    # -- baselines -----------------------------------------------------------------------------------
    def checkout(self) -> CertStore:
        """A live store equal to this one, which must stay unchanged (a snapshot's store).

        The first call copies (O(n)); the store it returns logs every change, so the next call hands
        back that same store with its changes undone (O(changes)). The previous live store must no
        longer be used, as ``SecretsService.restore`` drops the mount that held it.
        """
        child = self._child
        if child is not None and child._keep and child._open == 0 and child._undo is not None:
            child._undo_to(0)
            return child
        child = self.copy()
        child._keep = True
        child._undo = []
        self._child = child
        return child
