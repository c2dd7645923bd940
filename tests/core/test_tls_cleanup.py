"""The double's own TLS material leaves nothing behind: no private key on disk, no folder after stop."""

import os
import signal
import stat
import subprocess
import sys
import time

import requests

from pytest_schedpki import Double
from pytest_schedpki.wire.tls import create_tls_material


def _leftovers(folder):
    return sorted(name for name in os.listdir(folder) if name.startswith("schedpki-tls-"))


def test_only_public_files_on_disk_in_a_private_folder_removed_by_cleanup(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    material = create_tls_material()
    double = Double().start(ssl_context=material.server_context())
    try:
        assert requests.get(f"{double.secrets_url}/v1/sys/health", verify=material.ca_path, timeout=5).status_code == 200
    finally:
        double.stop()
    assert os.path.dirname(material.directory) == str(tmp_path)
    assert stat.S_IMODE(os.stat(material.directory).st_mode) == 0o700
    assert sorted(os.listdir(material.directory)) == ["ca.pem", "server.pem"]
    for name in ("ca.pem", "server.pem"):
        assert b"PRIVATE KEY" not in open(os.path.join(material.directory, name), "rb").read()
    assert b"PRIVATE KEY" in material.key_pem and "PRIVATE" not in repr(material)
    material.cleanup()
    material.cleanup()  # idempotent
    assert _leftovers(tmp_path) == []


def test_a_folder_given_by_the_caller_is_not_removed(tmp_path):
    material = create_tls_material(directory=str(tmp_path))
    material.cleanup()
    assert sorted(os.listdir(tmp_path)) == ["ca.pem", "server.pem"]


def test_the_runtime_dir_is_preferred_over_shared_temp_space(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    material = create_tls_material()
    try:
        assert os.path.dirname(material.directory) == str(runtime)
    finally:
        material.cleanup()
    assert _leftovers(runtime) == []


def _env_with_temp(folder):
    env = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(folder)
    return env


def test_serve_tls_removes_its_folder_on_stop(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", "--tls", "--scheduler-port", "0",
         "--secrets-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env_with_temp(tmp_path))
    env, deadline = {}, time.monotonic() + 60
    try:
        while "BAO_CACERT" not in env and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("export "):
                key, value = line[len("export "):].strip().split("=", 1)
                env[key] = value
        assert os.path.dirname(os.path.dirname(env["VAULT_CACERT"])) == str(tmp_path)
        assert sorted(os.listdir(os.path.dirname(env["VAULT_CACERT"]))) == ["ca.pem", "server.pem"]
        assert requests.get(env["VAULT_ADDR"] + "/v1/sys/health", verify=env["VAULT_CACERT"], timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert _leftovers(tmp_path) == []


def test_a_pytest_session_with_schedpki_tls_leaves_no_folder(pytester, tmp_path, monkeypatch):
    pytester.makeini("[pytest]\nschedpki_tls = true\n")
    pytester.makepyfile(f"""
        import os

        def test_https(schedpki):
            assert schedpki.secrets.url.startswith("https://")
            assert os.path.dirname(os.path.dirname(schedpki.ca_path)) == {str(tmp_path)!r}
            assert sorted(os.listdir(os.path.dirname(schedpki.ca_path))) == ["ca.pem", "server.pem"]
    """)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert _leftovers(tmp_path) == []
