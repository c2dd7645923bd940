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


def _pool_status_when_full(url: str, size: int) -> dict:
    deadline = time.monotonic() + 60
    while True:
        status = requests.get(f"{url}/_schedpki/keypool", timeout=5).json()
        if all(p["ready"] >= size for p in status["pools"]) or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_key_pool_knobs_show_on_the_control_endpoint():
    """serve fills the pool from start-up on, before any RSA draw (the first RSA root finds a key)."""
    proc, url = _serve("--rsa-key-pool", "2", "--deterministic-keys", "cli-seed")
    try:
        assert _pool_status_when_full(url, 2) == {
            "deterministic": True, "pools": [{"key_type": "rsa", "bits": 2048, "size": 2, "ready": 2}]}
    finally:
        _stop(proc)


def test_no_key_pool_means_no_pool_at_start_up():
    proc, url = _serve("--rsa-key-pool", "0")
    try:
        assert requests.get(f"{url}/_schedpki/keypool", timeout=5).json() == {"deterministic": False, "pools": []}
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


def test_the_cli_module_leaves_the_double_for_serve_to_import():
    """``schedpki serve`` sets the RSA key pool going before the ~100 ms of the double's imports."""
    code = ("import sys, pytest_schedpki.cli; "
            "print(sorted(m for m in ('pytest_schedpki.double', 'werkzeug') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_preload_binds_the_datetime_class_imports_the_pki_engine_and_skips_unknown_types():
    code = ("import sys, pytest_schedpki.cli as cli, pytest_schedpki.clock as clock; "
            "from pytest_schedpki.double import Double; Double(warm_up=False); "
            "print('cryptography.x509' in sys.modules, clock._warmed_up); "
            "cli.preload_engines(('no-such-engine', 'pki')).join(); "
            "print('pytest_schedpki.secrets.engines.pki.backend' in sys.modules, clock._warmed_up)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "False", "True", "True"]


def test_a_fresh_serve_sets_up_pki_and_issues_rsa_at_once():
    proc, url = _serve()
    try:
        session = requests.Session()
        session.headers["X-Vault-Token"] = "root"
        assert session.post(f"{url}/v1/sys/mounts/pki", json={"type": "pki", "config": {"max_lease_ttl": "87600h"}},
                            timeout=30).status_code == 204
        root = session.post(f"{url}/v1/pki/root/generate/internal", timeout=30,
                            json={"common_name": "r", "key_type": "rsa", "key_bits": 2048, "ttl": "87600h"})
        assert root.status_code == 200 and "BEGIN CERTIFICATE" in root.json()["data"]["certificate"]
        assert session.post(f"{url}/v1/pki/roles/r", json={"allow_any_name": True, "key_type": "rsa"},
                            timeout=30).status_code == 200
        issued = session.post(f"{url}/v1/pki/issue/r", json={"common_name": "a.example.com"}, timeout=30)
        assert issued.status_code == 200 and issued.json()["data"]["private_key_type"] == "rsa"
    finally:
        _stop(proc)
