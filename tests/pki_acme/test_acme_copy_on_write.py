"""ACME state the engine copies or keeps between requests: records are copied on write, so a change
after ``save_baseline()`` (an account deactivated, an authorization deactivated or validated, an order
finalized) leaves the baseline's records as they were and ``reset()`` brings each one back exactly
(the write copies the tables, and a stored record only when it changes it in place); the serverAuth-only
copy of a role is kept per role object, so a role write takes effect at the next request."""

from __future__ import annotations

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki import Double
from pytest_schedpki.acme import AcmeClient, AcmeInspector, csr_for, enable_acme


@pytest.fixture
def double():
    double = Double().start()
    try:
        yield double
    finally:
        double.stop()


def _setup(double) -> str:
    s = requests.Session()
    s.headers["X-Vault-Token"] = double.root_token
    base = double.secrets_url
    s.post(f"{base}/v1/sys/mounts/pki", json={"type": "pki"}).raise_for_status()
    s.post(f"{base}/v1/pki/root/generate/internal", json={"common_name": "R", "key_type": "ec"}).raise_for_status()
    return enable_acme(base, "pki", double.root_token)


def _order(client: AcmeClient, name: str) -> tuple[dict, str, dict]:
    answer = client.new_order([name])
    assert answer.status == 201, answer.body
    order = answer.json()
    authz_url = order["authorizations"][0]
    return order, answer.headers["location"], client.post(authz_url).json() | {"url": authz_url}


def _snapshot(inspector: AcmeInspector) -> tuple:
    return (sorted((a.kid, a.status, a.contact) for a in inspector.accounts()),
            sorted((o.id, o.status, o.authorizations, o.serial_number) for o in inspector.orders()))


def test_reset_restores_records_changed_in_place_after_the_baseline(double):
    directory = _setup(double)
    inspector = AcmeInspector(double.secrets)
    quitter, buyer = AcmeClient(directory), AcmeClient(directory)
    assert quitter.new_account(contact=["mailto:q@example.com"]).status == 201
    assert buyer.new_account(contact=["mailto:b@example.com"]).status == 201
    _, _, quitter_authz = _order(quitter, "q.example.com")
    double.secrets.acme_knobs.update(always_valid=True)
    ready, ready_url, ready_authz = _order(buyer, "ready.example.com")
    http01 = next(c for c in ready_authz["challenges"] if c["type"] == "http-01")
    assert buyer.post(http01["url"], {}).json()["status"] == "valid"
    _, _, pending_authz = _order(buyer, "later.example.com")
    double.save_baseline()
    before = _snapshot(inspector)
    assert [o.authorizations for o in inspector.orders()].count(("valid",)) == 1

    double.secrets.acme_knobs.update(always_valid=True)
    # authorizations.py: deactivate an authorization; accounts.py: deactivate the account
    assert quitter.post(quitter_authz["url"], {"status": "deactivated"}).json()["status"] == "deactivated"
    assert quitter.post(quitter.kid, {"status": "deactivated", "contact": []}).json()["status"] == "deactivated"
    # validation.py: accept a challenge (always_valid marks it valid at once)
    http01 = next(c for c in pending_authz["challenges"] if c["type"] == "http-01")
    assert buyer.post(http01["url"], {}).json()["status"] == "valid"
    # orders.py: finalize the ready order
    final = buyer.finalize(ready["finalize"], csr_for(ec.generate_private_key(ec.SECP256R1()), ["ready.example.com"]))
    assert final.status == 200 and final.json()["status"] == "valid", final.body
    assert _snapshot(inspector) != before

    double.reset()
    assert _snapshot(inspector) == before
    assert inspector.assert_account(contact="mailto:q@example.com").status == "valid"
    assert inspector.assert_order(identifier="ready.example.com").serial_number == ""
    assert inspector.assert_order(identifier="later.example.com").authorizations == ("pending",)
    assert inspector.assert_order(identifier="q.example.com").authorizations == ("pending",)


def test_a_role_directory_follows_each_write_of_its_role(double):
    """The ACME context keeps one serverAuth-only copy per role object; a role write stores a new
    object, so the next order is checked against the new role (and back)."""
    directory = _setup(double)
    s = requests.Session()
    s.headers["X-Vault-Token"] = double.root_token
    role = f"{double.secrets_url}/v1/pki/roles/web"
    s.post(role, json={"allowed_domains": ["example.com"], "allow_subdomains": True}).raise_for_status()
    client = AcmeClient(directory.replace("/acme/directory", "/roles/web/acme/directory"))
    assert client.new_account().status == 201
    refused = client.new_order(["www.other.org"])
    assert (refused.status, refused.json()["type"]) == (400, "urn:ietf:params:acme:error:rejectedIdentifier")
    assert client.new_order(["www.example.com"]).status == 201
    s.post(role, json={"allowed_domains": ["other.org"], "allow_subdomains": True}).raise_for_status()
    assert client.new_order(["www.other.org"]).status == 201
    assert client.new_order(["www.example.com"]).status == 400
    s.post(role, json={"allowed_domains": ["example.com"], "allow_subdomains": True}).raise_for_status()
    assert client.new_order(["www.example.com"]).status == 201
    assert client.new_order(["www.other.org"]).status == 400
