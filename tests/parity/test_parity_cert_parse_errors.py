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
from functools import partial

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
_SHA256 = hashes.SHA256()


def _ca_der(key=None, algorithm=_SHA256, cn: str = "Damaged CA") -> bytes:
    """A self-signed CA certificate (DER) with critical BasicConstraints; an EC P-256 key by default."""
    key = key or h.ec_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = h.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, algorithm))
    return cert.public_bytes(serialization.Encoding.DER)


def _rebuilt(der: bytes, extensions: bytes | None = None, signature: bytes | None = None,
             before_extensions: bytes = b"", last: bool = False, issuer: bytes | None = None,
             validity: bytes | None = None) -> str:
    """``der`` (from :func:`_ca_der`) as PEM with the ``[3]`` content replaced by ``extensions``,
    ``before_extensions`` put in front of it (unique identifiers; ``last``: with no ``[3]`` after
    them), the issuer name or the signature element replaced."""
    tbs, algorithm, sig = _elements(_content(der))
    fields = _elements(_content(tbs))
    if issuer is not None:
        fields[3] = issuer
    if validity is not None:
        fields[4] = validity
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
OID_SAN, OID_EKU, OID_CRLDP, OID_AIA, OID_CP = "2.5.29.17", "2.5.29.37", "2.5.29.31", "1.3.6.1.5.5.7.1.1", "2.5.29.32"
_SEQ = partial(_tlv, 0x30)
# processExtensions past the outermost element: (extension OID, its value, Go's text)
_INNER = {
    "bc-boolean-0xee": (OID_BC, _SEQ(_tlv(0x01, b"\xee")), "x509: invalid basic constraints"),
    "bc-pathlen-not-minimal": (OID_BC, _SEQ(_tlv(0x01, b"\xff") + _tlv(0x02, b"\x00\x01")),
                               "x509: invalid basic constraints"),
    "ku-padding-8": (OID_KU, _tlv(0x03, b"\x08\x80"), "x509: invalid key usage"),
    "eku-not-an-oid": (OID_EKU, _SEQ(_tlv(0x02, b"\x01")), "x509: invalid extended key usages"),
    "eku-oid-0x80": (OID_EKU, _SEQ(_tlv(0x06, b"\x2b\x80\x01")), "x509: invalid extended key usages"),
    "aki-keyid-cut": (OID_AKI, _SEQ(b"\x80\x05\x01\x02"), "x509: invalid authority key identifier"),
    "san-element-cut": (OID_SAN, _SEQ(b"\x82\x05a"), "x509: invalid subject alternative name"),
    "san-dns-not-ascii": (OID_SAN, _SEQ(_tlv(0x82, "é.example".encode())), "x509: SAN dNSName is malformed"),
    "san-email-not-ascii": (OID_SAN, _SEQ(_tlv(0x81, b"a\xff")), "x509: SAN rfc822Name is malformed"),
    "san-uri-not-ascii": (OID_SAN, _SEQ(_tlv(0x86, b"urn:\xff")),
                          "x509: SAN uniformResourceIdentifier is malformed"),
    "san-ip-3-bytes": (OID_SAN, _SEQ(_tlv(0x87, b"\x01\x02\x03")), "x509: cannot parse IP address of length 3"),
    "crldp-point-not-a-sequence": (OID_CRLDP, _SEQ(_tlv(0x02, b"\x01")), "x509: invalid CRL distribution point"),
    "crldp-uri-cut": (OID_CRLDP, _SEQ(_SEQ(_tlv(0xA0, _tlv(0xA0, b"\x86\x09http")))),
                      "x509: invalid CRL distribution point"),
    "aia-no-method": (OID_AIA, _SEQ(_SEQ(_tlv(0x02, b"\x01"))), "x509: invalid authority info access"),
    "aia-location-cut": (OID_AIA, _SEQ(_SEQ(_oid("1.3.6.1.5.5.7.48.1") + b"\x86\x09http")),
                         "x509: invalid authority info access"),
    "policies-no-oid": (OID_CP, _SEQ(_SEQ(_tlv(0x02, b"\x01"))), "x509: invalid certificate policies"),
    "policies-oid-open-arc": (OID_CP, _SEQ(_SEQ(_tlv(0x06, b"\x2a\x81"))), "x509: invalid certificate policies"),
}
for _case, (_dotted, _value, _text) in _INNER.items():
    _extra = () if _dotted == OID_BC else (_ext(OID_BC, BC_CA, True),)
    CASES[_case] = (_with_extensions(*_extra, _ext(_dotted, _value)), _text)

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


_CN = _oid("2.5.4.3")


@pytest.mark.parametrize(("issuer", "text"), [
    (_SEQ(_tlv(0x02, b"\x01")), "x509: invalid RDNSequence"),
    (_SEQ(_tlv(0x31, _tlv(0x02, b"\x01"))), "x509: invalid RDNSequence: invalid attribute"),
    (_SEQ(_tlv(0x31, _SEQ(_tlv(0x02, b"\x01") + _tlv(0x0C, b"a")))), "x509: invalid RDNSequence: invalid attribute type"),
    (_SEQ(_tlv(0x31, _SEQ(_CN))), "x509: invalid RDNSequence: invalid attribute value: invalid ASN.1 element"),
    (_SEQ(_tlv(0x31, _SEQ(_CN + b"\x0c\x05a"))), "x509: invalid RDNSequence: invalid attribute value: invalid ASN.1 element"),
    (_SEQ(_tlv(0x31, _SEQ(_CN + _tlv(0x13, b"a_b")))), "x509: invalid RDNSequence: invalid attribute value: "
                                                      "invalid PrintableString"),
    (_SEQ(_tlv(0x31, _SEQ(_CN + _tlv(0x0C, b"\xff")))), "x509: invalid RDNSequence: invalid attribute value: "
                                                       "invalid UTF-8 string"),
], ids=["rdn-not-a-set", "attribute-not-a-sequence", "attribute-type-not-an-oid", "attribute-value-missing",
        "attribute-value-cut", "printable-underscore", "utf8-invalid"])
def test_damaged_issuer_names(pki, ca_der, issuer, text):
    pem = _rebuilt(ca_der, issuer=issuer)
    pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": pem}).same().expect(
        400, errors=[f"error parsing certificate: {text}"])
    pki.send("POST", "/v1/{mount}/revoke", json={"certificate": pem}).same().expect(
        500, errors=[MULTI.format(f"certificate could not be parsed: {text}")])


_NOT_AFTER = _tlv(0x17, b"361125000000Z")


@pytest.mark.parametrize(("not_before", "text"), [
    (_tlv(0x17, b"261301000000Z"), "x509: malformed UTCTime"),
    (_tlv(0x17, b"260230000000Z"), "x509: malformed UTCTime"),
    (_tlv(0x17, b"261125240000Z"), "x509: malformed UTCTime"),
    (_tlv(0x17, b"261125000060Z"), "x509: malformed UTCTime"),
    (_tlv(0x17, b"261125000000+0000"), "x509: malformed UTCTime"),
    (_tlv(0x17, b"261125000000"), "x509: malformed UTCTime"),
    (_tlv(0x17, b"2611250000001Z"), "x509: malformed UTCTime"),
    (_tlv(0x18, b"20261125000000.10Z"), "x509: malformed GeneralizedTime"),
    (_tlv(0x18, b"20261125000000,1Z"), "x509: malformed GeneralizedTime"),
    (_tlv(0x18, b"20250229000000Z"), "x509: malformed GeneralizedTime"),
    (_tlv(0x18, b"202611250000Z"), "x509: malformed GeneralizedTime"),
    (_tlv(0x02, b"\x01"), "x509: unsupported time format"),
], ids=["month-13", "february-30", "hour-24", "second-60", "zero-offset", "no-zone", "13-digits",
        "fraction-trailing-zero", "fraction-comma", "not-a-leap-year", "no-seconds", "integer"])
def test_damaged_validity(pki, ca_der, not_before, text):
    pem = _rebuilt(ca_der, validity=_SEQ(not_before + _NOT_AFTER))
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


def _with_point(der: bytes, point: bytes, csr: bool = False) -> str:
    """``der`` (a certificate, or a CSR with ``csr``) as PEM with the subjectPublicKey bits replaced by
    ``point`` (the signature no longer matches; Go parses the key first)."""
    info, algorithm, sig = _elements(_content(der))
    fields = _elements(_content(info))
    at = 2 if csr else 6
    key_algorithm, _ = _elements(_content(fields[at]))
    fields[at] = _SEQ(key_algorithm + _tlv(0x03, b"\x00" + point))
    body = _SEQ(b"".join(fields)) + algorithm + sig
    kind = "CERTIFICATE REQUEST" if csr else "CERTIFICATE"
    return f"-----BEGIN {kind}-----\n" + base64.encodebytes(_SEQ(body)).decode() + f"-----END {kind}-----\n"


def _points(der: bytes, csr: bool = False) -> dict[str, bytes]:
    info = _elements(_content(_elements(_content(der))[0]))
    point = _content(_elements(_content(info[2 if csr else 6]))[1])[1:]
    return {"prefix-05": b"\x05" + point[1:], "compressed": b"\x02" + point[1:33], "short": point[:64],
            "long": point + b"\x00", "off-curve": point[:64] + bytes([point[64] ^ 1]), "empty": b"",
            "infinity": b"\x00"}


POINT_TEXTS = {"prefix-05": "ecdsa: invalid uncompressed public key", "compressed": "ecdsa: invalid uncompressed public key",
               "short": "invalid P256 point encoding", "long": "invalid P256 point encoding",
               "off-curve": "P256 point not on curve", "empty": "ecdsa: invalid uncompressed public key",
               "infinity": "ecdsa: invalid uncompressed public key"}


@pytest.mark.parametrize("case", sorted(POINT_TEXTS))
def test_ec_points_go_does_not_read(pki, ca_der, case):
    """Go reads only uncompressed points of the right length on the curve (``ecdsa.ParseUncompressedPublicKey``);
    cryptography also reads compressed ones."""
    pem = _with_point(ca_der, _points(ca_der)[case])
    text = POINT_TEXTS[case]
    pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": pem}).same().expect(
        400, errors=[f"error parsing certificate: {text}"])
    pki.send("POST", "/v1/{mount}/revoke", json={"certificate": pem}).same().expect(
        500, errors=[MULTI.format(f"certificate could not be parsed: {text}")])


@pytest.mark.parametrize("case", sorted(POINT_TEXTS))
def test_ec_points_go_does_not_read_in_a_csr(pki, case):
    key = h.ec_key()
    csr = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "c")]))
           .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER))
    pem = _with_point(csr, _points(csr, csr=True)[case], csr=True)
    pki.send("POST", "/v1/{mount}/sign-verbatim", json={"csr": pem}).same().expect(
        400, errors=[f"certificate request could not be parsed: {POINT_TEXTS[case]}"])


def test_a_key_go_cannot_sign_for(pki):
    """An Ed448 CA (Go parses its key as unknown): the template algorithm cannot be chosen."""
    from cryptography.hazmat.primitives.asymmetric import ed448

    der = _ca_der(ed448.Ed448PrivateKey.generate(), None, "Ed448 CA")
    pem = "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der).decode() + "-----END CERTIFICATE-----\n"
    pki.send("POST", "/v1/{mount}/root/sign-self-issued", json={"certificate": pem}).same().expect(
        500, errors=[MULTI.format("error determining template algorithm type: &{%!e(string=x509: only RSA, ECDSA, "
                                  "Ed25519, and ML-DSA keys supported)}")])
