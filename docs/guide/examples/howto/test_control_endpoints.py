import requests


def test_control_endpoints(schedpki):
    base = schedpki.secrets.url                                     # the scheduler listener works too
    requests.post(f"{base}/_schedpki/seed", data="secrets:\n  mounts:\n    - path: pki\n").raise_for_status()
    requests.post(f"{base}/_schedpki/clock", json={"mode": "manual", "now": "2030-01-01T00:00:00Z"})
    requests.post(f"{base}/_schedpki/clock", json={"advance": 3600})
    requests.post(f"{base}/_schedpki/faults", json={"path": "/v1/sys/health", "status": 503, "times": 1})
    assert requests.get(f"{base}/v1/sys/health").status_code == 503
    assert requests.get(f"{base}/v1/sys/health").json()["server_time_utc"] == 1893459600
    journal = requests.get(f"{base}/_schedpki/journal").json()
    assert [(e["path"], e["status"]) for e in journal] == [("/v1/sys/health", 503), ("/v1/sys/health", 200)]
    requests.post(f"{base}/_schedpki/lag", json={"paused": True})
    requests.post(f"{base}/_schedpki/sync")
    requests.post(f"{base}/_schedpki/reset")                        # back to the session baseline
    assert requests.get(f"{base}/v1/sys/mounts", headers={"X-Vault-Token": "root"}).json()["data"] == {}
