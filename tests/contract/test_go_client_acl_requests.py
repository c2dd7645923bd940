"""The requests of Nomad's Go ``api`` ACL calls (api/acl.go, api/api.go at aa026cc9), sent byte for
byte as the Go client sends them (see test_go_client_behaviours.py for what Go's net/http adds),
and what the Go code decodes from each answer. Each test pins rows of docs/go-clients.md
("Nomad api: the ACL calls").

Bodies are what ``json.NewEncoder`` writes for the api structs: ``api.ACLToken`` through its
``MarshalJSON`` (``ExpirationTTL`` first, as a duration string, ``""`` for zero; ``ExpirationTime``
left out when nil), ``api.ACLPolicy``/``api.ACLRole`` with every field. A call with no body
(``Bootstrap``, ``UpsertOneTimeToken``) is a PUT with ``Content-Length: 0``; a DELETE has no body
and no Content-Length. ``Upsert``/``Delete`` of policies decode nothing; every other call decodes
the answer, which therefore must not be empty.
"""

from __future__ import annotations

import pytest
from test_go_client_behaviours import GO_DURATION, RFC3339NANO, go_encode, go_request

ZERO_TIME = "0001-01-01T00:00:00Z"


def go_token(name: str, policies: list[str] | None, ttl: str = "", type_: str = "client") -> dict:
    """``api.ACLToken{Name, Type, Policies, ExpirationTTL}`` as its MarshalJSON writes it."""
    return {"ExpirationTTL": ttl, "AccessorID": "", "SecretID": "", "Name": name, "Type": type_,
            "Policies": policies, "Roles": None, "Global": False, "CreateTime": ZERO_TIME,
            "CreateIndex": 0, "ModifyIndex": 0}


def go_policy(name: str, rules: str) -> dict:
    return {"Name": name, "Description": "", "Rules": rules, "JobACL": None, "CreateIndex": 0, "ModifyIndex": 0}


@pytest.fixture
def nomad(schedpki):
    """``(url, management headers)`` of the double's scheduler."""
    return schedpki.scheduler.url, {"X-Nomad-Token": schedpki.scheduler.token}


def test_policies_upsert_info_list_self_delete(nomad):
    url, auth = nomad
    rules = 'namespace "default" { policy = "read" }'
    up = go_request(url, "PUT", "/v1/acl/policy/readonly", auth, go_encode(go_policy("readonly", rules)))
    assert up.status == 200 and int(up.headers["X-Nomad-Index"]) > 0  # Upsert decodes nothing
    info = go_request(url, "GET", "/v1/acl/policy/readonly", auth)
    assert (info.status, info.json()["Rules"], info.json()["Name"]) == (200, rules, "readonly")
    assert info.headers["X-Nomad-KnownLeader"] == "true"
    listed = go_request(url, "GET", "/v1/acl/policies?prefix=read", auth)
    assert [p["Name"] for p in listed.json()] == ["readonly"]
    token = go_request(url, "PUT", "/v1/acl/token", auth, go_encode(go_token("t", ["readonly"]))).json()
    own = go_request(url, "GET", "/v1/acl/policy/self", {"X-Nomad-Token": token["SecretID"]})
    assert [p["Name"] for p in own.json()] == ["readonly"]
    deleted = go_request(url, "DELETE", "/v1/acl/policy/readonly", auth)
    assert deleted.status == 200 and int(deleted.headers["X-Nomad-Index"]) > 0


def test_tokens_create_info_update_self_list_delete(nomad):
    url, auth = nomad
    go_request(url, "PUT", "/v1/acl/policy/readonly", auth, go_encode(go_policy("readonly", 'agent { policy = "read" }')))
    created = go_request(url, "PUT", "/v1/acl/token", auth, go_encode(go_token("ci", ["readonly"], ttl="1h0m0s")))
    assert created.status == 200 and int(created.headers["X-Nomad-Index"]) == created.json()["CreateIndex"]
    token = created.json()
    assert (token["Type"], token["Policies"], token["ExpirationTTL"]) == ("client", ["readonly"], "1h0m0s")
    assert GO_DURATION.fullmatch(token["ExpirationTTL"]) and RFC3339NANO.fullmatch(token["ExpirationTime"])
    assert RFC3339NANO.fullmatch(token["CreateTime"])
    info = go_request(url, "GET", f"/v1/acl/token/{token['AccessorID']}", auth)
    assert info.json()["SecretID"] == token["SecretID"]
    update = dict(info.json(), Name="ci-renamed")  # Update sends the struct it read
    updated = go_request(url, "PUT", f"/v1/acl/token/{token['AccessorID']}", auth, go_encode(update))
    assert (updated.status, updated.json()["Name"]) == (200, "ci-renamed")
    me = go_request(url, "GET", "/v1/acl/token/self", {"X-Nomad-Token": token["SecretID"]})
    assert me.json()["AccessorID"] == token["AccessorID"]
    listed = go_request(url, "GET", "/v1/acl/tokens?prefix=" + token["AccessorID"][:8], auth)
    assert [t["AccessorID"] for t in listed.json()] == [token["AccessorID"]] and "SecretID" not in listed.json()[0]
    deleted = go_request(url, "DELETE", f"/v1/acl/token/{token['AccessorID']}", auth)
    assert (deleted.status, deleted.body) == (200, b"")
    gone = go_request(url, "GET", "/v1/acl/token/self", {"X-Nomad-Token": token["SecretID"]})
    assert gone.status == 403


def test_one_time_token_upsert_and_exchange(nomad):
    url, auth = nomad
    ott = go_request(url, "PUT", "/v1/acl/token/onetime", auth, b"")  # nil body: Content-Length 0
    assert ott.status == 200
    one = ott.json()["OneTimeToken"]  # OneTimeTokenUpsertResponse; null would be "no one-time token returned"
    assert set(one) >= {"OneTimeSecretID", "AccessorID", "ExpiresAt", "CreateIndex", "ModifyIndex"}
    assert RFC3339NANO.fullmatch(one["ExpiresAt"])
    swapped = go_request(url, "PUT", "/v1/acl/token/onetime/exchange", None,
                         go_encode({"OneTimeSecretID": one["OneTimeSecretID"]}))
    assert swapped.status == 200 and swapped.json()["Token"]["AccessorID"] == one["AccessorID"]


@pytest.mark.schedpki(bootstrap=False)
def test_bootstrap_without_body_then_refused(schedpki):
    url = schedpki.scheduler.url
    first = go_request(url, "PUT", "/v1/acl/bootstrap", None, b"")  # ACLTokens().Bootstrap: nil body
    assert first.status == 200 and first.json()["Type"] == "management"
    assert int(first.headers["X-Nomad-Index"]) == first.json()["CreateIndex"]
    again = go_request(url, "PUT", "/v1/acl/bootstrap", None, go_encode({"BootstrapSecret": ""}))  # BootstrapOpts
    assert again.status == 400 and again.body.startswith(b"ACL bootstrap already done (reset index: ")


def test_roles_create_get_by_name_update_list_delete(nomad):
    url, auth = nomad
    go_request(url, "PUT", "/v1/acl/policy/readonly", auth, go_encode(go_policy("readonly", 'node { policy = "read" }')))
    body = {"ID": "", "Name": "ops", "Description": "", "Policies": [{"Name": "readonly"}], "CreateIndex": 0,
            "ModifyIndex": 0}
    created = go_request(url, "PUT", "/v1/acl/role", auth, go_encode(body))
    assert created.status == 200
    role = created.json()
    by_name = go_request(url, "GET", "/v1/acl/role/name/ops", auth)
    assert by_name.json()["ID"] == role["ID"]
    updated = go_request(url, "PUT", f"/v1/acl/role/{role['ID']}", auth, go_encode(dict(role, Description="x")))
    assert updated.json()["Description"] == "x"
    assert [r["Name"] for r in go_request(url, "GET", "/v1/acl/roles", auth).json()] == ["ops"]
    got = go_request(url, "GET", f"/v1/acl/role/{role['ID']}", auth)
    assert got.json()["Policies"] == [{"Name": "readonly"}]
    deleted = go_request(url, "DELETE", f"/v1/acl/role/{role['ID']}", auth)
    assert (deleted.status, deleted.body) == (200, b"")


def test_client_introduction_token(nomad):
    url, auth = nomad
    body = {"TTL": 600 * 10**9, "NodeName": "n1", "NodePool": ""}  # api struct: TTL as integer nanoseconds
    r = go_request(url, "PUT", "/v1/acl/identity/client-introduction-token", auth, go_encode(body))
    assert r.status == 200 and list(r.json()) == ["JWT"] and r.json()["JWT"].count(".") == 2
