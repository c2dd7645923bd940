"""Factories (state without HTTP, API-shaped results) and certificate inspection helpers."""

import datetime

import pytest
import requests
from cryptography import x509

from pytest_schedpki.scheduler.model import SchedulerError

ROOT = {"X-Vault-Token": "root"}


def test_scheduler_factories_return_api_shapes_and_are_readable_over_http(schedpki):
    method = schedpki.factories.scheduler.oidc_auth_method("okta", TokenLocality="global", Config={"OIDCScopes": ["groups"]})
    assert method["Name"] == "okta" and method["TokenLocality"] == "global" and method["MaxTokenTTL"] == "1h0m0s"
    assert method["Config"]["OIDCClientSecret"] == "redacted" and method["Config"]["OIDCScopes"] == ["groups"]
    over_http = requests.get(f"{schedpki.scheduler.url}/v1/acl/auth-method/okta", headers=schedpki.scheduler.headers()).json()
    assert over_http == method
    jwt = schedpki.factories.scheduler.jwt_auth_method()
    assert jwt["Type"] == "JWT" and jwt["Config"]["JWKSURL"].startswith("https://")
    client = schedpki.factories.scheduler.token(type="client", name="ci")
    r = requests.get(f"{schedpki.scheduler.url}/v1/acl/auth-method/okta", headers={"X-Nomad-Token": client.SecretID})
    assert (r.status_code, r.text) == (403, "Permission denied")


def test_scheduler_factory_errors_are_the_api_errors(schedpki):
    with pytest.raises(SchedulerError) as exc:
        schedpki.factories.scheduler.oidc_auth_method("bad_name")
    assert exc.value.status == 400
    assert str(exc.value.text) == "auth method 0 invalid: 1 error occurred:\n\t* invalid name 'bad_name'\n\n"


def test_secrets_factories_build_a_working_pki(schedpki):
    f = schedpki.factories.secrets
    root = f.root_issuer("pki_f", issuer_name="root-f")
    assert root["issuer_name"] == "root-f"
    role = f.role("web", mount="pki_f", max_ttl="72h")
    assert role["max_ttl"] == 259200 and role["allowed_domains"] == ["example.com"]
    auth = f.token(policies={"issuer": 'path "pki_f/issue/*" { capabilities = ["update"] }'})
    assert auth["policies"] == ["default", "issuer"]
    r = requests.post(f"{schedpki.secrets.url}/v1/pki_f/issue/web", headers={"X-Vault-Token": auth["client_token"]},
                      json={"common_name": "a.example.com", "ttl": "1h"})
    assert r.status_code == 200, r.text
    denied = requests.get(f"{schedpki.secrets.url}/v1/pki_f/roles/web", headers={"X-Vault-Token": auth["client_token"]})
    assert denied.status_code == 403
    record = schedpki.certs.assert_issued(common_name="a.example.com", role="web", mount="pki_f", issuer="root-f")
    assert record.serial_number == r.json()["data"]["serial_number"]
    assert record.private_key is not None and record.sans == ["a.example.com"] and not record.revoked
    chain = schedpki.certs.verify_chain(record)
    assert [c.subject.rfc4514_string() for c in chain] == ["CN=a.example.com", "CN=schedpki Test Root CA"]


def test_assert_issued_reports_near_misses(schedpki):
    schedpki.factories.secrets.root_issuer()
    schedpki.factories.secrets.role("web")
    requests.post(f"{schedpki.secrets.url}/v1/pki/issue/web", headers=ROOT, json={"common_name": "a.example.com"})
    with pytest.raises(AssertionError) as exc:
        schedpki.certs.assert_issued(common_name="b.example.com", role="web")
    text = str(exc.value)
    assert text.startswith("expected a certificate matching {'common_name': 'b.example.com', 'role': 'web'}; found 0")
    assert "near miss: pki/" in text and "cn='a.example.com'" in text
    with pytest.raises(TypeError):
        schedpki.certs.find(colour="red")


def test_verify_chain_at_a_time_outside_validity_fails(schedpki):
    schedpki.factories.secrets.root_issuer()
    schedpki.factories.secrets.role("web")
    requests.post(f"{schedpki.secrets.url}/v1/pki/issue/web", headers=ROOT, json={"common_name": "a.example.com", "ttl": "1h"})
    record = schedpki.certs.assert_issued(common_name="a.example.com")
    later = record.certificate.not_valid_after_utc + datetime.timedelta(seconds=1)
    with pytest.raises(AssertionError, match="is not valid at"):
        schedpki.certs.verify_chain(record, at=later)


def test_crl_is_parsed(schedpki):
    schedpki.factories.secrets.root_issuer()
    crl = schedpki.certs.crl("pki")
    assert isinstance(crl, x509.CertificateRevocationList) and len(crl) == 0
    assert crl.issuer.rfc4514_string() == "CN=schedpki Test Root CA"
