"""The certificate view pages from the cert store and decodes only what it shows: the first page of a
large store decodes at most a page's worth of certificates (counted, not timed; the timing is
benchmarks/ui_certs.py), every page walk visits each certificate once, filters hold."""

import pytest
import requests

from pytest_schedpki.double import Double
from pytest_schedpki.ui import cert_views

from .certfill import fill
from .conftest import setup_pki

COUNT = 600


@pytest.fixture(scope="module")
def double():
    d = Double(rsa_key_pool=0)
    d.start()
    setup_pki(d.secrets_url)
    fill(d, COUNT)
    yield d
    d.stop()


def _page(d: Double, **params) -> dict:
    r = requests.get(f"{d.secrets_url}/_schedpki/ui/api/certs", params={"mount": "pki", **params})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("sort", ["newest", "serial"])
def test_the_first_page_decodes_no_more_than_a_page(double, sort):
    cert_views._cache.clear()
    before = cert_views.decodes
    page = _page(double, sort=sort)
    assert len(page["items"]) == cert_views.PAGE_SIZE and page["next"]
    assert page["total"] == COUNT + 1  # and the root CA's own record
    assert cert_views.decodes - before <= cert_views.PAGE_SIZE
    again = cert_views.decodes
    _page(double, sort=sort)
    assert cert_views.decodes == again  # a poll of the same page decodes nothing


@pytest.mark.parametrize("sort", ["newest", "serial"])
def test_walking_every_page_visits_each_certificate_once(double, sort):
    seen, cursor = [], ""
    while True:
        page = _page(double, sort=sort, cursor=cursor, limit=200)
        seen += [c["serial"] for c in page["items"]]
        if not page["next"]:
            break
        cursor = page["next"]
    stored = double.secrets.mounts["pki/"].backend.state.certs
    assert sorted(seen) == sorted(stored) and len(seen) == len(set(seen))
    if sort == "serial":
        assert seen == list(stored.stored_serials())  # LIST certs order
    else:
        assert seen == list(reversed(list(stored)))  # newest first


def test_filters(double):
    revoked = _page(double, status="revoked", limit=200)
    assert revoked["items"] and all(c["revoked"] and c["revocation_time"] for c in revoked["items"])
    assert all(not c["revoked"] for c in _page(double, status="unrevoked")["items"])
    assert {c["role"] for c in _page(double, role="web")["items"]} == {"web"}
    some = _page(double)["items"][7]["serial"]
    assert [c["serial"] for c in _page(double, serial=some[:20])["items"]] == [some]
    assert [c["serial"] for c in _page(double, serial=some[:20].replace(":", "-").upper())["items"]] == [some]
    found = _page(double, q="HOST17.example")["items"]
    assert [c["common_name"] for c in found] == ["host17.example"]
    assert found[0]["sans"] == ["DNS:host17.example"] and found[0]["key"] == "ec P-256"


def test_a_text_search_stops_after_its_budget_and_goes_on(double, monkeypatch):
    monkeypatch.setattr(cert_views, "SCAN_BUDGET", 100)
    cert_views._cache.clear()
    before = cert_views.decodes
    page = _page(double, q="host0.example")  # the oldest: far beyond one budget
    assert page["items"] == [] and page["scan_stopped"] and page["scanned"] == 100
    assert cert_views.decodes - before <= 100
    found, cursor = [], page["next"]
    while cursor and not found:
        page = _page(double, q="host0.example", cursor=cursor)
        found, cursor = page["items"], page["next"]
    assert [c["common_name"] for c in found] == ["host0.example"]


def test_pem_on_demand_and_unknown_names(double):
    serial = _page(double)["items"][0]["serial"]
    r = requests.get(f"{double.secrets_url}/_schedpki/ui/api/certs/pem", params={"mount": "pki", "serial": serial})
    assert r.json()["pem"] == double.secrets.mounts["pki/"].backend.state.certs[serial].pem
    r = requests.get(f"{double.secrets_url}/_schedpki/ui/api/certs/pem", params={"mount": "pki", "serial": "00:01"})
    assert r.status_code == 404 and r.json() == {"error": "no certificate '00:01' on mount 'pki'"}
    r = requests.get(f"{double.secrets_url}/_schedpki/ui/api/certs", params={"mount": "nope"})
    assert r.status_code == 404 and r.json() == {"error": "no PKI mount 'nope'"}
    r = requests.get(f"{double.secrets_url}/_schedpki/ui/api/certs", params={"mount": "pki", "limit": "x"})
    assert r.status_code == 400
