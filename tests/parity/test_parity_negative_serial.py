"""Parity: certificates with a negative serial number, which Go (1.23+) refuses while parsing and
cryptography still loads. Found by the robustness fuzzer as a 500 ``OverflowError`` on
``revoke-with-key``; every path that parses a submitted certificate answers as OpenBao 2.7.2."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

pytestmark = pytest.mark.parity

NEGATIVE = "x509: negative serial number"


@pytest.fixture(scope="module")
def negative():
    """``(certificate PEM, key PEM)``: a self-signed CA whose DER serial was patched to 0xff1234 (negative)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "negative serial")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(0x7F1234).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    der = bytearray(cert.public_bytes(serialization.Encoding.DER))
    at = der.find(bytes([0x02, 0x03, 0x7F, 0x12, 0x34]))
    assert at > 0
    der[at + 2] = 0xFF
    pem = "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(bytes(der)).decode() + "-----END CERTIFICATE-----\n"
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return pem, key_pem


def test_revoke_and_revoke_with_key_refuse_it_as_unparseable(pki, negative):
    pem, key_pem = negative
    for path, body in (("revoke", {"certificate": pem}), ("revoke-with-key", {"certificate": pem, "private_key": key_pem})):
        pki.send("POST", "/v1/{mount}/" + path, json=body).same().expect(
            500, errors=[f"1 error occurred:\n\t* certificate could not be parsed: {NEGATIVE}\n\n"])


def test_imports_refuse_it(pair, negative):
    pem, key_pem = negative
    pair.enable_pki()
    for path in ("issuers/import/bundle", "config/ca"):
        pair.send("POST", "/v1/{mount}/" + path, json={"pem_bundle": pem + key_pem}).same().expect(
            400, errors=[f"Error parsing issuer 0: {NEGATIVE}\n{pem}"])


def test_sign_self_issued_refuses_it(pki, negative):
    pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": negative[0]}).same().expect(
        400, errors=[f"error parsing certificate: {NEGATIVE}"])

