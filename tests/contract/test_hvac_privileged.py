"""Contract: hvac 2.x's privileged PKI calls - ``sign_intermediate``, ``sign_self_issued``,
``sign_verbatim`` - against the double and (marked ``parity``) the same calls against a real
``bao server -dev``. Each test asserts what hvac hands back: the response dict, its warnings, the
certificates inside, and the exception type with its ``errors`` for refusals.
"""

from __future__ import annotations

import datetime
import itertools
import os
import sys

import hvac
import hvac.exceptions
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

_PARITY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY_DIR not in sys.path:  # the real-server launcher and certificate helpers live there
    sys.path.insert(0, _PARITY_DIR)

import parity_harness as h  # noqa: E402

_COUNTER = itertools.count(1)
AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of certificates. "
               "Consider updating /config/urls or the newly generated issuer with this information.")
BC_IGNORED = "specified CSR contained a Basic Constraints extension that was ignored during issuance"




@pytest.fixture
def client(target):
    c = hvac.Client(url=target[1], token="root")
    yield c
    c.adapter.close()


@pytest.fixture
def mount(request, client):
    """A PKI mount unique to this test (tuned to 87600h) holding an EC root ``Privileged Root``."""
    name = h.mount_name_for("hvac_priv_" + request.node.name, next(_COUNTER))
    client.sys.enable_secrets_engine("pki", path=name)
    client.sys.tune_mount_configuration(path=name, max_lease_ttl="87600h")
    client.secrets.pki.generate_root("internal", "Privileged Root",
                                     extra_params={"ttl": "87600h", "key_type": "ec", "issuer_name": "root"},
                                     mount_point=name)
    yield name
    client.sys.disable_secrets_engine(path=name)


def _self_signed(key, cn: str, ca: bool = True) -> str:
    now = h.utcnow()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
               .not_valid_after(now + datetime.timedelta(days=30))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def test_sign_intermediate(client, mount):
    key = h.ec_key()
    csr = h.make_csr(key, "Contract Intermediate", org="Contract Org")
    signed = client.secrets.pki.sign_intermediate(
        csr, "Contract Intermediate", extra_params={"ttl": "8760h", "max_path_length": 0,
                                                    "permitted_dns_domains": ["example.com"]}, mount_point=mount)
    assert signed["warnings"] == [AIA_WARNING, "Max path length of the signed certificate is zero. This certificate "
                                  "cannot be used to issue intermediate CA certificates."]
    data = signed["data"]
    assert sorted(data) == ["ca_chain", "certificate", "expiration", "issuing_ca", "serial_number"]
    root_pem = client.secrets.pki.read_ca_certificate(mount_point=mount)
    assert data["issuing_ca"] == root_pem and data["ca_chain"] == [data["certificate"], root_pem]
    facts = h.cert_facts(data["certificate"], data["issuing_ca"])
    assert facts["subject"] == ["commonName=Contract Intermediate"] and facts["verifies_with_issuer"]
    assert facts["basic_constraints"] == {"ca": True, "path_length": 0}
    assert facts["name_constraints"] == {"permitted": ["example.com"], "excluded": []}
    assert facts["validity_seconds"] in (31536030, 31536029)
    assert h.load_certificate(data["certificate"]).public_key() == key.public_key()
    # the signed intermediate is in the mount's store
    assert data["serial_number"] in client.secrets.pki.list_certificates(mount_point=mount)["data"]["keys"]
    with pytest.raises(hvac.exceptions.InvalidRequest) as bad:
        client.secrets.pki.sign_intermediate("", "x", mount_point=mount)
    assert bad.value.errors == ['"csr" is empty']


def test_sign_self_issued(client, mount):
    key = h.ec_key()
    submitted = _self_signed(key, "Contract Self CA")
    signed = client.secrets.pki.sign_self_issued(submitted, mount_point=mount)
    assert signed["warnings"] is None and sorted(signed["data"]) == ["certificate", "issuing_ca"]
    root_pem = client.secrets.pki.read_ca_certificate(mount_point=mount)
    assert signed["data"]["issuing_ca"] == root_pem
    new, old = h.load_certificate(signed["data"]["certificate"]), h.load_certificate(submitted)
    assert (new.subject, new.serial_number, new.public_key()) == (old.subject, old.serial_number, old.public_key())
    facts = h.cert_facts(new, root_pem)
    assert facts["issuer"] == ["commonName=Privileged Root"] and facts["verifies_with_issuer"]
    assert facts["aki_is_issuer_ski"] is True
    with pytest.raises(hvac.exceptions.InvalidRequest) as not_ca:
        client.secrets.pki.sign_self_issued(_self_signed(key, "Leaf", ca=False), mount_point=mount)
    assert not_ca.value.errors == ["given certificate is not a CA certificate"]
    with pytest.raises(hvac.exceptions.InvalidRequest) as garbage:
        client.secrets.pki.sign_self_issued("not a certificate", mount_point=mount)
    assert garbage.value.errors == ["certificate could not be PEM-decoded"]


def test_sign_verbatim(client, mount):
    key = h.ec_key()
    csr = h.make_csr(key, "verbatim.evil.org", dns=["anything.invalid"], ca=True)
    signed = client.secrets.pki.sign_verbatim(csr, mount_point=mount)
    assert signed["warnings"] == [BC_IGNORED]
    data = signed["data"]
    assert sorted(data) == ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
    facts = h.cert_facts(data["certificate"], data["issuing_ca"])
    assert facts["subject"] == ["commonName=verbatim.evil.org"] and facts["san"] == {"dns": ["anything.invalid"]}
    assert "basic_constraints" not in facts and "ext_key_usage" not in facts
    assert facts["key_usage"] == ["digital_signature", "key_encipherment", "key_agreement"]
    assert facts["validity_seconds"] in (2764830, 2764829) and facts["verifies_with_issuer"]

    client.secrets.pki.create_or_update_role("short", extra_params={"ttl": "1h", "max_ttl": "2h"}, mount_point=mount)
    with_role = client.secrets.pki.sign_verbatim(csr, name="short", extra_params={"ttl": "3h", "key_usage": []},
                                                 mount_point=mount)
    assert with_role["warnings"] == ['TTL "3h0m0s" is longer than permitted maxTTL "2h0m0s", so maxTTL is being used',
                                     BC_IGNORED]
    facts = h.cert_facts(with_role["data"]["certificate"])
    assert facts["validity_seconds"] in (7230, 7229) and "key_usage" not in facts
    with pytest.raises(hvac.exceptions.InvalidRequest) as unknown:
        client.secrets.pki.sign_verbatim(csr, name="nope", mount_point=mount)
    assert unknown.value.errors == ["unknown role: nope"]
