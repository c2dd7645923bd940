"""Parity: ``X-Vault-Namespace`` naming a namespace that does not exist, and the capabilities
endpoints (capabilities-self, capabilities, capabilities-accessor)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity


@pytest.mark.parametrize(("path", "token", "status", "errors"), [
    ("sys/mounts", "root", 404, ["namespace not found"]),
    ("sys/mounts", "not-a-token", 404, ["namespace not found"]),
    ("auth/token/lookup-self", "root", 404, ["namespace not found"]),
    ("sys/key-status", "root", 404, ["namespace not found"]),
    ("sys/health", None, 400, ["operation unavailable in namespaces"]),
    ("sys/init", None, 400, ["operation unavailable in namespaces"]),
])
def test_unknown_namespace(pair, path, token, status, errors):
    pair.send("GET", f"/v1/{path}", token=token, headers={"X-Vault-Namespace": "team"}).same().expect(
        status, errors=errors)


@pytest.mark.parametrize("namespace", ["ROOT", "team/", "root/child"])
def test_other_namespace_names_are_not_found(pair, namespace):
    pair.send("GET", "/v1/sys/policies/acl/default", headers={"X-Vault-Namespace": namespace}).same().expect(
        404, errors=["namespace not found"])


@pytest.mark.parametrize("namespace", ["root", "root/", "/"])
def test_root_namespace_names(pair, namespace):
    # (the default policy's text differs on purpose: compared by keys and types)
    pair.send("GET", "/v1/sys/policies/acl/default", headers={"X-Vault-Namespace": namespace}).same(
        types_only=True).expect(200, data={"name": "default"})


@pytest.mark.parametrize("path", ["sys/leader", "sys/seal-status"])
def test_paths_served_in_any_namespace(pair, path):
    pair.send("GET", f"/v1/{path}", token=None, headers={"X-Vault-Namespace": "team"}).same().expect(200)


def test_capabilities(pair):
    pair.send("POST", "/v1/sys/capabilities-self", json={"paths": ["sys/mounts", "pki/issue/x"]}).same().expect(
        200, data={"sys/mounts": ["root"], "pki/issue/x": ["root"]}, data_keys=["sys/mounts", "pki/issue/x"])
    ex = pair.send("POST", "/v1/sys/capabilities-self", json={"path": "sys/mounts"}).same()
    ex.expect(200, data={"capabilities": ["root"], "sys/mounts": ["root"]})
    pair.send("POST", "/v1/sys/capabilities-self", json={}).same().expect(400, errors=["paths must be supplied"])
    ex = pair.send("POST", "/v1/auth/token/create", json={"policies": ["default"], "ttl": "1h"}).same()
    ex.capture("t", lambda j: j["auth"]["client_token"])
    ex.capture("a", lambda j: j["auth"]["accessor"])
    pair.send("POST", "/v1/sys/capabilities-self", json={"paths": ["sys/mounts", "auth/token/lookup-self"]},
              token=lambda s: s.vars["t"]).same().expect(
        200, data={"sys/mounts": ["deny"], "auth/token/lookup-self": ["read"]})
    pair.send("POST", "/v1/sys/capabilities", json=lambda s: {"token": s.vars["t"],
                                                              "paths": ["sys/mounts", "auth/token/renew-self"]}
              ).same().expect(200, data={"sys/mounts": ["deny"], "auth/token/renew-self": ["update"]})
    pair.send("POST", "/v1/sys/capabilities", json={"token": "nope", "paths": ["x"]}).same().expect(
        400, errors=["1 error occurred:\n\t* invalid token\n\n"])
    pair.send("POST", "/v1/sys/capabilities-accessor", json=lambda s: {"accessor": s.vars["a"],
                                                                       "paths": ["auth/token/renew-self"]}
              ).same().expect(200, data={"capabilities": ["update"], "auth/token/renew-self": ["update"]})
    pair.send("POST", "/v1/sys/capabilities-accessor", json={"accessor": "nope", "paths": ["x"]}).same().expect(
        400, errors=["1 error occurred:\n\t* invalid accessor\n\n"])
