"""Token lifetimes as OpenBao's expiration manager and ``UseToken`` keep them (found by a hostile pass
and a user's report; each test failed on the double before the fix):

* a child token dies with its expired parent, and the PKI leases issued under the tree go with it
  (the certificate revoked at the parent's expiry instant), on the manual clock and under freezegun;
* ``num_uses`` is enforced per request (failed requests count, unauthenticated ones do not), the
  last use revokes the token, and parallel uses of a one-use token succeed exactly once;
* ``lookup`` reads ``ttl`` 3600 for a fresh ``ttl=1h`` token (``leaseEntry.ttl()`` rounds now);
* a renewal without ``increment`` keeps the TTL of the previous renewal (``CalculateTTL``'s backend
  TTL is the lease's current one);
* a used wrapping token sent as ``X-Vault-Token`` to ``sys/wrapping/unwrap`` is 400 ``wrapping
  token is not valid or does not exist``.

The same behaviours are compared with the real bao in ``tests/parity/test_parity_token_lifetimes.py``.
"""

from __future__ import annotations

import datetime
import threading

import pytest
import requests
from cryptography import x509

from pytest_schedpki import Double
from pytest_schedpki.clock import ManualClock

START = datetime.datetime(2030, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
ALL_POLICY = 'path "*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }'
LAST_USE_LEASED = "Secret cannot be returned; token had one use left, so leased credentials were immediately revoked."
PERMISSION_DENIED = ["permission denied"]


@pytest.fixture
def manual():
    """A double on a manual clock standing at :data:`START`, with the policy ``all``; stopped after."""
    clock = ManualClock(START)
    double = Double(clock=clock).start()
    client = Client(double.secrets_url)
    assert client.post("sys/policies/acl/all", json={"policy": ALL_POLICY}).status_code == 204
    yield double, clock, client
    errors = double.pop_handler_errors()
    double.stop()
    assert not errors, errors


class Client:
    """``requests`` against the double's secrets listener; ``token`` defaults to the root token."""

    def __init__(self, url: str):
        self.url = url
        self.session = requests.Session()

    def request(self, method: str, path: str, token: str | None = "root", **kwargs) -> requests.Response:
        headers = {"X-Vault-Token": token} if token is not None else {}
        headers.update(kwargs.pop("headers", {}))
        return self.session.request(method, f"{self.url}/v1/{path}", headers=headers, timeout=30, **kwargs)

    def post(self, path: str, token: str | None = "root", **kwargs) -> requests.Response:
        return self.request("POST", path, token, **kwargs)

    def create(self, token: str = "root", **body) -> dict:
        resp = self.post("auth/token/create", token, json=body)
        assert resp.status_code == 200, resp.text
        return resp.json()["auth"]


def _errors(resp: requests.Response) -> list[str]:
    return resp.json()["errors"]


# -- a child dies with its parent ------------------------------------------------------------------

def _assert_gone(client: Client, token: str, accessor: str) -> None:
    """Every way a client can observe a token says it is gone (as on bao)."""
    assert client.request("GET", "auth/token/lookup-self", token).status_code == 403
    resp = client.post("auth/token/lookup", json={"token": token})
    assert (resp.status_code, _errors(resp)) == (403, ["bad token"])
    resp = client.post("auth/token/lookup-accessor", json={"accessor": accessor})
    assert (resp.status_code, _errors(resp)) == (400, ["1 error occurred:\n\t* invalid accessor\n\n"])
    resp = client.post("auth/token/renew", json={"token": token})
    assert (resp.status_code, _errors(resp)) == (400, ["token not found"])
    assert accessor not in client.request("LIST", "auth/token/accessors").json()["data"]["keys"]


def test_child_dies_with_its_expired_parent_manual_clock(manual):
    _, clock, client = manual
    parent = client.create(ttl="2s", policies=["all"])
    child = client.create(parent["client_token"], ttl="1h", policies=["all"])
    assert child["lease_duration"] == 3600
    clock.advance(1.5)
    assert client.request("GET", "auth/token/lookup-self", child["client_token"]).status_code == 200
    clock.advance(2)  # 3.5 s after creation: the parent's lease has expired
    assert client.request("GET", "auth/token/lookup-self", parent["client_token"]).status_code == 403
    _assert_gone(client, child["client_token"], child["accessor"])
    _assert_gone(client, parent["client_token"], parent["accessor"])


def test_grandchild_dies_with_its_expired_grandparent(manual):
    _, clock, client = manual
    top = client.create(ttl="10s", policies=["all"])
    middle = client.create(top["client_token"], ttl="1h", policies=["all"])
    leaf = client.create(middle["client_token"], ttl="1h", policies=["all"])
    orphan = client.create(top["client_token"], ttl="1h", policies=["all"], no_parent=True)
    clock.advance(11)
    _assert_gone(client, leaf["client_token"], leaf["accessor"])
    assert client.request("GET", "auth/token/lookup-self", orphan["client_token"]).status_code == 200


def test_child_dies_with_its_expired_parent_under_freezegun():
    freezegun = pytest.importorskip("freezegun")
    with freezegun.freeze_time(START) as frozen:
        double = Double().start()
        try:
            client = Client(double.secrets_url)
            client.post("sys/policies/acl/all", json={"policy": ALL_POLICY})
            parent = client.create(ttl="2s", policies=["all"])
            child = client.create(parent["client_token"], ttl="1h", policies=["all"])
            frozen.tick(3.5)
            _assert_gone(client, child["client_token"], child["accessor"])
        finally:
            errors = double.pop_handler_errors()
            double.stop()
    assert not errors, errors


def _leased_pki(client: Client) -> None:
    assert client.post("sys/mounts/pki", json={"type": "pki", "config": {"max_lease_ttl": "87600h"}}).status_code == 204
    resp = client.post("pki/root/generate/internal", json={"common_name": "Root", "key_type": "ec", "ttl": "87600h"})
    assert resp.status_code == 200, resp.text
    resp = client.post("pki/roles/lease", json={"allow_any_name": True, "generate_lease": True, "key_type": "ec",
                                                "ttl": "1h"})
    assert resp.status_code in (200, 204), resp.text


def test_leases_under_an_expired_tree_are_revoked_at_the_expiry_instant(manual):
    _, clock, client = manual
    _leased_pki(client)
    parent = client.create(ttl="2s", policies=["all"])
    child = client.create(parent["client_token"], ttl="1h", policies=["all"])
    issued = client.post("pki/issue/lease", child["client_token"], json={"common_name": "a.example.com"})
    assert issued.status_code == 200, issued.text
    lease_id, serial = issued.json()["lease_id"], issued.json()["data"]["serial_number"]
    assert client.post("sys/leases/lookup", json={"lease_id": lease_id}).status_code == 200
    clock.advance(600)  # long after the parent's expiry: the revocation still carries its instant
    resp = client.post("sys/leases/lookup", json={"lease_id": lease_id})
    assert (resp.status_code, _errors(resp)) == (400, ["invalid lease"])
    assert client.request("LIST", "sys/leases/lookup/pki/issue/lease/").status_code == 404
    record = client.request("GET", f"pki/cert/{serial}").json()["data"]
    assert record["revocation_time"] == int((START + datetime.timedelta(seconds=2)).timestamp())
    crl = x509.load_pem_x509_crl(client.request("GET", "pki/crl/pem", token=None).content)
    assert crl.get_revoked_certificate_by_serial_number(int(serial.replace(":", ""), 16)) is not None


def test_an_expired_certificate_lease_leaves_the_lease_list(manual):
    _, clock, client = manual
    _leased_pki(client)
    issued = client.post("pki/issue/lease", json={"common_name": "b.example.com", "ttl": "30s"})
    lease_id, serial = issued.json()["lease_id"], issued.json()["data"]["serial_number"]
    assert issued.json()["lease_duration"] == 30
    clock.advance(31)
    resp = client.post("sys/leases/lookup", json={"lease_id": lease_id})
    assert (resp.status_code, _errors(resp)) == (400, ["invalid lease"])
    # the certificate had expired with its lease: OpenBao's revokeCert refuses to add it to the CRL
    assert client.request("GET", f"pki/cert/{serial}").json()["data"]["revocation_time"] == 0


# -- num_uses ------------------------------------------------------------------------------------------

def test_one_use_token_works_once(manual):
    _, _, client = manual
    token = client.create(num_uses=1, policies=["all"])["client_token"]
    statuses = [client.request("GET", "sys/mounts", token).status_code for _ in range(3)]
    assert statuses == [200, 403, 403]
    resp = client.post("auth/token/lookup", json={"token": token})
    assert (resp.status_code, _errors(resp)) == (403, ["bad token"])


def test_uses_left_are_shown_and_every_authenticated_request_counts(manual):
    _, _, client = manual
    auth = client.create(num_uses=4, policies=["default"])
    token = auth["client_token"]
    assert auth["num_uses"] == 4

    def left() -> int:
        return client.post("auth/token/lookup", json={"token": token}).json()["data"]["num_uses"]

    assert client.request("GET", "sys/health", token).status_code == 200  # unauthenticated: not counted
    assert left() == 4
    assert client.request("GET", "auth/token/lookup-self", token).json()["data"]["num_uses"] == 3
    resp = client.request("GET", "sys/mounts", token)  # refused by policy: counted all the same
    assert (resp.status_code, _errors(resp)) == (403, ["1 error occurred:\n\t* permission denied\n\n"])
    assert left() == 2
    resp = client.post("auth/token/renew-self", token, json={"increment": "bad"})  # a 400 counts too
    assert resp.status_code == 400
    assert left() == 1
    # the last use: lookup-self shows -1 (revocation pending), then the token is gone
    assert client.request("GET", "auth/token/lookup-self", token).json()["data"]["num_uses"] == -1
    resp = client.request("GET", "auth/token/lookup-self", token)
    assert (resp.status_code, _errors(resp)) == (403, PERMISSION_DENIED)


@pytest.mark.parametrize(("method", "path", "body", "status", "errors"), [
    ("POST", "auth/token/create", {}, 400, ["parent token lookup failed: no parent found"]),
    ("POST", "auth/token/renew-self", {}, 400, ["token not found"]),
    ("POST", "auth/token/revoke-self", {}, 204, None),
    ("POST", "sys/capabilities-self", {"path": "x"}, 400, ["1 error occurred:\n\t* invalid token\n\n"]),
])
def test_last_use_answers(manual, method, path, body, status, errors):
    _, _, client = manual
    token = client.create(num_uses=1, policies=["all"])["client_token"]
    resp = client.request(method, path, token, json=body)
    assert resp.status_code == status
    if errors is not None:
        assert _errors(resp) == errors
    assert client.post("auth/token/lookup", json={"token": token}).status_code == 403


def test_restricted_token_cannot_create_children(manual):
    _, _, client = manual
    token = client.create(num_uses=2, policies=["all"])["client_token"]
    resp = client.post("auth/token/create", token, json={})
    assert (resp.status_code, _errors(resp)) == (400, ["restricted use token cannot generate child tokens"])


def test_last_use_with_a_leased_secret_revokes_it(manual):
    _, _, client = manual
    _leased_pki(client)
    token = client.create(num_uses=1, policies=["all"])["client_token"]
    resp = client.post("pki/issue/lease", token, json={"common_name": "c.example.com"})
    assert (resp.status_code, _errors(resp)) == (400, [LAST_USE_LEASED])
    assert client.request("LIST", "sys/leases/lookup/pki/issue/lease/").status_code == 404
    revoked = client.request("LIST", "pki/certs/revoked").json()["data"]["keys"]
    assert len(revoked) == 1


def test_parallel_uses_of_a_one_use_token_succeed_once(manual):
    double, _, client = manual
    token = client.create(num_uses=1, policies=["all"])["client_token"]
    barrier = threading.Barrier(10)
    statuses: list[int] = []
    lock = threading.Lock()

    def use() -> None:
        session = requests.Session()
        barrier.wait()
        status = session.get(f"{double.secrets_url}/v1/sys/mounts", headers={"X-Vault-Token": token},
                             timeout=30).status_code
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=use) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [403] * 9


# -- TTL readings and renewals ---------------------------------------------------------------------------

def test_fresh_child_reads_its_whole_ttl(manual):
    _, clock, client = manual
    child = client.create(ttl="1h", policies=["default"])["client_token"]
    assert client.request("GET", "auth/token/lookup-self", child).json()["data"]["ttl"] == 3600
    clock.advance(0.4)  # OpenBao rounds now to the second: still 3600
    assert client.post("auth/token/lookup", json={"token": child}).json()["data"]["ttl"] == 3600
    clock.advance(0.2)
    assert client.post("auth/token/lookup", json={"token": child}).json()["data"]["ttl"] == 3599


def test_renewal_without_increment_keeps_the_last_ttl(manual):
    _, _, client = manual
    token = client.create(ttl="1h", policies=["default"])["client_token"]
    resp = client.post("auth/token/renew-self", token, json={"increment": 600})
    assert resp.json()["auth"]["lease_duration"] == 600
    resp = client.post("auth/token/renew-self", token, json={})
    assert resp.json()["auth"]["lease_duration"] == 600
    data = client.request("GET", "auth/token/lookup-self", token).json()["data"]
    assert (data["creation_ttl"], data["ttl"]) == (3600, 600)
    resp = client.post("auth/token/renew", json={"token": token, "increment": "2h"})
    assert resp.json()["auth"]["lease_duration"] == 7200
    assert client.post("auth/token/renew", json={"token": token}).json()["auth"]["lease_duration"] == 7200


# -- wrapping tokens -----------------------------------------------------------------------------------

def test_used_wrapping_token_in_the_header_is_not_valid(manual):
    _, _, client = manual
    resp = client.post("sys/wrapping/wrap", json={"a": "b"}, headers={"X-Vault-Wrap-TTL": "5m"})
    wrapping = resp.json()["wrap_info"]["token"]
    first = client.post("sys/wrapping/unwrap", wrapping)
    assert (first.status_code, first.json()["data"]) == (200, {"a": "b"})
    for path in ("unwrap", "lookup", "rewrap"):
        resp = client.post(f"sys/wrapping/{path}", wrapping)
        assert (resp.status_code, _errors(resp)) == (400, ["wrapping token is not valid or does not exist"])
    resp = client.post("sys/wrapping/unwrap", None)
    assert (resp.status_code, _errors(resp)) == (403, ["error validating wrapping token: token is empty"])


@pytest.mark.parametrize(("requested", "expected"), [(0, 2), (1, 1), (5, 2)])
def test_role_use_limit_caps_the_request(manual, requested, expected):
    _, _, client = manual
    assert client.post("auth/token/roles/limited", json={"token_num_uses": 2}).status_code == 204
    resp = client.post("auth/token/create/limited", json={"num_uses": requested})
    assert resp.json()["auth"]["num_uses"] == expected


def test_renewal_answers_the_use_limit_the_token_was_created_with(manual):
    _, _, client = manual
    token = client.create(num_uses=3, policies=["default"])["client_token"]
    resp = client.post("auth/token/renew-self", token, json={})
    assert resp.json()["auth"]["num_uses"] == 3  # the lease's stored auth block, not the uses left
    assert client.post("auth/token/lookup", json={"token": token}).json()["data"]["num_uses"] == 2
