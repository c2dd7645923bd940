"""Fixtures of the CA-side tests (root/intermediate generation, issuers, keys, fetch, CRL).

One started :class:`pytest_schedpki.Double` for the session; every test gets its own fresh PKI mount
(``pki_ca<n>``) through :func:`pki`, so tests never see each other's issuers. Requests go over HTTP.
"""

from __future__ import annotations

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ca_helpers import HOUR, Pki  # noqa: E402

from pytest_schedpki import Double  # noqa: E402

_COUNTER = itertools.count(1)


@pytest.fixture(scope="session")
def double():
    d = Double().start()
    yield d
    d.stop()


@pytest.fixture
def pki(double) -> Pki:
    """A fresh mount tuned like the golden capture (``max_lease_ttl`` 87600h, default 768h)."""
    name = f"pki_ca{next(_COUNTER)}"
    double.secrets.enable_mount(name, max_lease_ttl=87600 * HOUR)
    yield Pki(double, name)
    double.secrets.disable_mount(name)


@pytest.fixture
def untuned(double) -> Pki:
    """A fresh mount with the dev defaults (768h default and max)."""
    name = f"pki_untuned{next(_COUNTER)}"
    double.secrets.enable_mount(name)
    yield Pki(double, name)
    double.secrets.disable_mount(name)
