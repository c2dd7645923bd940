"""Warnings a library emits while the double reads a client's input are not the test's business.

cryptography warns (``CryptographyDeprecationWarning``, a ``UserWarning``) when it loads a certificate
whose serial number is not positive. Under a test suite's ``-W error`` (or ``filterwarnings = error``)
that warning becomes an exception inside the request, and the client would get a 500 where OpenBao
answers (Go parses such a certificate, or refuses a negative serial with its own text).
:func:`quiet` ignores warnings for the duration of one such read.

``warnings.catch_warnings`` swaps the process-wide filter list; one lock keeps the double's own
threads from interleaving their swaps (which could leave a stale list behind).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.RLock()  # re-entrant: a quiet read may call another


@contextmanager
def quiet() -> Iterator[None]:
    """Ignore every warning raised inside the ``with`` body (keep it short: a single parse)."""
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
