"""Parity: ``X-Vault-Namespace`` at OpenBao's HTTP layer (``internal/http/handler.go``): the header is
echoed on every answer, and the ``sys/`` APIs only the root namespace serves
(``restrictedSysAPIsNonLogical``) are 400 ``operation unavailable in namespaces`` for a request naming
any namespace, ``root`` included; ``sys/step-down`` on a dev server."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity


@pytest.mark.parametrize("namespace", ["root", "/", "team"])
@pytest.mark.parametrize(("method", "path"), [
    ("GET", "sys/health"), ("GET", "sys/init"), ("PUT", "sys/seal"), ("PUT", "sys/unseal"), ("PUT", "sys/step-down"),
    ("GET", "sys/generate-root/attempt"), ("GET", "sys/rekey/init"), ("GET", "sys/health/x"),
    ("GET", "sys/storage/raft/configuration"), ("GET", "sys/metrics"), ("GET", "sys/pprof/"),
])
def test_restricted_sys_apis_refuse_any_namespace(pair, namespace, method, path):
    pair.send(method, f"/v1/{path}", token=None, headers={"X-Vault-Namespace": namespace}).same().expect(
        400, errors=["operation unavailable in namespaces"])


@pytest.mark.parametrize(("namespace", "path", "status"), [
    ("root", "sys/key-status", 200), ("root/", "auth/token/lookup-self", 200), ("team", "sys/mounts", 404),
    ("team", "sys/leader", 200), ("root", "sys/seal-status", 200), ("root", "sys/healthz", 404),
])
def test_the_namespace_header_comes_back(pair, namespace, path, status):
    ex = pair.send("GET", f"/v1/{path}", headers={"X-Vault-Namespace": namespace}).same(types_only=True)
    ex.expect(status)
    assert ex.double.headers.get("X-Vault-Namespace") == namespace


def test_no_namespace_header_none_back(pair):
    ex = pair.send("GET", "/v1/sys/leader", headers={"X-Vault-Namespace": ""}).same(types_only=True)
    ex.expect(200)
    assert "X-Vault-Namespace" not in ex.double.headers


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_step_down(pair, token):
    pair.send("PUT", "/v1/sys/step-down", token=token).same().expect(204)
    pair.send("GET", "/v1/sys/step-down", token=token).same().expect(405, errors=[])
