"""The garbage collector paused around the double's own start-up work, and given back as it was.

Importing the double (werkzeug, both services, the PKI engine when a seed mounts it) and building its
state allocate tens of thousands of long-lived objects (modules, functions, classes, routes); with the
collector on, those allocations set off young and full collections that walk the whole heap of the
user's process (measured in a downstream suite: ~45 ms of CPU in ~50 collections, one of them full)
and find almost nothing to free. :func:`paused` runs such work with automatic collection off and then
restores exactly the state the caller had (``gc.isenabled()``; thresholds and ``gc.freeze`` are never
touched): nothing of the user's process is changed for good, and the objects are collected as usual
afterwards.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Automatic garbage collection off inside the block (an explicit ``gc.collect()`` still runs),
    back on after it only if it was on before, whatever the block raises."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

