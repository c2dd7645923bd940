"""ACL policies: sys/policies/acl, tokens carrying policies, glob priority, sudo, denials."""

import pytest
import requests

from pytest_schedpki.secrets.acl import Policy, capabilities
from pytest_schedpki.secrets.policy_parser import PolicyError, parse_policy

ROOT = {"X-Vault-Token": "root"}


def _policy(text):
    import datetime

    return Policy("p", text, parse_policy(text), datetime.datetime.now(datetime.timezone.utc))


@pytest.mark.parametrize("path, expected", [
    ("pki/issue/web", {"update"}),          # + beats a trailing * that starts earlier
    ("pki/issue/admin", {"deny"}),          # exact beats globs
    ("pki/roles/web", {"read", "list"}),
    ("pki/issue/web/extra", {"read", "list"}),  # + is exactly one segment
    ("other/path", set()),
])
def test_glob_priority(path, expected):
    policy = _policy('''
        path "pki/*" { capabilities = ["read", "list"] }
        path "pki/issue/+" { capabilities = ["update"] }
        path "pki/issue/admin" { capabilities = ["deny"] }
    ''')
    assert capabilities([policy], path) == expected


def test_same_pattern_in_two_policies_merges_and_deny_wins():
    a = _policy('path "pki/*" { capabilities = ["read"] }')
    b = _policy('path "pki/*" { capabilities = ["update"] }')
    c = _policy('path "pki/*" { capabilities = ["deny"] }')
    assert capabilities([a, b], "pki/x") == {"read", "update"}
    assert capabilities([a, c], "pki/x") == {"deny"}


def test_kept_decisions_follow_the_policy_objects_and_the_order_of_policies():
    old = _policy('path "pki/*" { capabilities = ["read"] }')
    assert capabilities([old], "pki/x") == {"read"}
    got = capabilities([old], "pki/x")
    got.add("sudo")  # the caller's copy: the kept answer stays
    assert capabilities([old], "pki/x") == {"read"}
    rewritten = _policy('path "pki/*" { capabilities = ["update"] }')  # a write stores a new Policy
    assert capabilities([rewritten], "pki/x") == {"update"}
    deny = _policy('path "pki/x" { capabilities = ["deny"] }')
    assert capabilities([old, deny], "pki/x") == {"deny"}
    assert capabilities([deny, old], "pki/x") == {"deny"}
    assert capabilities([old], "pki/x") == {"read"}


@pytest.mark.parametrize("text, message", [
    ('path "pki/*" { capabilities = ["read" }', "failed to parse policy: At 1:39: error parsing list, expected comma or list end, got: RBRACE"),
    ('path "pki/*" { capabilities = ["reed"] }', 'failed to parse policy: path "pki/*": path "pki/*": invalid capability "reed"'),
])
def test_parse_errors(text, message):
    with pytest.raises(PolicyError) as exc:
        parse_policy(text)
    assert str(exc.value) == message


def test_policy_endpoints(schedpki):
    url = f"{schedpki.secrets.url}/v1/sys/policies/acl"
    text = 'path "pki/*" { capabilities = ["read"] }'
    assert requests.put(f"{url}/Reader", headers=ROOT, json={"policy": text}).status_code == 204
    body = requests.get(f"{url}/reader", headers=ROOT).json()["data"]
    assert body["name"] == "reader" and body["policy"] == text and body["version"] == 1
    assert requests.request("LIST", url, headers=ROOT).json()["data"]["keys"] == ["default", "reader", "root"]
    r = requests.post(f"{url}/root", headers=ROOT, json={"policy": text})
    assert (r.status_code, r.json()) == (400, {"errors": ['cannot update "root" policy']})
    r = requests.post(f"{url}/empty", headers=ROOT, json={"policy": ""})
    assert (r.status_code, r.json()) == (400, {"errors": ["'policy' parameter not supplied or empty"]})
    r = requests.post(f"{url}/bad", headers=ROOT, json={"policy": 'path "x" { capabilities = ["reed"] }'})
    assert r.status_code == 400 and r.json()["errors"][0].startswith("failed to parse policy:")
    assert (requests.get(f"{url}/nope", headers=ROOT).status_code, requests.get(f"{url}/nope", headers=ROOT).json()) == (404, {"errors": []})
    assert requests.delete(f"{url}/reader", headers=ROOT).status_code == 204
    assert requests.delete(f"{url}/nope", headers=ROOT).status_code == 204
    assert "reader" not in schedpki.secrets.state.policies


def test_token_with_policy_is_allowed_and_denied_by_path(schedpki):
    service = schedpki.secrets.state
    service.put_policy("mounts-reader", 'path "sys/mounts" { capabilities = ["read"] }')
    token = service.create_token(policies=["mounts-reader"]).id
    url = schedpki.secrets.url
    assert token and requests.get(f"{url}/v1/sys/mounts", headers={"X-Vault-Token": token}).status_code == 200
    r = requests.post(f"{url}/v1/sys/mounts/x", headers={"X-Vault-Token": token}, json={"type": "pki"})
    assert (r.status_code, r.json()) == (403, {"errors": ["1 error occurred:\n\t* permission denied\n\n"]})
    me = requests.get(f"{url}/v1/auth/token/lookup-self", headers={"X-Vault-Token": token}).json()["data"]
    assert me["policies"] == ["default", "mounts-reader"]


def test_seeded_policy(schedpki):
    schedpki.seed({"secrets": {"policies": {"p1": 'path "pki/*" { capabilities = ["read"] }'}}})
    assert schedpki.secrets.state.policies["p1"].rules == {"pki/*": {"read"}}
