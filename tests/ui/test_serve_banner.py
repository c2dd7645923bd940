"""`schedpki serve` prints the state page's URL in its banner, and the page answers there."""

import re
import signal
import subprocess
import sys
import time

import requests

PAGE = re.compile(r"^schedpki: state page on (http://127\.0\.0\.1:\d+/_schedpki/ui/)(.*) \(also on the scheduler's port\)$")


def _banner(*args):
    proc = subprocess.Popen([sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", "--scheduler-port", "0",
                             "--secrets-port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("export BAO_TOKEN="):
            break
    return proc, lines


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 0


def test_the_banner_names_the_page():
    proc, lines = _banner()
    try:
        found = [m for m in map(PAGE.match, lines) if m]
        assert len(found) == 1, lines
        url, rest = found[0].groups()
        assert rest == ""
        secrets = next(line for line in lines if line.startswith("export VAULT_ADDR="))[len("export VAULT_ADDR="):]
        assert url == secrets + "/_schedpki/ui/"
        page = requests.get(url, timeout=10)
        assert page.status_code == 200 and "<title>schedpki double</title>" in page.text
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    finally:
        _stop(proc)


def test_with_a_control_token_the_banner_says_how_to_pass_it_without_printing_it():
    proc, lines = _banner("--control-token", "banner-ctl-token")
    try:
        found = [m for m in map(PAGE.match, lines) if m]
        assert found and found[0].group(2) == "  (append #token=<control token>)"
        assert not any("banner-ctl-token" in line for line in lines)
        url = found[0].group(1)
        assert requests.get(url + "api/secrets", timeout=10).status_code == 403
        ok = requests.get(url + "api/secrets", headers={"X-Schedpki-Control-Token": "banner-ctl-token"}, timeout=10)
        assert ok.status_code == 200
    finally:
        _stop(proc)
