"""The secrets service around the engines: sys endpoints, token endpoints and OpenBao's HTTP
conventions, checked against what OpenBao 2.7.2 answers (reference openbao-pki-behaviour.md §1-2)."""

import requests

ROOT = {"X-Vault-Token": "root"}


def test_health_has_the_upstream_shape_without_envelope(schedpki):
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/health")
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/json"
    body = r.json()
    assert sorted(body) == ["cluster_id", "cluster_name", "initialized", "replication_dr_mode",
                            "replication_performance_mode", "sealed", "server_time_utc", "standby", "version"]
    assert body["initialized"] is True and body["sealed"] is False and body["standby"] is False
    assert isinstance(body["server_time_utc"], int) and body["version"] == "2.7.2"
    assert body["cluster_name"].startswith("vault-cluster-")


def test_health_head_is_200_with_empty_body(schedpki):
    r = requests.head(f"{schedpki.secrets.url}/v1/sys/health")
    assert r.status_code == 200 and r.content == b""


def test_seal_status_carries_version_and_needs_no_token(schedpki):
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/seal-status")
    assert r.status_code == 200
    body = r.json()
    assert body["version"] == "2.7.2" and body["sealed"] is False and body["type"] == "shamir"


def test_mount_enable_duplicate_tune_and_disable(schedpki):
    url = schedpki.secrets.url
    r = requests.post(f"{url}/v1/sys/mounts/pki_x", headers=ROOT, json={"type": "pki"})
    assert r.status_code == 204 and r.content == b""
    r = requests.post(f"{url}/v1/sys/mounts/pki_x", headers=ROOT, json={"type": "pki"})
    assert (r.status_code, r.json()) == (400, {"errors": ["path is already in use at pki_x/"]})
    r = requests.get(f"{url}/v1/sys/mounts/pki_x/tune", headers=ROOT)
    assert r.status_code == 200
    assert r.json()["data"] == {"default_lease_ttl": 2764800, "description": "", "force_no_cache": False, "max_lease_ttl": 2764800}
    r = requests.post(f"{url}/v1/sys/mounts/pki_x/tune", headers=ROOT, json={"max_lease_ttl": "87600h"})
    assert r.status_code == 204
    body = requests.get(f"{url}/v1/sys/mounts/pki_x/tune", headers=ROOT).json()
    assert body["data"]["max_lease_ttl"] == 315360000 and body["max_lease_ttl"] == 315360000
    listing = requests.get(f"{url}/v1/sys/mounts", headers=ROOT).json()
    assert listing["data"]["pki_x/"]["type"] == "pki"
    assert listing["data"]["pki_x/"]["config"]["max_lease_ttl"] == 315360000
    assert requests.delete(f"{url}/v1/sys/mounts/pki_x", headers=ROOT).status_code == 204
    r = requests.get(f"{url}/v1/sys/mounts/pki_x", headers=ROOT)
    assert (r.status_code, r.json()) == (400, {"errors": ["No secret engine mount at pki_x/"]})


def test_mount_of_unknown_engine_type_is_refused(schedpki):
    r = requests.post(f"{schedpki.secrets.url}/v1/sys/mounts/kvx", headers=ROOT, json={"type": "kv2x"})
    assert (r.status_code, r.json()) == (400, {"errors": ["plugin not found in the catalog: kv2x"]})
    assert "kvx/" not in schedpki.secrets.state.mounts


def test_token_create_and_lookup_self(schedpki):
    url = schedpki.secrets.url
    r = requests.post(f"{url}/v1/auth/token/create", headers=ROOT, json={"policies": ["default"], "ttl": "1h"})
    assert r.status_code == 200
    auth = r.json()["auth"]
    assert auth["policies"] == ["default"] and auth["lease_duration"] == 3600 and auth["renewable"] is True
    assert auth["client_token"].startswith("s.") and len(auth["client_token"]) == 26
    me = requests.get(f"{url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": auth["client_token"]}).json()["data"]
    assert me["id"] == auth["client_token"] and me["type"] == "service" and me["policies"] == ["default"]
    assert isinstance(me["ttl"], int) and 3590 <= me["ttl"] <= 3600
    root = requests.get(f"{url}/v1/auth/token/lookup-self", headers=ROOT).json()["data"]
    assert root["policies"] == ["root"] and root["ttl"] == 0 and root["expire_time"] is None
    r = requests.post(f"{url}/v1/auth/token/create", headers=ROOT, json={"ttl": "bogus"})
    assert (r.status_code, r.json()) == (400, {"errors": ['time: invalid duration "bogus"']})


def test_token_headers_and_precedence(schedpki):
    url = f"{schedpki.secrets.url}/v1/sys/mounts"
    assert requests.get(url, headers={"Authorization": "Bearer root"}).status_code == 200
    assert requests.get(url, headers={"X-Secrets-Token": "root"}).status_code == 200
    r = requests.get(url, headers={"Authorization": "bearer root"})
    assert (r.status_code, r.json()) == (403, {"errors": ["permission denied"]})
    assert requests.get(url, headers={"X-Vault-Token": "wrong", "Authorization": "Bearer root"}).status_code == 403
    assert requests.get(url, headers={"X-Vault-Token": "", "Authorization": "Bearer root"}).status_code == 200
    assert requests.get(url, headers={"x-vault-token": "root"}).status_code == 200
    r = requests.get(url)
    assert (r.status_code, r.headers["Content-Type"], r.json()) == (403, "application/json", {"errors": ["permission denied"]})


def test_token_without_capability_gets_the_multierror_403(schedpki):
    token = schedpki.secrets.state.create_token(policies=["default"]).id
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers={"X-Vault-Token": token})
    assert (r.status_code, r.json()) == (403, {"errors": ["1 error occurred:\n\t* permission denied\n\n"]})


def test_http_conventions_outside_engines(schedpki):
    url = schedpki.secrets.url
    r = requests.get(f"{url}/v1/nomount/foo", headers=ROOT)
    assert (r.status_code, r.json()) == (404, {"errors": ['no handler for route "nomount/foo". route entry not found.']})
    assert requests.get(f"{url}/v1/nomount/foo").status_code == 403
    assert (requests.get(f"{url}/v2/sys/health").status_code, requests.get(f"{url}/v2/sys/health").json()) == (404, {"errors": []})
    r = requests.request("FROB", f"{url}/v1/sys/mounts", headers=ROOT)
    assert (r.status_code, r.json()) == (405, {"errors": []})
    r = requests.options(f"{url}/v1/sys/mounts", headers=ROOT)
    assert (r.status_code, r.json()) == (400, {"errors": ["cannot handle internal-only request operation"]})
    r = requests.post(f"{url}/v1/sys/mounts/x", headers=ROOT, data="{")
    assert (r.status_code, r.json()) == (400, {"errors": ["failed to decode JSON input: unexpected EOF"]})
    r = requests.post(f"{url}/v1/sys/mounts/x", headers=ROOT, data="[1]")
    assert r.json() == {"errors": ["failed to decode JSON input: json: cannot unmarshal array into Go value of type map[string]interface {}"]}
    r = requests.patch(f"{url}/v1/sys/mounts/x", headers=ROOT, json={})
    assert (r.status_code, r.json()) == (415, {"errors": ["PATCH requires Content-Type of application/merge-patch+json, provided application/json"]})


def test_form_encoded_and_untyped_json_bodies_are_accepted(schedpki):
    url = schedpki.secrets.url
    r = requests.post(f"{url}/v1/sys/mounts/formpki", headers={**ROOT, "Content-Type": "application/x-www-form-urlencoded"}, data="type=pki")
    assert r.status_code == 204
    r = requests.post(f"{url}/v1/sys/mounts/jsonpki", headers={**ROOT, "Content-Type": "application/x-www-form-urlencoded"}, data='{"type":"pki"}')
    assert r.status_code == 204
    r = requests.post(f"{url}/v1/sys/mounts/rawpki", headers=ROOT, data=b'{"type":"pki"}')
    assert r.status_code == 204
    assert {"formpki/", "jsonpki/", "rawpki/"} <= set(schedpki.secrets.state.mounts)


def test_success_envelope_has_eight_keys_and_null_warnings(schedpki):
    r = requests.get(f"{schedpki.secrets.url}/v1/auth/token/lookup-self", headers=ROOT)
    body = r.json()
    assert list(body) == ["request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings", "auth"]
    assert body["warnings"] is None and body["auth"] is None and body["lease_id"] == ""
    assert r.headers["Content-Type"] == "application/json" and r.text.endswith("\n")
    assert r.headers["Cache-Control"] == "no-store"


def test_unknown_parameter_warning(schedpki):
    r = requests.post(f"{schedpki.secrets.url}/v1/auth/token/create", headers=ROOT, json={"policies": ["default"], "foo": 1})
    assert r.status_code == 200
    assert r.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [foo]"]


def test_broken_requests_get_go_style_plain_text_never_html(schedpki):
    import socket

    for service in (schedpki.double.secrets_server, schedpki.double.scheduler_server):
        for raw, status in [(b"GARBAGE\r\n\r\n", b"400 Bad Request"), (b"GET / HTTP/9.9\r\n\r\n", b"505 HTTP Version Not Supported")]:
            with socket.create_connection(("127.0.0.1", service.port), timeout=5) as sock:
                sock.sendall(raw)
                answer = b""
                while chunk := sock.recv(4096):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 " + status)
            assert b"Content-Type: text/plain; charset=utf-8" in head
            assert body == status and b"<" not in answer
