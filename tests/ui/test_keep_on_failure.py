"""``--schedpki-keep-on-failure``: a failed test's state stays on the page until Enter (pytest run in a
real terminal by pexpect), and the option is refused where nobody could press Enter."""

import json
import os
import pathlib
import subprocess
import sys
import urllib.request

import pexpect

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
       "PY_COLORS": "0", "SCHEDPKI_RSA_KEY_POOL": "0"}
TESTS = """
import requests

def test_passes_first(schedpki):
    pass

def test_fails(schedpki):
    r = requests.post(schedpki.secrets.url + "/v1/sys/mounts/kept", headers={"X-Vault-Token": "root"},
                      json={"type": "kv"})
    assert r.status_code == 204
    assert False, "boom"

def test_after(schedpki):
    assert "kept/" not in schedpki.secrets.state.mounts  # the next test's setup reset the double
"""


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def test_a_failed_tests_state_stays_until_enter(pytester):
    pytester.makepyfile(test_kept=TESTS)
    child = pexpect.spawn(sys.executable, ["-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
                                           "--schedpki-keep-on-failure", "test_kept.py"],
                          cwd=str(pytester.path), env=ENV, encoding="utf-8", timeout=60)
    try:
        child.expect(r"test_kept\.py::test_fails failed; its state is kept")
        child.expect(r"state page (http://127\.0\.0\.1:\d+/_schedpki/ui/)\s")
        page = child.match.group(1)
        child.expect("press Enter to go on")
        # the run waits: the failed test's mount and its request are on the page
        mounts = [m["path"] for m in _get(page + "api/secrets")["mounts"]]
        assert "kept/" in mounts
        journal = _get(page + "api/double")["journal"]["entries"]
        assert [(e["method"], e["path"], e["status"]) for e in journal] == [("POST", "/v1/sys/mounts/kept", 204)]
        with urllib.request.urlopen(page, timeout=10) as answer:
            assert answer.status == 200 and b"schedpki double" in answer.read()
        child.sendline("")
        child.expect(r"1 failed, 2 passed")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 1
    assert "test_passes_first failed" not in child.before  # only the failure waited


def test_refused_under_xdist(pytester):
    pytester.makepyfile(test_kept=TESTS)
    output, status = pexpect.run(f"{sys.executable} -m pytest -p no:cacheprovider -n 2 --schedpki-keep-on-failure "
                                 "test_kept.py", cwd=str(pytester.path), env=ENV, withexitstatus=True, timeout=60,
                                 encoding="utf-8")
    assert status == 4, output
    assert ("ERROR: --schedpki-keep-on-failure waits for Enter on the terminal, which pytest-xdist's workers cannot "
            "read: run without -n/--numprocesses (or with -n 0)") in output


def test_refused_without_a_terminal_also_from_the_ini(pytester):
    pytester.makepyfile(test_kept=TESTS)
    for args, ini in ((["--schedpki-keep-on-failure"], ""), ([], "[pytest]\nschedpki_keep_on_failure = true\n")):
        (pytester.path / "pytest.ini").write_text(ini)
        result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, "test_kept.py"],
                                cwd=pytester.path, env=ENV, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 4, result.stdout + result.stderr
        assert ("ERROR: --schedpki-keep-on-failure waits for Enter on the terminal, but standard input is not one (a "
                "pipe, a file or CI): run pytest from a terminal, or drop the option") in result.stderr


def test_off_by_default_and_with_the_ini_false(pytester):
    pytester.makepyfile(test_kept=TESTS)
    pytester.makeini("[pytest]\nschedpki_keep_on_failure = false\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_kept.py"],
                            cwd=pytester.path, env=ENV, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1 and "1 failed, 2 passed" in result.stdout
    assert "state is kept" not in result.stdout
