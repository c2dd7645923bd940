"""`schedpki serve` speed knobs: --rsa-key-pool, --deterministic-keys and --cpu."""

import os
import subprocess
import sys
import time

import pytest
import requests


def _serve(*args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", "--scheduler-port", "0",
         "--secrets-port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line or line.startswith("export VAULT_ADDR="):
            return proc, line.strip().split("=", 1)[-1]
    return proc, ""


def _stop(proc):
    proc.terminate()
    proc.wait(timeout=10)


def test_key_pool_knobs_show_on_the_control_endpoint():
    proc, url = _serve("--rsa-key-pool", "2", "--deterministic-keys", "cli-seed")
    try:
        assert requests.get(f"{url}/_schedpki/keypool", timeout=5).json() == {"deterministic": True, "pools": []}
    finally:
        _stop(proc)


@pytest.mark.parametrize("args, message", [
    (["--rsa-key-pool", "-1"], "schedpki: --rsa-key-pool must not be negative"),
    (["--cpu", "100000"], "schedpki: cannot run on CPU 100000:"),
])
def test_bad_knobs_exit_2(args, message):
    proc = subprocess.run([sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", "--scheduler-port", "0",
                           "--secrets-port", "0", *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and proc.stderr.startswith(message)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux-only")
def test_cpu_pins_the_server_threads():
    cpu = max(os.sched_getaffinity(0))
    proc, url = _serve("--cpu", str(cpu))
    try:
        assert requests.get(f"{url}/v1/sys/health", timeout=5).status_code == 200
        for task in os.listdir(f"/proc/{proc.pid}/task"):
            assert os.sched_getaffinity(int(task)) == {cpu}
    finally:
        _stop(proc)
