"""The certificate store: cert/:serial (+ raw, raw/pem) and LIST certs."""

import datetime
from dataclasses import replace

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from pki_leaf_helpers import T0


@pytest.fixture
def issued(bao):
    """A leaf issued from role ``ec`` (its response data)."""
    return bao.post("pki/issue/ec", {"common_name": "a.example.com", "ttl": "1h"}).json()["data"]


@pytest.mark.parametrize("spelling", [lambda s: s, lambda s: s.replace(":", "-"), lambda s: s.upper(),
                                      lambda s: s.replace(":", "-").upper()])
def test_read_by_any_spelling_without_a_token(bao, issued, spelling):
    r = bao.get(f"pki/cert/{spelling(issued['serial_number'])}", token=None)
    assert r.status_code == 200
    assert r.json()["data"] == {"certificate": issued["certificate"], "revocation_time": 0, "revocation_time_rfc3339": ""}


def test_an_invalid_token_is_ignored_on_cert_reads(bao, issued):
    assert bao.get(f"pki/cert/{issued['serial_number']}", token="not-a-token").status_code == 200


def test_raw_der_and_pem(bao, issued):
    serial = issued["serial_number"]
    r = bao.get(f"pki/cert/{serial}/raw", token=None)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/pkix-cert"
    cert = x509.load_der_x509_certificate(r.content)
    assert cert.public_bytes(serialization.Encoding.PEM).decode().rstrip("\n") == issued["certificate"]
    r = bao.get(f"pki/cert/{serial.replace(':', '-')}/raw/pem", token=None)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/pem-certificate-chain"
    assert r.text == issued["certificate"]


def test_unknown_serials(bao):
    r = bao.get("pki/cert/01:02:03")
    assert (r.status_code, r.json()) == (404, {"errors": []})
    for suffix, content_type in (("raw", "application/pkix-cert"), ("raw/pem", "application/pem-certificate-chain")):
        r = bao.get(f"pki/cert/01:02:03/{suffix}")
        assert r.status_code == 204 and r.content == b"" and r.headers["Content-Type"] == content_type
    r = bao.get("pki/cert/zz")  # cert/* is a login path upstream: its errors are not wrapped
    assert (r.status_code, r.json()) == (404, {"errors": ["unsupported path"]})
    assert bao.call("DELETE", "pki/cert/01:02:03").status_code == 405


def test_revoked_record_shape(bao, issued):
    serial = issued["serial_number"]
    state = bao.state()
    when = T0 + datetime.timedelta(minutes=5, microseconds=866850)
    state.certs[serial] = replace(state.certs[serial], revocation_time=when)
    data = bao.get(f"pki/cert/{serial}").json()["data"]
    assert data == {"certificate": issued["certificate"], "issuer_id": state.default_issuer_id,
                    "revocation_time": int(when.timestamp()), "revocation_time_rfc3339": "2030-06-01T12:05:00.86685Z"}


def test_list_certs(bao, issued):
    second = bao.post("pki/issue/ec", {"common_name": "b.example.com", "ttl": "1h"}).json()["data"]
    bao.post("pki/issue/nostore", {"common_name": "n.example.com"})
    expected = sorted([issued["serial_number"], second["serial_number"]])
    r = bao.call("LIST", "pki/certs")
    assert r.status_code == 200 and r.json()["data"] == {"keys": expected}
    assert bao.get("pki/certs?list=true").json()["data"]["keys"] == expected
    assert bao.call("LIST", "pki/certs?limit=1").json()["data"]["keys"] == expected[:1]
    # `after` is compared with the stored hyphen form of the serials (upstream's storage ListPage)
    assert bao.call("LIST", f"pki/certs?after={expected[0].replace(':', '-')}").json()["data"]["keys"] == expected[1:]
    for after in (expected[1].replace(":", "-"), expected[1]):  # nothing after the last (colon form: see below)
        r = bao.call("LIST", f"pki/certs?after={after}")
        assert (r.status_code, r.json()) == (404, {"errors": []})
    assert bao.call("LIST", "pki/certs", token=None).status_code == 403
    assert bao.call("POST", "pki/certs", {}).status_code == 405


def test_a_colon_after_skips_every_serial_with_the_same_first_byte():
    # serials are stored as 1a-2b-..; a colon `after` compares greater than each of them sharing its
    # first byte ('-' < ':'), so those are skipped (upstream: ListPage over the hyphen keys)
    from pytest_schedpki.secrets.engines.pki.certs import list_page

    serials = ["ab:02", "ac:00", "ab:01", "0f:ff"]
    assert list_page(serials, "", 0) == ["0f:ff", "ab:01", "ab:02", "ac:00"]
    assert list_page(serials, "ab:01", 0) == ["ac:00"]
    assert list_page(serials, "ab-01", 0) == ["ab:02", "ac:00"]
    assert list_page(serials, "ab-01", 1) == ["ab:02"]
    assert list_page(serials, "ab", 0) == ["ab:01", "ab:02", "ac:00"]


def test_list_certs_empty_is_404(bao):
    r = bao.call("LIST", "pki_int/certs")
    assert (r.status_code, r.json()) == (404, {"errors": []})
