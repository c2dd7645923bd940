"""Fixtures of the revocation tests: one Double per session on a :class:`ManualClock` set back to
:data:`T0` before each test; every test gets its own mount with an EC root (``root``, exported so
tests can forge certificates under it) and roles ``web`` (EC), ``rsa``, ``ed`` and ``nostore``."""

from __future__ import annotations

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from revoke_helpers import HOUR, T0, Mount  # noqa: E402

from pytest_schedpki import Double  # noqa: E402
from pytest_schedpki.clock import ManualClock  # noqa: E402

_COUNTER = itertools.count(1)
ROLES = {
    "web": {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "ttl": "24h",
            "max_ttl": "72h"},
    "rsa": {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "rsa", "ttl": "24h"},
    "ed": {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ed25519", "ttl": "24h"},
    "nostore": {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "ttl": "24h",
                "no_store": True},
}


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
    """A fresh mount tuned to ``max_lease_ttl`` 87600h, without issuers."""
    name = f"rv{next(_COUNTER)}"
    double.secrets.enable_mount(name, max_lease_ttl=87600 * HOUR)
    double.pop_handler_errors()
    yield Mount(double, name)
    double.secrets.disable_mount(name)
    errors = double.pop_handler_errors()
    if errors:
        pytest.fail("exception(s) inside the double:\n" + "\n".join(map(str, errors)), pytrace=False)


@pytest.fixture
def pki(empty) -> Mount:
    """``empty`` plus an exported EC root (``empty.root``: the generate response data) and the roles."""
    empty.root = empty.ok("POST", "root/generate/exported", {"common_name": "Revoke Root", "key_type": "ec",
                                                            "ttl": "8760h", "issuer_name": "root"})["data"]
    for name, body in ROLES.items():
        empty.ok("POST", f"roles/{name}", body)
    return empty
