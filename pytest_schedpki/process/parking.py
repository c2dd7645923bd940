"""Long waits a listener need not count against its bound on connection threads.

A listener gives each connection a thread and bounds how many there are (``wire.connections``), so a
request that waits a long time for something to change - a Nomad blocking query parked until the
index moves or its ``wait`` ends, up to 5 minutes - holds one of them while doing nothing. Such a
wait announces itself with :func:`park`; the listener whose thread runs the request has set, with
:func:`hooked`, what parking means for it (``wire`` moves the connection out of its bound). Called in
any other thread (a fixture reading the state directly, the in-process transport) it does nothing.

Per thread: a hook is seen only by the thread that set it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_local = threading.local()


def park() -> None:
    """The calling thread is about to wait long for a notification (see the module doc): call the
    hook its listener set, if any. Cheap; calling it again during the same request is harmless
    (the hook decides what a second call does)."""
    hook = getattr(_local, "hook", None)
    if hook is not None:
        hook()


@contextmanager
def hooked(callback: Callable[[], None]) -> Iterator[None]:
    """While the ``with`` body runs in this thread, :func:`park` calls ``callback()``."""
    previous = getattr(_local, "hook", None)
    _local.hook = callback
    try:
        yield
    finally:
        _local.hook = previous


__all__ = ["hooked", "park"]
