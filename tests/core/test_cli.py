"""`schedpki serve` as a user runs it: prints addresses and env lines, serves, stops on signals."""

import os
import signal
import subprocess
import sys
import time

import pytest
import requests


def _start(*args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--scheduler-port", "0", "--secrets-port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("export BAO_TOKEN="):
            break
    env = dict(line[len("export "):].split("=", 1) for line in lines if line.startswith("export "))
    return proc, lines, env


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_prints_env_lines_answers_and_stops_on_signal(sig):
    proc, lines, env = _start("--no-seed", "--management-token", "mgmt", "--root-token", "rt")
    try:
        assert set(env) == {"NOMAD_ADDR", "NOMAD_TOKEN", "VAULT_ADDR", "VAULT_TOKEN", "BAO_ADDR", "BAO_TOKEN"}
        assert env["NOMAD_TOKEN"] == "mgmt" and env["VAULT_TOKEN"] == env["BAO_TOKEN"] == "rt"
        assert env["VAULT_ADDR"] == env["BAO_ADDR"] and env["VAULT_ADDR"].startswith("http://127.0.0.1:")
        health = requests.get(env["VAULT_ADDR"] + "/v1/sys/health", timeout=5)
        assert health.status_code == 200 and health.json()["sealed"] is False
        listing = requests.get(env["NOMAD_ADDR"] + "/v1/acl/auth-methods", timeout=5)
        assert listing.status_code == 200
    finally:
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=5)
    assert proc.returncode == 0
    assert out.strip().endswith("schedpki: stopped")


def test_default_seed_gives_a_pki_mount_that_issues(tmp_path):
    proc, lines, env = _start()
    try:
        assert env, "serve did not start: " + proc.stderr.read() if proc.poll() is not None else str(lines)
        r = requests.post(env["VAULT_ADDR"] + "/v1/pki/issue/example-dot-com", headers={"X-Vault-Token": "root"},
                          json={"common_name": "www.example.com", "ttl": "1h"}, timeout=10)
        assert r.status_code == 200, r.text
        assert r.json()["data"]["serial_number"].count(":") >= 15
        methods = requests.get(env["NOMAD_ADDR"] + "/v1/acl/auth-methods", timeout=5).json()
        assert [m["Name"] for m in methods] == ["example-oidc"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=5)


def test_bad_seed_file_names_file_entry_and_problem(tmp_path):
    seed = tmp_path / "bad.yaml"
    seed.write_text("secrets:\n  mounts:\n    - type: pki\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--scheduler-port", "0", "--secrets-port", "0", "--seed", str(seed)],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"schedpki: bad seed: {seed}: secrets.mounts[0].path: required: the mount path, e.g. pki"


def _serve_with_taken_port(flag):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    other = "--secrets-port" if flag == "--scheduler-port" else "--scheduler-port"
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", flag, str(port), other, "0"],
            capture_output=True, text=True, timeout=30, env={**os.environ},
        )
    finally:
        sock.close()
    return proc, port


def test_taken_scheduler_port_fails_with_exit_1_naming_port_and_service():
    proc, port = _serve_with_taken_port("--scheduler-port")
    assert proc.returncode == 1
    assert proc.stderr == (f"schedpki: cannot listen on 127.0.0.1:{port} for the scheduler (Nomad API): Address already "
                           "in use (choose another port with --scheduler-port PORT; 0 = any free port)\n")


def test_taken_secrets_port_fails_with_exit_1_naming_port_and_service():
    proc, port = _serve_with_taken_port("--secrets-port")
    assert proc.returncode == 1
    assert proc.stderr == (f"schedpki: cannot listen on 127.0.0.1:{port} for the secrets service (OpenBao/Vault API): "
                           "Address already in use (choose another port with --secrets-port PORT; 0 = any free port)\n")


def test_missing_seed_file_names_the_file_and_the_problem(tmp_path):
    missing = tmp_path / "nope.yaml"
    proc = subprocess.run([sys.executable, "-m", "pytest_schedpki.cli", "serve", "--seed", str(missing)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr == f"schedpki: bad seed: {missing}: cannot read file: No such file or directory\n"


def test_version():
    from importlib import metadata

    proc = subprocess.run([sys.executable, "-m", "pytest_schedpki.cli", "--version"], capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, f"schedpki {metadata.version('pytest-schedpki')}\n")


def test_no_command_prints_the_help_with_the_commands():
    proc = subprocess.run([sys.executable, "-m", "pytest_schedpki.cli"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and proc.stderr == ""
    assert proc.stdout.startswith("usage: schedpki [-h] [--version] COMMAND ...\n")
    assert "    serve     run both services until interrupted\n" in proc.stdout
    assert "  schedpki serve --help       every option of serve" in proc.stdout


def test_serve_prints_the_unseal_key_that_unseals_after_sys_seal():
    proc, lines, env = _start("--no-seed")
    try:
        line = proc.stdout.readline().rstrip("\n")
        prefix = "schedpki: unseal key (sys/unseal, `bao operator unseal`): "
        assert line.startswith(prefix), line
        key = line[len(prefix):]
        url, token = env["VAULT_ADDR"], {"X-Vault-Token": env["VAULT_TOKEN"]}
        assert requests.put(url + "/v1/sys/seal", headers=token, timeout=5).status_code == 204
        assert requests.get(url + "/v1/sys/mounts", headers=token, timeout=5).json() == {"errors": ["Vault is sealed"]}
        status = requests.put(url + "/v1/sys/unseal", json={"key": key}, timeout=5)
        assert status.status_code == 200 and status.json()["sealed"] is False
        assert requests.get(url + "/v1/sys/mounts", headers=token, timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=5)
