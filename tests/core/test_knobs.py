"""Journal, faults, control endpoints and TLS: the knobs tests use to reproduce edge cases."""

import threading
import time
import warnings

import pytest
import requests

from pytest_schedpki import Double
from pytest_schedpki.faults import Fault
from pytest_schedpki.wire.tls import create_tls_material

ROOT = {"X-Vault-Token": "root"}


def test_journal_records_requests_with_token_kind_and_redaction(schedpki):
    url = schedpki.secrets.url
    requests.get(f"{url}/v1/sys/health")
    requests.post(f"{url}/v1/sys/mounts/pki_j", headers=ROOT, json={"type": "pki"})
    requests.get(f"{url}/v1/sys/mounts", headers={"X-Vault-Token": "bogus"})
    entries = schedpki.journal.entries("secrets")
    assert [(e.method, e.path, e.status, e.token_kind) for e in entries] == [
        ("GET", "/v1/sys/health", 200, "none"),
        ("POST", "/v1/sys/mounts/pki_j", 204, "root"),
        ("GET", "/v1/sys/mounts", 403, "invalid"),
    ]
    assert entries[1].body == {"type": "pki"}
    assert entries[2].response == {"errors": ["permission denied"]}
    schedpki.journal.assert_request_made("POST", "/v1/sys/mounts/pki_j", count=1, body={"type": "pki"})


def test_assert_request_made_shows_near_misses(schedpki):
    requests.post(f"{schedpki.secrets.url}/v1/sys/mounts/pki_a", headers=ROOT, json={"type": "pki"})
    with pytest.raises(AssertionError) as exc:
        schedpki.journal.assert_request_made("POST", "/v1/sys/mounts/pki_b")
    message = str(exc.value)
    assert message.startswith("expected at least 1 request POST /v1/sys/mounts/pki_b, found 0")
    assert "secrets POST /v1/sys/mounts/pki_a -> 204 token=root" in message


def test_journal_redacts_private_keys():
    from pytest_schedpki.journal import redact

    pem = "-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY-----"
    assert redact({"data": {"private_key": pem, "certificate": "x"}}) == {"data": {"private_key": "<redacted>", "certificate": "x"}}
    assert redact({"certificate": pem + "\nrest"}) == {"certificate": "<redacted>\nrest"}


def test_fault_status_once_then_real_answer(schedpki):
    schedpki.faults.add(Fault(service="secrets", path="/v1/sys/health", status=503, body={"errors": ["Vault is sealed"]}, times=1))
    first = requests.get(f"{schedpki.secrets.url}/v1/sys/health")
    assert (first.status_code, first.json(), first.headers["Content-Type"]) == (503, {"errors": ["Vault is sealed"]}, "application/json")
    assert requests.get(f"{schedpki.secrets.url}/v1/sys/health").status_code == 200


def test_fault_glob_method_and_n_times(schedpki):
    schedpki.faults.add(Fault(path="/v1/sys/mounts/*", method="POST", status=500, body="boom", times=2))
    url = schedpki.secrets.url
    codes = [requests.post(f"{url}/v1/sys/mounts/m{i}", headers=ROOT, json={"type": "pki"}).status_code for i in range(3)]
    assert codes == [500, 500, 204]
    assert requests.get(f"{url}/v1/sys/mounts", headers=ROOT).status_code == 200


def test_fault_probability_is_reproducible_with_a_seed(schedpki):
    def run():
        schedpki.faults.clear()
        schedpki.faults.add(Fault(path="/v1/sys/health", status=500, probability=0.5, seed=7))
        return [requests.get(f"{schedpki.secrets.url}/v1/sys/health").status_code for _ in range(12)]

    first, second = run(), run()
    assert first == second
    assert {200, 500} == set(first)


def test_fault_drop_and_hang_until_released(schedpki):
    url = f"{schedpki.secrets.url}/v1/sys/seal-status"
    schedpki.faults.add(Fault(path="/v1/sys/seal-status", drop=True, times=1))
    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=5)
    hang = schedpki.faults.add(Fault(path="/v1/sys/seal-status", hang=True, times=1))
    results = []
    worker = threading.Thread(target=lambda: results.append(requests.get(url, timeout=10).status_code))
    worker.start()
    time.sleep(0.3)
    assert results == [] and worker.is_alive()
    hang.release()
    worker.join(5)
    assert results == [200]


def test_fault_latency_delays_in_real_time_even_when_frozen(schedpki):
    from freezegun import freeze_time

    from pytest_schedpki.clock import real_monotonic

    schedpki.faults.add(Fault(path="/v1/sys/health", latency=0.2, times=1))
    with freeze_time("2030-01-01"):
        start = real_monotonic()
        assert requests.get(f"{schedpki.secrets.url}/v1/sys/health").status_code == 200
        elapsed = real_monotonic() - start
    assert elapsed >= 0.2


def test_sealed_secrets_service_answers_503(schedpki):
    url = schedpki.secrets.url
    assert requests.post(f"{url}/_schedpki/seal").json() == {"sealed": True}
    health = requests.get(f"{url}/v1/sys/health")
    assert health.status_code == 503 and health.json()["sealed"] is True
    assert requests.get(f"{url}/v1/sys/seal-status").json()["sealed"] is True
    r = requests.get(f"{url}/v1/sys/mounts", headers=ROOT)
    assert (r.status_code, r.json()) == (503, {"errors": ["Vault is sealed"]})
    requests.post(f"{url}/_schedpki/unseal")
    assert requests.get(f"{url}/v1/sys/mounts", headers=ROOT).status_code == 200


def test_control_endpoints_clock_reset_seed_journal(schedpki):
    url = schedpki.secrets.url
    body = requests.post(f"{url}/_schedpki/clock", json={"mode": "manual", "now": "2030-01-01T00:00:00Z"}).json()
    assert body == {"mode": "manual", "now": "2030-01-01T00:00:00Z"}
    assert requests.post(f"{url}/_schedpki/clock", json={"advance": 90}).json()["now"] == "2030-01-01T00:01:30Z"
    assert requests.get(f"{url}/v1/sys/health").json()["server_time_utc"] == 1893456090
    r = requests.post(f"{url}/_schedpki/seed", data="secrets:\n  mounts:\n    - path: seeded\n")
    assert r.status_code == 200 and "seeded/" in schedpki.secrets.state.mounts
    bad = requests.post(f"{url}/_schedpki/seed", data="secrets:\n  mounts:\n    - type: pki\n")
    assert bad.status_code == 400 and bad.json()["error"] == "<dict>: secrets.mounts[0].path: required: the mount path, e.g. pki"
    journal = requests.get(f"{url}/_schedpki/journal").json()
    assert [j["path"] for j in journal] == ["/v1/sys/health"]
    assert requests.post(f"{url}/_schedpki/reset").status_code == 200
    assert "seeded/" not in schedpki.secrets.state.mounts
    assert requests.get(f"{url}/_schedpki/nope").status_code == 404


def test_control_faults_endpoint(schedpki):
    url = schedpki.secrets.url
    added = requests.post(f"{url}/_schedpki/faults", json={"path": "/v1/sys/health", "status": 502, "times": 1}).json()
    assert added["added"]["status"] == 502
    assert requests.get(f"{url}/v1/sys/health").status_code == 502
    assert requests.get(f"{url}/_schedpki/faults").json()[0]["hits"] == 1
    assert requests.post(f"{url}/_schedpki/faults", json={"colour": "red"}).status_code == 400
    assert requests.delete(f"{url}/_schedpki/faults").json() == []


def test_tls_listeners_verify_with_the_double_ca_even_when_frozen():
    from freezegun import freeze_time

    material = create_tls_material()
    double = Double().start(ssl_context=material.server_context())
    try:
        assert double.secrets_url.startswith("https://127.0.0.1:")
        assert requests.get(f"{double.secrets_url}/v1/sys/health", verify=material.ca_path).status_code == 200
        for frozen in ("2001-06-01", "2998-01-01"):
            with freeze_time(frozen), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # urllib3's SystemTimeWarning for a frozen 2001
                r = requests.get(f"{double.secrets_url}/v1/sys/health", verify=material.ca_path)
            assert r.status_code == 200
        # plain HTTP to a TLS listener: Go's net/http answer (both upstreams are Go servers), unencrypted
        r = requests.get(double.secrets_url.replace("https://", "http://") + "/v1/sys/health", timeout=5)
        assert (r.status_code, r.text) == (400, "Client sent an HTTP request to an HTTPS server.\n")
    finally:
        double.stop()
