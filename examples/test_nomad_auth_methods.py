"""A downstream suite testing code that manages Nomad ACL auth methods, using only the public
surface of pytest-schedpki: the `schedpki` fixture, markers, seed files and a real client."""

import datetime

import nomadpy
import pytest
import requests
from freezegun import freeze_time


@pytest.fixture
def nomad(schedpki):
    return nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))


# --- README: real client --------------------------------------------------------------------------
def test_create_with_nomadpy(nomad):
    method = nomadpy.ACLAuthMethod(
        name="okta", type="OIDC", token_locality="global", max_token_ttl=3600 * 10**9,
        config=nomadpy.ACLAuthMethodConfig(oidc_discovery_url="https://okta.example.com/",
                                           oidc_client_id="nomad", oidc_client_secret="s3cr3t"),
    )
    created, _ = nomad.acl_auth_methods.create(method)
    assert created.name == "okta"
    assert created.config.oidc_client_secret == "redacted"
    stubs, meta = nomad.acl_auth_methods.list()
    assert [s.name for s in stubs] == ["okta"] and meta.last_index > 0


# --- README: seed files ---------------------------------------------------------------------------
@pytest.mark.schedpki(seed="../fixtures/scheduler.yaml")
def test_seeded_auth_methods(nomad):
    stubs, _ = nomad.acl_auth_methods.list()
    assert [(s.name, s.type, s.default) for s in stubs] == [("ci-jwt", "JWT", False), ("okta", "OIDC", True)]


# --- README: factories ----------------------------------------------------------------------------
def test_factories_seed_without_http(schedpki, nomad):
    schedpki.factories.scheduler.oidc_auth_method("corp-sso", TokenLocality="global")
    client = schedpki.factories.scheduler.token(type="client")
    fetched, _ = nomad.acl_auth_methods.get("corp-sso")
    assert fetched.token_locality == "global"
    as_client = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=client.SecretID))
    with pytest.raises(nomadpy.UnexpectedResponseError, match="403"):
        as_client.acl_auth_methods.get("corp-sso")


# --- README: replication lag ----------------------------------------------------------------------
def test_read_after_write_can_be_stale(schedpki, nomad):
    schedpki.pause_replication()
    schedpki.factories.scheduler.jwt_auth_method("ci")
    assert nomad.acl_auth_methods.list()[0] == []                   # the local region has not seen it
    assert [m.Name for m in schedpki.authoritative_view().methods.values()] == ["ci"]
    schedpki.sync()
    assert [s.name for s in nomad.acl_auth_methods.list()[0]] == ["ci"]


@pytest.mark.schedpki(lag=30)
def test_lag_on_the_frozen_clock(schedpki, nomad):
    with freeze_time("2030-01-01T00:00:00Z") as frozen:
        schedpki.factories.scheduler.jwt_auth_method("ci")
        assert nomad.acl_auth_methods.list()[0] == []
        frozen.tick(datetime.timedelta(seconds=30))
        assert [s.name for s in nomad.acl_auth_methods.list()[0]] == ["ci"]


@pytest.mark.schedpki(lag_reads=2)
def test_visible_after_n_reads(schedpki, nomad):
    schedpki.factories.scheduler.jwt_auth_method("ci")
    assert nomad.acl_auth_methods.list()[0] == []
    assert nomad.acl_auth_methods.list()[0] == []
    assert [s.name for s in nomad.acl_auth_methods.list()[0]] == ["ci"]


# --- README: outages ------------------------------------------------------------------------------
def test_no_cluster_leader(schedpki, nomad):
    schedpki.set_leader(False)
    with pytest.raises(nomadpy.UnexpectedResponseError) as exc:
        nomad.acl_auth_methods.list()
    assert str(exc.value) == "Unexpected response code: 500 (No cluster leader)"


def test_injected_fault(schedpki, nomad):
    from pytest_schedpki import Fault

    schedpki.faults.add(Fault(service="scheduler", path="/v1/acl/auth-methods", status=503, body="overloaded", times=1))
    with pytest.raises(nomadpy.UnexpectedResponseError, match="503"):
        nomad.acl_auth_methods.list()
    assert nomad.acl_auth_methods.list()[0] == []                   # the fault fired once


# --- README: request journal ----------------------------------------------------------------------
def test_journal(schedpki):
    requests.put(f"{schedpki.scheduler.url}/v1/acl/auth-method", headers=schedpki.scheduler.headers(),
                 json={"Name": "bad_name", "Type": "OIDC"})
    entry = schedpki.journal.assert_request_made("PUT", "/v1/acl/auth-method", status=400, token_kind="management")[0]
    assert entry.response.startswith("auth method 0 invalid:")
