"""Parity: ``issuer/:ref/sign-revocation-list`` and ``issuer/:ref/resign-crls`` - every refusal text and
the CRLs signed (parsed with cryptography: entries, extensions, number, delta indicator, nextUpdate
span, signature with the issuer's key)."""

from __future__ import annotations

import base64
import datetime

import parity_harness as h
import pytest
from cryptography import x509

pytestmark = pytest.mark.parity

SIGN = "/v1/{mount}/issuer/default/sign-revocation-list"
RESIGN = "/v1/{mount}/issuer/default/resign-crls"
T0 = "2024-01-01T00:00:00Z"


def _crl(side: h.Side, resp, fmt: str = "pem") -> x509.CertificateRevocationList:
    text = resp.json()["data"]["crl"]
    if fmt == "der":
        return x509.load_der_x509_crl(base64.b64decode(text))
    assert text.startswith("-----BEGIN X509 CRL-----\n") and text.endswith("-----END X509 CRL-----\n")
    return x509.load_pem_x509_crl(text.encode())


def _facts(crl: x509.CertificateRevocationList) -> dict:
    return {
        "entries": sorted((e.serial_number, e.revocation_date_utc.isoformat(),
                           [(x.oid.dotted_string, x.critical, x.value.public_bytes()) for x in e.extensions])
                          for e in crl),
        "extensions": [(x.oid.dotted_string, x.critical) for x in crl.extensions],
        "number": crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number,
        "span": (crl.next_update_utc - crl.last_update_utc).total_seconds(),
        "algorithm": crl.signature_algorithm_oid.dotted_string,
    }


def _signed(expected: dict, fmt: str = "pem"):
    """A check: the CRL has ``expected`` facts (those given), is the root's, recent and signed by it."""
    def check(side: h.Side, resp) -> None:
        assert resp.status_code == 200, resp.text
        crl = _crl(side, resp, fmt)
        root = h.load_certificate(side.vars["root_pem"])
        assert crl.issuer == root.subject and crl.is_signature_valid(root.public_key())
        assert abs((crl.last_update_utc - h.utcnow()).total_seconds()) < 60
        facts = _facts(crl)
        assert {k: facts[k] for k in expected} == expected, facts
    return check


def test_sign_revocation_list(pki):
    pki.send("POST", SIGN, json={}).same().expect(200, data_keys=["crl"], warnings=None).check(_signed(
        {"entries": [], "extensions": [("2.5.29.35", False), ("2.5.29.20", False)], "number": 0, "span": 72 * 3600}))
    body = {"crl_number": 7, "delta_crl_base_number": 3, "next_update": "90s", "format": "DER",
            "revoked_certs": ["skipped", {"serial_number": "01:02", "revocation_time": T0},
                               {"serial_number": "0102", "revocation_time": 1700000000},
                               {"serial_number": "aa-bb cc.dd", "revocation_time": "1700000001",
                                "extensions": [{"id": "2.5.29.21", "value": "CgEB"}]}],
            "extensions": [{"id": "1.2.3", "value": "AQI=", "critical": True}, {"id": "1.2.4", "value": ""}]}
    pki.send("POST", SIGN, json=body).same().expect(200, data_keys=["crl"]).check(_signed({
        "entries": [(0x0102, "2023-11-14T22:13:20+00:00", []), (0x0102, "2024-01-01T00:00:00+00:00", []),
                    (0xaabbccdd, "2023-11-14T22:13:21+00:00", [("2.5.29.21", False, b"\n\x01\x01")])],
        "extensions": [("2.5.29.35", False), ("2.5.29.20", False), ("1.2.3", True), ("1.2.4", False),
                       ("2.5.29.27", True)],
        "number": 7, "span": 90}, fmt="der"))
    pki.send("POST", SIGN, json={"revoked_certs": "x"}).same().expect(200)


@pytest.mark.parametrize("body, error", [
    ({"format": "x"}, "unknown format value of x"),
    ({"next_update": "0"}, "next_update parameter must be greater than 0"),
    ({"next_update": "bad"}, 'invalid value for next_update: strconv.ParseInt: parsing "ba": invalid syntax'),
    ({"crl_number": -1}, "crl_number parameter must be 0 or greater"),
    ({"delta_crl_base_number": -2}, "delta_crl_base_number parameter must be -1 or greater"),
    ({"revoked_certs": [{"serial_number": "zz", "revocation_time": T0}]},
     "failed parsing serial_number from entry 0: 'serial_number' failed converting to bytes: encoding/hex: invalid "
     "byte: U+007A 'z'"),
    ({"revoked_certs": [{"serial_number": 1, "revocation_time": T0}]},
     "failed parsing serial_number from entry 0: 'serial_number' failed converting to bytes: encoding/hex: odd "
     "length hex string"),
    ({"revoked_certs": [{"revocation_time": T0}]}, "failed parsing serial_number from entry 0: missing "
                                                   "'serial_number' field"),
    ({"revoked_certs": [{"serial_number": "01"}]}, "failed parsing revocation_time from entry 0: missing "
                                                    "'revocation_time' field"),
    ({"revoked_certs": [{"serial_number": "01", "revocation_time": "soon"}]},
     "failed parsing revocation_time from entry 0: failed parsing time soon: could not parse string as date and time"),
    ({"revoked_certs": [{"serial_number": "01", "revocation_time": T0, "extensions": "x"}]},
     "failed parsing extensions from entry 0: 'extensions' field did not contain a slice"),
    ({"extensions": [{"id": "2.5.29.20", "value": ""}]},
     "failed parsing extension entry 0: crl number object identifier (2.5.29.20) is reserved"),
    ({"extensions": [{"id": "2.5.29.35", "value": ""}]},
     "failed parsing extension entry 0: authority key object identifier (2.5.29.35) is reserved"),
    ({"extensions": [{"id": "2.5.29.27", "value": ""}]},
     "failed parsing extension entry 0: delta crl object identifier (2.5.29.27) is reserved"),
    ({"extensions": [{"id": "1.2.3", "value": "AQI="}, {"id": "1.2.3", "value": ""}]}, "duplicate extension id: 1.2.3"),
    ({"extensions": [{"id": "1.2.x", "value": ""}]},
     'failed parsing extension entry 0: failed parsing asn1 index element 2 value x: strconv.Atoi: parsing "x": '
     'invalid syntax'),
    ({"extensions": [{"id": "", "value": ""}]}, "failed parsing extension entry 0: zero length object identifier"),
    ({"extensions": [{"value": ""}]}, "failed parsing extension entry 0: missing id field"),
    ({"extensions": [{"id": "1.2.3"}]}, "failed parsing extension entry 0: missing 'value' field"),
    ({"extensions": [{"id": "1.2.3", "value": "!!"}]},
     "failed parsing extension entry 0: failed base64 decoding 'value' field: illegal base64 data at input byte 0"),
    ({"extensions": [{"id": "1.2.3", "value": "", "critical": "maybe"}]},
     "failed parsing extension entry 0: critical field value failed to be parsed: cannot parse '' as bool: "
     'strconv.ParseBool: parsing "maybe": invalid syntax'),
    ({"extensions": ["x"]}, "extension entry 0 not a map"),
    ({"revoked_certs": [{"serial_number": "01", "revocation_time": 1.5}]},
     'failed parsing revocation_time from entry 0: failed parsing time 1.5: strconv.ParseInt: parsing "1.5": invalid '
     'syntax'),
    ({"revoked_certs": [{"serial_number": "01", "revocation_time": True}]},
     "failed parsing revocation_time from entry 0: failed parsing time true: could not parse time from input type"),
])
def test_sign_revocation_list_refusals(pki, body, error):
    pki.send("POST", SIGN, json=body).same().expect(400, errors=[error])


def test_an_object_identifier_go_cannot_encode_is_a_500(pki):
    pki.send("POST", SIGN, json={"extensions": [{"id": "0.99", "value": ""}]}).same().expect(
        500, errors=["1 error occurred:\n\t* error creating new CRL: asn1: structure error: invalid object identifier\n\n"])


def test_issuer_checks(pki):
    pki.send("POST", "/v1/{mount}/issuer/nope/sign-revocation-list", json={}).same().expect(
        400, errors=["failed to resolve issuer issuer_ref: unable to find PKI issuer for reference: nope"])
    pki.send("POST", "/v1/{mount}/issuer/nope/resign-crls", json={}).same().expect(
        400, errors=["failed to resolve issuer issuer_ref: unable to find PKI issuer for reference: nope"])
    pki.send("POST", "/v1/{mount}/issuer/default", json={"usage": "read-only,issuing-certificates"}).same().expect(200)
    for path in (SIGN, RESIGN):
        pki.send("POST", path, json={}).same().expect(400)
        pki.send("GET", path).same().expect(405)
    ex = pki.send("POST", SIGN, json={})
    ex.check(lambda side, resp: None if resp.json()["errors"] == [
        f"error while attempting to use issuer {side.vars['root_id']}: requested usage crl-signing for issuer "
        f"[id:{side.vars['root_id']}] but only had usage issuing-certificates,read-only"] else pytest.fail(resp.text))


def test_resign_crls(web):
    ex = web.send("POST", "/v1/{mount}/issue/web", json={"common_name": "r.example.com"}).same().expect(200)
    ex.capture("leaf", lambda j: j["data"]["serial_number"])
    web.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
    for side in web.sides:
        side.vars["crl"] = side.request("GET", f"/v1/{web.mount}/crl/pem", token=None).text
    web.send("POST", RESIGN, json={}).same().expect(200, warnings=None).check(_signed({"entries": [], "number": 0}))

    def leaf_entry(side, resp):
        crl = _crl(side, resp, "der")
        assert [e.serial_number for e in crl] == [int(side.vars["leaf"].replace(":", ""), 16)]
        assert [x.oid.dotted_string for x in crl.extensions] == ["2.5.29.35", "2.5.29.20", "2.5.29.27"]
    web.send("POST", RESIGN, json=lambda s: {"crls": [s.vars["crl"], s.vars["crl"]], "format": "der", "crl_number": 5,
                                             "delta_crl_base_number": 4}).same().expect(200, warnings=None).check(
        leaf_entry)
    for crls, error in (["x"], "failed decoding crl 0: invalid crl; should be one PEM block only"), \
                       ("x", "failed decoding crl 0: invalid crl; should be one PEM block only"):
        web.send("POST", RESIGN, json={"crls": crls}).same().expect(400, errors=[error])
    web.send("POST", RESIGN, json=lambda s: {"crls": [s.vars["crl"]], "next_update": "-1s"}).same().expect(
        400, errors=["next_update parameter must be greater than 0"])
    web.send("POST", RESIGN, json=lambda s: {"crls": [s.vars["crl"]], "format": "x", "next_update": "-1s"}).same(
    ).expect(400, errors=["unknown format value of x"])


def test_resign_refuses_a_crl_of_another_issuer_and_keeps_the_oldest_time(web):
    web.generate_root({"common_name": "Other", "key_type": "ec"}, prefix="other")
    for side in web.sides:
        side.vars["mine"] = side.request("GET", f"/v1/{web.mount}/issuer/{side.vars['root_id']}/crl/pem",
                                         token=None).text
        side.vars["theirs"] = side.request("GET", f"/v1/{web.mount}/issuer/{side.vars['other_id']}/crl/pem",
                                           token=None).text
    web.send("POST", RESIGN, json=lambda s: {"crls": [s.vars["mine"], s.vars["theirs"]]}).same().expect(
        400, errors=["CRL index: 1 was not signed by requested issuer"])
    early = {"serial_number": "0a", "revocation_time": "2020-01-01T00:00:00Z"}
    late = {"serial_number": "0a", "revocation_time": "2021-01-01T00:00:00Z"}
    for side in web.sides:
        crls = []
        for entry in (late, early):
            resp = side.request("POST", SIGN.format(mount=web.mount), json={"revoked_certs": [entry]})
            crls.append(resp.json()["data"]["crl"])
        side.vars["pair_of_crls"] = crls
    web.send("POST", RESIGN, json=lambda s: {"crls": s.vars["pair_of_crls"]}).same().expect(
        200, warnings=["Duplicate serial 0a with different revocation times detected, using oldest revocation time"]
    ).check(_signed({"entries": [(10, datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc).isoformat(), [])]}))


@pytest.mark.parametrize("ids, written", [
    (["1.2.-5"], ["1.2"]), (["1.-1"], ["0.39"]), (["2.-1.5"], ["1.39.5"]), (["-1.2.5"], ["0.5"]),
    (["1.2.-9223372036854775808.7", "1.2.7.7"], ["1.2.7", "1.2.7.7"]),
])
def test_negative_arcs_are_written_as_no_bytes(pki, ids, written):
    """``CreateRevocationList`` writes extension ids with ``encoding/asn1``, which writes a negative
    arc as nothing (``40*arc0 + arc1`` for the first two): the ids given are checked for duplicates
    as given, the CRL holds what was written."""
    body = {"extensions": [{"id": i, "value": "BQA="} for i in ids]}
    pki.send("POST", SIGN, json=body).same().expect(200).check(_signed(
        {"extensions": [("2.5.29.35", False), ("2.5.29.20", False), *((w, False) for w in written)]}))


def test_every_extension_is_parsed_before_any_is_written(pki):
    body = {"extensions": [{"id": "1.40", "value": ""}, {"id": "x", "value": ""}]}
    pki.send("POST", SIGN, json=body).same().expect(400, errors=[
        'failed parsing extension entry 1: failed parsing asn1 index element 0 value x: strconv.Atoi: parsing "x": '
        "invalid syntax"])
    body = {"revoked_certs": [{"serial_number": "01", "revocation_time": T0, "extensions": [{"id": "1.40", "value": ""}]}],
            "extensions": [{"id": "y", "value": ""}]}
    pki.send("POST", SIGN, json=body).same().expect(400, errors=[
        'failed parsing extension entry 0: failed parsing asn1 index element 0 value y: strconv.Atoi: parsing "y": '
        "invalid syntax"])
    pki.send("POST", SIGN, json={"extensions": [{"id": "1.2.-5", "value": ""}, {"id": "1.2.-5", "value": ""}]}).same(
    ).expect(400, errors=["duplicate extension id: 1.2.-5"])
