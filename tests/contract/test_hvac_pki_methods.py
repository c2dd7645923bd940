"""Contract: every method of hvac's ``client.secrets.pki`` (``hvac.api.secrets_engines.pki.Pki``) is
called by this suite against the double and, marked ``parity``, against a real ``bao server -dev``.

``test_every_pki_method_is_exercised`` lists the class with ``dir()`` and fails when hvac grows a
method that no contract test calls. This module covers the methods the other contract modules do
not: ``submit_ca_information``, ``delete_issuer``, ``delete_root``, ``tidy`` and ``revoke_issuer``.
"""

from __future__ import annotations

import ast
import datetime
import glob
import os
import time

import hvac
import hvac.exceptions
import pytest
import requests
from contract_helpers import h, unique_mount
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID
from hvac.api.secrets_engines.pki import Pki

HERE = os.path.dirname(os.path.abspath(__file__))
MULTI = "1 error occurred:\n\t* {}\n\n"
AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of certificates. "
               "Consider updating /config/urls or the newly generated issuer with this information.")
DELETE_ROOT_WARNING = ("DELETE /root deletes all keys and issuers; prefer the new DELETE /key/:key_ref and DELETE "
                       "/issuer/:issuer_ref for finer granularity, unless removal of all keys and issuers is desired.")
TIDY_STARTED = ("Tidy operation successfully started. Any information from the operation will be printed to "
                "OpenBao's server logs.")
TIDY_NOTHING = ("Manual tidy requested but no tidy operations were set. Enable at least one tidy operation to be run "
                "(tidy_cert_store / tidy_revoked_certs / tidy_invalid_certs / tidy_revoked_cert_issuer_associations / "
                "tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_acme).")


def pki_methods() -> set[str]:
    """The public methods of hvac's PKI class."""
    return {name for name in dir(Pki) if not name.startswith("_") and callable(getattr(Pki, name))}


def called_pki_methods() -> set[str]:
    """Names ``X`` of every ``<anything>.secrets.pki.X(...)`` call in tests/contract/*.py."""
    called: set[str] = set()
    for path in glob.glob(os.path.join(HERE, "*.py")):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Attribute) and owner.attr == "pki" and isinstance(owner.value, ast.Attribute) \
                        and owner.value.attr == "secrets":
                    called.add(node.func.attr)
    return called


def test_every_pki_method_is_exercised():
    methods = pki_methods()
    assert len(methods) >= 31  # hvac 2.4: 31 methods
    assert sorted(methods - called_pki_methods()) == []


@pytest.fixture
def client(target):
    c = hvac.Client(url=target[1], token="root")
    yield c
    c.adapter.close()


@pytest.fixture
def mount(request, client):
    """A PKI mount unique to this test (tuned to 87600h), unmounted afterwards."""
    name = unique_mount("hvac_m_", request)
    client.sys.enable_secrets_engine("pki", path=name)
    client.sys.tune_mount_configuration(path=name, max_lease_ttl="87600h")
    yield name
    client.sys.disable_secrets_engine(path=name)


@pytest.fixture
def root(client, mount):
    """An EC root named ``root`` in ``mount``; returns generate_root's ``data``."""
    return client.secrets.pki.generate_root(
        "internal", "Methods Root", extra_params={"ttl": "87600h", "key_type": "ec", "issuer_name": "root"},
        mount_point=mount)["data"]


def _local_ca(cn: str) -> tuple[str, str]:
    """A self-signed EC CA made here: ``(certificate PEM, PKCS#8 key PEM)``."""
    key = h.ec_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = h.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1)).not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem


def test_submit_ca_information(client, mount):
    cert_pem, key_pem = _local_ca("Imported CA")
    imported = client.secrets.pki.submit_ca_information(key_pem + cert_pem, mount_point=mount)
    assert isinstance(imported, dict) and imported["warnings"] == [AIA_WARNING]
    data = imported["data"]
    assert (data["existing_issuers"], data["existing_keys"]) == (None, None)
    assert len(data["imported_issuers"]) == 1 and len(data["imported_keys"]) == 1
    assert data["mapping"] == {data["imported_issuers"][0]: data["imported_keys"][0]}
    # the imported CA is now the mount's default issuer
    assert client.secrets.pki.read_ca_certificate(mount_point=mount) == cert_pem.rstrip("\n")
    issuer = client.secrets.pki.read_issuer("default", mount_point=mount)["data"]
    assert issuer["issuer_id"] == data["imported_issuers"][0] and issuer["key_id"] == data["imported_keys"][0]

    again = client.secrets.pki.submit_ca_information(key_pem + cert_pem, mount_point=mount)["data"]
    assert again["existing_issuers"] == data["imported_issuers"] and again["existing_keys"] == data["imported_keys"]
    assert (again["imported_issuers"], again["imported_keys"]) == (None, None)
    assert client.secrets.pki.list_issuers(mount_point=mount)["data"]["keys"] == data["imported_issuers"]

    with pytest.raises(hvac.exceptions.InvalidRequest) as bad:
        client.secrets.pki.submit_ca_information("not a bundle", mount_point=mount)
    assert bad.value.errors == ["provided data for import was too short; perhaps a path was passed to the API rather "
                                 "than the contents of a PEM file"]


def test_delete_issuer(client, mount, root):
    second = client.write_data(f"{mount}/issuers/generate/root/internal",
                               data={"common_name": "Second Root", "key_type": "ec", "issuer_name": "second"})
    second_id = second["data"]["issuer_id"]
    # deleting a non-default issuer: 200 with an empty envelope
    deleted = client.secrets.pki.delete_issuer("second", mount_point=mount)
    assert isinstance(deleted, dict) and (deleted["data"], deleted["warnings"]) == (None, None)
    with pytest.raises(hvac.exceptions.InternalServerError) as gone:
        client.secrets.pki.read_issuer(second_id, mount_point=mount)
    assert gone.value.errors == [MULTI.format(f"unable to find PKI issuer for reference: {second_id}")]
    # deleting the default issuer: 200 with a warning, so a dict
    deleted = client.secrets.pki.delete_issuer(root["issuer_id"], mount_point=mount)
    assert isinstance(deleted, dict) and deleted["data"] is None
    assert deleted["warnings"] == [
        f"Deleted issuer {root['issuer_id']} (via issuer_ref {root['issuer_id']}); this was configured as the default "
        "issuer. Operations without an explicit issuer will not work until a new default is configured."]
    with pytest.raises(hvac.exceptions.InvalidPath) as empty:
        client.secrets.pki.list_issuers(mount_point=mount)
    assert empty.value.errors == []
    # the key stays behind
    keys = client.list(f"{mount}/keys")["data"]
    assert keys["keys"] == sorted([root["key_id"], second["data"]["key_id"]])
    assert keys["key_info"][root["key_id"]] == {"is_default": True, "key_name": ""}


def test_delete_root(client, mount, root):
    client.secrets.pki.create_or_update_role("web", extra_params={"allow_any_name": True, "key_type": "ec"},
                                             mount_point=mount)
    deleted = client.secrets.pki.delete_root(mount_point=mount)
    assert isinstance(deleted, dict) and deleted["data"] is None and deleted["warnings"] == [DELETE_ROOT_WARNING]
    with pytest.raises(hvac.exceptions.InvalidPath):
        client.secrets.pki.list_issuers(mount_point=mount)
    assert client.list(f"{mount}/keys") is None
    with pytest.raises(hvac.exceptions.InternalServerError) as no_ca:
        client.secrets.pki.generate_certificate("web", "a.example.com", mount_point=mount)
    assert no_ca.value.errors == [MULTI.format(
        "could not fetch the CA certificate (was one set?): no default issuer currently configured")]
    # roles survive; deleting again is harmless
    assert client.secrets.pki.read_role("web", mount_point=mount)["data"]["allow_any_name"] is True
    assert client.secrets.pki.delete_root(mount_point=mount)["warnings"] == [DELETE_ROOT_WARNING]


def test_tidy(client, mount, root):
    nothing = client.secrets.pki.tidy(mount_point=mount)
    assert isinstance(nothing, requests.Response) and nothing.status_code == 202  # hvac: not 200, so a Response
    assert nothing.json()["data"] is None and nothing.json()["warnings"] == [TIDY_NOTHING]
    started = client.secrets.pki.tidy(extra_params={"tidy_cert_store": True, "safety_buffer": "1h"}, mount_point=mount)
    assert started.status_code == 202 and started.json()["warnings"] == [TIDY_STARTED]
    # OpenBao records a started tidy from the goroutine that runs it: on a busy machine a read right
    # after the 202 can still see the status before it ("Inactive", or the parameters of no tidy yet);
    # wait (bounded) for this tidy's own status to show
    deadline = time.monotonic() + 10
    status = client.read(f"{mount}/tidy-status")["data"]
    while (status["state"] == "Inactive" or status.get("tidy_cert_store") is not True) and time.monotonic() < deadline:
        time.sleep(0.05)
        status = client.read(f"{mount}/tidy-status")["data"]
    assert status["tidy_cert_store"] is True and status["safety_buffer"] == 3600
    assert status["state"] in ("Running", "Finished")


def test_revoke_issuer(client, mount, root):
    client.secrets.pki.create_or_update_role("web", extra_params={"allow_any_name": True, "key_type": "ec"},
                                             mount_point=mount)
    revoked = client.secrets.pki.revoke_issuer("root", mount_point=mount)
    data = revoked["data"]
    assert data["issuer_id"] == root["issuer_id"] and data["revoked"] is True
    assert isinstance(data["revocation_time"], int) and data["revocation_time_rfc3339"].endswith("Z")
    assert data["usage"] == "crl-signing,ocsp-signing,read-only"
    assert client.secrets.pki.revoke_issuer("root", mount_point=mount)["data"]["revocation_time"] == \
        data["revocation_time"]
    with pytest.raises(hvac.exceptions.InternalServerError) as refused:
        client.secrets.pki.generate_certificate("web", "a.example.com", mount_point=mount)
    assert refused.value.errors == [MULTI.format(
        f"error fetching CA certificate: error while attempting to use issuer {root['issuer_id']}: requested usage "
        f"issuing-certificates for issuer [id:{root['issuer_id']} / name:root] but only had usage "
        "crl-signing,ocsp-signing,read-only")]
    with pytest.raises(hvac.exceptions.InternalServerError) as unknown:
        client.secrets.pki.revoke_issuer("nope", mount_point=mount)
    assert unknown.value.errors == [MULTI.format("unable to find PKI issuer for reference: nope")]
