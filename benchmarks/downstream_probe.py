"""A pytest plugin that splits the CPU time of one downstream run into phases (``downstream.py --split``
loads it with ``-p downstream_probe``; not collected by the project's own suite).

It writes one JSON object to the file named by ``$SCHEDPKI_DOWNSTREAM_PROBE`` at exit: process CPU
(``time.process_time``: every thread of the process) in milliseconds at the start of the test loop,
spent in each fixture's set-up (exclusive of the fixtures it depends on; ``schedpki`` split into its
first set-up and the rest), in the tests' calls, in the other set-up and teardown work, in the last
teardown (the session fixtures: the double stopped, bao stopped) with its wall time, after the loop,
and in the garbage collector (full collections before, during and after the test loop; young ones).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import time

import pytest

_cpu = time.process_time
_data: dict = {"fixtures": {}, "setup": 0.0, "call": 0.0, "teardown": 0.0, "gc_full": [0.0, 0.0, 0.0],
               "gc_full_count": [0, 0, 0], "gc_young": 0.0}
_phase = {"index": 0}  # 0 before the test loop, 1 in it, 2 after it
_gc_started = [0.0]


def _on_gc(phase: str, info: dict) -> None:
    if phase == "start":
        _gc_started[0] = _cpu()
        return
    spent = _cpu() - _gc_started[0]
    if info["generation"] == 2:
        _data["gc_full"][_phase["index"]] += spent
        _data["gc_full_count"][_phase["index"]] += 1
    else:
        _data["gc_young"] += spent


gc.callbacks.append(_on_gc)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    started = _cpu()
    try:
        return (yield)
    finally:
        name = fixturedef.argname
        if name == "schedpki" and "schedpki (first)" not in _data["fixtures"]:
            name = "schedpki (first)"
        _data["fixtures"][name] = _data["fixtures"].get(name, 0.0) + _cpu() - started


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    started = _cpu()
    try:
        return (yield)
    finally:
        _data["setup"] += _cpu() - started


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    started = _cpu()
    try:
        return (yield)
    finally:
        _data["call"] += _cpu() - started


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    started, wall = _cpu(), time.perf_counter()
    try:
        return (yield)
    finally:
        if nextitem is None:  # the session fixtures end here
            _data["last_teardown"] = _cpu() - started
            _data["last_teardown_wall"] = time.perf_counter() - wall
        else:
            _data["teardown"] += _cpu() - started


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    _phase["index"] = 1
    _data["before_loop"] = _cpu()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    _phase["index"] = 2
    _data["loop_end"] = _cpu()


def _write() -> None:
    path = os.environ.get("SCHEDPKI_DOWNSTREAM_PROBE")
    if path:
        _data["total"] = _cpu()
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(_data, fh)


atexit.register(_write)
