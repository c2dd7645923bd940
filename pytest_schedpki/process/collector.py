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


#: ``schedpki serve``'s collector thresholds: young collections every 5,000 net allocations (Python's
#: default is 700: an ACME or issuance request allocates thousands of objects, so several young
#: collections ran inside each request)
SERVER_THRESHOLDS = (5000, 10, 10)


def settle_server_heap() -> None:
    """For ``schedpki serve`` only, whose process is the double's own (the plugin never calls it):
    after start-up, move every tracked object (modules, routes, the seeded state) to the permanent
    generation (``gc.freeze``, O(1): no collection first, which would hold the interpreter ~30 ms while
    the listeners already answer; the little garbage start-up left stays), so that no later collection
    walks them again, and collect young objects less often (:data:`SERVER_THRESHOLDS`). What requests
    make is collected as before."""
    gc.freeze()
    gc.set_threshold(*SERVER_THRESHOLDS)
