import datetime

import nomadpy
import pytest
from freezegun import freeze_time


def test_a_role_grants_its_policies(schedpki, nomad):
    nomad.acl_policies.upsert(nomadpy.ACLPolicy(name="read-all", rules='namespace "*" { policy = "read" }'))
    nomad.acl_roles.create(nomadpy.ACLRole(name="auditors", policies=[nomadpy.ACLRolePolicyLink(name="read-all")]))
    token, _ = nomad.acl_tokens.create(nomadpy.ACLToken(
        type="client", roles=[nomadpy.ACLTokenRoleLink(name="auditors")]))
    schedpki.scheduler.assert_allowed(token.secret_id, "namespace:prod:read-job", "namespace:*:list-jobs")
    schedpki.scheduler.assert_denied(token.secret_id, "namespace:prod:submit-job")


def test_an_expired_token_is_refused(schedpki, nomad):
    nomad.acl_policies.upsert(nomadpy.ACLPolicy(name="ops", rules='agent { policy = "read" }'))
    with freeze_time("2026-06-01T12:00:00Z") as clock:
        token, _ = nomad.acl_tokens.create(nomadpy.ACLToken(type="client", policies=["ops"],
                                                            expiration_ttl=600 * 10**9))
        assert schedpki.scheduler.allows(token.secret_id, "agent:read")
        clock.tick(datetime.timedelta(minutes=11))
        with pytest.raises(AssertionError, match="403 Permission denied"):
            schedpki.scheduler.allows(token.secret_id, "agent:read")


def test_a_one_time_token_is_exchanged_once(schedpki, nomad):
    ott, _ = nomad.acl_tokens.upsert_one_time_token()
    anonymous = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url))
    token, _ = anonymous.acl_tokens.exchange_one_time_token(ott.one_time_secret_id)
    assert token.secret_id == schedpki.scheduler.token
    with pytest.raises(nomadpy.UnexpectedResponseError, match="Permission denied"):
        anonymous.acl_tokens.exchange_one_time_token(ott.one_time_secret_id)
