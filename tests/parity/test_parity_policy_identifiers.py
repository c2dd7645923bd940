"""Parity: a role's ``policy_identifiers`` at role write (certutil's full check, Go's 500 texts, the
JSON list form decoded as Go decodes it) and in the leaves issued (OpenBao's two routes: ``ParseOID``
for plain OIDs, ``encoding/asn1`` for the rest, where a negative arc is written as no bytes). The
CertificatePolicies value is compared byte for byte (``policies_der`` of the harness's facts)."""

from __future__ import annotations

import json

import parity_harness as h
import pytest
from cryptography import x509

pytestmark = pytest.mark.parity

CERT = ("certificate", "issuing_ca", "ca_chain")
NEITHER = 'policy identifier "{t}" is neither a valid OID: strconv.Atoi: parsing "{a}": invalid syntax, Nor JSON Policy Identifier: {j}'
ROLE = {"allow_any_name": True, "key_type": "ec", "ttl": "1h"}


def _error(text: str) -> list[str]:
    return [f"1 error occurred:\n\t* {text}\n\n"]


def _q(text: str) -> str:
    return json.dumps(text)[1:-1]


@pytest.mark.parametrize("value, error", [
    (['{"oid":5}'], NEITHER.format(t=_q('{"oid":5}'), a=_q('{"oid":5}'),
                                   j="json: cannot unmarshal number into Go struct field .oid of type string")),
    (['{"OID":{"a":1},"cps":6}'], NEITHER.format(t=_q('{"OID":{"a":1},"cps":6}'), a=_q('{"OID":{"a":1},"cps":6}'),
                                                 j="json: cannot unmarshal object into Go struct field .OID of type string")),
    (['{"cps":5,"oid":"1.2"}'], NEITHER.format(t=_q('{"cps":5,"oid":"1.2"}'), a=_q('{"cps":5,"oid":"1'),
                                               j="json: cannot unmarshal number into Go struct field .cps of type string")),
    (['{"oid":""}'], 'strconv.Atoi: parsing "": invalid syntax'),
    ('[null]', 'strconv.Atoi: parsing "": invalid syntax'),
    ('[{"oid":"abc"}]', 'strconv.Atoi: parsing "abc": invalid syntax'),
    (['{"oid":"abc"}', "x"], 'strconv.Atoi: parsing "abc": invalid syntax'),
    (["x", '{"oid":"abc"}'], NEITHER.format(t="x", a="x", j="invalid character 'x' looking for beginning of value")),
    ('[{"oid":"1.2.3","cps":"http://\u00e9"}]', "asn1: structure error: IA5String contains invalid character"),
    (['{"oid":"1.2","cps":"\u00e9"}', '{"oid":"1.40"}'], "asn1: structure error: IA5String contains invalid character"),
    (['{"oid":"1.40"}', '{"oid":"1.2","cps":"\u00e9"}'], "asn1: structure error: invalid object identifier"),
    ("-2.79.3", "asn1: structure error: invalid object identifier"),
    ('[{"oid":"1.2.3"},5]', NEITHER.format(t=_q('[{"oid":"1.2.3"}'), a=_q('[{"oid":"1'),
                                           j="unexpected end of JSON input")),
    ('[{"oid":5}]', NEITHER.format(t=_q('[{"oid":5}]'), a=_q('[{"oid":5}]'),
                                   j="json: cannot unmarshal array into Go value of type "
                                     "certutil.PolicyIdentifierWithQualifierEntry")),
])
def test_role_write_runs_certutils_whole_check(pki, value, error):
    pki.send("POST", "/v1/{mount}/roles/r", json={"policy_identifiers": value, **ROLE}).same().expect(
        500, errors=_error(error))
    pki.send("GET", "/v1/{mount}/roles/r").same().expect(404)


@pytest.mark.parametrize("value, stored", [
    ("null", []), ("[]", []),
    ('[{"OID":"1.2.3","Cps":"http://x<"}]', ['{"oid":"1.2.3","cps":"http://x\\u003c"}']),
    ('[{"oid":"1.2","notice":null,"x":1}]', ['{"oid":"1.2"}']),
    ('[{"oid":"1.2","cp\u017f":"http://k"}]', ['{"oid":"1.2","cps":"http://k"}']),
    ('{"oid":"1.2.3"}', ['{"oid":"1.2.3"}']),
    (["null"], ["null"]), ([None], [""]),
])
def test_role_write_stores_what_go_decodes(pki, value, stored):
    """The JSON list form decodes as Go's ``json.Unmarshal`` does (keys without regard to case, a
    ``null`` document is no entry); when Go's decoding fails the text is read as a comma list."""
    pki.send("POST", "/v1/{mount}/roles/r", json={"policy_identifiers": value, **ROLE}).same().expect(
        200, data={"policy_identifiers": stored})


@pytest.mark.parametrize("value", [
    "1.2.-5", "1.2.-9223372036854775808", "1.-1", "2.-1", "1.2.-1.3", "-1.2.5", "-2.9.3", "1.2.3,1.2.-4",
    "+1.02", "1.2.0003", "2.9223372036854775807", "1.2.9223372036854775807",
    '[{"oid":"1.2.-5","cps":"http://x"}]', ['{"OID":"1.2.3","CPS":"http://x"}'], ["1.2.3", ""], [""],
    ["1.2.3", '{"oid":"1.2.4","notice":"n"}'], ["null"], ["1.2.3", "null"],
    ["1.2.3", '{"oid":"1.2.4","cps":"http://x","Cps":"http://y"}'], ['{"oid":"1.2","notice":"\\ud800"}'],
])
def test_leaf_policies_as_openbao_writes_them(pki, value):
    pki.send("POST", "/v1/{mount}/roles/r", json={"policy_identifiers": value, **ROLE}).same().expect(200)

    def has_policies(side, resp):
        cert = h.load_certificate(resp.json()["data"]["certificate"])
        cert.extensions.get_extension_for_oid(x509.oid.ExtensionOID.CERTIFICATE_POLICIES)

    pki.send("POST", "/v1/{mount}/issue/r", json={"common_name": "a.example.com"}).same(cert_keys=CERT).expect(
        200).check(has_policies)


@pytest.mark.parametrize("value", ["-1.2", ["1.2.3", '{"oid":"-1.2"}'], ["1.2.3", '{"oid":"-1.2"}', "1.2.-4"],
                                   "2.9223372036854775807,1.2.-3"])
def test_an_oid_written_empty_fails_gos_read_back(pki, value):
    """``-1.2`` passes the role write (``encoding/asn1`` checks only the first two arcs' limits) and
    is written as an empty OID, which Go's parse of the created certificate refuses; so is
    ``2.9223372036854775807`` on the ``encoding/asn1`` route (``40*2 + arc`` wraps below zero), which
    ``ParseOID``'s route writes whole when every entry is a plain OID."""
    pki.send("POST", "/v1/{mount}/roles/r", json={"policy_identifiers": value, **ROLE}).same().expect(200)
    pki.send("POST", "/v1/{mount}/issue/r", json={"common_name": "a.example.com"}).same().expect(
        500, errors=_error("unable to parse created certificate: x509: invalid certificate policies"))
