"""Fixtures of the tidy and issuer-revocation tests: one Double per session on a
:class:`ManualClock` set back to :data:`T0` before each test; every test gets its own mount (``empty``)
or that mount with an EC root named ``root`` (87600h) and the roles ``web`` (EC, ttl 1h, max_ttl 72h)
and ``nostore`` (the same with ``no_store``)."""

from __future__ import annotations

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tidy_helpers import HOUR, T0, Mount  # noqa: E402

from pytest_schedpki import Double  # noqa: E402
from pytest_schedpki.clock import ManualClock  # noqa: E402

_COUNTER = itertools.count(1)
WEB = {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "ttl": "1h", "max_ttl": "72h"}


@pytest.fixture(scope="session")
def double():
    d = Double(clock=ManualClock(T0)).start()
    yield d
    d.stop()


@pytest.fixture
def clock(double) -> ManualClock:
    """The double's manual clock, at :data:`T0`."""
    double.clock.inner.set(T0)
    return double.clock.inner


@pytest.fixture
def empty(double, clock) -> Mount:
    """A fresh mount tuned to ``max_lease_ttl`` 87600h, without issuers; fails the test if a handler
    raised inside the double."""
    name = f"td{next(_COUNTER)}"
    double.secrets.enable_mount(name, max_lease_ttl=87600 * HOUR)
    double.pop_handler_errors()
    yield Mount(double, name)
    double.secrets.disable_mount(name)
    errors = double.pop_handler_errors()
    if errors:
        pytest.fail("exception(s) inside the double:\n" + "\n".join(map(str, errors)), pytrace=False)


@pytest.fixture
def pki(empty) -> Mount:
    """``empty`` plus the EC root ``root`` (``pki.root``: the generate response data) and the roles."""
    empty.root = empty.ok("POST", "root/generate/internal", {"common_name": "Tidy Root", "key_type": "ec",
                                                            "ttl": "87600h", "issuer_name": "root"})["data"]
    empty.ok("POST", "roles/web", WEB)
    empty.ok("POST", "roles/nostore", {**WEB, "no_store": True})
    return empty
