"""Contract: nomadpy 0.2 (a port of Nomad's Go ``api`` package, urllib, JSON sent as
``application/x-www-form-urlencoded``) calling every ACL auth-method method against the double:
``list``, ``create``, ``update``, ``get``, ``delete``, with their ``QueryOptions``/``WriteOptions``.

Scheduler half only: there is no real Nomad here; the expected values follow
reference/nomad-acl-auth-methods.md (Nomad's source and tests). Each test asserts the objects and
metadata nomadpy returns, and the ``UnexpectedResponseError`` texts for refusals.
"""

from __future__ import annotations

import datetime
import threading
import time

import nomadpy
import pytest

SECOND_NS = 1_000_000_000
PUB_KEY = ("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7S3d+OoTZ1kJvE0Dd0n0t6Vd3H6b\n"
           "lm1Y7f9M0n9X8l0p0bq3YwG0cH8m4kqvXr0vHn1X2zW1Nw2vQ3lK1l1Xng==\n-----END PUBLIC KEY-----\n")


@pytest.fixture
def client(schedpki):
    return nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))


def _time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def oidc(name: str, **overrides) -> nomadpy.ACLAuthMethod:
    method = nomadpy.ACLAuthMethod(
        name=name, type="OIDC", token_locality="global", max_token_ttl=3600 * SECOND_NS,
        config=nomadpy.ACLAuthMethodConfig(
            oidc_discovery_url="https://idp.example.com", oidc_client_id="client", oidc_client_secret="s3cret",
            oidc_scopes=["groups"], bound_audiences=["nomad"], allowed_redirect_uris=["http://localhost:4649/oidc"],
            claim_mappings={"email": "email"}, list_claim_mappings={"groups": "groups"}))
    for key, value in overrides.items():
        setattr(method, key, value)
    return method


def test_create_returns_the_stored_method(client):
    method = nomadpy.ACLAuthMethod(
        name="jwt-ci", type="JWT", token_locality="local", max_token_ttl=90 * SECOND_NS, default=True,
        config=nomadpy.ACLAuthMethodConfig(
            jwt_validation_pub_keys=[PUB_KEY], bound_audiences=["ci"], bound_issuer=["https://ci.example.com"],
            expiration_leeway=5 * SECOND_NS, not_before_leeway=7 * SECOND_NS, clock_skew_leeway=SECOND_NS,
            claim_mappings={"repo": "repo"}, verbose_logging=True))
    created, wm = client.acl_auth_methods.create(method)
    assert wm.last_index > 1
    assert (created.name, created.type, created.token_locality, created.default) == ("jwt-ci", "JWT", "local", True)
    assert created.max_token_ttl == 90 * SECOND_NS  # sent and returned as the Go duration string "1m30s"
    assert created.token_name_format == "${auth_method_type}-${auth_method_name}"
    assert created.create_index == created.modify_index == wm.last_index
    assert created.create_time == created.modify_time and created.create_time.endswith("Z")
    datetime.datetime.fromisoformat(created.create_time.replace("Z", "+00:00"))
    config = created.config
    assert config.jwt_validation_pub_keys == [PUB_KEY] and config.bound_issuer == ["https://ci.example.com"]
    assert (config.expiration_leeway, config.not_before_leeway, config.clock_skew_leeway) == \
        (5 * SECOND_NS, 7 * SECOND_NS, SECOND_NS)
    assert (config.discovery_ca_pem, config.signing_algs) == (None, None)  # null when unset
    assert config.claim_mappings == {"repo": "repo"} and config.verbose_logging is True
    assert config.oidc_client_secret == ""


def test_get_redacts_the_secret_and_reports_query_meta(client, schedpki):
    created, wm = client.acl_auth_methods.create(oidc("okta", token_name_format="okta-${value.email}"))
    assert created.config.oidc_client_secret == "redacted"
    got, qm = client.acl_auth_methods.get("okta")
    assert got == created  # every field, times included
    assert (qm.last_index, qm.known_leader, qm.last_contact) == (wm.last_index, True, datetime.timedelta(0))
    assert got.token_name_format == "okta-${value.email}" and got.config.oidc_scopes == ["groups"]
    assert got.config.list_claim_mappings == {"groups": "groups"}
    # the stored secret is the real one: only the responses redact it
    assert schedpki.scheduler.state.get_auth_method("okta").Config.OIDCClientSecret == "s3cret"
    with pytest.raises(nomadpy.UnexpectedResponseError) as missing:
        client.acl_auth_methods.get("nope")
    assert (missing.value.status_code, str(missing.value)) == \
        (404, "Unexpected response code: 404 (ACL auth-method not found)")


def test_update_merges_and_moves_modify_index(client):
    created, wm = client.acl_auth_methods.create(oidc("okta"))
    got, _ = client.acl_auth_methods.get("okta")
    got.max_token_ttl = 2 * 3600 * SECOND_NS
    got.config.oidc_client_secret = "s3cret"
    got.default = True
    time.sleep(0.01)
    updated, uwm = client.acl_auth_methods.update(got)
    assert uwm.last_index > wm.last_index
    assert (updated.create_index, updated.modify_index) == (created.create_index, uwm.last_index)
    assert updated.create_time == created.create_time
    assert _time(updated.modify_time) > _time(created.modify_time)
    assert updated.max_token_ttl == 7200 * SECOND_NS and updated.default is True
    # an update with empty TokenLocality / Config keeps the stored values (Nomad's merge)
    sparse = nomadpy.ACLAuthMethod(name="okta", type="OIDC", max_token_ttl=600 * SECOND_NS)
    merged, mwm = client.acl_auth_methods.update(sparse)
    assert merged.token_locality == "global" and merged.config.oidc_discovery_url == "https://idp.example.com"
    assert merged.max_token_ttl == 600 * SECOND_NS and merged.default is False and mwm.last_index > uwm.last_index


def test_list_stubs_sorted_by_name(client):
    stubs, qm = client.acl_auth_methods.list()
    assert stubs == [] and qm.last_index == 1 and qm.known_leader is True
    _, first = client.acl_auth_methods.create(oidc("zeta"))
    _, second = client.acl_auth_methods.create(oidc("alpha", default=True))
    stubs, qm = client.acl_auth_methods.list(nomadpy.QueryOptions(allow_stale=True, region="global",
                                                                 namespace="default", per_page=1, reverse=True))
    assert [(s.name, s.type, s.default, s.create_index, s.modify_index) for s in stubs] == [
        ("alpha", "OIDC", True, second.last_index, second.last_index),
        ("zeta", "OIDC", False, first.last_index, first.last_index)]
    assert qm.last_index == second.last_index


def test_delete(client):
    _, wm = client.acl_auth_methods.create(oidc("okta"))
    dwm = client.acl_auth_methods.delete("okta")
    assert dwm.last_index > wm.last_index
    assert client.acl_auth_methods.list()[0] == []
    with pytest.raises(nomadpy.UnexpectedResponseError) as missing:
        client.acl_auth_methods.delete("okta")
    assert (missing.value.status_code, str(missing.value)) == \
        (500, "Unexpected response code: 500 (ACL auth method not found)")


def test_validation_and_conflicts(client):
    with pytest.raises(nomadpy.UnexpectedResponseError) as bad:
        client.acl_auth_methods.create(oidc("bad_name", token_locality="regional"))
    assert bad.value.status_code == 400
    assert str(bad.value) == ("Unexpected response code: 400 (auth method 0 invalid: 2 errors occurred:\n"
                              "\t* invalid name 'bad_name'\n\t* invalid token locality 'regional')")
    client.acl_auth_methods.create(oidc("first", default=True))
    with pytest.raises(nomadpy.UnexpectedResponseError) as second:
        client.acl_auth_methods.create(oidc("second", default=True))
    assert str(second.value) == "Unexpected response code: 400 (default method already exists: first)"
    with pytest.raises(nomadpy.UnexpectedResponseError) as zero:
        client.acl_auth_methods.create(oidc("zero", max_token_ttl=0))  # nomadpy sends "MaxTokenTTL": ""
    assert str(zero.value) == 'Unexpected response code: 400 (time: invalid duration "")'
    with pytest.raises(ValueError, match="missing ACL auth-method name"):  # refused by the client itself
        client.acl_auth_methods.create(oidc(""))


def test_tokens_and_options(client, schedpki):
    anonymous = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url))
    for call in (lambda: anonymous.acl_auth_methods.create(oidc("x")),
                 lambda: anonymous.acl_auth_methods.update(oidc("x")),
                 lambda: anonymous.acl_auth_methods.get("x"),
                 lambda: anonymous.acl_auth_methods.delete("x")):
        with pytest.raises(nomadpy.UnexpectedResponseError) as denied:
            call()
        assert str(denied.value) == "Unexpected response code: 403 (Permission denied)"
    assert anonymous.acl_auth_methods.list()[0] == []  # the list needs no ACL
    # per-call tokens, namespaces, regions and idempotency tokens, as the options send them
    w = nomadpy.WriteOptions(auth_token=schedpki.scheduler.token, region="global", namespace="default",
                             idempotency_token="once")
    created, _ = anonymous.acl_auth_methods.create(oidc("okta"), w)
    q = nomadpy.QueryOptions(auth_token=schedpki.scheduler.token, allow_stale=True, region="global")
    assert anonymous.acl_auth_methods.get("okta", q)[0] == created
    # basic auth (NOMAD_HTTP_AUTH) rides along with X-Nomad-Token
    basic = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token,
                                          http_auth=nomadpy.HttpBasicAuth("user", "pass")))
    assert basic.acl_auth_methods.get("okta")[0] == created
    with pytest.raises(nomadpy.UnexpectedResponseError) as region:
        client.acl_auth_methods.list(nomadpy.QueryOptions(region="mars"))
    assert str(region.value) == "Unexpected response code: 500 (No path to region)"


def test_blocking_queries(client, schedpki):
    _, qm = client.acl_auth_methods.list()
    writer = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))
    results: dict = {}

    def write_later():
        time.sleep(0.3)
        results["created"] = writer.acl_auth_methods.create(oidc("late"))

    thread = threading.Thread(target=write_later, daemon=True)
    thread.start()
    start = time.monotonic()
    stubs, blocked = client.acl_auth_methods.list(nomadpy.QueryOptions(
        wait_index=qm.last_index, wait_time=datetime.timedelta(seconds=10)))
    elapsed = time.monotonic() - start
    thread.join(10)
    assert 0.25 <= elapsed < 5
    assert [s.name for s in stubs] == ["late"] and blocked.last_index == results["created"][1].last_index

    # a blocked read of one method returns when THAT method changes; here nothing does: the wait ends
    start = time.monotonic()
    got, same = client.acl_auth_methods.get("late", nomadpy.QueryOptions(
        wait_index=blocked.last_index, wait_time=datetime.timedelta(milliseconds=200)))
    assert 0.19 <= time.monotonic() - start < 3
    assert got.name == "late" and same.last_index == blocked.last_index
