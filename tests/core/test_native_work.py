"""The process exit waits for native work (``pytest_schedpki.native_work``): on Python 3.11-3.13 a
daemon thread coming back from a GIL-free cryptography call during finalization is ended by
pthread_exit, which some cryptography builds (48.0.0) turn into SIGABRT. Each case runs in a
subprocess and checks, from an ``atexit`` handler that runs after the settle hook, that no such
call was still running."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

_PRELUDE = """
import atexit, os, threading, time
report, at_last = [], []
def _last():  # registered before native_work: atexit runs it after the settle hook (last in, first out)
    for check in at_last:
        check()
    os.write(1, ("|".join(report) + "\\n").encode())
atexit.register(_last)
from pytest_schedpki.process import native_work
"""


def _run(body: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(body)], capture_output=True, text=True,
                          timeout=timeout)
    return proc, time.monotonic() - started


def test_the_exit_waits_for_work_running_in_a_daemon_thread():
    proc, _ = _run("""
        entered = threading.Event()
        def work():
            with native_work.busy():
                entered.set()
                time.sleep(0.3)
                report.append("finished")
        threading.Thread(target=work, daemon=True).start()
        entered.wait()
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "finished"


def test_work_started_after_the_settle_never_runs_and_the_exit_does_not_wait_for_it():
    proc, elapsed = _run("""
        assert native_work.settle(timeout=5) is True
        parked = threading.Event()
        def late():
            parked.set()
            with native_work.busy():
                report.append("ran")
        threading.Thread(target=late, daemon=True).start()
        parked.wait()
        time.sleep(0.2)
        report.append(f"running={native_work.running()}")
        with native_work.busy():  # the main thread is never parked
            report.append("main ran")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "running=0|main ran"
    assert elapsed < 20


def test_a_held_request_does_not_hold_the_exit():
    proc, elapsed = _run("""
        held = threading.Event()
        def request():
            with native_work.busy():
                with native_work.waiting():
                    held.set()
                    threading.Event().wait()  # a hang nobody releases
                report.append("resumed")
        threading.Thread(target=request, daemon=True).start()
        held.wait()
        report.append(f"running={native_work.running()}")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "running=0"
    assert elapsed < native_work_timeout() / 2


def test_a_wait_that_returns_holding_a_lock_is_not_parked():
    proc, _ = _run("""
        lock = threading.Condition()
        waiting_now = threading.Event()
        def blocking_query():
            with native_work.busy():
                with lock:
                    with native_work.waiting(park=False):
                        waiting_now.set()
                        lock.wait(0.4)  # wakes after the settle hook returned
                    report.append("answered")
        query = threading.Thread(target=blocking_query, daemon=True)
        query.start()
        waiting_now.wait()
        def lock_is_free():
            query.join(5)
            with lock:  # a parked thread would hold it for good
                report.append("lock free")
        at_last.append(lock_is_free)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "answered|lock free"


def test_the_key_pool_finishes_the_key_it_is_making_before_the_exit():
    proc, _ = _run("""
        from cryptography.hazmat.primitives.asymmetric import rsa
        from pytest_schedpki.secrets.engines.pki.codecs import keypool
        calls = {"in": 0, "out": 0}
        original = rsa.generate_private_key
        def counted(*args, **kwargs):
            calls["in"] += 1
            try:
                return original(*args, **kwargs)
            finally:
                calls["out"] += 1
        rsa.generate_private_key = counted
        at_last.append(lambda: report.append(f"made={calls['out']}/{calls['in']}"))
        native_work.before_settle(lambda: report.append("settling"))
        pool = keypool.KeyPool(size=8)
        pool.warm(idle=True)  # even under SCHED_IDLE
        while calls["in"] == calls["out"]:
            time.sleep(0.001)
    """)
    assert proc.returncode == 0, proc.stderr
    settling, made = proc.stdout.strip().split("|")
    assert settling == "settling"
    done, started = made[len("made="):].split("/")
    assert done == started and int(started) >= 1


def native_work_timeout() -> float:
    from pytest_schedpki.process import native_work

    return native_work.SETTLE_TIMEOUT
