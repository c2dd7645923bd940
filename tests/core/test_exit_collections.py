"""pytest's collections at exit with the plugin loaded (process/exit_collections.py): the garbage of the
session is still finalized under pytest's unraisable-exception hook (also garbage that a finalizer
makes, and with ``-W error`` the run still fails), pytest's own collections then walk only what is new,
and the collector is given back unfrozen; a user's own ``gc.freeze`` turns it off."""

from __future__ import annotations

import gc

import pytest

from pytest_schedpki.process import exit_collections

# a cycle whose finalizer raises, made unreachable at the end of the test: only a collection finds it;
# its finalizer makes a second such cycle (second-order garbage), found by a later collection
LEAKY = '''
import gc

class Cycle:
    def __init__(self, name, child=False):
        self.me, self.name, self.child = self, name, child

    def __del__(self):
        if self.child:
            Cycle(self.name + "-child")
        raise RuntimeError(f"finalizer of {self.name} failed")


def test_leaves_garbage():
    gc.disable()  # nothing collects it before the session ends
    Cycle("parent", child=True)
'''

PROBE = '''
import gc, json, os

_log = []


def _on_gc(phase, info):
    if phase == "stop" and info["generation"] == 2:
        _log.append(info["collected"])


gc.callbacks.append(_on_gc)


def pytest_unconfigure(config):
    _log.clear()


import atexit
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps([_log, gc.get_freeze_count()])))
'''


@pytest.mark.parametrize("warnings", [[], ["-W", "error::pytest.PytestUnraisableExceptionWarning"]])
def test_garbage_of_the_session_is_finalized_under_pytests_hook(pytester, warnings):
    pytester.makepyfile(test_leaky=LEAKY)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *warnings)
    text = result.stdout.str() + result.stderr.str()
    assert "finalizer of parent failed" in text and "finalizer of parent-child failed" in text, text
    if warnings:
        assert result.ret != 0  # an unraisable exception at exit still fails the run
    else:
        result.assert_outcomes(passed=1)


def test_pytests_exit_collections_walk_only_new_objects_and_nothing_stays_frozen(pytester, monkeypatch, tmp_path):
    """The plugin's collections run until one finds nothing (here: the session's garbage, then none),
    the heap is frozen for pytest's 5, and unfrozen after them (the probe's atexit sees no frozen object)."""
    out = tmp_path / "probe.json"
    monkeypatch.setenv("PROBE_OUT", str(out))
    pytester.makepyfile(test_leaky=LEAKY, probe_plugin=PROBE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "probe_plugin")
    result.assert_outcomes(passed=1)
    import json

    collections, frozen = json.loads(out.read_text())
    assert frozen == 0
    # the plugin's: until one finds nothing, at least the two cycles' collections; then pytest's 5
    plugin_part, pytest_part = collections[:-5], collections[-5:]
    assert plugin_part[-1] == 0 and sum(plugin_part) >= 4 and len(plugin_part) <= 5, collections
    assert pytest_part == [0, 0, 0, 0, 0], collections


class _Config:
    def __init__(self, iterations=5, unraisable=True):
        self.stash = pytest.Stash()
        self.pluginmanager = self
        self._unraisable = unraisable
        from _pytest.unraisableexception import gc_collect_iterations_key

        self.stash[gc_collect_iterations_key] = iterations

    def has_plugin(self, name):
        return name == "unraisableexception" and self._unraisable


@pytest.mark.parametrize("case", ["user froze objects", "pytest collects twice", "no unraisableexception plugin"])
def test_nothing_is_frozen_where_the_plugin_would_not_save_anything(case):
    config = _Config(iterations=2 if case == "pytest collects twice" else 5,
                     unraisable=case != "no unraisableexception plugin")
    try:
        if case == "user froze objects":
            gc.freeze()
        user_froze = gc.get_freeze_count() > 0
        exit_collections.before_exit_collections(config)
        assert not config.stash.get(exit_collections._FROZEN, False)
        assert (gc.get_freeze_count() > 0) == user_froze  # nothing frozen by the plugin
        exit_collections.after_exit_collections(config)
        assert (gc.get_freeze_count() > 0) == user_froze  # and the user's freeze is not undone
    finally:
        gc.unfreeze()


def test_the_heap_is_frozen_between_the_two_cleanups_and_given_back():
    config = _Config()
    assert gc.get_freeze_count() == 0
    exit_collections.before_exit_collections(config)
    try:
        assert gc.get_freeze_count() > 0
        assert gc.collect() == 0
    finally:
        exit_collections.after_exit_collections(config)
    assert gc.get_freeze_count() == 0
