"""The OCSP responder on the double's clock (a ManualClock here; freezegun too): thisUpdate, nextUpdate
and the revocation time move with it; the plugin's ``schedpki`` fixture and its seed (the README's
example); a freeze does not break later responses. What bao does is pinned in
tests/parity/test_parity_ocsp.py."""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp
from freezegun import freeze_time
from revoke_helpers import HOUR, T0, cert_of

from pytest_schedpki.secrets.engines.pki.codecs.ocsp import MALFORMED, UNAUTHORIZED

PKI_SEED = Path(__file__).resolve().parents[2] / "fixtures" / "pki.yaml"  # the README's seed file


def _query(pki, leaf_pem: str, post: bool = False) -> requests.Response:
    der = ocsp.OCSPRequestBuilder().add_certificate(cert_of(leaf_pem), cert_of(pki.root["certificate"]),
                                                    hashes.SHA1()).build().public_bytes(serialization.Encoding.DER)
    if post:
        return requests.post(f"{pki.double.secrets_url}/v1/{pki.name}/ocsp", data=der, timeout=30,
                             headers={"Content-Type": "application/ocsp-request"})
    return requests.get(f"{pki.double.secrets_url}/v1/{pki.name}/ocsp/" + quote(base64.b64encode(der).decode(), safe=""),
                        timeout=30)


def _response(resp: requests.Response) -> ocsp.OCSPResponse:
    assert (resp.status_code, resp.headers["Content-Type"]) == (200, "application/ocsp-response"), resp.content
    return ocsp.load_der_ocsp_response(resp.content)


def test_updates_and_revocation_time_follow_the_manual_clock(pki, clock):
    leaf = pki.issue()
    good = _response(_query(pki, leaf["certificate"]))
    assert good.certificate_status == ocsp.OCSPCertStatus.GOOD
    start = T0.replace(microsecond=0)  # OCSP times are whole seconds
    assert (good.this_update_utc, good.next_update_utc) == (start, start + datetime.timedelta(seconds=12 * HOUR))
    clock.advance(90)
    pki.revoke(serial_number=leaf["serial_number"])
    clock.advance(3600)
    revoked = _response(_query(pki, leaf["certificate"], post=True))
    assert revoked.certificate_status == ocsp.OCSPCertStatus.REVOKED
    assert revoked.revocation_time_utc == start + datetime.timedelta(seconds=90)
    assert revoked.this_update_utc == start + datetime.timedelta(seconds=3690)
    pki.ok("POST", "config/crl", {"ocsp_expiry": "0"})
    assert _response(_query(pki, leaf["certificate"])).next_update_utc is None


def test_refusals_are_the_fixed_unsuccessful_responses(pki):
    leaf = pki.issue()
    bad = pki.call("GET", "ocsp/bm90IGRlcg==", token=None)
    assert (bad.status_code, bad.headers["Content-Type"], bad.content) == (400, "application/ocsp-response", MALFORMED)
    pki.ok("POST", "config/crl", {"ocsp_disable": True})
    off = _query(pki, leaf["certificate"])
    assert (off.status_code, off.content) == (401, UNAUTHORIZED)
    # a JSON POST is decoded by the HTTP layer: the handler gets no request
    as_json = pki.call("POST", "ocsp", {"req": "x"}, token=None)
    assert (as_json.status_code, as_json.content) == (401, UNAUTHORIZED)  # ocsp_disable is checked first


@pytest.mark.schedpki(seed=str(PKI_SEED))
def test_ocsp_with_the_plugin_under_freezegun(schedpki):
    """The README's example: the intermediate of the seed answers for its leaf; a response signed inside
    a freeze does not break the next one outside it (cryptography binds its clock class once)."""
    url, root = schedpki.secrets.url, {"X-Vault-Token": schedpki.secrets.token}
    with freeze_time("2031-05-01T12:00:00Z"):
        issued = requests.post(f"{url}/v1/pki_int/issue/web", headers=root, timeout=10,
                               json={"common_name": "api.example.com"}).json()["data"]
        der = ocsp.OCSPRequestBuilder().add_certificate(
            cert_of(issued["certificate"]), cert_of(issued["issuing_ca"]), hashes.SHA256()).build().public_bytes(
            serialization.Encoding.DER)
        good = _response(requests.get(f"{url}/v1/pki_int/ocsp/" + quote(base64.b64encode(der).decode(), safe=""),
                                       timeout=10))
        assert good.certificate_status == ocsp.OCSPCertStatus.GOOD
        assert good.this_update_utc == datetime.datetime(2031, 5, 1, 12, tzinfo=datetime.timezone.utc)
    requests.post(f"{url}/v1/pki_int/revoke", headers=root, json={"serial_number": issued["serial_number"]},
                  timeout=10).raise_for_status()
    revoked = _response(requests.post(f"{url}/v1/pki_int/ocsp", data=der, timeout=10,
                                      headers={"Content-Type": "application/ocsp-request"}))
    assert revoked.certificate_status == ocsp.OCSPCertStatus.REVOKED
