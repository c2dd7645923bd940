"""Tokens: where they are read from and who may do what (reference §7)."""

import datetime
import uuid

import pytest
from sched_helpers import assert_plain, mock_oidc, raw_request

BODY = mock_oidc("authz")


@pytest.fixture
def tokens(sched):
    sched.state.upsert_auth_method(BODY)
    state = sched.state
    return {
        "client": state.add_token(type="client").SecretID,
        "expired": state.add_token(type="management",
                                   expiration_time=datetime.datetime(2001, 1, 1)).SecretID,
        "random uuid": str(uuid.uuid4()),
        "not a uuid": "definitely-not-a-token",
        "anonymous": None,
    }


@pytest.mark.parametrize("who", ["client", "expired", "random uuid", "not a uuid", "anonymous"])
def test_non_management_tokens_are_refused_everywhere_but_list(sched, tokens, who):
    token = tokens[who]
    before = sched.state.last_index
    assert_plain(sched.put("/v1/acl/auth-method", json=BODY, token=token), 403, "Permission denied")
    assert_plain(sched.put("/v1/acl/auth-method/authz", json=BODY, token=token), 403, "Permission denied")
    assert_plain(sched.get("/v1/acl/auth-method/authz", token=token), 403, "Permission denied")
    assert_plain(sched.get("/v1/acl/auth-method/missing", token=token), 403, "Permission denied")
    assert_plain(sched.delete("/v1/acl/auth-method/authz", token=token), 403, "Permission denied")
    assert sched.get("/v1/acl/auth-methods", token=token).status_code == 200
    assert sched.state.last_index == before  # refused writes consume no raft index
    assert sched.state.get_auth_method("authz") is not None


def test_token_check_comes_before_validation_and_not_found(sched, tokens):
    assert_plain(sched.put("/v1/acl/auth-method", json={"Name": "bad_name"}, token=None), 403, "Permission denied")
    assert_plain(sched.delete("/v1/acl/auth-method/missing", token=None), 403, "Permission denied")


def test_a_management_token_created_later_works(sched):
    secret = sched.state.add_token(type="management", name="ops").SecretID
    assert sched.put("/v1/acl/auth-method", json=BODY, token=secret).status_code == 200


def test_expiry_follows_the_double_clock(sched):
    from freezegun import freeze_time

    secret = sched.state.add_token(expiration_time=datetime.datetime(2030, 1, 1, 12, 0)).SecretID
    sched.state.upsert_auth_method(BODY)
    with freeze_time("2030-01-01 11:59:59"):
        assert sched.get("/v1/acl/auth-method/authz", token=secret).status_code == 200
    with freeze_time("2030-01-01 12:00:01"):
        assert_plain(sched.get("/v1/acl/auth-method/authz", token=secret), 403, "Permission denied")


def test_scheduler_token_header_and_bearer_are_accepted(sched):
    sched.state.upsert_auth_method(BODY)
    path = "/v1/acl/auth-method/authz"
    assert sched.get(path, token=None, headers={"X-Scheduler-Token": "root"}).status_code == 200
    for auth in ("Bearer root", "bearer root", "BEARER  root  extra", "Bearer root other"):
        assert sched.get(path, token=None, headers={"Authorization": auth}).status_code == 200, auth
    for auth in ("Basic cm9vdDo=", "root", "Bearer", "Token root"):
        assert sched.get(path, token=None, headers={"Authorization": auth}).status_code == 403, auth


def test_header_precedence(sched):
    sched.state.upsert_auth_method(BODY)
    path = "/v1/acl/auth-method/authz"
    assert sched.get(path, token="bad", headers={"Authorization": "Bearer root"}).status_code == 403
    assert sched.get(path, token="bad", headers={"X-Scheduler-Token": "root"}).status_code == 403
    assert sched.get(path, token=None, headers={"X-Scheduler-Token": "root", "Authorization": "Bearer x"}).status_code == 200
    status, _, _ = raw_request(sched.url, "GET", path, headers={"X-Nomad-Token": "", "Authorization": "Bearer root"})
    assert status == 200  # an empty X-Nomad-Token falls through to Authorization


def test_there_is_no_token_query_parameter(sched):
    sched.state.upsert_auth_method(BODY)
    assert sched.get("/v1/acl/auth-method/authz?token=root", token=None).status_code == 403


def test_deleted_token_is_refused(sched):
    secret = sched.state.add_token(type="management").SecretID
    sched.state.delete_token(secret)
    assert sched.put("/v1/acl/auth-method", json=BODY, token=secret).status_code == 403


def test_token_kind_for_the_journal(sched):
    state = sched.state
    client = state.add_token(type="client").SecretID
    expired = state.add_token(expiration_time=datetime.datetime(2001, 1, 1)).SecretID
    assert [state.token_kind(t) for t in ("root", client, expired, "nope", "")] == \
        ["management", "client", "expired", "unknown", "anonymous"]


def test_add_token_rejects_bad_input(sched):
    with pytest.raises(ValueError, match="token type must be"):
        sched.state.add_token(type="admin")
    with pytest.raises(ValueError, match="already exists"):
        sched.state.add_token(secret_id="root")
    token = sched.state.add_token(accessor_id="acc-1")
    assert (token.Type, token.Global, token.AccessorID, token.CreateIndex) == ("management", True, "acc-1", 2)
    with pytest.raises(ValueError, match="AccessorID"):
        sched.state.add_token(accessor_id="acc-1")


def test_acl_support_disabled(sched):
    sched.state.upsert_auth_method(BODY)
    sched.state.set_acl_enabled(False)
    cases = [("GET", "/v1/acl/auth-methods"), ("GET", "/v1/acl/auth-method/authz?region=mars"),
             ("DELETE", "/v1/acl/auth-method/authz"), ("PUT", "/v1/acl/auth-method")]
    for verb, path in cases:
        r = sched.request(verb, path, json=BODY if verb == "PUT" else None, token=None)
        assert_plain(r, 400, "ACL support disabled")
    # Body decoding and the name check still come first on writes.
    assert_plain(sched.put("/v1/acl/auth-method", data=b"{"), 400, "unexpected EOF")
    assert_plain(sched.put("/v1/acl/auth-method/other", json=BODY), 400, "ACL auth-method name does not match request path")
    assert sched.state.get_auth_method("authz") is not None
    sched.state.set_acl_enabled(True)
    assert sched.get("/v1/acl/auth-method/authz").status_code == 200
