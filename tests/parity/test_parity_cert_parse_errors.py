"""Parity: Go's ``x509.ParseCertificate`` texts for certificates damaged past the public key - the
unique identifiers, each extension's OID, critical flag and value, duplicate extensions, the
outermost element of the extensions Go interprets, the extensions Go refuses as critical, and the
signature - through ``root/sign-self-issued`` (400 ``error parsing certificate: ...``), ``revoke``
(500 ``certificate could not be parsed: ...``) and ``issuers/import/cert`` (400 ``Error parsing issuer
0: ...``). The DER is edited by hand; the damage
comes before any signature check."""

from __future__ import annotations

import base64
import datetime

import parity_harness as h
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

from pytest_schedpki.secrets.engines.pki.codecs.goder import der_tlv as _tlv

pytestmark = pytest.mark.parity

MULTI = "1 error occurred:\n\t* {}\n\n"


def _elements(body: bytes) -> list[bytes]:
    """The DER elements (whole TLVs) of a constructed element's content."""
    out, pos = [], 0
    while pos < len(body):
        first = body[pos + 1]
        start, length = pos + 2, first
        if first & 0x80:
            count = first & 0x7F
            length = int.from_bytes(body[start:start + count], "big")
            start += count
        out.append(body[pos:start + length])
        pos = start + length
    return out


def _content(element: bytes) -> bytes:
    first = element[1]
    return element[2 + (first & 0x7F if first & 0x80 else 0):]


OID_BC, OID_KU, OID_SKI, OID_AKI = "2.5.29.19", "2.5.29.15", "2.5.29.14", "2.5.29.35"


def _oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    body = bytes([40 * arcs[0] + arcs[1]])
    for arc in arcs[2:]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.insert(0, 0x80 | (arc & 0x7F))
            arc >>= 7
        body += bytes(chunk)
    return _tlv(0x06, body)


def _ext(dotted: str, value: bytes, critical: bool | None = None) -> bytes:
    flag = b"" if critical is None else _tlv(0x01, b"\xff" if critical else b"\x00")
    return _tlv(0x30, _oid(dotted) + flag + _tlv(0x04, value))


BC_CA = _tlv(0x30, _tlv(0x01, b"\xff"))
NOT_A_STRUCTURE = _tlv(0x02, b"\x01")


def _ca_der() -> bytes:
    key = h.ec_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Damaged CA")])
    now = h.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.DER)


def _rebuilt(der: bytes, extensions: bytes | None = None, signature: bytes | None = None,
             before_extensions: bytes = b"", last: bool = False) -> str:
    """``der`` (from :func:`_ca_der`) as PEM with the ``[3]`` content replaced by ``extensions``,
    ``before_extensions`` put in front of it (unique identifiers; ``last``: with no ``[3]`` after
    them), or the signature element replaced."""
    tbs, algorithm, sig = _elements(_content(der))
    fields = _elements(_content(tbs))
    head, old_extensions = fields[:-1], fields[-1]
    assert old_extensions[0] == 0xA3
    new_extensions = b"" if last else old_extensions if extensions is None else _tlv(0xA3, extensions)
    tbs = _tlv(0x30, b"".join(head) + before_extensions + new_extensions)
    body = tbs + algorithm + (sig if signature is None else signature)
    return ("-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(_tlv(0x30, body)).decode()
            + "-----END CERTIFICATE-----\n")


def _with_extensions(*extensions: bytes) -> bytes:
    return _tlv(0x30, b"".join(extensions))


CASES = {
    "not-a-sequence": (_with_extensions(NOT_A_STRUCTURE), "x509: malformed extension"),
    "oid-not-an-oid": (_with_extensions(_tlv(0x30, _tlv(0x04, b"\x01") + _tlv(0x04, b"\x02"))),
                       "x509: malformed extension OID field"),
    "oid-leading-0x80": (_with_extensions(_tlv(0x30, _tlv(0x06, b"\x55\x80\x1d") + _tlv(0x04, BC_CA))),
                         "x509: malformed extension OID field"),
    "critical-0x01": (_with_extensions(_tlv(0x30, _oid(OID_BC) + _tlv(0x01, b"\x01") + _tlv(0x04, BC_CA))),
                      "x509: malformed extension critical field"),
    "value-integer": (_with_extensions(_tlv(0x30, _oid(OID_BC) + _tlv(0x01, b"\xff") + NOT_A_STRUCTURE)),
                      "x509: malformed extension value field"),
    "duplicate": (_with_extensions(_ext(OID_BC, BC_CA, True), _ext(OID_BC, BC_CA, True)),
                  'x509: certificate contains duplicate extension with OID "2.5.29.19"'),
    "extensions-not-a-sequence": (NOT_A_STRUCTURE, "x509: malformed extensions"),
    "ski-critical": (_with_extensions(_ext(OID_BC, BC_CA, True), _ext(OID_SKI, _tlv(0x04, b"\x01" * 20), True)),
                     "x509: subject key identifier incorrectly marked critical"),
    "aki-critical": (_with_extensions(_ext(OID_BC, BC_CA, True),
                                      _ext(OID_AKI, _tlv(0x30, _tlv(0x80, b"\x01" * 20)), True)),
                     "x509: authority key identifier incorrectly marked critical"),
    "aia-critical": (_with_extensions(_ext(OID_BC, BC_CA, True),
                                      _ext("1.3.6.1.5.5.7.1.1", _tlv(0x30, b""), True)),
                     "x509: authority info access incorrectly marked critical"),
}
for _name, _dotted, _text in (("ku", OID_KU, "x509: invalid key usage"),
                              ("bc", OID_BC, "x509: invalid basic constraints"),
                              ("san", "2.5.29.17", "x509: invalid subject alternative names"),
                              ("nc", "2.5.29.30", "x509: invalid NameConstraints extension"),
                              ("crldp", "2.5.29.31", "x509: invalid CRL distribution points"),
                              ("aki", OID_AKI, "x509: invalid authority key identifier"),
                              ("eku", "2.5.29.37", "x509: invalid extended key usages"),
                              ("ski", OID_SKI, "x509: invalid subject key identifier"),
                              ("policies", "2.5.29.32", "x509: invalid certificate policies"),
                              ("aia", "1.3.6.1.5.5.7.1.1", "x509: invalid authority info access")):
    _extra = () if _dotted == OID_BC else (_ext(OID_BC, BC_CA, True),)
    CASES[f"{_name}-unreadable"] = (_with_extensions(*_extra, _ext(_dotted, NOT_A_STRUCTURE)), _text)


@pytest.fixture(scope="module")
def ca_der() -> bytes:
    return _ca_der()


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_extensions(pki, ca_der, case):
    extensions, text = CASES[case]
    pem = _rebuilt(ca_der, extensions=extensions)
    pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": pem}).same().expect(
        400, errors=[f"error parsing certificate: {text}"])
    pki.send("POST", "/v1/{mount}/revoke", json={"certificate": pem}).same().expect(
        500, errors=[MULTI.format(f"certificate could not be parsed: {text}")])


@pytest.mark.parametrize(("before", "signature", "text"), [
    (b"\x81\x05\x00", None, "x509: malformed issuerUniqueID"),
    (b"\x81\x01\x00\x82\x05\x00", None, "x509: malformed subjectUniqueID"),
    (b"", _tlv(0x04, b"\x00\x01"), "x509: malformed signature"),
    (b"", _tlv(0x03, b"\x08\x00"), "x509: malformed signature"),
], ids=["issuer-unique-id-cut", "subject-unique-id-cut", "signature-octets", "signature-padding-8"])
def test_damage_around_the_extensions(pki, ca_der, before, signature, text):
    pem = _rebuilt(ca_der, before_extensions=before, signature=signature, last=bool(before))
    pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": pem}).same().expect(
        400, errors=[f"error parsing certificate: {text}"])
    pki.send("POST", "/v1/{mount}/revoke", json={"certificate": pem}).same().expect(
        500, errors=[MULTI.format(f"certificate could not be parsed: {text}")])


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_extensions_on_import(pki, ca_der, case):
    """``issuers/import/cert`` (and ``config/ca``, ``intermediate/set-signed``, which share it):
    ``Error parsing issuer 0: <Go's text>`` followed by the block as PEM."""
    extensions, text = CASES[case]
    pem = _rebuilt(ca_der, extensions=extensions)

    def names_the_part(side, resp):
        assert resp.json()["errors"][0].startswith(f"Error parsing issuer 0: {text}\n-----BEGIN CERTIFICATE-----\n")

    pki.send("POST", "/v1/{mount}/issuers/import/cert", json={"pem_bundle": pem}).same().expect(400).check(
        names_the_part)
