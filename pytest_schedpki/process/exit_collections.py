"""pytest's collections at exit made to walk only what they can free (used by the plugin only).

pytest's ``unraisableexception`` plugin ends a session with ``gc.collect()`` run 5 times (a number the
Trio project found), so that cyclic garbage is finalized while its hook still reports unraisable
exceptions. Each of those collections walks every tracked object of the process, most of them
modules, functions and classes that live to the end; in a downstream suite that was 5 x ~40 ms at
exit, the double's modules making each one ~9 ms longer. :func:`before_exit_collections` and
:func:`after_exit_collections` are registered as cleanups around pytest's (``plugin.pytest_configure``).
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

_FROZEN = pytest.StashKey[bool]()  # the heap is frozen by before_exit_collections

def _unraisable_iterations(config: Any) -> int:
    """How many full collections pytest's ``unraisableexception`` cleanup runs (its stash key, default
    5; 0 when the plugin is off or its key cannot be read)."""
    if not config.pluginmanager.has_plugin("unraisableexception"):
        return 0
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:  # pragma: no cover - a pytest without it: leave its exit alone
        return 0
    return config.stash.get(gc_collect_iterations_key, 5)


def before_exit_collections(config: Any) -> None:
    """Cleanup run right before pytest's ``unraisableexception`` cleanup, which calls ``gc.collect()``
    5 times to finalize the session's cyclic garbage while its hook reports unraisable exceptions.
    Each of those walks the whole heap (~40 ms with the double's modules loaded). Here the same
    collections run until one finds nothing unreachable (usually 2; never more than pytest's count),
    so every finalizer, also of garbage made by finalizers, runs under pytest's hook as before; then,
    with no garbage left, the heap is frozen (``gc.freeze``) so that pytest's own collections walk only
    what was made since. :func:`after_exit_collections` unfreezes it. Nothing happens when objects are
    already frozen (the user's own ``gc.freeze``), when pytest would collect fewer than 3 times, or when
    5 collections in a row found garbage (pytest's collections then run as they would have)."""
    iterations = _unraisable_iterations(config)
    if iterations < 3 or gc.get_freeze_count():
        return
    for _ in range(iterations):
        if not gc.collect():
            gc.freeze()
            config.stash[_FROZEN] = True
            return


def after_exit_collections(config: Any) -> None:
    """Cleanup run after pytest's ``unraisableexception`` cleanup: the heap frozen by
    :func:`before_exit_collections` goes back to the collector's oldest generation."""
    if config.stash.get(_FROZEN, False):
        gc.unfreeze()
        config.stash[_FROZEN] = False



class _Before:
    """Registers :func:`before_exit_collections` from the last ``pytest_configure`` (``trylast``): after
    pytest's ``unraisableexception`` registered its cleanup, so it runs just before (cleanups run
    newest first)."""

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        config.add_cleanup(lambda: before_exit_collections(config))


class _After:
    """Registers :func:`after_exit_collections` from the first ``pytest_configure`` (``tryfirst``), before
    pytest's plugins register theirs, so it runs after their cleanups."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        config.add_cleanup(lambda: after_exit_collections(config))


def register(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the two cleanup hooks (once per plugin manager), from the plugin's ``pytest_addoption``:
    before any ``pytest_configure`` runs."""
    for name, hooks in (("schedpki-exit-collections-before", _Before), ("schedpki-exit-collections-after", _After)):
        if not pluginmanager.has_plugin(name):
            pluginmanager.register(hooks(), name)
