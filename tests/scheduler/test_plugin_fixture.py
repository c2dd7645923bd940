"""The scheduler through the project's ``schedpki`` fixture: seeding, knobs, control endpoints, journal."""

import pytest
import requests
from sched_helpers import mock_oidc

SEED = {"scheduler": {"tokens": [{"secret_id": "ci", "type": "management"}],
                      "auth_methods": [mock_oidc("seeded")]}}


@pytest.mark.schedpki(seed=SEED)
def test_seed_marker_and_http(schedpki):
    s = schedpki.scheduler
    r = requests.get(f"{s.url}/v1/acl/auth-method/seeded", headers={"X-Nomad-Token": "ci"}, timeout=10)
    assert r.status_code == 200 and r.json()["Config"]["OIDCClientSecret"] == "redacted"
    assert s.state.get_auth_method("seeded").Config.OIDCClientSecret == "very secret secret"


def test_state_is_reset_between_tests(schedpki):
    s = schedpki.scheduler
    assert requests.get(f"{s.url}/v1/acl/auth-methods", timeout=10).json() == []
    r = requests.put(f"{s.url}/v1/acl/auth-method", json=mock_oidc("temp"), headers=s.headers(), timeout=10)
    assert r.status_code == 200


def test_lag_knobs_through_the_handle_and_control_endpoints(schedpki):
    s = schedpki.scheduler
    schedpki.pause_replication()
    requests.put(f"{s.url}/v1/acl/auth-method", json=mock_oidc("pending"), headers=s.headers(), timeout=10)
    assert requests.get(f"{s.url}/v1/acl/auth-methods", timeout=10).json() == []
    settings = requests.get(f"{s.url}/_schedpki/lag", timeout=10).json()
    assert (settings["paused"], settings["pending"]) == (True, 1)
    assert requests.post(f"{s.url}/_schedpki/sync", timeout=10).status_code == 200
    assert [m["Name"] for m in requests.get(f"{s.url}/v1/acl/auth-methods", timeout=10).json()] == ["pending"]
    after = requests.post(f"{s.url}/_schedpki/lag", json={"after_reads": 1}, timeout=10).json()
    assert after["after_reads"] == 1 and after["paused"] is False


def test_leader_control_endpoint(schedpki):
    url = schedpki.scheduler.url
    requests.post(f"{url}/_schedpki/leader", json={"leader": False}, timeout=10)
    r = requests.get(f"{url}/v1/acl/auth-methods", timeout=10)
    assert (r.status_code, r.text) == (500, "No cluster leader")
    assert requests.get(f"{url}/v1/acl/auth-methods?stale", timeout=10).headers["X-Nomad-KnownLeader"] == "false"


def test_journal_classifies_scheduler_tokens(schedpki):
    url = schedpki.scheduler.url
    client = schedpki.scheduler.state.add_token(type="client").SecretID
    for token in ("root", client, "bogus", None):
        requests.get(f"{url}/v1/acl/auth-methods", headers={"X-Nomad-Token": token} if token else {}, timeout=10)
    kinds = [e.token_kind for e in schedpki.journal.entries("scheduler")]
    assert kinds == ["management", "client", "unknown", "anonymous"]
