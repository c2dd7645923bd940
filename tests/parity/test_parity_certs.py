"""Parity: the certificate store - ``cert/:serial`` (colon, hyphen, upper case, no token, raw, raw/pem),
``LIST certs`` and ``LIST certs/revoked`` before any revocation."""

from __future__ import annotations

import parity_harness as h
import pytest

pytestmark = pytest.mark.parity


@pytest.fixture
def leaf(web):
    """``web`` plus one issued leaf; vars ``leaf`` (serial) and ``leaf_pem``."""
    ex = web.send("POST", "/v1/{mount}/issue/web", json={"common_name": "c.example.com"}).same(
        cert_keys=("certificate",)).expect(200)
    ex.capture("leaf", lambda j: j["data"]["serial_number"])
    ex.capture("leaf_pem", lambda j: j["data"]["certificate"])
    return web


@pytest.mark.parametrize("spelling", ["colon", "hyphen", "upper"])
@pytest.mark.parametrize("token", ["root", None])
def test_read_cert_by_serial(leaf, spelling, token):
    def path(side):
        serial = side.vars["leaf"]
        serial = {"colon": serial, "hyphen": serial.replace(":", "-"), "upper": serial.upper()}[spelling]
        return f"/v1/{leaf.mount}/cert/{serial}"

    ex = leaf.send("GET", path, token=token).same(cert_keys=("certificate",))
    ex.expect(200, warnings=None, data={"revocation_time": 0, "revocation_time_rfc3339": ""},
              data_keys=["certificate", "revocation_time", "revocation_time_rfc3339"])
    ex.check(lambda side, resp: None if resp.json()["data"]["certificate"] == side.vars["leaf_pem"]
             else pytest.fail("stored certificate differs from the issued one"))


def test_read_unknown_cert(leaf):
    leaf.send("GET", "/v1/{mount}/cert/01:02:03").same().expect(404, errors=[])


def test_read_cert_raw(leaf):
    ex = leaf.send("GET", "/v1/{mount}/cert/{leaf}/raw", token=None).same().expect(200, content_type="application/pkix-cert")
    ex.check(lambda side, resp: None if h.load_certificate(resp.content) == h.load_certificate(side.vars["leaf_pem"])
             else pytest.fail("raw DER is not the leaf"))
    ex = leaf.send("GET", "/v1/{mount}/cert/{leaf}/raw/pem", token=None).same().expect(
        200, content_type="application/pem-certificate-chain")
    ex.check(lambda side, resp: None if resp.text == side.vars["leaf_pem"] else pytest.fail("raw/pem differs"))


def test_list_certs(leaf):
    ex = leaf.send("LIST", "/v1/{mount}/certs").same().expect(200, data_keys=["keys"])

    def listed(side, resp):
        keys = resp.json()["data"]["keys"]
        assert sorted(keys) == sorted([side.vars["leaf"], side.vars["root_serial"]])
        assert keys == sorted(keys) and all(":" in k and k == k.lower() for k in keys)

    ex.check(listed)
    leaf.send("GET", "/v1/{mount}/certs", params={"list": "true"}).same().expect(200).check(listed)


def test_list_certs_empty_and_revoked_empty(pair):
    pair.enable_pki()
    pair.send("LIST", "/v1/{mount}/certs").same().expect(404, errors=[])
    pair.generate_root()
    pair.send("LIST", "/v1/{mount}/certs/revoked").same().expect(404, errors=[])
    pair.send("LIST", "/v1/{mount}/certs").same().expect(200).check(
        lambda side, resp: None if resp.json()["data"]["keys"] == [side.vars["root_serial"]] else pytest.fail("root not listed"))


def test_list_certs_needs_token(leaf):
    leaf.send("LIST", "/v1/{mount}/certs", token=None).same().expect(403, errors=["permission denied"])


@pytest.mark.parametrize("params, pick", [
    ({"limit": "2"}, lambda keys: keys[:2]),
    ({"limit": "0"}, lambda keys: keys),
    ({"limit": "-1"}, lambda keys: keys),
    ({"limit": "100"}, lambda keys: keys),
    ({"after": "{second}", "limit": "2"}, lambda keys: keys[2:4]),
    ({"after": "{second}", "limit": "1"}, lambda keys: keys[2:3]),
    ({"after": "{last}"}, lambda keys: []),
    ({"after": "", "limit": "3"}, lambda keys: keys[:3]),
], ids=["limit", "limit-0", "limit-negative", "limit-beyond", "after-limit", "after-limit-1", "after-last",
        "after-empty"])
def test_list_certs_pages_in_storage_order(web, params, pick):
    """``LIST certs?after=&limit=`` pages the stored serials in storage order (the hyphen form
    ``after`` is compared with); ``limit`` <= 0 lists all; an empty page is 404 ``{"errors":[]}``."""
    for n in range(4):
        web.send("POST", "/v1/{mount}/issue/web", json={"common_name": f"p{n}.example.com"}).same(
            cert_keys=("certificate",)).expect(200).capture(f"p{n}", lambda j: j["data"]["serial_number"])

    def ordered(side) -> list[str]:
        return sorted([side.vars["root_serial"], *(side.vars[f"p{n}"] for n in range(4))],
                      key=lambda k: k.replace(":", "-"))

    for side in web.sides:  # per-side paging points, in the hyphen form clients page with
        side.vars["second"] = ordered(side)[1].replace(":", "-")
        side.vars["last"] = ordered(side)[-1].replace(":", "-")

    def path(side) -> str:
        query = "&".join(f"{k}={v.format(**side.vars)}" for k, v in params.items())
        return f"/v1/{side.vars['mount']}/certs?{query}"

    expected_status = 200 if pick(list(range(5))) else 404
    ex = web.send("LIST", path).same().expect(expected_status)
    ex.check(lambda side, resp: None if (resp.json().get("data") or {}).get("keys", []) == pick(ordered(side))
             else pytest.fail(f"{params}: {resp.text}"))
