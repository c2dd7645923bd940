"""ACME state the engine copies or keeps between requests: records are copied on write, so a change
after ``save_baseline()`` (an account deactivated, an authorization deactivated or validated, an order
finalized) leaves the baseline's records as they were and ``reset()`` brings each one back exactly
(a baseline holds tables of its own, and a write copies a stored record only when it changes it in
place); the serverAuth-only
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


def test_new_accounts_and_orders_after_the_baseline_leave_it_and_share_nothing_it_keeps(double):
    """new-account and new-order add to the live tables, which the baseline does not share; a later
    change of a record the baseline holds (an account deactivated) copies that record, and
    ``reset()`` brings back exactly the baseline (the same key registers anew: its thumbprint is
    gone)."""
    directory = _setup(double)
    inspector = AcmeInspector(double.secrets)
    kept = AcmeClient(directory)
    assert kept.new_account(contact=["mailto:k@example.com"]).status == 201
    _order(kept, "kept.example.com")
    double.save_baseline()
    before = _snapshot(inspector)

    late = AcmeClient(directory)
    assert late.new_account(contact=["mailto:l@example.com"]).status == 201
    _, late_order_url, _ = _order(late, "late.example.com")
    _order(kept, "kept-later.example.com")
    assert kept.post(kept.kid, {"status": "deactivated"}).json()["status"] == "deactivated"
    assert len(inspector.accounts()) == 2 and len(inspector.orders()) == 3

    double.reset()
    assert _snapshot(inspector) == before
    assert inspector.assert_account(contact="mailto:k@example.com").status == "valid"
    gone = late.post(late_order_url)
    assert (gone.status, gone.json()["type"]) == (400, "urn:ietf:params:acme:error:accountDoesNotExist")
    assert late.new_account(contact=["mailto:l@example.com"]).status == 201  # a new account, not the old one
    kept.nonce = None  # a reset forgets the nonces handed out before it
    assert kept.new_order(["again.example.com"]).status == 201
    assert len(inspector.accounts()) == 2 and len(inspector.orders()) == 2


def test_a_write_changes_the_live_tables_in_place_and_a_refused_write_is_undone():
    """An ACME write costs O(its changes): the tables are changed in place (not copied), logged while
    the engine's write is open, and a refused write (rollback) takes back exactly its changes:
    added entries removed, replaced ones and deleted ones restored, nested writes undone to their mark."""
    from pytest_schedpki.secrets.engines.pki.acme.state import AcmeStore, writable

    class _State:
        extra = {"acme": AcmeStore(accounts={"a": 1, "b": 2}, thumbprints={"t": "a"})}

    class _Backend:
        state = _State()

    backend = _Backend()
    live = writable(backend)
    accounts = live.accounts
    assert live is _State.extra["acme"] and live.accounts is accounts  # no copy
    mark = live.begin()
    live.accounts["c"] = 3
    live.accounts["a"] = 10
    del live.accounts["b"]
    live.thumbprints.pop("t")
    inner = live.begin()
    live.accounts.setdefault("d", 4)
    live.accounts.update({"e": 5})
    live.end(inner, rollback=True)
    assert dict(live.accounts) == {"a": 10, "c": 3}
    live.end(mark, rollback=True)
    assert dict(live.accounts) == {"a": 1, "b": 2} and dict(live.thumbprints) == {"t": "a"}
    assert live.accounts is accounts and live._undo is None  # the log lives only while a write is open
    mark = live.begin()
    live.accounts["z"] = 26
    live.end(mark)
    assert live.accounts["z"] == 26 and live._undo is None
    live.accounts["y"] = 25  # outside a write: nothing is logged
    assert live._undo is None


def test_a_baseline_keeps_its_own_tables(double):
    """``save_baseline()`` and ``reset()`` each give the live mount tables of its own: accounts made
    after a reset never show in the baseline, and the next reset drops them again."""
    directory = _setup(double)
    inspector = AcmeInspector(double.secrets)
    assert AcmeClient(directory).new_account(contact=["mailto:first@example.com"]).status == 201
    double.save_baseline()
    for round_ in range(2):
        assert AcmeClient(directory).new_account(contact=[f"mailto:r{round_}@example.com"]).status == 201
        assert sorted(a.contact for a in inspector.accounts()) == [("mailto:first@example.com",),
                                                                    (f"mailto:r{round_}@example.com",)]
        double.reset()
        assert [a.contact for a in inspector.accounts()] == [("mailto:first@example.com",)]


def test_a_refused_write_of_the_engine_leaves_no_acme_change(double):
    """Through the PKI engine's own transaction (``begin_write``/``end_write``, what a refused request
    runs): an account added and a stored one replaced are taken back on rollback, kept on commit; a
    deep copy of the store logs its own writes."""
    import copy

    from pytest_schedpki.secrets.engines.pki.acme.state import store, writable

    directory = _setup(double)
    client = AcmeClient(directory)
    assert client.new_account(contact=["mailto:k@example.com"]).status == 201
    backend = double.secrets.mounts["pki/"].backend
    kid = next(iter(store(backend).accounts))
    before = dict(store(backend).accounts)

    savepoint = backend.begin_write()
    acme = writable(backend)
    acme.accounts["added"] = before[kid]
    acme.accounts[kid] = None
    backend.end_write(savepoint, rollback=True)
    assert dict(store(backend).accounts) == before

    savepoint = backend.begin_write()
    writable(backend).accounts["kept"] = before[kid]
    backend.end_write(savepoint, rollback=False)
    assert set(store(backend).accounts) == {kid, "kept"}

    copied = copy.deepcopy(store(backend))
    mark = copied.begin()
    copied.accounts["x"] = None
    copied.end(mark, rollback=True)
    assert set(copied.accounts) == {kid, "kept"} and copied.accounts is not store(backend).accounts
