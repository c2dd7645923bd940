"""``--schedpki-keep-on-failure`` (ini ``schedpki_keep_on_failure``): when a test that uses the double
fails, print the URL of the double's state page (``/_schedpki/ui/``) and wait for Enter before the
run goes on, so that test's state (certificates, tokens, journal, faults, clock) can be looked at; the
next test's setup resets it as usual. Like ``--pdb``, it suspends output capturing while it waits.

It needs one process reading a terminal: with pytest-xdist workers (``-n``) or a standard input that is
not a terminal (CI, a pipe) the session stops at once with a ``pytest.UsageError`` (exit status 4)
saying so, instead of hanging or silently not waiting.
"""

from __future__ import annotations

import os
import sys

import pytest

OPTION = "--schedpki-keep-on-failure"
INI = "schedpki_keep_on_failure"
_TERMINAL = pytest.StashKey[bool]()


def addoption(parser: pytest.Parser) -> None:
    """Declare the option and its ini twin (called by the plugin's ``pytest_addoption``)."""
    parser.addini(INI, "on a failed test, print the state page's URL and keep the double's state until Enter "
                       "(default false)", type="bool", default=False)
    parser.getgroup("schedpki").addoption(
        OPTION, action="store_true", default=None, dest="schedpki_keep_on_failure",
        help="when a test using the double fails, print the double's state page URL and keep that test's state "
             "until you press Enter (ini schedpki_keep_on_failure; refused under xdist or without a terminal)")


def enabled(config: pytest.Config) -> bool:
    """Whether the option (or else the ini option) asks for it."""
    value = config.getoption("schedpki_keep_on_failure", None)
    return bool(value) if value is not None else bool(config.getini(INI))


def configure(config: pytest.Config) -> None:
    """Register the waiting hook when enabled; raises ``pytest.UsageError`` under xdist or when
    standard input is not a terminal."""
    if not enabled(config) or hasattr(config, "workerinput"):
        return
    if config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None):
        raise pytest.UsageError(f"{OPTION} waits for Enter on the terminal, which pytest-xdist's workers cannot "
                                "read: run without -n/--numprocesses (or with -n 0)")
    if not _stdin_is_terminal(config):
        raise pytest.UsageError(f"{OPTION} waits for Enter on the terminal, but standard input is not one (a pipe, "
                                "a file or CI): run pytest from a terminal, or drop the option")
    config.pluginmanager.register(KeepOnFailure(config), "schedpki-keep-on-failure")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser, args):
    """Note whether file descriptor 0 is a terminal before pytest's capturing (started by the hook this
    one wraps) points it at ``/dev/null``. The plugin module re-exports this hook."""
    early_config.stash[_TERMINAL] = _fd0_is_terminal()
    yield


def _fd0_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _stdin_is_terminal(config: pytest.Config) -> bool:
    """Whether the process's standard input was a terminal when pytest started (as noted before output
    capturing replaced it; without that note, now)."""
    return config.stash.get(_TERMINAL, None) if _TERMINAL in config.stash else _fd0_is_terminal()


class KeepOnFailure:
    """The hook that waits (registered by :func:`configure`)."""

    def __init__(self, config: pytest.Config):
        self.config = config

    def pytest_exception_interact(self, node: pytest.Item, call, report) -> None:
        """A failed test's setup or call (as ``--pdb`` reacts): when the test used the double, print
        the page's URL on both listeners and wait for a line on standard input."""
        double = getattr(node, "funcargs", {}).get("schedpki_double")
        if double is None or not report.failed or double.secrets_server is None:
            return
        from . import page_url

        capture = self.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=True)
        try:
            writer = self.config.get_terminal_writer()
            writer.line()
            writer.sep(">", f"schedpki: {node.nodeid} failed; its state is kept", yellow=True)
            writer.line(f"schedpki: state page {page_url(double.secrets_url, double.control_token)}")
            writer.line(f"schedpki: (same page on the scheduler's port: {page_url(double.scheduler_url)})")
            writer.line("schedpki: press Enter to go on with the run")
            try:
                sys.stdin.readline()
            except (OSError, ValueError):  # standard input closed meanwhile: go on
                pass
        finally:
            if capture is not None:
                capture.resume_global_capture()
