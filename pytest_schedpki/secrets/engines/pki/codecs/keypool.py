"""Where the PKI engine's new private keys come from: a pool of pre-generated RSA keys, and optionally
deterministic keys.

RSA key generation costs tens of milliseconds (prime search; the real server pays the same), so
:class:`KeyPool` keeps ``size`` RSA keys of each size in :data:`POOLED_BITS` ready, made by one
background daemon thread (at a lower scheduling priority where the OS allows it, once it has made its
first two keys: those are wanted soon). The thread starts on the first RSA draw, so a session that never
uses RSA pays nothing, or earlier on :meth:`KeyPool.warm` (``schedpki serve`` calls it at start-up, so
the first RSA root or issuance finds a key ready). A draw takes a ready key, or makes one at once when
none is ready (random keys: in a helper thread, and the draw takes whichever key comes first, the
helper's or the background thread's; the other one stays in the pool while it has room); a drawn key is
never handed out again. Other RSA sizes are made on demand.

With a ``seed`` (deterministic keys, see :mod:`.detkeys`) the ``n``-th draw of each key type and size
in the process is key number ``n`` of that seed, so a replayed run gets the same keys; the pool then
prepares the next ``size`` key numbers (from the disk cache, else derived). Deterministic keys are
predictable by design: for tests only.

Configuration, per process: :func:`configure` (what ``Double(rsa_key_pool=..., deterministic_keys=...)``,
``schedpki serve --rsa-key-pool/--deterministic-keys`` and the ini options call), else the environment
variables ``SCHEDPKI_RSA_KEY_POOL`` (pool size, default :data:`DEFAULT_SIZE`; 0 = no pool) and
``SCHEDPKI_DETERMINISTIC_KEYS`` (the seed).
"""

from __future__ import annotations

import collections
import os
import threading
import weakref
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from pytest_schedpki.process import native_work

DEFAULT_SIZE = 4  # RSA keys kept ready per pooled size
POOLED_BITS = (2048,)
ENV_SIZE = "SCHEDPKI_RSA_KEY_POOL"
ENV_SEED = "SCHEDPKI_DETERMINISTIC_KEYS"
PUBLIC_EXPONENT = 65537
_FILLER_NICENESS = 10
_KEYS_AT_NORMAL_PRIORITY = 2  # a fresh set-up draws two at once: an RSA root, then a first RSA issuance


class KeyPool:
    """Source of fresh private keys for one process (see the module doc).

    ``size``: RSA keys kept ready per size of :data:`POOLED_BITS` (0: no pool, no thread);
    ``seed``: deterministic keys when not ``None``. Thread-safe.
    """

    def __init__(self, size: int = DEFAULT_SIZE, seed: str | None = None):
        if size < 0:
            raise ValueError(f"RSA key pool size must not be negative, got {size}")
        self.size = int(size)
        self.seed = seed
        self._cond = threading.Condition()
        self._ready: dict[int, collections.deque] = {}  # random keys by bits
        self._numbered: dict[int, dict[int, Any]] = {}  # deterministic keys by bits, then key number
        self._draws: collections.Counter = collections.Counter()  # next key number per (kind, size)
        self._busy: set[tuple[int, int]] = set()  # deterministic (bits, number) being prepared
        self._waiting: collections.Counter = collections.Counter()  # draws waiting for a key, by bits
        self._thread: threading.Thread | None = None
        self._closed = False
        self._idle = False  # the background thread runs under SCHED_IDLE (see warm)
        self._filler_tid: int | None = None

    # -- drawing --------------------------------------------------------------------------------
    def rsa(self, bits: int) -> rsa.RSAPrivateKey:
        """A fresh RSA private key with a ``bits``-bit modulus and e = 65537."""
        with self._cond:
            number = self._draw(("rsa", bits))
            pooled = bits in POOLED_BITS and self.size > 0
            key = None
            if pooled:
                self._start_locked(bits)
                if self.seed is None:
                    ready = self._ready[bits]
                    key = ready.popleft() if ready else self._race_locked(bits)
                else:
                    key = self._numbered[bits].pop(number, None)
                self._cond.notify_all()
        if key is not None:
            return key
        return self._make_rsa(bits, number)

    def _race_locked(self, bits: int) -> rsa.RSAPrivateKey | None:
        """No key ready: make one in a helper thread and take whichever key arrives first, the
        helper's or the background thread's (the other one stays in the pool, up to its size).
        Called and returns with the lock held; ``None`` when the helper failed."""
        outcome: list[Any] = []  # the helper's key when the pool was closed meanwhile, or its failure

        def helper() -> None:
            try:
                key = self._make_rsa(bits, -1)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting draw
                with self._cond:
                    outcome.append(exc)
                    self._cond.notify_all()
                return
            with self._cond:
                if self._closed:
                    outcome.append(key)
                else:
                    self._keep_locked(bits, key)
                self._cond.notify_all()

        threading.Thread(target=helper, name="schedpki-keypool-draw", daemon=True).start()
        ready = self._ready.setdefault(bits, collections.deque())
        self._waiting[bits] += 1
        try:
            while not ready and not outcome:
                self._cond.wait()
                ready = self._ready.get(bits) or ready
        finally:
            self._waiting[bits] -= 1
        if ready:
            return ready.popleft()
        return outcome[0] if isinstance(outcome[0], rsa.RSAPrivateKey) else None

    def _keep_locked(self, bits: int, key: rsa.RSAPrivateKey) -> None:
        """Put a made key in the pool while it has room or a draw waits for one."""
        ready = self._ready.setdefault(bits, collections.deque())
        if len(ready) < self.size or self._waiting[bits] > len(ready):
            ready.append(key)

    def ec(self, curve: ec.EllipticCurve) -> ec.EllipticCurvePrivateKey:
        """A fresh EC private key on ``curve`` (cheap: never pooled)."""
        if self.seed is None:
            return ec.generate_private_key(curve)
        with self._cond:
            number = self._draw(("ec", curve.name))
        from . import detkeys  # only with a seed: it loads cryptography's serialization (start-up time)

        return detkeys.derive_ec(self.seed, curve, number)

    def ed25519(self) -> ed25519.Ed25519PrivateKey:
        """A fresh Ed25519 private key (cheap: never pooled)."""
        if self.seed is None:
            return ed25519.Ed25519PrivateKey.generate()
        with self._cond:
            number = self._draw(("ed25519", 0))
        from . import detkeys  # only with a seed (start-up time)

        return detkeys.derive_ed25519(self.seed, number)

    def warm(self, idle: bool = False) -> None:
        """Start filling the pool of every pooled size now, before any draw (no-op for size 0 or
        after :meth:`close`). With ``idle`` (Linux), the background thread runs only on CPU time
        nothing else in the machine wants (``SCHED_IDLE``) until :meth:`hurry`: ``schedpki serve``
        warms the pool this way while it imports and binds, so the keys never slow its start-up and
        are ready early wherever a core is free."""
        if self.size <= 0:
            return
        with self._cond:
            if self._closed:
                return
            self._idle = idle and self._thread is None and hasattr(os, "SCHED_IDLE")
            for bits in POOLED_BITS:
                self._start_locked(bits)
            self._cond.notify_all()

    def hurry(self) -> None:
        """End the ``idle`` phase of :meth:`warm`: the background thread goes back to the normal
        policy (its priority rules of the module doc apply again). Best effort: without the right
        to leave ``SCHED_IDLE`` the thread stays there and draws make keys on demand as before."""
        with self._cond:
            was_idle, self._idle = self._idle, False
            if was_idle and self._filler_tid is not None:
                _set_idle(self._filler_tid, False)

    def status(self) -> dict[str, Any]:
        """``{"deterministic": bool, "pools": [{"key_type": "rsa", "bits": 2048, "size": n, "ready": k}]}``
        (a size appears once its pool was started by a first draw or by :meth:`warm`)."""
        with self._cond:
            pools = []
            for bits in sorted(set(self._ready) | set(self._numbered)):
                ready = len(self._ready.get(bits, ())) if self.seed is None else len(self._numbered.get(bits, {}))
                pools.append({"key_type": "rsa", "bits": bits, "size": self.size, "ready": ready})
        return {"deterministic": self.seed is not None, "pools": pools}

    def close(self) -> None:
        """Stop the background thread (it finishes the key it is making) and drop ready keys."""
        with self._cond:
            self._closed = True
            self._ready.clear()
            self._numbered.clear()
            self._cond.notify_all()

    # -- internals ------------------------------------------------------------------------------
    def _draw(self, kind: tuple[str, Any]) -> int:
        number = self._draws[kind]
        self._draws[kind] += 1
        return number

    def _make_rsa(self, bits: int, number: int) -> rsa.RSAPrivateKey:
        with native_work.busy():  # made without the GIL: the process exit waits for it (see native_work)
            if self.seed is None:
                return rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=bits)
            from . import detkeys  # only with a seed (start-up time)

            return detkeys.rsa_key(self.seed, bits, number)

    def _start_locked(self, bits: int) -> None:
        if self.seed is None:
            self._ready.setdefault(bits, collections.deque())
        else:
            self._numbered.setdefault(bits, {})
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._fill, name="schedpki-keypool", daemon=True)
            _filling.add(self)
            self._thread.start()

    def _next_job_locked(self) -> tuple[int, int] | None:
        if self.seed is None:
            for bits, ready in self._ready.items():
                if len(ready) < self.size:
                    return bits, -1
            return None
        for bits, numbered in self._numbered.items():
            first = self._draws[("rsa", bits)]
            for number in range(first, first + self.size):
                if number not in numbered and (bits, number) not in self._busy:
                    return bits, number
        return None

    def _fill(self) -> None:
        made = 0
        with self._cond:
            self._filler_tid = threading.get_native_id()
            if self._idle:
                _set_idle(self._filler_tid, True)
        while True:
            with self._cond:
                job = self._next_job_locked()
                while job is None and not self._closed:
                    self._cond.wait()
                    job = self._next_job_locked()
                if self._closed:
                    return
                bits, number = job
                self._busy.add(job)
            try:
                key = self._make_rsa(bits, number)
            finally:
                with self._cond:
                    self._busy.discard(job)
            with self._cond:
                if self._closed:
                    return
                if self.seed is None:
                    self._keep_locked(bits, key)
                elif number >= self._draws[("rsa", bits)]:  # not drawn (and made by the caller) meanwhile
                    self._numbered[bits][number] = key
                self._cond.notify_all()
            made += 1
            if made == _KEYS_AT_NORMAL_PRIORITY:  # the first keys are wanted soon; the rest go behind requests
                try:  # Linux applies niceness per thread
                    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _FILLER_NICENESS)
                except (AttributeError, OSError):
                    pass


def _set_idle(tid: int, idle: bool) -> None:
    """Put thread ``tid`` under ``SCHED_IDLE`` or back under the normal policy (Linux; best effort)."""
    try:
        os.sched_setscheduler(tid, os.SCHED_IDLE if idle else os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        pass


_lock = threading.Lock()
_current: KeyPool | None = None
_filling: weakref.WeakSet[KeyPool] = weakref.WeakSet()  # pools whose background thread was started


def _hurry_all() -> None:
    """At exit: a background thread still under ``SCHED_IDLE`` finishes its key at normal priority."""
    for pool in list(_filling):
        pool.hurry()


native_work.before_settle(_hurry_all)


def _from_environment() -> KeyPool:
    raw = os.environ.get(ENV_SIZE, "").strip()
    try:
        size = int(raw) if raw else DEFAULT_SIZE
    except ValueError:
        raise ValueError(f"{ENV_SIZE} must be a whole number, got {raw!r}") from None
    return KeyPool(size=size, seed=os.environ.get(ENV_SEED) or None)


def current() -> KeyPool:
    """The process's key pool (made from the environment on first use)."""
    global _current
    with _lock:
        if _current is None:
            _current = _from_environment()
        return _current


def configure(size: int | None = None, seed: str | None = None) -> KeyPool:
    """Replace the process's key pool. ``size``: RSA keys kept ready per pooled size (``None``: keep
    the current one); ``seed``: deterministic keys from that seed, ``""`` for random keys, ``None`` to
    keep the current choice (initially the environment's). Deterministic key numbering starts again at
    0. Raises ValueError for a negative size. Returns the new pool."""
    global _current
    with _lock:
        old = _current if _current is not None else _from_environment()
        _current = KeyPool(size=old.size if size is None else size, seed=old.seed if seed is None else (seed or None))
    old.close()
    return _current
