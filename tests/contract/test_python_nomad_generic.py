"""Contract: python-nomad 2.x (PyPI ``python-nomad``, import ``nomad``) has no auth-method API, so its
users go through the generic ``Requester.request(*path, method=, json=, params=)`` of ``acl``
(reference/real-clients.md §2.1): ``n.acl.request("auth-method", method="post", json=...)`` and so on.
It returns the ``requests.Response`` for 2xx and raises its own exceptions otherwise; the caller does
``.json()`` itself. A configured namespace/region rides along as query parameters on every ``acl/*``
request. Scheduler half only (no real Nomad here).

python-nomad and nomadpy import as ``nomad`` and ``nomadpy``: both are installed side by side.
"""

from __future__ import annotations

import threading
import time

import nomad
import nomad.api.exceptions as nomad_exc
import pytest
import requests

METHOD = {"Name": "okta", "Type": "OIDC", "TokenLocality": "global", "MaxTokenTTL": "1h", "Default": False,
          "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "client",
                     "OIDCClientSecret": "s3cret", "BoundAudiences": ["nomad"],
                     "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"]}}


@pytest.fixture
def n(schedpki):
    return nomad.Nomad(address=schedpki.scheduler.url, token=schedpki.scheduler.token, namespace="default",
                       region="global")


def test_nomadpy_and_python_nomad_coexist():
    import nomadpy

    assert nomad.__name__ == "nomad" and hasattr(nomad, "Nomad") and hasattr(nomadpy, "Client")
    assert nomad.__file__ != nomadpy.__file__


def test_create_read_update_delete_list(n, schedpki):
    created = n.acl.request("auth-method", method="post", json=METHOD)
    assert isinstance(created, requests.Response) and created.status_code == 200
    assert created.headers["Content-Type"] == "application/json"
    body = created.json()
    index = int(created.headers["X-Nomad-Index"])
    assert (body["Name"], body["MaxTokenTTL"], body["CreateIndex"], body["ModifyIndex"]) == ("okta", "1h0m0s", index, index)
    assert body["TokenNameFormat"] == "${auth_method_type}-${auth_method_name}"
    assert body["Config"]["OIDCClientSecret"] == "redacted" and body["Config"]["SigningAlgs"] is None
    assert set(body) == {"Name", "Type", "TokenLocality", "TokenNameFormat", "MaxTokenTTL", "Default", "Config",
                         "CreateTime", "ModifyTime", "CreateIndex", "ModifyIndex", "Hash"}

    read = n.acl.request("auth-method", "okta", method="get")
    assert read.json() == body
    assert (read.headers["X-Nomad-Index"], read.headers["X-Nomad-KnownLeader"], read.headers["X-Nomad-LastContact"]) == \
        (str(index), "true", "0")

    updated = n.acl.request("auth-method", "okta", method="put", json={**METHOD, "MaxTokenTTL": "30m", "Default": True})
    ubody = updated.json()
    assert ubody["MaxTokenTTL"] == "30m0s" and ubody["Default"] is True
    assert ubody["CreateIndex"] == index < ubody["ModifyIndex"] == int(updated.headers["X-Nomad-Index"])
    assert ubody["CreateTime"] == body["CreateTime"]
    # POST on the named path is an update too
    posted = n.acl.request("auth-method", "okta", method="post", json={**METHOD, "TokenLocality": "local"})
    assert posted.json()["TokenLocality"] == "local"

    listed = n.acl.request("auth-methods", method="get")
    # the server's stub (structs.ACLAuthMethodStub) also carries the Hash
    assert listed.json() == [{"Name": "okta", "Type": "OIDC", "Default": False, "Hash": posted.json()["Hash"],
                              "CreateIndex": index, "ModifyIndex": posted.json()["ModifyIndex"]}]

    deleted = n.acl.request("auth-method", "okta", method="delete")
    assert deleted.ok and deleted.status_code == 200 and deleted.content == b""
    assert int(deleted.headers["X-Nomad-Index"]) > posted.json()["ModifyIndex"]
    assert n.acl.request("auth-methods", method="get").json() == []
    # the journal saw the namespace and region python-nomad adds to every acl/* request
    entry = schedpki.journal.find(method="DELETE", path="/v1/acl/auth-method/okta")[0]
    assert entry.query == {"namespace": "default", "region": "global"} and entry.token_kind == "management"


def test_errors_as_python_nomad_exceptions(n, schedpki):
    with pytest.raises(nomad_exc.URLNotFoundNomadException) as missing:
        n.acl.request("auth-method", "nope", method="get")
    assert missing.value.nomad_resp.status_code == 404 and missing.value.nomad_resp.text == "ACL auth-method not found"
    assert missing.value.nomad_resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    with pytest.raises(nomad_exc.BadRequestNomadException) as bad:
        n.acl.request("auth-method", method="post", json={**METHOD, "Type": "LDAP"})
    assert bad.value.nomad_resp.text == "auth method 0 invalid: 1 error occurred:\n\t* invalid token type 'LDAP'\n\n"
    with pytest.raises(nomad_exc.BadRequestNomadException) as mismatch:
        n.acl.request("auth-method", "other", method="put", json=METHOD)
    assert mismatch.value.nomad_resp.text == "ACL auth-method name does not match request path"
    with pytest.raises(nomad_exc.BadRequestNomadException) as empty:
        n.acl.request("auth-method", method="post")
    assert empty.value.nomad_resp.text == "Request body is empty"
    anonymous = nomad.Nomad(address=schedpki.scheduler.url)
    with pytest.raises(nomad_exc.URLNotAuthorizedNomadException) as denied:
        anonymous.acl.request("auth-method", method="post", json=METHOD)
    assert denied.value.nomad_resp.text == "Permission denied"
    assert anonymous.acl.request("auth-methods", method="get").json() == []
    with pytest.raises(nomad_exc.BaseNomadException) as wrong_verb:
        n.acl.request("auth-methods", method="delete")
    assert (wrong_verb.value.nomad_resp.status_code, wrong_verb.value.nomad_resp.text) == (405, "Invalid method")


def test_blocking_query_within_the_default_timeout(n, schedpki):
    first = n.acl.request("auth-methods", method="get")
    index = int(first.headers["X-Nomad-Index"])
    writer = nomad.Nomad(address=schedpki.scheduler.url, token=schedpki.scheduler.token)

    def write_later():
        time.sleep(0.3)
        writer.acl.request("auth-method", method="post", json=METHOD)

    thread = threading.Thread(target=write_later, daemon=True)
    thread.start()
    start = time.monotonic()
    blocked = n.acl.request("auth-methods", method="get", params={"index": index, "wait": "4s"})  # timeout is 5 s
    elapsed = time.monotonic() - start
    thread.join(5)
    assert 0.25 <= elapsed < 4
    assert [m["Name"] for m in blocked.json()] == ["okta"] and int(blocked.headers["X-Nomad-Index"]) > index
    with pytest.raises(nomad_exc.BadRequestNomadException) as bad_wait:
        n.acl.request("auth-methods", method="get", params={"index": index, "wait": "soon"})
    assert bad_wait.value.nomad_resp.text == "Invalid wait time"


FULL_CONFIG = {
    "OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "client", "OIDCClientSecret": "s3cret",
    "OIDCDisableUserInfo": True, "OIDCScopes": ["groups", "email"], "JWTValidationPubKeys": ["-----BEGIN PUBLIC KEY-----"],
    "JWKSURL": "https://idp.example.com/jwks", "BoundAudiences": ["nomad"], "AllowedRedirectURIs": ["http://localhost/cb"],
    "DiscoveryCaPem": ["-----BEGIN CERTIFICATE-----"], "JWKSCACert": "-----BEGIN CERTIFICATE-----",
    "SigningAlgs": ["RS256", "ES256"], "ExpirationLeeway": "10s", "NotBeforeLeeway": "5s", "ClockSkewLeeway": "1s",
    "ClaimMappings": {"email": "email"}, "ListClaimMappings": {"groups": "groups"}, "VerboseLogging": True,
}


def test_every_documented_field_round_trips(n):
    """Each field of the document's resource tables, sent with a non-default value, comes back as sent
    (durations in Go's spelling, the client secret redacted)."""
    body = {"Name": "every-field", "Type": "OIDC", "TokenLocality": "local", "TokenNameFormat": "sso-${value.email}",
            "MaxTokenTTL": "2h", "Default": True, "Config": FULL_CONFIG}
    created = n.acl.request("auth-method", method="post", json=body).json()
    read = n.acl.request("auth-method", "every-field", method="get").json()
    assert created == read
    assert {k: read[k] for k in ("Name", "Type", "TokenLocality", "TokenNameFormat", "MaxTokenTTL", "Default")} == {
        "Name": "every-field", "Type": "OIDC", "TokenLocality": "local", "TokenNameFormat": "sso-${value.email}",
        "MaxTokenTTL": "2h0m0s", "Default": True}
    expected = {**FULL_CONFIG, "OIDCClientSecret": "redacted"}
    assert {k: read["Config"][k] for k in FULL_CONFIG} == expected
    assert read["CreateIndex"] == read["ModifyIndex"] and read["CreateTime"] == read["ModifyTime"]

    # the Update operation's fields (the document lists the OIDC ones) replace the stored values
    update_config = {"OIDCDiscoveryURL": "https://idp2.example.com", "OIDCClientID": "client2",
                     "OIDCClientSecret": "s3cret2", "OIDCDisableUserInfo": False, "OIDCScopes": ["profile"],
                     "BoundAudiences": ["nomad2"], "AllowedRedirectURIs": ["http://localhost/cb2"],
                     "DiscoveryCaPem": None, "SigningAlgs": ["ES384"], "ClaimMappings": {"sub": "user"},
                     "ListClaimMappings": {"roles": "roles"}}
    update = {"Name": "every-field", "Type": "OIDC", "TokenLocality": "global", "TokenNameFormat": "x-${value.sub}",
              "MaxTokenTTL": "45m", "Default": False, "Config": update_config}
    updated = n.acl.request("auth-method", "every-field", method="post", json=update).json()
    assert {k: updated[k] for k in ("TokenLocality", "TokenNameFormat", "MaxTokenTTL", "Default")} == {
        "TokenLocality": "global", "TokenNameFormat": "x-${value.sub}", "MaxTokenTTL": "45m0s", "Default": False}
    assert {k: updated["Config"][k] for k in update_config} == {**update_config, "OIDCClientSecret": "redacted"}
    # Config is replaced whole: the JWT fields not sent are gone
    assert (updated["Config"]["JWKSURL"], updated["Config"]["ExpirationLeeway"]) == ("", "")
    assert updated["ModifyIndex"] > updated["CreateIndex"] == created["CreateIndex"]
