"""The comparison itself must be able to fail: fabricated response pairs that differ in one
deterministic detail are reported, and pairs that differ only in random parts are not.
(No server needed.)"""

from __future__ import annotations

import datetime
import json

import parity_harness as h
import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID


def response(status=200, body=None, content_type="application/json", raw: bytes | None = None):
    r = requests.Response()
    r.status_code = status
    r.headers["Content-Type"] = content_type
    r.headers["Cache-Control"] = "no-store"
    r._content = raw if raw is not None else (json.dumps(body).encode() + b"\n" if body is not None else b"")
    return r


class _Pair:
    real = h.Side("bao", "http://unused")
    double = h.Side("double", "http://unused")

    def handler_errors(self):
        return []


def exchange(real, double):
    return h.Exchange(_Pair(), "test", real, double)


def envelope(data, warnings=None, **extra):
    return {"request_id": extra.pop("request_id", "0b0c1d2e-0000-1111-2222-333344445555"), "lease_id": "",
            "renewable": False, "lease_duration": 0, "data": data, "wrap_info": None, "warnings": warnings,
            "auth": None, **extra}


def cert(cn="a.example.com", days=1, key=None, sans=("a.example.com",)):
    key = key or h.ec_key()
    now = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
         .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=days)))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(s) for s in sans]), critical=False)
    return b.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode().strip()


def test_random_parts_compare_equal():
    a = envelope({"issuer_id": "11111111-2222-3333-4444-555555555555", "serial_number": "7a:26:69:dc:01:02:03:04:05",
                  "expiration": 1900000000, "certificate": cert(), "key_info": {
                      "11111111-2222-3333-4444-555555555555": {"issuer_name": "a"},
                      "99999999-2222-3333-4444-555555555555": {"issuer_name": "b"}}})
    b = envelope({"issuer_id": "abcdefab-2222-3333-4444-555555555555", "serial_number": "01:02:03:04:05:06:07:08:09",
                  "expiration": 1900000500, "certificate": cert(), "key_info": {
                      "00000000-2222-3333-4444-555555555555": {"issuer_name": "b"},
                      "ffffffff-2222-3333-4444-555555555555": {"issuer_name": "a"}}},
                 request_id="99999999-0000-1111-2222-333344445555")
    exchange(response(body=a), response(body=b)).same(cert_keys=("certificate",))


@pytest.mark.parametrize("mutate", [
    lambda b: b.update(status=201),
    lambda b: b["body"]["data"].update(ttl=3601),
    lambda b: b["body"]["data"].update(extra=True),
    lambda b: b["body"].update(warnings=["something"]),
    lambda b: b["body"]["data"].update(name="other"),
    lambda b: b["body"]["data"].update(ttl="3600"),
    lambda b: b.update(content_type="application/json; charset=utf-8"),
    lambda b: b["body"].pop("auth"),
], ids=["status", "value", "extra-key", "warnings", "string", "type", "content-type", "envelope-key"])
def test_deterministic_differences_are_reported(mutate):
    base = {"status": 200, "content_type": "application/json", "body": envelope({"ttl": 3600, "name": "web"})}
    other = json.loads(json.dumps(base))
    mutate(other)
    with pytest.raises(h.ParityError):
        exchange(response(base["status"], base["body"], base["content_type"]),
                 response(other["status"], other["body"], other["content_type"])).same()


def test_error_texts_are_normalised_but_compared():
    t1 = {"errors": ["cannot satisfy request, as TTL would result in notAfter of 2099-01-01T00:00:00Z that is beyond "
                     "the expiration of the CA certificate at 2036-11-18T04:58:27Z"]}
    t2 = {"errors": ["cannot satisfy request, as TTL would result in notAfter of 2099-01-01T00:00:00Z that is beyond "
                     "the expiration of the CA certificate at 2036-11-18T05:00:01.123456Z"]}
    exchange(response(400, t1), response(400, t2)).same()
    with pytest.raises(h.ParityError):
        exchange(response(400, t1), response(400, {"errors": [t1["errors"][0] + "."]})).same()


@pytest.mark.parametrize("change", ["cn", "days", "sans", "pem-newline"])
def test_certificate_facts_differences_are_reported(change):
    same_key = h.ec_key()
    a = cert(key=same_key)
    b = {"cn": lambda: cert(cn="b.example.com", key=same_key), "days": lambda: cert(days=2, key=same_key),
         "sans": lambda: cert(sans=("a.example.com", "x.example.com"), key=same_key),
         "pem-newline": lambda: cert(key=same_key) + "\n"}[change]()
    with pytest.raises(h.ParityError):
        exchange(response(body=envelope({"certificate": a})), response(body=envelope({"certificate": b}))).same(
            cert_keys=("certificate",))


def test_raw_bodies_compare_pem_shape():
    pem = cert()
    exchange(response(raw=pem.encode(), content_type="application/pem-certificate-chain"),
             response(raw=cert().encode(), content_type="application/pem-certificate-chain")).same()
    with pytest.raises(h.ParityError):
        exchange(response(raw=pem.encode(), content_type="application/pem-certificate-chain"),
                 response(raw=(pem + "\n").encode(), content_type="application/pem-certificate-chain")).same()


def test_expect_checks_both_sides():
    ok = response(400, {"errors": ["unknown role: nope"]})
    bad = response(400, {"errors": ["unknown role: other"]})
    exchange(ok, ok).expect(400, errors=["unknown role: nope"])
    with pytest.raises(h.ParityError, match="EXPECTATION"):
        exchange(ok, bad).expect(400, errors=["unknown role: nope"])
    with pytest.raises(h.ParityError, match="UPSTREAM EXPECTATION"):
        exchange(bad, ok).expect(400, errors=["unknown role: nope"])


def test_private_key_format_classifier():
    key = h.ec_key()
    rsa = h.rsa_key(2048)
    pem = serialization.Encoding.PEM
    none = serialization.NoEncryption()
    assert h.private_key_format(key.private_bytes(pem, serialization.PrivateFormat.TraditionalOpenSSL, none).decode())["format"] == "sec1"
    assert h.private_key_format(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, none).decode())["format"] == "pkcs8"
    assert h.private_key_format(rsa.private_bytes(pem, serialization.PrivateFormat.TraditionalOpenSSL, none).decode())["format"] == "pkcs1"
    import base64

    der = rsa.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, none)
    assert h.private_key_format(base64.b64encode(der).decode()) == {"encoding": "der-base64", "format": "pkcs8", "pem": []}


def test_mount_names_are_unique_and_valid():
    names = {h.mount_name_for("test_parity_issue[ec-der-pkcs8]", n) for n in range(3)}
    assert len(names) == 3 and all(len(n) <= 48 and "/" not in n and "[" not in n for n in names)
