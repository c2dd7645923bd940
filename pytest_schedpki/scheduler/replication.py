"""The local region's copy of a replicated ACL table (auth methods, binding rules), and when authoritative writes become visible in it.

Not thread-safe on its own: :class:`~.state.SchedulerState` calls it under its lock.

Two shapes (``reference §11``):

* **mirror** (local region == authoritative region): records are copied with the authoritative
  indexes; the table index is the authoritative table index of the last applied change. With a lag
  this behaves like a follower behind the leader.
* **federated** (local != authoritative): Nomad's replication loop. Each pass applies the net
  effect of the writes that became visible: deletes through one local raft index, then the new or
  changed methods (Hash differs) through the next; Hash, CreateTime and ModifyTime come from the
  authoritative copy, CreateIndex/ModifyIndex are **local** indexes (CreateIndex kept on update).

Visibility of a write committed at clock time ``t`` after ``n`` local reads:

* paused or halted (no local leader): never, until :meth:`Replica.advance` is forced (``sync``);
* time lag ``lag``: once ``clock.now() >= t + lag`` (evaluated whenever the view is read - a rule,
  not a sleep);
* read lag ``after_reads=k``: hidden from the next ``k`` reads of the local region, seen by the one
  after.
Writes are applied in commit order: a write never overtakes an earlier one.

:class:`ReplicationKnobs` (mixed into the state) sets lag, read lag, pause and sync on every replica.

Records only need ``Name`` (the table key) and ``Hash``; a binding rule's ``Name`` is its ID. One
replica per table; in a federated setup they share the local raft index (``raft_owner``).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace

from ..clock import is_frozen
from ..golang.duration import to_nanoseconds
from .model import AuthMethod

ZERO = datetime.timedelta(0)


@dataclass(frozen=True)
class Pending:
    """An authoritative change waiting for the local region: ``method`` None means deleted."""

    committed: datetime.datetime
    read_mark: int
    name: str
    method: AuthMethod | None
    index: int


class Replica:
    """The local region's auth methods (``methods``), table index and (federated) local raft index."""

    FIELDS = ("methods", "table_index", "raft_index", "pending", "lag", "lag_reads", "paused", "reads",
              "federated", "halted")

    def __init__(self, clock, federated: bool, raft_owner: Replica | None = None):
        self.clock = clock
        self.raft_owner = raft_owner  # another table's replica whose local raft index this one shares
        self.methods: dict[str, AuthMethod] = {}
        self.table_index = 0
        self.raft_index = 0
        self.pending: list[Pending] = []
        self.lag = ZERO
        self.lag_reads: int | None = None
        self.paused = False
        self.reads = 0
        self.federated = federated
        self.halted = False

    def dump(self) -> tuple:
        """Plain values for a snapshot (records are immutable and shared)."""
        return tuple(dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v
                     for v in (getattr(self, f) for f in self.FIELDS))

    def load(self, values: tuple) -> None:
        """Restore what :meth:`dump` returned."""
        for name, value in zip(self.FIELDS, values, strict=True):
            setattr(self, name, dict(value) if isinstance(value, dict) else
                    list(value) if isinstance(value, list) else value)

    def rebuild(self, methods: dict[str, AuthMethod], table_index: int, federated: bool) -> None:
        """Start over from the authoritative ``methods`` (pending writes must already be applied):
        a mirror copies them; a federated replica runs one initial pass (local index 1)."""
        self.federated = federated
        self.pending = []
        if federated:
            self.methods, self.table_index, self.raft_index = {}, 0, 0
            now = self.clock.now()
            self._pass([Pending(now, self.reads, n, m, m.ModifyIndex) for n, m in sorted(methods.items())])
        else:
            self.methods, self.table_index = dict(methods), table_index

    def commit(self, name: str, method: AuthMethod | None, index: int) -> None:
        """Queue an authoritative change (at raft ``index``) and apply it if already visible."""
        self.pending.append(Pending(self.clock.now(), self.reads, name, method, index))
        self.advance()

    def note_read(self) -> None:
        """Count one answered read of the local region (for the ``after_reads`` lag)."""
        self.reads += 1

    def advance(self, force: bool = False) -> bool:
        """Apply the pending writes visible now (all of them when ``force``); True if any applied."""
        if not self.pending or ((self.paused or self.halted) and not force):
            return False
        count = len(self.pending)
        if not force:
            now = self.clock.now() if self.lag else None
            for i, p in enumerate(self.pending):
                if (now is not None and now < p.committed + self.lag) or \
                        (self.lag_reads and self.reads - p.read_mark < self.lag_reads):
                    count = i
                    break
        if count == 0:
            return False
        batch, self.pending = self.pending[:count], self.pending[count:]
        if self.federated:
            self._pass(batch)
        else:
            for p in batch:
                if p.method is None:
                    self.methods.pop(p.name, None)
                else:
                    self.methods[p.name] = p.method
                self.table_index = p.index
        return True

    def _pass(self, batch: list[Pending]) -> None:
        """One iteration of Nomad's replication loop over the net effect of ``batch``."""
        net = {p.name: p.method for p in batch}
        deletes = [n for n, m in net.items() if m is None and n in self.methods]
        upserts = [m for _, m in sorted(net.items())
                   if m is not None and (m.Name not in self.methods or self.methods[m.Name].Hash != m.Hash)]
        owner = self.raft_owner or self
        if deletes:
            owner.raft_index += 1
            for name in deletes:
                del self.methods[name]
            self.table_index = owner.raft_index
        if upserts:
            owner.raft_index += 1
            index = owner.raft_index
            for m in upserts:
                old = self.methods.get(m.Name)
                self.methods[m.Name] = (replace(m, CreateIndex=index, ModifyIndex=index) if old is None else
                                        replace(m, CreateIndex=old.CreateIndex, CreateTime=old.CreateTime,
                                                ModifyIndex=index))
            self.table_index = index

    def next_visibility_in(self) -> float | None:
        """Real seconds until the first pending write becomes visible by the time lag; None when the
        clock does not run in real time (manual, or frozen by freezegun) or nothing waits on time."""
        if self.paused or self.halted or not self.pending or not self.lag:
            return None
        mode = getattr(self.clock, "mode", "")
        live = mode == "real" or (mode == "follow" and not is_frozen())
        if not live:
            return None
        due = self.pending[0].committed + self.lag
        return max((due - self.clock.now()).total_seconds(), 0.0) + 0.002

    def settings(self) -> dict:
        """``{"seconds", "after_reads", "paused", "pending"}`` as JSON-friendly values."""
        return {"seconds": self.lag.total_seconds(), "after_reads": self.lag_reads or 0,
                "paused": self.paused, "pending": len(self.pending)}


def _lag(value) -> datetime.timedelta:
    if value is None:
        return ZERO
    ns = to_nanoseconds(value, "lag")
    if ns < 0:
        raise ValueError(f"lag must not be negative, got {value!r}")
    return datetime.timedelta(microseconds=ns // 1_000)


class ReplicationKnobs:
    """The replication knobs of :class:`~.state.SchedulerState` (mixed in): they drive every replicated
    table's replica alike (auth methods, binding rules). Uses the state's ``_lock``, ``_cond``,
    ``_replica``, ``binding_rules`` and ``leader``."""

    def _replicas(self) -> tuple[Replica, ...]:
        """Every replicated table's replica (auth methods, binding rules, the local view of the ACL
        tokens): the lag knobs drive all."""
        return self._replica, self.binding_rules.replica, self.acl.token_replica

    def _next_visibility_in(self) -> float | None:
        waits = [w for w in (r.next_visibility_in() for r in self._replicas()) if w is not None]
        return min(waits) if waits else None

    def set_lag(self, lag=None) -> None:
        """Delay the local region's view by ``lag`` on the double's clock (seconds, timedelta or Go
        duration text; None/0 = reads see writes at once). Clears a read lag; resumes if paused."""
        with self._lock:
            for replica in self._replicas():
                replica.lag, replica.lag_reads, replica.paused = _lag(lag), None, False
                replica.advance()
            self._cond.notify_all()

    def set_lag_reads(self, reads: int) -> None:
        """Hide each write from the next ``reads`` reads of the local region (the one after sees it).
        Clears a time lag; resumes if paused. Raises ValueError for a negative count."""
        if reads < 0:
            raise ValueError(f"after_reads must not be negative, got {reads}")
        with self._lock:
            for replica in self._replicas():
                replica.lag, replica.lag_reads, replica.paused = ZERO, reads or None, False
                replica.advance()
            self._cond.notify_all()

    def pause_replication(self) -> None:
        """Hold every later authoritative write out of the local view until :meth:`sync`."""
        with self._lock:
            for replica in self._replicas():
                replica.paused = True

    def sync(self) -> None:
        """Apply every pending write to the local view now and resume replication (lags stay)."""
        with self._lock:
            for replica in self._replicas():
                replica.paused = False
                replica.advance(force=True)
            self._cond.notify_all()

    @property
    def lag(self) -> datetime.timedelta:
        """The current time lag of the local region (0 when none)."""
        return self._replica.lag

    @property
    def paused(self) -> bool:
        """Whether replication to the local region is paused (until :meth:`sync` or a lag setter)."""
        return self._replica.paused

    def lag_settings(self) -> dict:
        """``{"seconds": float, "after_reads": int, "paused": bool, "pending": int, "leader": bool}``."""
        with self._lock:
            return {**self._replica.settings(), "leader": self.leader}
