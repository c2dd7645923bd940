"""Work in native code ends before the interpreter finalizes.

Why: on Python 3.11-3.13 a daemon thread that comes back from a call made without the GIL while
the interpreter finalizes is ended with ``pthread_exit``. Some ``cryptography`` builds (48.0.0 on
Linux was seen; 50.0 was not) catch that unwinding in their Rust layer, and glibc then aborts the
whole process (``FATAL: exception not rethrown``, SIGABRT, exit status 134) after everything
else went well: ``schedpki serve`` stopping on SIGTERM, or a pytest session that drew an RSA key.
RSA key generation and RSA signing both run without the GIL there.

What: the double's threads run such work inside :func:`busy` (the key pool's key making, every
request a listener or the in-process transport hands to a service, the start-up preload). An
``atexit`` hook, which runs before finalization, calls :func:`settle`: from then on a daemon
thread that would start native work is parked instead (it never returns; the process ends around
it), and the hook waits until the work already running has finished (at most
:data:`SETTLE_TIMEOUT` seconds). Waits that can last long (a ``hang`` fault, a blocking query)
run inside :func:`waiting`, so a held request does not hold the exit.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SETTLE_TIMEOUT = 30.0  # seconds: an RSA-4096 key takes a few; a machine under load may take longer

_cond = threading.Condition()
_running = 0  # threads inside busy() and not inside waiting()
_settling = False
_before_settle: list[Callable[[], None]] = []
_never = threading.Event()  # parked threads wait on it; nothing sets it


def _park_if_settling_locked() -> None:
    if _settling and threading.current_thread() is not threading.main_thread():
        _cond.release()
        try:
            _never.wait()  # the interpreter is finalizing: this daemon thread does nothing more
        finally:
            _cond.acquire()


class _Busy:
    """The context manager :func:`busy` returns (a class: a generator-based one costs ~3x as much on
    every request)."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _running
        with _cond:
            _park_if_settling_locked()
            _running += 1

    def __exit__(self, *exc_info) -> None:
        global _running
        with _cond:
            _running -= 1
            if _running == 0 and _settling:  # only settle() waits, and only once it set _settling
                _cond.notify_all()


_BUSY = _Busy()


def busy() -> _Busy:
    """Run the ``with`` body as native work the process exit waits for (see the module doc).

    Entered by a thread other than the main one after :func:`settle` began, it parks that thread
    for good instead of running the body. Cheap: one lock taken on entry and one on exit."""
    return _BUSY


@contextmanager
def waiting(park: bool = True) -> Iterator[None]:
    """Inside :func:`busy`: the ``with`` body only waits (a held request, a blocking query), so the
    exit need not wait for it. Coming back after :func:`settle` began parks a daemon thread (see
    :func:`busy`) unless ``park`` is false: pass ``False`` when the body returns holding a lock
    others need (a condition's wait) and no native work follows it in that ``busy`` block (an
    exit that has stopped waiting does not wait for what comes after)."""
    global _running
    with _cond:
        _running -= 1
        if _running == 0 and _settling:  # only settle() waits, and only once it set _settling
            _cond.notify_all()
    try:
        yield
    finally:
        with _cond:
            if park:
                _park_if_settling_locked()
            _running += 1


def before_settle(callback: Callable[[], None]) -> None:
    """Have :func:`settle` call ``callback()`` first (e.g. to let a low-priority thread finish its
    current work at normal priority). Exceptions from it are ignored."""
    with _cond:
        _before_settle.append(callback)


def running() -> int:
    """How many threads are inside :func:`busy` (and not inside :func:`waiting`) now."""
    with _cond:
        return _running


def settle(timeout: float = SETTLE_TIMEOUT) -> bool:
    """Stop new native work in daemon threads and wait up to ``timeout`` seconds for the running
    work to end. Returns ``True`` when none is left. Registered with ``atexit``; idempotent."""
    global _settling
    with _cond:
        _settling = True
        callbacks = list(_before_settle)
    for callback in callbacks:
        try:
            callback()
        except Exception:  # noqa: BLE001 - best effort: the wait below still bounds the exit
            pass
    deadline = time.monotonic() + timeout
    with _cond:
        while _running > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _cond.wait(left)
        return True


atexit.register(settle)
