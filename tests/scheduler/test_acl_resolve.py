"""A request's token to its ACL (``nomad/auth/auth.go`` ``resolveTokenFromSnapshotCache``,
``resolveACLFromToken``) and the checks tests assert with (``SchedulerHandle.allows``)."""

from __future__ import annotations

import datetime

import pytest
from freezegun import freeze_time

from pytest_schedpki.clock import SwitchableClock
from pytest_schedpki.scheduler.acl.checks import allows
from pytest_schedpki.scheduler.aclstore.objects import Policy, Role
from pytest_schedpki.scheduler.aclstore.resolve import resolve_acl
from pytest_schedpki.scheduler.model import SchedulerError
from pytest_schedpki.scheduler.state import SchedulerState
from pytest_schedpki.sso_testing import SchedulerHandle


@pytest.fixture
def state():
    s = SchedulerState(SwitchableClock())
    s.acl.upsert_policy(Policy("ro", "", 'namespace "default" { policy = "read" }'))
    s.acl.upsert_policy(Policy("ops", "", 'node { policy = "write" }\nagent { policy = "read" }'))
    s.acl.upsert_policy(Policy("nope", "", 'namespace "default" { policy = "deny" }'))
    return s


def test_management_client_and_role_tokens(state):
    assert resolve_acl(state, "root").is_management()
    ro = state.add_token(type="client", policies=["ro"])
    acl = resolve_acl(state, ro.SecretID)
    assert allows(acl, "namespace:default:read-job") and not allows(acl, "namespace:default:submit-job")
    state.acl.upsert_role(Role("", "operators", "", ("ops",)))
    via_role = state.add_token(type="client", roles=["operators"])
    acl = resolve_acl(state, via_role.SecretID)
    assert allows(acl, "node:write") and allows(acl, "agent:read") and not allows(acl, "agent:write")
    both = state.add_token(type="client", policies=["ro", "nope"])
    assert not allows(resolve_acl(state, both.SecretID), "namespace:default:read-job")  # deny wins


def test_anonymous_takes_the_anonymous_policy(state):
    assert not allows(resolve_acl(state, ""), "namespace:default:list-jobs")
    state.acl.upsert_policy(Policy("anonymous", "", 'namespace "default" { capabilities = ["list-jobs"] }'))
    assert allows(resolve_acl(state, None), "namespace:default:list-jobs")
    assert not allows(resolve_acl(state, None), "namespace:default:read-job")


def test_unknown_and_expired_tokens_are_refused(state):
    with pytest.raises(SchedulerError) as err:
        resolve_acl(state, "who")
    assert (err.value.status, err.value.text) == (403, "Permission denied")
    with freeze_time("2026-01-01T00:00:00Z") as frozen:
        t = state.add_token(type="client", policies=["ro"],
                            expiration_time=datetime.datetime(2026, 1, 1, 1, tzinfo=datetime.timezone.utc))
        assert allows(resolve_acl(state, t.SecretID), "namespace:default:read-job")
        frozen.tick(datetime.timedelta(hours=2))
        with pytest.raises(SchedulerError):
            resolve_acl(state, t.SecretID)


def test_policy_changes_and_deletes_take_effect(state):
    t = state.add_token(type="client", policies=["ro"])
    state.acl.upsert_policy(Policy("ro", "", 'namespace "default" { policy = "write" }'))
    assert allows(resolve_acl(state, t.SecretID), "namespace:default:submit-job")
    state.acl.delete_policy("ro")
    assert not allows(resolve_acl(state, t.SecretID), "namespace:default:read-job")


def test_acls_disabled_allow_everything(state):
    state.set_acl_enabled(False)
    assert resolve_acl(state, "anything").is_management()


def test_handle_assertions_name_what_differs(state):
    handle = SchedulerHandle("http://unused", "root", state)
    t = state.add_token(type="client", policies=["ro"])
    handle.assert_allowed({"SecretID": t.SecretID}, "namespace:default:read-job", "namespace:default")
    with pytest.raises(AssertionError, match="the token may not do: namespace:default:submit-job, node:read"):
        handle.assert_allowed(t.SecretID, "namespace:default:submit-job", "node:read", "namespace:default:list-jobs")
    with pytest.raises(AssertionError, match="the token may do: namespace:default:list-jobs"):
        handle.assert_denied(t.SecretID, "namespace:default:list-jobs", "agent:read")
    with pytest.raises(AssertionError, match="the scheduler refuses token 'gone': 403 Permission denied"):
        handle.allows("gone", "agent:read")
    with pytest.raises(ValueError, match="unknown ACL check 'agent:root'"):
        handle.allows(t.SecretID, "agent:root")


def test_check_forms():
    from pytest_schedpki.scheduler.acl.evaluate import new_acl
    from pytest_schedpki.scheduler.acl.policy import parse

    acl = new_acl(False, [parse('namespace "prod" { variables { path "app/*" { capabilities = ["read"] } } }\n'
                                'node_pool "gpu" { policy = "write" }\nhost_volume "db" { policy = "read" }\n'
                                'operator { capabilities = ["snapshot-save"] }\nplugin { policy = "list" }')])
    assert allows(acl, "variables:prod:app/db:read") and not allows(acl, "variables:prod:app/db:write")
    assert allows(acl, "node_pool:gpu:write") and not allows(acl, "node_pool:cpu:read")
    assert allows(acl, "host_volume:db:mount-readonly") and not allows(acl, "host_volume:db:mount-readwrite")
    assert allows(acl, "operator:snapshot-save") and not allows(acl, "operator:license-read")
    assert allows(acl, "plugin:list") and not allows(acl, "plugin:read")
    assert not allows(acl, "management") and allows(new_acl(True, []), "management")
