"""pytest plugin loaded (``-p hvac_target_plugin``) into a pytest run of hvac's own integration tests.

hvac's ``HvacIntegrationTestCase.setUpClass`` starts a Vault server through
``tests.utils.server_manager.ServerManager`` and asks ``vault -version`` for the version its skip
decorators compare against. This plugin, imported before hvac's test modules, puts
:class:`TargetManager` in place of that module (hvac's test case code runs unchanged) and answers the
version question, so each test class gets a fresh target with root token ``root``:

* ``SCHEDPKI_HVAC_TARGET=double``: one in-process :class:`pytest_schedpki.Double`, reset to empty
  state at the start of every test class; an exception escaping one of its handlers fails the class;
* ``SCHEDPKI_HVAC_TARGET=bao``: a new ``bao server -dev`` per test class (as hvac does with Vault),
  started and stopped by :class:`parity_harness.BaoServer` (``tests/parity`` must be importable).

The Vault version reported to hvac's decorators is :data:`REPORTED_VAULT_VERSION`: OpenBao forked
from Vault 1.14, and the double follows OpenBao.
"""

from __future__ import annotations

import os
import sys
import types

import hvac

TARGET = os.environ.get("SCHEDPKI_HVAC_TARGET", "double")
ROOT_TOKEN = "root"
REPORTED_VAULT_VERSION = "1.14.0"

_DOUBLE = None


def _double():
    global _DOUBLE
    if _DOUBLE is None:
        from pytest_schedpki import Double

        _DOUBLE = Double(root_token=ROOT_TOKEN).start()
    return _DOUBLE


class TargetManager:
    """Stands in for hvac's ``ServerManager`` (same constructor and methods hvac's test case calls)."""

    def __init__(self, config_paths=None, client=None, use_consul=False, patch_config=True):
        self.config_paths = config_paths
        self.client = client
        self.keys: list[str] | None = None
        self.root_token: str | None = None
        self._bao = None
        self.url = ""

    def start(self) -> None:
        """A fresh target: the double reset to empty state, or a new ``bao server -dev``."""
        if TARGET == "bao":
            import parity_harness

            binary = parity_harness.bao_binary()
            if binary is None:
                raise RuntimeError("bao is not on PATH")
            self._bao = parity_harness.BaoServer(binary).start(timeout=30)
            self.url = self._bao.url
        else:
            double = _double()
            double.reset()
            double.pop_handler_errors()
            self.url = double.secrets_url

    def initialize(self) -> None:
        """A dev server is initialised at start: only the root token is recorded."""
        self.root_token = ROOT_TOKEN

    def unseal(self) -> None:
        """A dev server starts unsealed: builds the authenticated client hvac's tests use."""
        self.client = hvac.Client(url=self.url, token=self.root_token)

    def get_active_vault_addresses(self) -> list[str]:
        return [self.url]

    def stop(self) -> None:
        """Stop the bao process this manager started; for the double, fail on handler exceptions."""
        if self._bao is not None:
            self._bao.stop()  # also removes its HOME and log
            self._bao = None
        elif _DOUBLE is not None and TARGET != "bao":
            errors = _DOUBLE.pop_handler_errors()
            if errors:
                raise AssertionError("exception(s) inside the double:\n" + "\n".join(str(e) for e in errors))


def _install() -> None:
    import tests.utils as hvac_test_utils  # hvac's own package (the sdist root is on sys.path)

    hvac_test_utils.get_vault_version_string.cache = REPORTED_VAULT_VERSION
    stub = types.ModuleType("tests.utils.server_manager")
    stub.ServerManager = TargetManager
    sys.modules["tests.utils.server_manager"] = stub
    hvac_test_utils.server_manager = stub


_install()


def pytest_unconfigure(config):
    if _DOUBLE is not None:
        _DOUBLE.stop()
