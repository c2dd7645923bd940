"""``config/external-policy`` (Vault Enterprise CIEPS configuration), emulated, and the answer of an
unconfigured mount."""

from __future__ import annotations

import datetime

import pytest
from ent_helpers import TinyCA, simple_policy

from pytest_schedpki.secrets.engines.pki.enterprise.external_policy import NOT_ENABLED, set_external_policy

DEFAULTS = {
    "enabled": False, "entity_jmespath": "", "external_service_last_updated": "0001-01-01T00:00:00Z",
    "external_service_url": "", "external_service_validated": False, "group_jmespath": "",
    "last_successful_request": "", "timeout": 15_000_000_000, "trusted_ca": "",
    "trusted_leaf_certificate_bundle": "", "vault_client_cert_bundle_no_keys": "",
}


def test_defaults(ent):
    r = ent.get("pki/config/external-policy")
    assert r.status_code == 200 and r.json()["data"] == DEFAULTS


def test_write_answers_the_configuration_and_merges(ent):
    r = ent.post("pki/config/external-policy", {"enabled": True, "external_service_url": "http://127.0.0.1:9/x",
                                                "timeout": "2s", "entity_jmespath": "@"})
    assert r.status_code == 200
    data = r.json()["data"]
    assert data["enabled"] is True and data["timeout"] == 2_000_000_000 and data["entity_jmespath"] == "@"
    updated = datetime.datetime.fromisoformat(data["external_service_last_updated"].replace("Z", "+00:00"))
    assert abs((datetime.datetime.now(datetime.timezone.utc) - updated).total_seconds()) < 60
    assert ent.get("pki/config/external-policy").json()["data"] == data
    # unsent fields keep their values
    r = ent.post("pki/config/external-policy", {"enabled": False})
    assert r.json()["data"]["external_service_url"] == "http://127.0.0.1:9/x"
    assert r.json()["data"]["timeout"] == 2_000_000_000 and r.json()["data"]["enabled"] is False


@pytest.mark.parametrize("body, error", [
    ({"enabled": True}, "external_service_url is required when enabled is true"),
    ({"external_service_url": "http://policy.example.com/x"},
     "external_service_url must use the https:// scheme: http://policy.example.com/x"),
    ({"external_service_url": "ftp://127.0.0.1/x"}, "invalid external_service_url: ftp://127.0.0.1/x"),
    ({"external_service_url": "https://policy.example.com/x"},
     "one of trusted_ca or trusted_leaf_certificate_bundle must be specified"),
    ({"external_service_url": "https://policy.example.com/x", "trusted_ca": "junk"},
     "failed to parse trusted_ca: no certificates found"),
    ({"vault_client_cert_bundle": "junk"}, "failed to parse vault_client_cert_bundle: no certificates found"),
])
def test_write_refusals(ent, body, error):
    r = ent.post("pki/config/external-policy", body)
    assert (r.status_code, r.json()) == (400, {"errors": [error]})
    assert ent.get("pki/config/external-policy").json()["data"] == DEFAULTS


def test_https_configuration_with_pinned_leaf_and_client_bundle(ent):
    ca = TinyCA()
    leaf_pem, _ = ca.leaf("policy.example.com")
    ca_leaf_refused = ent.post("pki/config/external-policy", {
        "external_service_url": "https://policy.example.com/x", "trusted_leaf_certificate_bundle": ca.cert_pem})
    assert ca_leaf_refused.status_code == 400
    assert ca_leaf_refused.json() == {"errors": ["trusted_leaf_certificate_bundle must hold only non-CA leaf certificates"]}
    client_pem, client_key_pem = ca.leaf("vault-client")
    r = ent.post("pki/config/external-policy", {
        "enabled": True, "external_service_url": "https://policy.example.com/x",
        "trusted_leaf_certificate_bundle": leaf_pem, "vault_client_cert_bundle": client_key_pem + client_pem})
    assert r.status_code == 200
    data = r.json()["data"]
    assert data["trusted_leaf_certificate_bundle"] == leaf_pem
    assert data["vault_client_cert_bundle_no_keys"] == client_pem.strip()
    assert "PRIVATE KEY" not in r.text


def test_config_wrong_field_type(ent):
    r = ent.post("pki/config/external-policy", {"timeout": "soon"})
    assert r.status_code == 400
    assert r.json()["errors"][0].startswith('Field validation failed: error converting input for field "timeout"')


@pytest.mark.parametrize("path", ["external-policy/issue", "external-policy/sign/p",
                                  "issuer/root-b/external-policy/sign-intermediate"])
def test_unconfigured_mount_refuses(ent, path):
    r = ent.post("pki/" + path, {"common_name": "a.example.com"})
    assert (r.status_code, r.json()) == (400, {"errors": [NOT_ENABLED]})


def test_disabled_configuration_refuses_even_with_a_callable(ent):
    set_external_policy(ent.backend, simple_policy())
    ent.post("pki/config/external-policy", {"enabled": False})
    r = ent.post("pki/external-policy/issue", {"common_name": "a.example.com", "key_type": "ec"})
    assert (r.status_code, r.json()) == (400, {"errors": [NOT_ENABLED]})


def test_set_external_policy_api(ent):
    set_external_policy(ent.backend, "http://127.0.0.1:1/evaluate", timeout=3)
    data = ent.get("pki/config/external-policy").json()["data"]
    assert data["enabled"] is True and data["external_service_url"] == "http://127.0.0.1:1/evaluate"
    assert data["timeout"] == 3_000_000_000
    set_external_policy(ent.backend, None)
    assert ent.get("pki/config/external-policy").json()["data"]["enabled"] is False
    with pytest.raises(TypeError):
        set_external_policy(ent.backend, 42)
