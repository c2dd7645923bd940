"""Secrets stay secret, privileges are checked, and TLS listeners refuse what they should.

* request logging (``log_requests=True``: werkzeug's access log and the double's own output) never
  prints a token, a private key or a client secret, whatever carries it (headers, bodies, query
  strings, responses);
* the journal redacts tokens, private keys and client secrets by default; ``redact=False`` is the
  opt-in that shows them;
* privileged endpoints refuse tokens that lack the capability (403, upstream's texts) and change
  nothing; the scheduler's writes and reads of one method need a management token;
* a TLS listener answers plain HTTP with Go's 400 (never a page, never a hang), and a client that
  never completes its handshake does not hold up the others.
"""

from __future__ import annotations

import json
import logging
import socket
import time

import pytest
import requests
from robust_helpers import secrets_fingerprint

from pytest_schedpki import Double
from pytest_schedpki.factories import Factories
from pytest_schedpki.wire.tls import create_tls_material

ROOT = "root-SECRET-7f3a"
MGMT = "mgmt-SECRET-91c2"
MULTI_DENIED = "1 error occurred:\n\t* permission denied\n\n"


@pytest.fixture(scope="module")
def loud():
    """A double of its own, with distinctive tokens and request logging on."""
    double = Double(management_token=MGMT, root_token=ROOT).start(log_requests=True)
    yield double
    double.stop()


def _key_lines(pem: str) -> list[str]:
    """Distinctive base64 lines from the inside of a PEM block."""
    return [line for line in pem.splitlines() if line and not line.startswith("-----")][1:3]


def _traffic(double: Double) -> list[str]:
    """Requests carrying every kind of secret, the way clients send them; returns the secrets."""
    v, s = double.secrets_url, double.scheduler_url
    vault, nomad = {"X-Vault-Token": ROOT}, {"X-Nomad-Token": MGMT}
    requests.post(f"{v}/v1/sys/mounts/pki", headers=vault, json={"type": "pki"})
    requests.post(f"{v}/v1/sys/mounts/pki/tune", headers=vault, json={"max_lease_ttl": "87600h"})
    root = requests.post(f"{v}/v1/pki/root/generate/exported", headers={"Authorization": f"Bearer {ROOT}"},
                         json={"common_name": "Sec Root", "key_type": "ec", "ttl": "8760h"}).json()["data"]
    requests.post(f"{v}/v1/pki/roles/web", headers=vault, json={"allowed_domains": ["example.com"],
                                                               "allow_subdomains": True, "key_type": "ec"})
    leaf = requests.post(f"{v}/v1/pki/issue/web", headers=vault, json={"common_name": "a.example.com", "ttl": "1h"}).json()["data"]
    requests.post(f"{v}/v1/pki/keys/import", headers=vault, json={"pem_bundle": leaf["private_key"], "key_name": "imported"})
    requests.post(f"{v}/v1/pki/revoke-with-key", headers=vault,
                  json={"serial_number": leaf["serial_number"], "private_key": leaf["private_key"]})
    child = requests.post(f"{v}/v1/auth/token/create", headers=vault, json={"policies": ["default"]}).json()["auth"]["client_token"]
    custom = "custom-SECRET-55aa"
    requests.post(f"{v}/v1/auth/token/create", headers=vault, json={"id": custom, "policies": ["default"]})
    requests.get(f"{v}/v1/auth/token/lookup-self", headers={"X-Vault-Token": child})
    requests.post(f"{v}/v1/auth/token/lookup", headers=vault, json={"token": custom})
    wrapped = requests.post(f"{v}/v1/pki/issue/web", headers={**vault, "X-Vault-Wrap-TTL": "60"},
                            json={"common_name": "b.example.com", "ttl": "1h"}).json()["wrap_info"]["token"]
    requests.get(f"{v}/v1/sys/wrapping/lookup", headers=vault, params={"token": wrapped})
    unwrapped = requests.post(f"{v}/v1/sys/wrapping/unwrap", headers=vault, json={"token": wrapped}).json()["data"]
    requests.get(f"{v}/v1/pki/roles/web", headers={"X-Vault-Token": "bogus-SECRET-0bad"})
    client_secret = "oidc-client-SECRET-6d6d"
    requests.put(f"{s}/v1/acl/auth-method", headers=nomad, json={
        "Name": "okta", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
        "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "c", "OIDCClientSecret": client_secret,
                   "BoundAudiences": ["c"], "AllowedRedirectURIs": ["http://localhost/cb"]}})
    requests.get(f"{s}/v1/acl/auth-method/okta", headers={"Authorization": f"Bearer {MGMT}"})
    requests.get(f"{s}/v1/acl/auth-methods", headers={"X-Nomad-Token": "bogus-SECRET-1bad"})
    return ([ROOT, MGMT, child, custom, wrapped, client_secret, "bogus-SECRET-0bad", "bogus-SECRET-1bad"]
            + _key_lines(root["private_key"]) + _key_lines(leaf["private_key"]) + _key_lines(unwrapped["private_key"]))


def test_request_logging_never_prints_secrets(loud, capfd, caplog):
    caplog.set_level(logging.DEBUG)
    secrets = _traffic(loud)
    time.sleep(0.2)  # access-log lines are written after the answers
    out, err = capfd.readouterr()
    # urllib3's debug lines are the test's own client talking, not the double
    logged = out + err + "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("urllib3"))
    assert "/v1/pki/issue/web" in logged, "request logging is on: the access log must show the requests"
    leaked = [secret for secret in secrets if secret in logged]
    assert not leaked, f"secrets in the logs: {leaked}\n{logged[:3000]}"
    assert not loud.pop_handler_errors()


def test_journal_redacts_tokens_keys_and_client_secrets_unless_asked(loud):
    loud.journal.clear()
    secrets = _traffic(loud)
    entries = loud.journal.entries()
    recorded = json.dumps([{**e.__dict__, "time": None} for e in entries], default=str)
    assert not [s for s in secrets if s in recorded], "secrets in the redacted journal"
    control = requests.get(f"{loud.secrets_url}/_schedpki/journal").text
    assert not [s for s in secrets if s in control], "secrets in the journal control endpoint"
    assert {e.token_kind for e in entries if e.service == "secrets"} >= {"root", "token", "invalid"}
    assert {e.token_kind for e in entries if e.service == "scheduler"} >= {"management", "unknown"}

    loud.journal.clear()
    loud.journal.redact = False  # the opt-in
    try:
        secrets = _traffic(loud)
        recorded = json.dumps([{**e.__dict__, "time": None} for e in loud.journal.entries()], default=str)
    finally:
        loud.journal.redact = True
    shown = [s for s in secrets if s in recorded]
    assert "oidc-client-SECRET-6d6d" in shown and "custom-SECRET-55aa" in shown
    assert any(line in recorded for line in secrets[-6:])  # private keys
    assert ROOT not in recorded and MGMT not in recorded  # header tokens are never recorded at all


@pytest.fixture
def fresh(double):
    double.reset()
    factories = Factories(double.scheduler, double.secrets)
    factories.secrets.root_issuer("pki", issuer_name="root")
    factories.secrets.role("web")
    return double, factories


def _call(double, method, path, token, body=None):
    r = requests.request(method, f"{double.secrets_url}/v1/{path}", headers={"X-Vault-Token": token}, json=body, timeout=30)
    return r.status_code, r.json() if r.content else None


PRIVILEGED = [
    ("POST", "pki/root/generate/internal", {"common_name": "Evil Root", "key_type": "ec"}),
    ("POST", "pki/issue/web", {"common_name": "a.example.com"}),
    ("POST", "pki/roles/evil", {"allowed_domains": ["evil.org"]}),
    ("DELETE", "pki/roles/web", None),
    ("POST", "pki/config/urls", {"issuing_certificates": ["http://evil"]}),
    ("POST", "pki/revoke", {"serial_number": "01:02"}),
    ("POST", "pki/root/sign-intermediate", {"csr": "x"}),
    ("POST", "pki/sign-verbatim", {"csr": "x"}),
    ("DELETE", "pki/root", None),
    ("POST", "sys/mounts/evil", {"type": "pki"}),
    ("POST", "sys/mounts/pki/tune", {"max_lease_ttl": "1h"}),
    ("DELETE", "sys/mounts/pki", None),
    ("POST", "sys/policies/acl/evil", {"policy": 'path "*" { capabilities = ["sudo"] }'}),
    ("GET", "sys/policies/acl/default", None),
]


@pytest.mark.parametrize(("method", "path", "body"), PRIVILEGED, ids=[f"{m} {p}" for m, p, _ in PRIVILEGED])
def test_privileged_endpoints_refuse_a_token_without_the_capability(fresh, method, path, body):
    double, factories = fresh
    reader = factories.secrets.token(policies={"reader": 'path "pki/*" { capabilities = ["read", "list"] }'})["client_token"]
    before = secrets_fingerprint(double.secrets)
    assert _call(double, method, path, reader, body) == (403, {"errors": [MULTI_DENIED]})
    for bad in ("", "not-a-token"):
        assert _call(double, method, path, bad, body) == (403, {"errors": ["permission denied"]})
    assert secrets_fingerprint(double.secrets) == before


def test_sign_self_issued_on_the_root_path_needs_sudo(fresh):
    double, factories = fresh
    cert = factories.secrets.root_issuer("other", common_name="Other Root")["certificate"]
    writer = factories.secrets.token(policies={"writer": 'path "pki/*" { capabilities = ["create", "update", "read"] }'})
    sudoer = factories.secrets.token(policies={"sudoer": 'path "pki/*" { capabilities = ["create", "update", "sudo"] }'})
    body = {"certificate": cert}
    assert _call(double, "POST", "pki/root/sign-self-issued", writer["client_token"], body) == (403, {"errors": [MULTI_DENIED]})
    assert _call(double, "POST", "pki/root/sign-self-issued", sudoer["client_token"], body)[0] == 200
    assert _call(double, "POST", "pki/issuer/root/sign-self-issued", writer["client_token"], body)[0] == 200


def test_a_child_token_cannot_gain_policies_its_parent_lacks(fresh):
    double, factories = fresh
    reader = factories.secrets.token(policies={"reader": 'path "auth/token/create" { capabilities = ["update"] }'})
    status, body = _call(double, "POST", "auth/token/create", reader["client_token"], {"policies": ["root"]})
    assert (status, body) == (400, {"errors": ["child policies must be subset of parent"]})


def test_scheduler_needs_a_management_token_to_write_or_read_one_method(fresh):
    double, factories = fresh
    factories.scheduler.oidc_auth_method("okta")
    client = factories.scheduler.token(type="client").SecretID
    import datetime

    expired = factories.scheduler.token(type="management", expiration_time=datetime.datetime(2000, 1, 1)).SecretID
    url = double.scheduler_url
    index = double.scheduler.last_index
    for token in (client, expired, "", "nope"):
        headers = {"X-Nomad-Token": token}
        body = {"Name": "okta", "Type": "JWT", "TokenLocality": "global", "MaxTokenTTL": "1h",
                "Config": {"JWKSURL": "https://x", "BoundAudiences": ["a"]}}
        for r in (requests.put(f"{url}/v1/acl/auth-method", json=body, headers=headers),
                  requests.delete(f"{url}/v1/acl/auth-method/okta", headers=headers),
                  requests.get(f"{url}/v1/acl/auth-method/okta", headers=headers)):
            assert (r.status_code, r.text) == (403, "Permission denied"), (token, r.request.method)
        assert requests.get(f"{url}/v1/acl/auth-methods", headers=headers).status_code == 200  # listing is open
    assert double.scheduler.last_index == index


@pytest.fixture(scope="module")
def tls_double():
    material = create_tls_material()
    double = Double().start(ssl_context=material.server_context())
    yield double, material
    double.stop()


def _host_port(url: str) -> tuple[str, int]:
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    return host, int(port)


@pytest.mark.parametrize("service", ["secrets", "scheduler"])
def test_tls_listeners_answer_plain_http_as_go_does(tls_double, service):
    double, _ = tls_double
    url = getattr(double, f"{service}_url")
    for request in (b"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n", b"PUT /v1/acl/auth-method HTTP/1.1\r\n\r\n"):
        with socket.create_connection(_host_port(url), timeout=5) as sock:
            sock.sendall(request)
            answer = sock.recv(4096)
        assert answer == b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
    with socket.create_connection(_host_port(url), timeout=5) as sock:  # not HTTP, not TLS: closed at once
        sock.sendall(b"\x00\x01\x02 garbage\r\n\r\n")
        assert sock.recv(4096) == b""
    r = requests.get(url.replace("https://", "http://") + "/v1/acl/auth-methods", timeout=5)
    assert (r.status_code, r.text) == (400, "Client sent an HTTP request to an HTTPS server.\n")
    assert not double.pop_handler_errors()


def test_a_client_stuck_before_its_tls_handshake_holds_up_nobody(tls_double):
    double, material = tls_double
    idle = [socket.create_connection(_host_port(double.secrets_url), timeout=5) for _ in range(4)]
    try:
        started = time.monotonic()
        for _ in range(3):
            r = requests.get(f"{double.secrets_url}/v1/sys/health", verify=material.ca_path, timeout=5)
            assert r.status_code == 200
        assert time.monotonic() - started < 3
    finally:
        for sock in idle:
            sock.close()
