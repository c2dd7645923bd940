"""Contract: the real hvac 2.x client against the double (and, marked ``parity``, the same calls against a
real ``bao server -dev``, so a difference shows up as one failing half of a pair).

Every test asserts what hvac returns (dicts, ``requests.Response`` for 204s, PEM strings, exception
types and their ``errors``), not only that nothing raised.
"""

from __future__ import annotations

import itertools
import os
import sys

import hvac
import hvac.exceptions
import pytest
from cryptography import x509

_PARITY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY_DIR not in sys.path:  # the real-server launcher and certificate helpers live there
    sys.path.insert(0, _PARITY_DIR)

import parity_harness as h  # noqa: E402

_COUNTER = itertools.count(1)
AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of certificates. "
               "Consider updating /config/urls or the newly generated issuer with this information.")




@pytest.fixture
def client(target):
    """``hvac.Client`` with the root token."""
    c = hvac.Client(url=target[1], token="root")
    yield c
    c.adapter.close()


@pytest.fixture
def mount(request, client):
    """A PKI mount unique to this test (tuned to 87600h), unmounted afterwards."""
    name = h.mount_name_for("hvac_" + request.node.name, next(_COUNTER))
    client.sys.enable_secrets_engine("pki", path=name)
    client.sys.tune_mount_configuration(path=name, max_lease_ttl="87600h")
    yield name
    client.sys.disable_secrets_engine(path=name)


@pytest.fixture
def root(client, mount):
    """An EC root ``Contract Root`` in ``mount``; returns generate_root's dict."""
    return client.secrets.pki.generate_root(
        "internal", "Contract Root", extra_params={"ttl": "87600h", "key_type": "ec", "issuer_name": "root"},
        mount_point=mount)


@pytest.fixture
def web(client, mount, root):
    """Role ``web`` (EC, subdomains of example.com, ttl 1h, max 24h)."""
    client.secrets.pki.create_or_update_role(
        "web", extra_params={"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                             "ttl": "1h", "max_ttl": "24h"}, mount_point=mount)
    return "web"


def test_mount_lifecycle(client, request):
    name = h.mount_name_for("hvac_mounts_" + request.node.name, next(_COUNTER))
    enabled = client.sys.enable_secrets_engine("pki", path=name, description="contract mount")
    assert enabled.status_code == 204 and enabled.content == b""
    try:
        mounts = client.sys.list_mounted_secrets_engines()
        assert mounts["data"][f"{name}/"]["type"] == "pki"
        assert mounts["data"][f"{name}/"]["description"] == "contract mount"
        with pytest.raises(hvac.exceptions.InvalidRequest) as dup:
            client.sys.enable_secrets_engine("pki", path=name)
        assert dup.value.errors == [f"path is already in use at {name}/"]
        tuned = client.sys.tune_mount_configuration(path=name, max_lease_ttl="87600h", default_lease_ttl="1h")
        assert tuned.status_code == 204
        conf = client.sys.read_mount_configuration(path=name)
        assert conf["data"] == {"default_lease_ttl": 3600, "max_lease_ttl": 315360000, "force_no_cache": False,
                                "description": "contract mount"}
        assert conf["max_lease_ttl"] == 315360000  # also at the top level
    finally:
        assert client.sys.disable_secrets_engine(path=name).status_code == 204
    assert f"{name}/" not in client.sys.list_mounted_secrets_engines()["data"]


def test_generate_root_and_ca_reads(client, mount, root):
    data = root["data"]
    assert root["warnings"] == [AIA_WARNING]
    assert sorted(data) == ["certificate", "expiration", "issuer_id", "issuer_name", "issuing_ca", "key_id", "key_name",
                            "serial_number"]
    cert = h.load_certificate(data["certificate"])
    assert h.cert_facts(cert)["subject"] == ["commonName=Contract Root"]
    assert data["issuer_name"] == "root" and data["expiration"] == int(cert.not_valid_after_utc.timestamp())

    ca_pem = client.secrets.pki.read_ca_certificate(mount_point=mount)
    assert isinstance(ca_pem, str) and ca_pem == data["certificate"]
    chain = client.secrets.pki.read_ca_certificate_chain(mount_point=mount)
    assert isinstance(chain, str) and h.pem_blocks(chain) == ["CERTIFICATE"] and h.load_certificate(chain) == cert

    issuers = client.secrets.pki.list_issuers(mount_point=mount)
    assert issuers["data"]["keys"] == [data["issuer_id"]]
    assert issuers["data"]["key_info"][data["issuer_id"]]["issuer_name"] == "root"
    issuer = client.secrets.pki.read_issuer(data["issuer_id"], mount_point=mount)
    assert issuer["data"]["issuer_name"] == "root" and issuer["data"]["certificate"] == data["certificate"] + "\n"
    assert client.secrets.pki.read_issuer("root", mount_point=mount)["data"]["issuer_id"] == data["issuer_id"]


def test_update_issuer(client, mount, root):
    updated = client.secrets.pki.update_issuer(
        root["data"]["issuer_id"], extra_params={"issuer_name": "renamed", "leaf_not_after_behavior": "truncate"},
        mount_point=mount)
    assert updated["data"]["issuer_name"] == "renamed" and updated["data"]["leaf_not_after_behavior"] == "truncate"
    assert client.secrets.pki.read_issuer("renamed", mount_point=mount)["data"]["leaf_not_after_behavior"] == "truncate"
    with pytest.raises(hvac.exceptions.InternalServerError) as missing:
        client.secrets.pki.read_issuer("root", mount_point=mount)
    assert missing.value.errors == ["1 error occurred:\n\t* unable to find PKI issuer for reference: root\n\n"]


def test_urls_and_crl_configuration(client, mount, root):
    urls = {"issuing_certificates": ["http://127.0.0.1:8200/v1/pki/ca"],
            "crl_distribution_points": ["http://127.0.0.1:8200/v1/pki/crl"]}
    written = client.secrets.pki.set_urls(urls, mount_point=mount)
    assert isinstance(written, dict) and written["data"]["issuing_certificates"] == urls["issuing_certificates"]
    read = client.secrets.pki.read_urls(mount_point=mount)
    assert read["data"] == {**urls, "delta_crl_distribution_points": [], "enable_templating": False, "ocsp_servers": []}
    crl = client.secrets.pki.read_crl_configuration(mount_point=mount)
    assert crl["data"] == {"allow_expired_cert_revocation": False, "auto_rebuild": False,
                           "auto_rebuild_grace_period": "12h", "delta_rebuild_interval": "15m", "disable": False,
                           "enable_delta": False, "expiry": "72h", "ocsp_disable": False, "ocsp_expiry": "12h"}


def test_roles(client, mount, root):
    created = client.secrets.pki.create_or_update_role(
        "web", extra_params={"allowed_domains": ["example.com"], "allow_subdomains": True, "ttl": "1h", "max_ttl": "24h",
                             "key_type": "ec"}, mount_point=mount)
    # hvac also sends the role name in the body: the server overrides it with the path value and says so
    assert isinstance(created, dict) and created["warnings"] == [
        "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [name]"]
    assert created["data"]["ttl"] == 3600 and created["data"]["max_ttl"] == 86400 and created["data"]["key_bits"] == 256
    role = client.secrets.pki.read_role("web", mount_point=mount)
    assert role["data"] == created["data"]
    client.secrets.pki.create_or_update_role("api", extra_params={"allow_any_name": True}, mount_point=mount)
    assert client.secrets.pki.list_roles(mount_point=mount)["data"]["keys"] == ["api", "web"]
    deleted = client.secrets.pki.delete_role("api", mount_point=mount)
    assert deleted.status_code == 204
    with pytest.raises(hvac.exceptions.InvalidPath) as gone:
        client.secrets.pki.read_role("api", mount_point=mount)
    assert gone.value.errors == [] and str(gone.value).startswith("None, on get ")
    assert client.read(f"{mount}/roles/api") is None
    client.secrets.pki.delete_role("web", mount_point=mount)
    with pytest.raises(hvac.exceptions.InvalidPath):
        client.secrets.pki.list_roles(mount_point=mount)


def test_generate_certificate_and_certificate_store(client, mount, web):
    issued = client.secrets.pki.generate_certificate(
        web, "a.example.com", extra_params={"alt_names": "b.example.com", "ttl": "30m"}, mount_point=mount)
    data = issued["data"]
    assert issued["warnings"] is None and data["private_key_type"] == "ec"
    facts = h.cert_facts(data["certificate"], data["issuing_ca"])
    assert facts["san"] == {"dns": ["a.example.com", "b.example.com"]} and facts["verifies_with_issuer"]
    assert facts["validity_seconds"] in (1830, 1829)
    assert h.key_matches(data["private_key"], data["certificate"])
    assert data["ca_chain"] == [client.secrets.pki.read_ca_certificate(mount_point=mount)]

    listed = client.secrets.pki.list_certificates(mount_point=mount)["data"]["keys"]
    assert data["serial_number"] in listed and len(listed) == 2  # the leaf and the root
    stored = client.secrets.pki.read_certificate(data["serial_number"], mount_point=mount)
    assert stored["data"]["certificate"] == data["certificate"] and stored["data"]["revocation_time"] == 0


def test_sign_certificate(client, mount, web):
    key = h.ec_key()
    csr = h.make_csr(key, "s.example.com", dns=["t.example.com"])
    signed = client.secrets.pki.sign_certificate(web, csr, "s.example.com", mount_point=mount)
    # hvac always sends common_name, and the role takes the CN from the CSR
    assert signed["warnings"] == ['the common_name field was provided but the role is set with "use_csr_common_name" '
                                  "set to true"]
    data = signed["data"]
    assert sorted(data) == ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
    cert = h.load_certificate(data["certificate"])
    assert cert.public_key() == key.public_key()
    assert h.cert_facts(cert)["san"] == {"dns": ["t.example.com", "s.example.com"]}


def test_intermediate_flow(client, mount, root, request):
    int_mount = h.mount_name_for("hvac_int_" + request.node.name, next(_COUNTER))
    client.sys.enable_secrets_engine("pki", path=int_mount)
    try:
        client.sys.tune_mount_configuration(path=int_mount, max_lease_ttl="43800h")
        generated = client.secrets.pki.generate_intermediate(
            "internal", "Contract Int", extra_params={"key_type": "ec"}, mount_point=int_mount)
        csr = generated["data"]["csr"]
        assert sorted(generated["data"]) == ["csr", "key_id"]
        assert x509.load_pem_x509_csr(csr.encode()).subject.rfc4514_string() == "CN=Contract Int"
        signed = client.secrets.pki.sign_intermediate(csr, "Contract Int", extra_params={"ttl": "43800h"}, mount_point=mount)
        int_pem = signed["data"]["certificate"]
        assert h.cert_facts(int_pem)["basic_constraints"] == {"ca": True, "path_length": None}
        result = client.secrets.pki.set_signed_intermediate(int_pem + "\n" + root["data"]["certificate"],
                                                            mount_point=int_mount)
        assert len(result["data"]["imported_issuers"]) == 2 and result["data"]["existing_issuers"] is None
        client.secrets.pki.create_or_update_role(
            "svc", extra_params={"allow_any_name": True, "key_type": "ec", "ttl": "1h"}, mount_point=int_mount)
        leaf = client.secrets.pki.generate_certificate("svc", "x.svc.example.com", mount_point=int_mount)
        assert leaf["data"]["ca_chain"] == [int_pem, root["data"]["certificate"]]
        assert h.cert_facts(leaf["data"]["certificate"], int_pem)["verifies_with_issuer"]
    finally:
        client.sys.disable_secrets_engine(path=int_mount)


def test_errors_map_to_hvac_exceptions(client, mount, web, target):
    with pytest.raises(hvac.exceptions.InvalidRequest) as bad:
        client.secrets.pki.generate_certificate("nope", "a.example.com", mount_point=mount)
    assert bad.value.errors == ["unknown role: nope"]
    assert str(bad.value) == f"unknown role: nope, on post {target[1]}/v1/{mount}/issue/nope"
    with pytest.raises(hvac.exceptions.InvalidRequest) as denied:
        client.secrets.pki.generate_certificate(web, "evil.org", mount_point=mount)
    assert denied.value.errors == ["common name evil.org not allowed by this role"]
    with pytest.raises(hvac.exceptions.InvalidPath) as missing:
        client.secrets.pki.read_certificate("01:02:03", mount_point=mount)
    assert missing.value.errors == []
    assert client.read(f"{mount}/nonexistent/path/x") is None  # Client.read swallows 404s
    with pytest.raises(hvac.exceptions.InvalidPath) as unsupported:
        client.adapter.get(f"/v1/{mount}/nonexistent/path/x")
    assert unsupported.value.errors == ["1 error occurred:\n\t* unsupported path\n\n"]
    bad_token = hvac.Client(url=target[1], token="not-a-token")
    with pytest.raises(hvac.exceptions.Forbidden) as forbidden:
        bad_token.secrets.pki.list_roles(mount_point=mount)
    assert forbidden.value.errors == ["permission denied"]
    assert bad_token.is_authenticated() is False and client.is_authenticated() is True


def test_strict_http_lists_with_get(target, mount, web):
    strict = hvac.Client(url=target[1], token="root", strict_http=True)
    assert strict.secrets.pki.list_roles(mount_point=mount)["data"]["keys"] == ["web"]
    assert strict.list(f"{mount}/roles")["data"]["keys"] == ["web"]
