"""``X-Vault-Namespace`` at the secrets service's HTTP layer (``secrets/system/namespaces.py``), as
OpenBao's ``internal/http/handler.go`` handles it: the header is echoed on every answer, and the
``sys/`` APIs only the root namespace serves refuse a request that names any namespace, ``root``
included, before the method, body, token or seal are read. Checked against bao in
``tests/parity/test_parity_namespace_http_layer.py``."""

from __future__ import annotations

import http.client
import json

import pytest

from pytest_schedpki.double import Double

UNAVAILABLE = {"errors": ["operation unavailable in namespaces"]}


@pytest.fixture(scope="module")
def double():
    d = Double().start()
    yield d
    d.stop()


def _send(double, method, path, namespace=None, token="root", body=None):
    port = int(double.secrets_url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {} if token is None else {"X-Vault-Token": token}
    if namespace is not None:
        headers["X-Vault-Namespace"] = namespace
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.getheader("X-Vault-Namespace"), resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize("namespace", ["root", "root/", "/", "ROOT", "team"])
@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/sys/health"), ("GET", "/v1/sys/init"), ("PUT", "/v1/sys/seal"), ("PUT", "/v1/sys/unseal"),
    ("PUT", "/v1/sys/step-down"), ("GET", "/v1/sys/generate-root/attempt"), ("GET", "/v1/sys/rekey/init"),
    ("GET", "/v1/sys/health/x"), ("GET", "/v1/sys/raw/x"), ("DELETE", "/v1/sys/metrics"), ("GET", "/v1/sys/pprof/"),
    ("GET", "/v1/sys/storage/raft/configuration"), ("GET", "/v1/sys/in-flight-req"),
])
def test_restricted_sys_apis_refuse_any_namespace(double, namespace, method, path):
    status, echoed, body = _send(double, method, path, namespace, token=None, body=b"not json")
    assert (status, echoed, json.loads(body)) == (400, namespace, UNAVAILABLE)
    assert not double.secrets.sealed  # PUT sys/seal was refused, not run


@pytest.mark.parametrize(("path", "status"), [
    ("/v1/sys/seal-status", 200), ("/v1/sys/leader", 200), ("/v1/sys/healthz", 404), ("/v1/sys/rekeyx", 404),
    ("/v1/sys/mounts", 200), ("/v1/auth/token/lookup-self", 200),
])
def test_paths_that_only_look_restricted_are_served_in_the_root_namespace(double, path, status):
    got, echoed, body = _send(double, "GET", path, "root")
    assert (got, echoed) == (status, "root")
    assert UNAVAILABLE != json.loads(body)


def test_no_header_or_an_empty_one_is_the_root_namespace_and_is_not_echoed(double):
    for namespace in (None, ""):
        status, echoed, body = _send(double, "GET", "/v1/sys/health", namespace, token=None)
        assert (status, echoed, json.loads(body)["initialized"]) == (200, None, True)


def test_the_header_comes_back_on_errors_too(double):
    assert _send(double, "GET", "/v1/sys/mounts", "team")[:2] == (404, "team")
    assert _send(double, "GET", "/v1/sys/mounts", "root", token="bogus")[:2] == (403, "root")
    assert _send(double, "GET", "/v2/nothing", "root")[:2] == (404, "root")


@pytest.mark.parametrize("token", [None, "bogus", "root"])
def test_step_down_answers_204_whatever_the_token(double, token):
    assert _send(double, "PUT", "/v1/sys/step-down", token=token)[0] == 204
    status, _, body = _send(double, "GET", "/v1/sys/step-down", token=token)
    assert (status, json.loads(body)) == (405, {"errors": []})


def test_step_down_is_served_while_sealed(double):
    assert _send(double, "PUT", "/v1/sys/seal")[0] == 204
    try:
        assert _send(double, "PUT", "/v1/sys/step-down", token=None)[0] == 204
        assert _send(double, "GET", "/v1/sys/mounts")[0] == 503
    finally:
        double.secrets.sealed = False
