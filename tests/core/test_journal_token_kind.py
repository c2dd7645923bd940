"""The journal's token kind for the secrets service follows the token store as it is after each request:
the classifier's shortcut for tokens whose liveness does not depend on the time (no TTL, no parent,
uses left: ``TokenStore.lookup_now``) must never answer for a token that was revoked, expired, used up
or lost its parent."""

import datetime

import pytest
import requests


def _create(schedpki, **body) -> str:
    answer = requests.post(f"{schedpki.secrets.url}/v1/auth/token/create", json=body,
                           headers={"X-Vault-Token": schedpki.secrets.token})
    assert answer.status_code == 200, answer.text
    return answer.json()["auth"]["client_token"]


def _kind_of_read(schedpki, token: str) -> tuple[int, str]:
    """Status and journal token kind of one read made with ``token``."""
    answer = requests.get(f"{schedpki.secrets.url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token})
    entry = schedpki.journal.entries("secrets")[-1]
    assert entry.path == "/v1/auth/token/lookup-self"
    return answer.status_code, entry.token_kind


def test_root_token_then_a_revoked_root_policy_token_is_invalid(schedpki):
    assert _kind_of_read(schedpki, schedpki.secrets.token) == (200, "root")
    token = _create(schedpki, policies=["root"], no_parent=True, ttl="0")
    assert _kind_of_read(schedpki, token) == (200, "root")
    revoked = requests.post(f"{schedpki.secrets.url}/v1/auth/token/revoke", json={"token": token},
                            headers={"X-Vault-Token": schedpki.secrets.token})
    assert revoked.status_code == 204
    assert _kind_of_read(schedpki, token) == (403, "invalid")


@pytest.mark.schedpki(clock=datetime.datetime(2031, 1, 1, 12, 0))
def test_a_token_with_a_ttl_is_invalid_once_the_clock_passes_it(schedpki):
    token = _create(schedpki, policies=["default"], ttl="60s")
    assert _kind_of_read(schedpki, token) == (200, "token")
    schedpki.clock.advance(61)
    assert _kind_of_read(schedpki, token) == (403, "invalid")


def test_a_used_up_token_is_invalid_for_the_request_that_used_it_last(schedpki):
    token = _create(schedpki, policies=["default"], num_uses=2)
    assert _kind_of_read(schedpki, token) == (200, "token")
    # the last use revokes the token once answered: the entry is classified after that
    assert _kind_of_read(schedpki, token) == (200, "invalid")
    assert _kind_of_read(schedpki, token) == (403, "invalid")


def test_a_child_without_a_ttl_is_invalid_once_its_parent_is_revoked(schedpki):
    parent = _create(schedpki, policies=["root"])
    child = requests.post(f"{schedpki.secrets.url}/v1/auth/token/create", json={"policies": ["default"], "ttl": "0"},
                          headers={"X-Vault-Token": parent}).json()["auth"]["client_token"]
    assert _kind_of_read(schedpki, child) == (200, "token")
    schedpki.double.secrets.tokens.tokens.pop(parent)  # the parent gone without its tree (the store's own check)
    assert _kind_of_read(schedpki, child) == (403, "invalid")
