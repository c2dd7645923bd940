"""Contract: hvac 2.x revocation calls against the double (and, marked ``parity``, the same calls
against a real ``bao server -dev``): ``revoke_certificate``, ``read_crl`` (raw PEM text),
``rotate_crl``, ``read_crl_configuration`` / ``set_crl_configuration``, ``read_certificate`` of a
revoked serial, the revoked list through ``client.list``, ``revoke-with-key`` through
``client.write``, and the exceptions hvac raises for the refusals."""

from __future__ import annotations

import datetime
import itertools
import os
import sys

import hvac
import hvac.exceptions
import pytest
from cryptography import x509

_PARITY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY_DIR not in sys.path:
    sys.path.insert(0, _PARITY_DIR)

import parity_harness as h  # noqa: E402

_COUNTER = itertools.count(1)
MULTI = "1 error occurred:\n\t* {}\n\n"
CRL_DEFAULTS = {"allow_expired_cert_revocation": False, "auto_rebuild": False, "auto_rebuild_grace_period": "12h",
                "delta_rebuild_interval": "15m", "disable": False, "enable_delta": False, "expiry": "72h",
                "ocsp_disable": False, "ocsp_expiry": "12h"}




@pytest.fixture
def client(target):
    c = hvac.Client(url=target[1], token="root")
    yield c
    c.adapter.close()


@pytest.fixture
def mount(request, client):
    """A PKI mount unique to this test with an EC root and role ``web``; unmounted afterwards."""
    name = h.mount_name_for("hvac_" + request.node.name, next(_COUNTER))
    client.sys.enable_secrets_engine("pki", path=name)
    client.sys.tune_mount_configuration(path=name, max_lease_ttl="87600h")
    client.secrets.pki.generate_root("internal", "Revoke Root", extra_params={"ttl": "87600h", "key_type": "ec"},
                                     mount_point=name)
    client.secrets.pki.create_or_update_role(
        "web", extra_params={"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                             "ttl": "1h"}, mount_point=name)
    yield name
    client.sys.disable_secrets_engine(path=name)


def _issue(client, mount) -> dict:
    return client.secrets.pki.generate_certificate("web", "a.example.com", mount_point=mount)["data"]


def _crl(client, mount) -> x509.CertificateRevocationList:
    text = client.secrets.pki.read_crl(mount_point=mount)
    assert isinstance(text, str) and text.startswith("-----BEGIN X509 CRL-----") and not text.endswith("\n")
    return x509.load_pem_x509_crl(text.encode())


def _number(crl: x509.CertificateRevocationList) -> int:
    return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


def test_revoke_certificate_and_the_crl(client, mount):
    root = client.secrets.pki.read_ca_certificate(mount_point=mount)
    first = _crl(client, mount)
    assert len(first) == 0 and _number(first) == 1 and first.is_signature_valid(h.load_certificate(root).public_key())
    leaves = [_issue(client, mount) for _ in range(2)]
    revoked = client.secrets.pki.revoke_certificate(leaves[0]["serial_number"], mount_point=mount)
    assert isinstance(revoked, dict) and revoked["warnings"] is None
    assert sorted(revoked["data"]) == ["revocation_time", "revocation_time_rfc3339", "state"]
    assert revoked["data"]["state"] == "revoked" and isinstance(revoked["data"]["revocation_time"], int)
    again = client.secrets.pki.revoke_certificate(leaves[0]["serial_number"].replace(":", "-"), mount_point=mount)
    assert again["data"] == revoked["data"]

    crl = _crl(client, mount)
    assert _number(crl) == 3
    assert [e.serial_number for e in crl] == [int(leaves[0]["serial_number"].replace(":", ""), 16)]
    assert crl.issuer == h.load_certificate(root).subject

    read = client.secrets.pki.read_certificate(leaves[0]["serial_number"], mount_point=mount)["data"]
    assert read["revocation_time"] == revoked["data"]["revocation_time"]
    assert read["revocation_time_rfc3339"] == revoked["data"]["revocation_time_rfc3339"]
    assert read["issuer_id"] == client.secrets.pki.list_issuers(mount_point=mount)["data"]["keys"][0]
    valid = client.secrets.pki.read_certificate(leaves[1]["serial_number"], mount_point=mount)["data"]
    assert (valid["revocation_time"], valid["revocation_time_rfc3339"], "issuer_id" in valid) == (0, "", False)

    listed = client.list(f"{mount}/certs/revoked")
    assert listed["data"] == {"keys": [leaves[0]["serial_number"]]}


def test_rotate_crl(client, mount):
    leaf = _issue(client, mount)
    client.secrets.pki.revoke_certificate(leaf["serial_number"], mount_point=mount)
    before = _crl(client, mount)
    rotated = client.secrets.pki.rotate_crl(mount_point=mount)
    assert isinstance(rotated, dict) and rotated["data"] == {"success": True} and rotated["warnings"] is None
    after = _crl(client, mount)
    assert _number(after) == _number(before) + 2 and [e.serial_number for e in after] == [e.serial_number for e in before]


def test_crl_configuration(client, mount):
    assert client.secrets.pki.read_crl_configuration(mount_point=mount)["data"] == CRL_DEFAULTS
    written = client.secrets.pki.set_crl_configuration(expiry="48h", extra_params={"auto_rebuild": True},
                                                       mount_point=mount)
    assert isinstance(written, dict) and written["data"] == {**CRL_DEFAULTS, "expiry": "48h", "auto_rebuild": True}
    assert client.secrets.pki.read_crl_configuration(mount_point=mount)["data"] == written["data"]
    before = _crl(client, mount)
    leaf = _issue(client, mount)
    client.secrets.pki.revoke_certificate(leaf["serial_number"], mount_point=mount)
    assert _crl(client, mount) == before  # auto_rebuild: the revocation waits for the periodic rebuild
    client.secrets.pki.set_crl_configuration(disable=False, extra_params={"auto_rebuild": False}, mount_point=mount)
    crl = _crl(client, mount)
    assert len(crl) == 1 and crl.next_update_utc - crl.last_update_utc == datetime.timedelta(hours=48)
    with pytest.raises(hvac.exceptions.InvalidRequest) as bad:
        client.secrets.pki.set_crl_configuration(expiry="soon", mount_point=mount)
    assert bad.value.errors == ['given expiry could not be decoded: time: invalid duration "soon"']


def test_revoke_refusals_as_hvac_exceptions(client, mount):
    with pytest.raises(hvac.exceptions.InvalidRequest) as unknown:
        client.secrets.pki.revoke_certificate("01:02:03:04", mount_point=mount)
    assert unknown.value.errors == ["certificate with serial 01:02:03:04 not found."]
    root_serial = client.secrets.pki.read_certificate("ca", mount_point=mount)
    assert root_serial["data"]["revocation_time"] == 0
    issuer_id = client.secrets.pki.list_issuers(mount_point=mount)["data"]["keys"][0]
    serial = h.load_certificate(root_serial["data"]["certificate"]).serial_number
    colon = ":".join(f"{b:02x}" for b in serial.to_bytes((serial.bit_length() + 7) // 8, "big"))
    with pytest.raises(hvac.exceptions.InvalidRequest) as issuer:
        client.secrets.pki.revoke_certificate(colon, mount_point=mount)
    assert issuer.value.errors == [f"adding issuer (id: {issuer_id}) to its own CRL is not allowed"]
    with pytest.raises(hvac.exceptions.InternalServerError) as garbage:
        client.write(f"{mount}/revoke", certificate="not a cert")
    assert garbage.value.errors == [MULTI.format(
        "provided certificate data was too short; perhaps a path was passed to the API rather than the contents of "
        "a PEM file")]
    assert client.list(f"{mount}/certs/revoked") is None  # the 404 {"errors":[]} of an empty list


def test_revoke_with_key_through_write(client, mount):
    leaf = _issue(client, mount)
    other = _issue(client, mount)
    with pytest.raises(hvac.exceptions.InternalServerError) as wrong:
        client.write(f"{mount}/revoke-with-key", serial_number=leaf["serial_number"], private_key=other["private_key"])
    assert wrong.value.errors == [MULTI.format("provided private key does not match certificate's public key")]
    with pytest.raises(hvac.exceptions.InvalidRequest) as missing:
        client.write(f"{mount}/revoke-with-key", serial_number=leaf["serial_number"])
    assert missing.value.errors == ["Must have private key to revoke via the /revoke-with-key path."]
    done = client.write(f"{mount}/revoke-with-key", certificate=leaf["certificate"], private_key=leaf["private_key"])
    assert done["data"]["state"] == "revoked"
    assert client.list(f"{mount}/certs/revoked")["data"]["keys"] == [leaf["serial_number"]]
