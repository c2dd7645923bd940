"""Contract: nomadpy 0.2 (a port of Nomad's Go ``api/acl.go``) driving the whole token life:
``ACLTokens.bootstrap/create/upload/update/info/self/list/delete/upsert_one_time_token/
exchange_one_time_token`` and ``ACLPolicies.upsert`` with real rules, then what the token may do.
Expected values follow ``nomad/acl_endpoint.go`` (docs/reference/nomad-acl.md)."""

from __future__ import annotations

import uuid

import nomadpy
import pytest

RULES = 'namespace "default" { policy = "read" }\nagent { policy = "read" }'


def client(url: str, secret: str = "") -> nomadpy.Client:
    return nomadpy.Client(nomadpy.Config(address=url, secret_id=secret))


@pytest.mark.schedpki(bootstrap=False)
def test_bootstrap_a_fresh_double_then_manage_tokens(schedpki):
    anonymous = client(schedpki.scheduler.url)
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        anonymous.acl_tokens.list()
    assert (err.value.status_code, err.value.body.strip()) == (403, "Permission denied")
    root, wm = anonymous.acl_tokens.bootstrap()
    assert (root.type, root.name, root.global_) == ("management", "Bootstrap Token", True)
    assert wm.last_index == root.create_index
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        anonymous.acl_tokens.bootstrap()
    assert err.value.body.strip() == f"ACL bootstrap already done (reset index: {root.create_index})"

    admin = client(schedpki.scheduler.url, root.secret_id)
    admin.acl_policies.upsert(nomadpy.ACLPolicy(name="readonly", description="ro", rules=RULES))
    created, _ = admin.acl_tokens.create(nomadpy.ACLToken(name="ci", type="client", policies=["readonly"],
                                                          expiration_ttl=3600 * 10**9))
    assert created.policies == ["readonly"] and created.expiration_ttl == 3600 * 10**9
    assert created.expiration_time is not None
    schedpki.scheduler.assert_allowed(created.secret_id, "namespace:default:read-job", "agent:read")
    schedpki.scheduler.assert_denied(created.secret_id, "namespace:default:submit-job", "node:read", "management")

    me, qm = client(schedpki.scheduler.url, created.secret_id).acl_tokens.self()
    assert me.accessor_id == created.accessor_id and qm.last_index == created.modify_index
    created.name = "ci-renamed"
    updated, _ = admin.acl_tokens.update(created)
    assert (updated.name, updated.secret_id, updated.create_index) == ("ci-renamed", created.secret_id,
                                                                       created.create_index)
    got, _ = admin.acl_tokens.info(created.accessor_id)
    assert got.name == "ci-renamed"
    stubs, _ = admin.acl_tokens.list()
    assert {s.accessor_id for s in stubs} == {root.accessor_id, created.accessor_id}

    ott, _ = client(schedpki.scheduler.url, created.secret_id).acl_tokens.upsert_one_time_token()
    exchanged, _ = anonymous.acl_tokens.exchange_one_time_token(ott.one_time_secret_id)
    assert exchanged.secret_id == created.secret_id

    uploaded, _ = admin.acl_tokens.upload(nomadpy.ACLToken(accessor_id=str(uuid.uuid4()), secret_id=str(uuid.uuid4()),
                                                           type="client", policies=["readonly"]))
    assert uploaded.create_index > 0
    admin.acl_tokens.delete(created.accessor_id)
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        admin.acl_tokens.info(created.accessor_id)
    assert (err.value.status_code, err.value.body.strip()) == (404, "ACL token not found")


def test_bad_rules_are_refused_with_nomads_text(schedpki):
    admin = client(schedpki.scheduler.url, schedpki.scheduler.token)
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        admin.acl_policies.upsert(nomadpy.ACLPolicy(name="bad", rules='agent { policy = "root" }'))
    assert err.value.status_code == 400
    assert err.value.body.startswith("policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: "
                                     "Invalid agent policy: ")
