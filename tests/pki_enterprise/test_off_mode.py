"""With ``SecretsService.enterprise`` off (the default) the double answers exactly as OpenBao 2.7.2.

Expected answers were captured from a real ``bao server -dev`` (2.7.2): every Enterprise path is a
404 ``unsupported path`` multierror (also for GET), and ``no_store_metadata``/``cert_metadata`` are
ignored with the framework warning.
"""

from __future__ import annotations

import pytest
import requests
from ent_helpers import ROOT, UNSUPPORTED, make_csr

from pytest_schedpki import Double

ENTERPRISE_PATHS = [
    "external-policy/issue", "external-policy/issue/pol", "external-policy/sign", "external-policy/sign/pol",
    "external-policy/sign-intermediate", "external-policy/sign-intermediate/x",
    "issuer/default/external-policy/issue", "issuer/default/external-policy/sign/p",
    "issuer/root-a/external-policy/sign-intermediate", "config/external-policy", "cert-metadata/11:22",
]


@pytest.fixture
def off(ent):
    """The session double switched off for this test (the reset of the next test switches it back)."""
    ent.double.secrets.enterprise = False
    return ent


@pytest.mark.parametrize("path", ENTERPRISE_PATHS)
def test_enterprise_paths_do_not_exist(off, path):
    for method in ("POST", "GET"):
        r = off.call(method, "pki/" + path, {"common_name": "a"} if method == "POST" else None)
        assert (r.status_code, r.json()) == (404, UNSUPPORTED), (method, path)
        assert r.headers["Content-Type"] == "application/json"


def test_list_cert_metadata_does_not_exist(off):
    r = off.list("pki/cert-metadata")
    assert (r.status_code, r.json()) == (404, UNSUPPORTED)


def test_role_ignores_no_store_metadata(off):
    r = off.post("pki/roles/r", {"allow_any_name": True, "key_type": "ec", "no_store_metadata": False})
    assert r.status_code == 200
    body = r.json()
    assert body["warnings"] == ["Endpoint ignored these unrecognized parameters: [no_store_metadata]"]
    assert len(body["data"]) == 52 and "no_store_metadata" not in body["data"]
    read = off.get("pki/roles/r").json()["data"]
    assert "no_store_metadata" not in read and len(read) == 52


def test_role_patch_ignores_no_store_metadata(off):
    r = off.call("PATCH", "pki/roles/meta", {"no_store_metadata": True},
                 headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200
    assert r.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [no_store_metadata]"]
    assert len(r.json()["data"]) == 52


def test_issue_and_sign_ignore_cert_metadata(off):
    r = off.post("pki/issue/nometa", {"common_name": "a.example.com", "cert_metadata": "aGk=", "zzz": 1})
    assert r.status_code == 200
    assert r.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [cert_metadata zzz]"]
    # a role that refuses metadata in Enterprise mode does not matter here: the value is not parsed
    csr, _ = make_csr()
    r = off.post("pki/sign/nometa", {"csr": csr, "cert_metadata": "%%%"})
    assert r.status_code == 200
    assert r.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [cert_metadata]"]
    assert off.backend.state.extra.get("cert_metadata", {}) == {}


def test_fresh_double_is_off_by_default_and_flag_switches_routes_at_request_time():
    double = Double().start()
    try:
        assert double.secrets.enterprise is False
        base = double.secrets_url + "/v1/"
        assert requests.post(base + "sys/mounts/pki", json={"type": "pki"}, headers=ROOT).status_code == 204
        r = requests.get(base + "pki/config/external-policy", headers=ROOT)
        assert (r.status_code, r.json()) == (404, UNSUPPORTED)
        double.secrets.enterprise = True  # after mounting: the routes appear on the next request
        r = requests.get(base + "pki/config/external-policy", headers=ROOT)
        assert r.status_code == 200 and r.json()["data"]["enabled"] is False
        double.secrets.enterprise = False
        r = requests.get(base + "pki/config/external-policy", headers=ROOT)
        assert (r.status_code, r.json()) == (404, UNSUPPORTED)
    finally:
        double.stop()


def test_flag_is_part_of_snapshots_and_kept_by_empty_restore():
    double = Double()
    double.secrets.enterprise = True
    snap = double.secrets.snapshot()
    double.secrets.enterprise = False
    double.secrets.restore(snap)
    assert double.secrets.enterprise is True
    double.secrets.restore(None)
    assert double.secrets.enterprise is True
