"""Parity: the OCSP responder (``GET <mount>/ocsp/<base64>``, ``POST <mount>/ocsp``) - good, revoked and
unknown answers parsed with ``cryptography.x509.ocsp`` (status, CertID, responder, signature with the
issuer's key, revocation time, this/next update against the request time), every refusal
(malformedRequest, unauthorized, internalError), ``config/crl`` ``ocsp_disable``/``ocsp_expiry``, the
``application/ocsp-request`` body on another path, and ``unified-ocsp`` (Enterprise only: absent)."""

from __future__ import annotations

import base64
import datetime
from urllib.parse import quote

import parity_harness as h
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509 import ocsp

pytestmark = pytest.mark.parity

OCSP_RESPONSE = "application/ocsp-response"
OCSP_REQUEST = {"Content-Type": "application/ocsp-request"}
MALFORMED = b"0\x03\n\x01\x01"
INTERNAL_ERROR = b"0\x03\n\x01\x02"
UNAUTHORIZED = b"0\x03\n\x01\x06"


def _issue(p: h.Pair, name: str, role: str = "web") -> None:
    """Issue a leaf on both sides; vars ``<name>`` (serial) and ``<name>_pem``."""
    ex = p.send("POST", f"/v1/{{mount}}/issue/{role}", json={"common_name": "o.example.com"}).same().expect(200)
    ex.capture(name, lambda j: j["data"]["serial_number"])
    ex.capture(f"{name}_pem", lambda j: j["data"]["certificate"])


def _request(cert: str, issuer: str, algorithm: hashes.HashAlgorithm | None = None, nonce: bool = False) -> bytes:
    builder = ocsp.OCSPRequestBuilder().add_certificate(
        h.load_certificate(cert), h.load_certificate(issuer), algorithm or hashes.SHA1())
    if nonce:
        builder = builder.add_extension(x509.OCSPNonce(b"0123456789abcdef"), critical=False)
    return builder.build().public_bytes(serialization.Encoding.DER)


def _by_hash(serial: int, issuer: str | None = None, algorithm: hashes.HashAlgorithm | None = None) -> bytes:
    """A request for ``serial`` under ``issuer``'s name and key hashes (made-up hashes without one)."""
    algorithm = algorithm or hashes.SHA1()
    if issuer is None:
        names = (b"\x01" * algorithm.digest_size, b"\x02" * algorithm.digest_size)
    else:
        names = h.ocsp_issuer_hashes(h.load_certificate(issuer), algorithm)
    return ocsp.OCSPRequestBuilder().add_certificate_by_hash(*names, serial, algorithm).build().public_bytes(
        serialization.Encoding.DER)


def _get(p: h.Pair, der, label: str = "GET ocsp") -> h.Exchange:
    """``GET <mount>/ocsp/<percent-encoded base64>`` (as openssl sends it: a literal ``//`` in the path
    would be redirected by Go's mux); ``der(side)`` gives the side's request."""
    return p.send("GET", lambda s: f"/v1/{p.mount}/ocsp/" + quote(base64.b64encode(der(s)).decode(), safe=""),
                  token=None, label=label)


def _post(p: h.Pair, der, label: str = "POST ocsp") -> h.Exchange:
    return p.send("POST", f"/v1/{p.mount}/ocsp", data=der, headers=OCSP_REQUEST, token=None, label=label)


def _verify(response: ocsp.OCSPResponse, issuer: x509.Certificate) -> None:
    """The response's signature checks out with ``issuer``'s public key (PKCS#1 v1.5 for RSA)."""
    key = issuer.public_key()
    algorithm = response.signature_hash_algorithm
    if isinstance(key, ec.EllipticCurvePublicKey):
        key.verify(response.signature, response.tbs_response_bytes, ec.ECDSA(algorithm))
    else:
        assert isinstance(key, rsa.RSAPublicKey)
        key.verify(response.signature, response.tbs_response_bytes, padding.PKCS1v15(), algorithm)


def _answer(status: str, serial_var: str | None = None, issuer_var: str = "root_pem", expiry: int | None = 12 * 3600,
            revoked_var: str | None = None, serial: int | None = None):
    """A check: a signed response with certificate status ``status`` for the side's ``serial_var`` (or
    ``serial``), signed by ``issuer_var`` (responder id by its name, CertID over its name and key),
    ``thisUpdate`` within a minute of the request, ``nextUpdate`` ``expiry`` seconds later (None: absent),
    and, for ``revoked_var``, the revocation time of that side's revoke answer and no reason."""
    def check(side: h.Side, resp) -> None:
        assert resp.status_code == 200, resp.status_code
        assert resp.headers.get("Content-Type") == OCSP_RESPONSE
        response = ocsp.load_der_ocsp_response(resp.content)
        assert response.response_status == ocsp.OCSPResponseStatus.SUCCESSFUL
        assert response.certificate_status.name == status
        want = serial if serial is not None else int(side.vars[serial_var].replace(":", ""), 16)
        assert response.serial_number == want
        issuer = h.load_certificate(side.vars[issuer_var])
        assert response.responder_name == issuer.subject and response.responder_key_hash is None
        assert (response.issuer_name_hash, response.issuer_key_hash) == h.ocsp_issuer_hashes(issuer,
                                                                                             response.hash_algorithm)
        _verify(response, issuer)
        assert response.certificates == [] and len(response.extensions) == 0
        now = h.utcnow()
        assert abs((response.this_update_utc - now).total_seconds()) < 60
        assert response.this_update_utc.microsecond == 0
        if expiry is None:
            assert response.next_update_utc is None
        else:
            assert response.next_update_utc - response.this_update_utc == datetime.timedelta(seconds=expiry)
        if revoked_var is not None:
            revoked_at = side.vars[revoked_var]["revocation_time"]
            assert response.revocation_time_utc == datetime.datetime.fromtimestamp(revoked_at, datetime.timezone.utc)
            assert response.revocation_reason is None
        else:
            assert response.revocation_time_utc is None
    return check


def _refused(status: int, body: bytes):
    def check(side: h.Side, resp) -> None:
        assert (resp.status_code, resp.headers.get("Content-Type"), resp.content) == (status, OCSP_RESPONSE, body)
    return check


def _var(name: str):
    return lambda side: side.vars[name]


# ------------------------------------------------------------------------------------------- good

@pytest.mark.parametrize("algorithm", [hashes.SHA1(), hashes.SHA256(), hashes.SHA384(), hashes.SHA512()],
                         ids=lambda a: a.name)
def test_good_by_get_and_post(web, algorithm):
    _issue(web, "leaf")
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"], algorithm)  # noqa: E731
    _get(web, der).same().check(_answer("GOOD", "leaf"))
    _post(web, der).same().check(_answer("GOOD", "leaf"))
    web.send("PUT", f"/v1/{web.mount}/ocsp", data=der, headers=OCSP_REQUEST, token=None).same().check(
        _answer("GOOD", "leaf"))


def test_nonce_is_ignored_and_a_token_changes_nothing(web):
    _issue(web, "leaf")
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"], nonce=True)  # noqa: E731
    web.send("GET", lambda s: f"/v1/{web.mount}/ocsp/" + quote(base64.b64encode(der(s)).decode(), safe=""),
             token="not-a-token").same().check(_answer("GOOD", "leaf"))
    _post(web, der).same().check(_answer("GOOD", "leaf"))


def test_unknown_serial_of_a_known_issuer_is_good(pki):
    _get(pki, lambda s: _by_hash(12345, s.vars["root_pem"])).same().check(_answer("GOOD", serial=12345))
    _get(pki, lambda s: _by_hash(0, s.vars["root_pem"])).same().check(_answer("GOOD", serial=0))


def test_percent_encoded_slashes_are_no_empty_segment(pki):
    """A base64 request holding ``//`` sent as ``%2F%2F`` reaches the handler whole (a regression: the
    double collapsed the decoded ``//`` and answered malformedRequest)."""
    def der(side):
        serial = next(n for n in range(1, 100_000) if "//" in base64.b64encode(_by_hash(n, side.vars["root_pem"])).decode())
        side.vars["slashed"] = serial
        return _by_hash(serial, side.vars["root_pem"])
    pki.send("GET", lambda s: f"/v1/{pki.mount}/ocsp/" + base64.b64encode(der(s)).decode().replace("/", "%2F"),
             token=None).same().check(lambda side, resp: _answer("GOOD", serial=side.vars["slashed"])(side, resp))


def test_the_issuer_itself_is_good(pki):
    _get(pki, lambda s: _request(s.vars["root_pem"], s.vars["root_pem"])).same().check(_answer("GOOD", "root_serial"))


def test_rsa_issuer_signs_with_its_revocation_signature_algorithm(pair):
    pair.enable_pki()
    pair.generate_root({"common_name": "RSA Root", "ttl": "87600h", "key_type": "rsa", "key_bits": 2048})
    pair.create_role("r", {"allow_any_name": True, "key_type": "ec", "ttl": "1h"})
    _issue(pair, "leaf", role="r")
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])  # noqa: E731
    _get(pair, der).same().check(_answer("GOOD", "leaf"))
    pair.send("PATCH", "/v1/{mount}/issuer/default", json={"revocation_signature_algorithm": "SHA512WithRSAPSS"},
              headers={"Content-Type": "application/merge-patch+json"}).same().expect(200)

    def pkcs1_sha512(side, resp):
        response = ocsp.load_der_ocsp_response(resp.content)
        assert response.signature_algorithm_oid == x509.SignatureAlgorithmOID.RSA_WITH_SHA512  # PSS downgraded
    _get(pair, der).same().check(_answer("GOOD", "leaf")).check(pkcs1_sha512)


# ---------------------------------------------------------------------------------------- revoked

def test_revoked_with_its_time_and_no_reason(web):
    _issue(web, "leaf")
    _issue(web, "other")
    ex = web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
    ex.capture("revoked", lambda j: j["data"])
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])  # noqa: E731
    _get(web, der).same().check(_answer("REVOKED", "leaf", revoked_var="revoked"))
    _post(web, der).same().check(_answer("REVOKED", "leaf", revoked_var="revoked"))
    _get(web, lambda s: _request(s.vars["other_pem"], s.vars["root_pem"], hashes.SHA256())).same().check(
        _answer("GOOD", "other"))


def test_revoked_serial_asked_under_another_issuer_is_unknown(web):
    """Only the issuer the revocation is attributed to is tried: another issuer's hashes get ``unknown``."""
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
    web.generate_root({"common_name": "Second Root", "ttl": "87600h", "key_type": "ec"},
                      kind="internal", prefix="second").same()
    _get(web, lambda s: _by_hash(int(s.vars["leaf"].replace(":", ""), 16), s.vars["second_pem"])).same().check(
        _answer("UNKNOWN", "leaf"))


# ---------------------------------------------------------------------------------------- unknown

def test_unknown_issuer_gets_unknown_signed_by_the_default_issuer(web):
    _issue(web, "leaf")
    _get(web, lambda s: _by_hash(int(s.vars["leaf"].replace(":", ""), 16))).same().check(_answer("UNKNOWN", "leaf"))
    key = h.ec_key()
    foreign = h.self_signed_ca(key, "Foreign CA")
    _post(web, lambda s: _request(s.vars["leaf_pem"], foreign, hashes.SHA256())).same().check(_answer("UNKNOWN", "leaf"))


def test_unknown_issuer_without_a_default_issuer_is_unauthorized(pair):
    pair.enable_pki()
    _get(pair, lambda s: _by_hash(7)).same().check(_refused(401, UNAUTHORIZED))


def test_issuer_without_ocsp_signing_is_unauthorized(web):
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/issuer/default", json={"usage": "read-only,issuing-certificates,crl-signing"}
             ).same().expect(200)
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])  # noqa: E731
    _get(web, der).same().check(_refused(401, UNAUTHORIZED))
    _get(web, lambda s: _by_hash(9)).same().check(_refused(401, UNAUTHORIZED))  # nor can the default sign unknown


def test_ed25519_issuer_is_an_internal_error(pair):
    pair.enable_pki()
    pair.generate_root({"common_name": "Ed Root", "ttl": "87600h", "key_type": "ed25519"})
    _get(pair, lambda s: _request(s.vars["root_pem"], s.vars["root_pem"])).same().check(_refused(500, INTERNAL_ERROR))


# ------------------------------------------------------------------------------------ config/crl

def test_ocsp_disable_is_unauthorized(web):
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/config/crl", json={"ocsp_disable": True}).same().expect(200)
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])  # noqa: E731
    _get(web, der).same().check(_refused(401, UNAUTHORIZED))
    _post(web, der).same().check(_refused(401, UNAUTHORIZED))
    _get(web, lambda s: b"junk").same().check(_refused(401, UNAUTHORIZED))  # before the request is read
    web.send("POST", "/v1/{mount}/config/crl", json={"ocsp_disable": False}).same().expect(200)
    _get(web, der).same().check(_answer("GOOD", "leaf"))


@pytest.mark.parametrize("value, seconds", [("0", None), ("90s", 90), ("2d", 2 * 86400), ("", None)])
def test_ocsp_expiry_sets_next_update(web, value, seconds):
    _issue(web, "leaf")
    web.send("POST", "/v1/{mount}/config/crl", json={"ocsp_expiry": value}).same().expect(200)
    _get(web, lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])).same().check(
        _answer("GOOD", "leaf", expiry=seconds))


def _tlv(tag: int, body: bytes) -> bytes:
    n = len(body)
    size = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + size + body


def _request_list(der: bytes) -> tuple[bytes, bytes]:
    """``(the Request element, what follows the request list in the TBSRequest)`` of a one-certificate request
    without version or requestor name."""
    tbs = der[der.index(b"\x30", 2):]  # OCSPRequest -> TBSRequest
    tbs_body = tbs[2:] if tbs[1] < 0x80 else tbs[2 + (tbs[1] & 0x7F):]
    list_len = tbs_body[1] if tbs_body[1] < 0x80 else int.from_bytes(tbs_body[2:2 + (tbs_body[1] & 0x7F)], "big")
    head = 2 if tbs_body[1] < 0x80 else 2 + (tbs_body[1] & 0x7F)
    return tbs_body[head:head + list_len], tbs_body[head + list_len:]


def test_a_request_for_two_certificates_is_answered_for_the_first(web):
    _issue(web, "one")
    _issue(web, "two")

    def der(side):
        first, _ = _request_list(_request(side.vars["one_pem"], side.vars["root_pem"]))
        second, _ = _request_list(_request(side.vars["two_pem"], side.vars["root_pem"]))
        return _tlv(0x30, _tlv(0x30, _tlv(0x30, first + second)))
    _post(web, der).same().check(_answer("GOOD", "one"))


def test_extensions_are_never_read(web):
    """Go reads neither request nor single-request extensions, nor the optional signature: a damaged
    nonce is no malformed request (a regression: the double parsed them with cryptography)."""
    _issue(web, "leaf")

    def der(side):
        request, extensions = _request_list(_request(side.vars["leaf_pem"], side.vars["root_pem"], nonce=True))
        broken = extensions.replace(bytes.fromhex("2b0601050507300102"), bytes.fromhex("2b06010505073001b5"))
        assert broken != extensions
        return _tlv(0x30, _tlv(0x30, _tlv(0x30, request) + broken))
    _get(web, der).same().check(_answer("GOOD", "leaf"))
    _post(web, der).same().check(_answer("GOOD", "leaf"))




@pytest.mark.parametrize("after", ["020101", "0201010500", "0500", "0400", "a000", "8000", "800100", "a0020500",
                                   "a1020400", "a003020101", "a00a3008300406022a03030100"])
def test_what_follows_the_tbs_request(web, after):
    """Go probes the element after the TBSRequest as the optional ``[0] EXPLICIT`` signature: a zero-length
    element ending the request, a zero-length ``[0]`` or a ``[0]`` that is no signature is malformed;
    anything else is ignored."""
    _issue(web, "leaf")

    def der(side):
        request, _ = _request_list(_request(side.vars["leaf_pem"], side.vars["root_pem"]))
        return _tlv(0x30, _tlv(0x30, _tlv(0x30, request)) + bytes.fromhex(after))
    ex = _post(web, der).same()
    if ex.real.status_code == 200:
        ex.check(_answer("GOOD", "leaf"))


def test_negative_serial_known_divergence(pki):
    """docs/divergences.md "OCSP request for a negative serial number": bao answers good for -5, the
    double 500 internalError (cryptography signs no negative serial). Both halves pinned."""
    def der(side):
        request = _by_hash(5, side.vars["root_pem"])
        at = request.rindex(b"\x02\x01\x05")
        return request[:at] + b"\x02\x01\xfb" + request[at + 3:]
    ex = _post(pki, der)
    _answer("GOOD", serial=-5)(pki.real, ex.real)
    if ex.double.status_code != 200:  # self-check mode runs a real server on both sides
        _refused(500, INTERNAL_ERROR)(pki.double, ex.double)


# -------------------------------------------------------------------------------------- malformed

@pytest.mark.parametrize("encoded", [
    "", "garbage", "!!!!", "A" * 2044, "A" * 2048,
], ids=["empty", "not-der", "not-base64", "2044-chars", "2048-chars"])
def test_malformed_get(pki, encoded):
    pki.send("GET", f"/v1/{pki.mount}/ocsp/{encoded}", token=None).same().check(_refused(400, MALFORMED))


def test_malformed_requests(web):
    _issue(web, "leaf")
    good = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])  # noqa: E731
    _get(web, lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"], hashes.SHA224()), "SHA-224").same().check(
        _refused(400, MALFORMED))
    _post(web, lambda s: good(s) + b"\x00", "trailing byte").same().check(_refused(400, MALFORMED))
    _post(web, lambda s: good(s)[:-3], "cut short").same().check(_refused(400, MALFORMED))
    _post(web, b"", "empty body").same().check(_refused(400, MALFORMED))
    _post(web, b"\x30" * 2048, "2048 bytes").same().check(_refused(400, MALFORMED))
    web.send("GET", lambda s: f"/v1/{web.mount}/ocsp/" + base64.urlsafe_b64encode(b"\xfb\xff" + good(s)).decode(),
             token=None, label="url-safe alphabet").same().check(_refused(400, MALFORMED))
    # a POST that is not application/ocsp-request: decoded as JSON/form by the HTTP layer, then no body
    web.send("POST", f"/v1/{web.mount}/ocsp", json={"req": "x"}, token=None).same().check(_refused(400, MALFORMED))
    web.send("POST", f"/v1/{web.mount}/ocsp", data="a=b", token=None,
             headers={"Content-Type": "application/x-www-form-urlencoded"}).same().check(_refused(400, MALFORMED))
    web.send("POST", f"/v1/{web.mount}/ocsp", data=good, token=None).same().expect(400)  # binary read as JSON


def test_media_type_parameters_and_case(web):
    _issue(web, "leaf")
    der = lambda s: _request(s.vars["leaf_pem"], s.vars["root_pem"])  # noqa: E731
    for content_type in ("Application/OCSP-Request", "application/ocsp-request; charset=binary"):
        web.send("POST", f"/v1/{web.mount}/ocsp", data=der, headers={"Content-Type": content_type}, token=None,
                 label=content_type).same().check(_answer("GOOD", "leaf"))


# ------------------------------------------------------------------------------- operations, paths

def test_operations_and_absent_paths(pki):
    pki.send("GET", f"/v1/{pki.mount}/ocsp", token=None).same().expect(405, errors=["unsupported operation"])
    pki.send("POST", f"/v1/{pki.mount}/ocsp/x", data=b"x", headers=OCSP_REQUEST).same().expect(405)
    pki.send("DELETE", f"/v1/{pki.mount}/ocsp/x").same().expect(405)
    pki.send("GET", f"/v1/{pki.mount}/unified-ocsp/MAo=", token=None).same().expect(403, errors=["permission denied"])
    pki.send("GET", f"/v1/{pki.mount}/unified-ocsp/MAo=").same().expect(404)
    pki.send("POST", f"/v1/{pki.mount}/unified-ocsp", data=b"0", headers=OCSP_REQUEST).same().expect(404)


def test_ocsp_request_body_on_another_path_carries_no_data(pki):
    """OpenBao hands an ``application/ocsp-request`` body to any handler undecoded: a role written so
    gets no field from it (here: the defaults, as an empty write)."""
    body = b'{"allow_any_name": true, "ttl": "1h"}'
    pki.send("POST", "/v1/{mount}/roles/raw", data=body, headers=OCSP_REQUEST).same().expect(200)
    pki.send("GET", "/v1/{mount}/roles/raw").same().expect(200, data={"allow_any_name": False, "ttl": 0})
