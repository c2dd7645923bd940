"""A real client end to end: nomadpy (a port of Nomad's Go ``api`` package), as ``api/acl_test.go`` runs it."""

import datetime
import threading
import time

import nomadpy
import pytest

MINUTE_NS = 60 * 1_000_000_000


@pytest.fixture
def client(sched):
    return nomadpy.Client(nomadpy.Config(address=sched.url, secret_id=sched.token))


def test_auth_method_lifecycle(client, sched):
    methods, qm = client.acl_auth_methods.list()
    assert methods == [] and qm.last_index != 0 and qm.known_leader is True

    method = nomadpy.ACLAuthMethod(
        name="acl-auth-method-api-test", type="OIDC", token_locality="local", max_token_ttl=15 * MINUTE_NS,
        default=True, config=nomadpy.ACLAuthMethodConfig(
            oidc_discovery_url="https://example.com", oidc_client_id="test-client-id",
            oidc_client_secret="s3cr3t", bound_audiences=["test-aud"]))
    created, wm = client.acl_auth_methods.create(method)
    assert wm.last_index > 0
    assert (created.name, created.type, created.token_locality, created.max_token_ttl, created.default) == \
        ("acl-auth-method-api-test", "OIDC", "local", 15 * MINUTE_NS, True)
    assert created.token_name_format == "${auth_method_type}-${auth_method_name}"
    assert (created.config.oidc_client_secret, created.config.bound_audiences) == ("redacted", ["test-aud"])
    assert created.create_index == created.modify_index == wm.last_index
    assert created.create_time.endswith("Z") and created.create_time == created.modify_time

    stubs, qm = client.acl_auth_methods.list()
    assert [(s.name, s.default, s.modify_index) for s in stubs] == [("acl-auth-method-api-test", True, wm.last_index)]
    assert qm.last_index == wm.last_index

    got, qm = client.acl_auth_methods.get("acl-auth-method-api-test")
    assert (got.name, got.token_locality, got.type, got.max_token_ttl) == \
        ("acl-auth-method-api-test", "local", "OIDC", 15 * MINUTE_NS)
    assert qm.last_index == got.modify_index and qm.known_leader

    got.token_locality = "global"
    got.config.oidc_client_secret = "s3cr3t"
    updated, uwm = client.acl_auth_methods.update(got)
    assert updated.token_locality == "global" and uwm.last_index > wm.last_index
    assert updated.create_index == created.create_index and updated.modify_index == uwm.last_index
    assert client.acl_auth_methods.get("acl-auth-method-api-test")[0].token_locality == "global"
    stored = sched.state.get_auth_method("acl-auth-method-api-test")
    assert stored.Config.OIDCClientSecret == "s3cr3t" and stored.Default is True

    dwm = client.acl_auth_methods.delete("acl-auth-method-api-test")
    assert dwm.last_index > uwm.last_index
    assert client.acl_auth_methods.list()[0] == []


def test_client_errors_carry_the_plain_text_body(client):
    with pytest.raises(nomadpy.UnexpectedResponseError) as exc:
        client.acl_auth_methods.get("missing")
    assert exc.value.status_code == 404
    assert str(exc.value) == "Unexpected response code: 404 (ACL auth-method not found)"

    zero_ttl = nomadpy.ACLAuthMethod(name="zero", type="OIDC", token_locality="local")
    with pytest.raises(nomadpy.UnexpectedResponseError) as exc:
        client.acl_auth_methods.create(zero_ttl)  # the client sends "MaxTokenTTL": "" for 0
    assert str(exc.value) == 'Unexpected response code: 400 (time: invalid duration "")'

    anonymous = nomadpy.Client(nomadpy.Config(address=client.address()))
    with pytest.raises(nomadpy.UnexpectedResponseError) as exc:
        anonymous.acl_auth_methods.delete("anything")
    assert str(exc.value) == "Unexpected response code: 403 (Permission denied)"
    assert anonymous.acl_auth_methods.list()[0] == []


def test_client_blocking_query_and_options(client, sched):
    _, qm = client.acl_auth_methods.list()

    def write():
        time.sleep(0.2)
        sched.state.upsert_auth_method({"Name": "late", "Type": "JWT", "TokenLocality": "global",
                                        "MaxTokenTTL": "1h", "Config": {"JWKSURL": "https://jwks"}})

    q = nomadpy.QueryOptions(wait_index=qm.last_index, wait_time=datetime.timedelta(seconds=5), allow_stale=True,
                             region="global", namespace="default", per_page=10, reverse=True)
    start = time.monotonic()  # before the writer starts: its 0.2 s sleep cannot begin earlier than this
    threading.Thread(target=write, daemon=True).start()
    stubs, qm2 = client.acl_auth_methods.list(q)
    assert time.monotonic() - start >= 0.2
    assert [s.name for s in stubs] == ["late"] and qm2.last_index > qm.last_index
