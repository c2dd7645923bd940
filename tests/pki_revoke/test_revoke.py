"""POST revoke: by serial (any spelling) or PEM, the response, idempotence, every refusal, no_store
certificates, certificates signed elsewhere by the mount's key, expired certificates, cert/:serial
and LIST certs/revoked afterwards."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from revoke_helpers import (
    MULTI,
    T0,
    cert_of,
    crl_number,
    ec_key,
    entries,
    pem,
    serial_int,
    signed_cert,
)

# T0 = 2030-01-02T03:04:05.123456Z
T0_UNIX = 1893553445
T0_RFC3339 = "2030-01-02T03:04:05.123456Z"
FOREIGN = ("unable to verify signature on presented cert from any present issuer in this mount; certificates from "
           "previous CAs will need to have their issuing CA and key re-imported if revocation is necessary")
TOO_SHORT = ("provided certificate data was too short; perhaps a path was passed to the API rather than the contents "
             "of a PEM file")


@pytest.mark.parametrize("spelling", ["colon", "hyphen", "upper", "upper-hyphen"])
def test_revoke_by_serial(pki, spelling):
    leaf = pki.issue()
    serial = leaf["serial_number"]
    sent = {"colon": serial, "hyphen": serial.replace(":", "-"), "upper": serial.upper(),
            "upper-hyphen": serial.upper().replace(":", "-")}[spelling]
    body = pki.revoke(serial_number=sent)
    assert body["data"] == {"revocation_time": T0_UNIX, "revocation_time_rfc3339": T0_RFC3339, "state": "revoked"}
    assert body["warnings"] is None and body["lease_id"] == "" and body["auth"] is None
    assert list(body) == ["request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings",
                          "auth"]
    read = pki.ok("GET", f"cert/{serial}", token=None)["data"]
    assert read == {"certificate": leaf["certificate"], "issuer_id": pki.root["issuer_id"],
                    "revocation_time": T0_UNIX, "revocation_time_rfc3339": T0_RFC3339}
    assert pki.revoked_list() == [serial]


def test_revoke_by_pem_and_whole_second_time(pki, clock):
    clock.set(datetime.datetime(2030, 1, 2, 3, 4, 6, tzinfo=datetime.timezone.utc))
    leaf = pki.issue()
    data = pki.revoke(certificate="some text before\n" + leaf["certificate"] + "\ntrailing text")["data"]
    assert data == {"revocation_time": T0_UNIX + 1, "revocation_time_rfc3339": "2030-01-02T03:04:06Z",
                    "state": "revoked"}


def test_revoking_twice_answers_the_first_revocation(pki, clock):
    leaf = pki.issue()
    first = pki.revoke(serial_number=leaf["serial_number"])["data"]
    number = crl_number(pki.crl())
    clock.advance(90)
    again = pki.revoke(serial_number=leaf["serial_number"].replace(":", "-").upper())
    assert again["data"] == first and again["warnings"] is None
    assert pki.revoke(certificate=leaf["certificate"])["data"] == first
    assert crl_number(pki.crl()) == number  # no rebuild for a repeated revocation


@pytest.mark.parametrize("body, status, error", [
    ({}, 400, "The serial number or certificate to revoke must be provided."),
    ({"private_key": "ignored"}, 400, "The serial number or certificate to revoke must be provided."),
    ({"serial_number": "01:02", "certificate": "x"}, 400,
     "Must provide either the certificate or the serial to revoke; not both."),
    ({"serial_number": None, "certificate": None}, 400,
     "Must provide either the certificate or the serial to revoke; not both."),
    ({"serial_number": ""}, 400, "The serial number must be provided"),
    ({"serial_number": None}, 400, "The serial number must be provided"),
    ({"serial_number": "01:02:03:04"}, 400, "certificate with serial 01:02:03:04 not found."),
    ({"serial_number": "zz:zz"}, 400, "certificate with serial zz:zz not found."),
    ({"serial_number": "a/b"}, 400, "certificate with serial a/b not found."),
    ({"serial_number": 123}, 400, "certificate with serial 123 not found."),
    ({"certificate": ""}, 500, MULTI.format(TOO_SHORT)),
    ({"certificate": None}, 500, MULTI.format(TOO_SHORT)),
    ({"certificate": "not a cert"}, 500, MULTI.format(TOO_SHORT)),
    ({"certificate": "x" * 80}, 500, MULTI.format("certificate contains no PEM data")),
    ({"certificate": "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n" + "x" * 40}, 500,
     MULTI.format("certificate could not be parsed: x509: malformed tbs certificate")),
    ({"certificate": "-----BEGIN CERTIFICATE-----\nMAUwAwIBAA==\n-----END CERTIFICATE-----\n" + "x" * 40}, 500,
     MULTI.format("certificate could not be parsed: x509: malformed signature algorithm identifier")),
])
def test_revoke_refusals(pki, body, status, error):
    assert pki.fails("POST", "revoke", body, status) == [error]
    assert pki.revoked_list() is None


def test_serial_is_looked_up_as_sent(pki):
    leaf = pki.issue()
    padded = " " + leaf["serial_number"]
    assert pki.fails("POST", "revoke", {"serial_number": padded}, 400) == [f"certificate with serial {padded} not found."]


def test_private_key_pem_as_certificate(pki):
    leaf = pki.issue()
    assert pki.fails("POST", "revoke", {"certificate": leaf["private_key"]}, 500) == [
        MULTI.format("certificate could not be parsed: x509: malformed tbs certificate")]


def test_issuer_cannot_be_revoked(pki):
    message = f"adding issuer (id: {pki.root['issuer_id']}) to its own CRL is not allowed"
    assert pki.fails("POST", "revoke", {"serial_number": pki.root["serial_number"]}, 400) == [message]
    assert pki.fails("POST", "revoke", {"certificate": pki.root["certificate"]}, 400) == [message]
    assert pki.ok("GET", f"cert/{pki.root['serial_number']}")["data"]["revocation_time"] == 0


def test_foreign_certificate(pki, empty):
    other = ec_key()
    foreign = signed_cert(other, x509.Name.from_rfc4514_string("CN=Revoke Root"))
    assert pki.fails("POST", "revoke", {"certificate": pem(foreign)}, 500) == [MULTI.format(FOREIGN)]
    assert pki.call("GET", f"cert/{foreign.serial_number:x}").status_code == 404


def test_same_serial_other_content(pki):
    leaf = pki.issue()
    root_key = serialization.load_pem_private_key(pki.root["private_key"].encode(), None)
    forged = signed_cert(root_key, cert_of(pki.root["certificate"]).subject, serial=serial_int(leaf["serial_number"]))
    assert pki.fails("POST", "revoke", {"certificate": pem(forged)}, 500) == [MULTI.format(
        "certificate with same serial but unequal value already present in this cluster's storage; refusing to revoke")]
    assert pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]["certificate"] == leaf["certificate"]


def test_no_store_certificate(pki, clock):
    leaf = pki.issue("nostore")
    serial = leaf["serial_number"]
    assert pki.call("GET", f"cert/{serial}").status_code == 404
    assert pki.fails("POST", "revoke", {"serial_number": serial}, 400) == [f"certificate with serial {serial} not found."]
    clock.advance(5)
    data = pki.revoke(certificate=leaf["certificate"])["data"]
    assert data["revocation_time"] == T0_UNIX + 5
    read = pki.ok("GET", f"cert/{serial}", token=None)["data"]
    assert read == {"certificate": leaf["certificate"], "issuer_id": pki.root["issuer_id"], **{
        k: data[k] for k in ("revocation_time", "revocation_time_rfc3339")}}
    assert serial in pki.ok("LIST", "certs")["data"]["keys"]
    assert pki.revoked_list() == [serial]
    assert serial_int(serial) in entries(pki.crl())
    assert pki.revoke(serial_number=serial)["data"] == data  # stored from now on


def test_certificate_signed_with_the_root_key_under_another_name(pki):
    """Upstream checks the signature only: accepted, but attributed to no issuer, so cert/:serial has
    no issuer_id and the serial goes on the default issuer's CRL."""
    root_key = serialization.load_pem_private_key(pki.root["private_key"].encode(), None)
    odd = signed_cert(root_key, x509.Name.from_rfc4514_string("CN=Someone Else"), serial=12345)
    assert pki.revoke(certificate=pem(odd))["data"]["revocation_time"] == T0_UNIX
    read = pki.ok("GET", "cert/30:39")["data"]
    assert sorted(read) == ["certificate", "revocation_time", "revocation_time_rfc3339"]
    assert pki.revoked_list() == ["30:39"]
    assert 12345 in entries(pki.crl())


def test_signed_intermediate_is_just_a_stored_certificate(pki):
    """A CA certificate this mount signed (not one of its issuers) is revocable and listed."""
    root_key = serialization.load_pem_private_key(pki.root["private_key"].encode(), None)
    intermediate = signed_cert(root_key, cert_of(pki.root["certificate"]).subject, cn="Int", ca=True)
    assert pki.revoke(certificate=pem(intermediate))["data"]["state"] == "revoked"
    assert entries(pki.crl()) == {intermediate.serial_number: T0.replace(microsecond=0)}


def test_expired_certificates(pki, clock):
    leaf = pki.issue(ttl="10s")
    clock.advance(8)  # NotAfter is now 2 s away: upstream already calls it expired
    body = pki.revoke(serial_number=leaf["serial_number"])
    assert body["data"] is None
    assert body["warnings"] == [
        f"certificate with serial {leaf['serial_number']} already expired; refusing to add to CRL. Enable "
        "'AllowExpiredCertRevocation' to allow revoking expired certificates."]
    assert pki.revoked_list() is None
    assert pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]["revocation_time"] == 0
    pki.ok("POST", "config/crl", {"allow_expired_cert_revocation": True})
    clock.advance(60)
    data = pki.revoke(serial_number=leaf["serial_number"])["data"]
    assert data["revocation_time"] == T0_UNIX + 68
    assert pki.revoked_list() == [leaf["serial_number"]]


def test_expired_no_store_certificate_by_pem_is_stored_but_not_revoked(pki, clock):
    leaf = pki.issue("nostore", ttl="1h")
    clock.advance(2 * 3600)
    assert pki.revoke(certificate=leaf["certificate"])["data"] is None
    assert pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]["revocation_time"] == 0
    assert leaf["serial_number"] in pki.ok("LIST", "certs")["data"]["keys"]


def test_methods_tokens_and_unknown_fields(pki):
    for method in ("GET", "DELETE"):
        assert pki.fails(method, "revoke", None, 405) == [MULTI.format("unsupported operation")]
        assert pki.fails(method, "revoke-with-key", None, 405) == [MULTI.format("unsupported operation")]
    leaf = pki.issue()
    resp = pki.call("POST", "revoke", {"serial_number": leaf["serial_number"]}, token=None)
    assert (resp.status_code, resp.json()) == (403, {"errors": ["permission denied"]})
    body = pki.revoke(serial_number=leaf["serial_number"], reason="keyCompromise")
    assert body["warnings"] == ["Endpoint ignored these unrecognized parameters: [reason]"]
    resp = pki.call("PUT", "revoke", {"serial_number": leaf["serial_number"]})
    assert resp.status_code == 200


def test_list_revoked(pki):
    assert pki.fails("LIST", "certs/revoked", None, 404) == []
    serials = sorted(pki.issue()["serial_number"] for _ in range(4))
    pki.issue()  # not revoked
    for serial in serials:
        pki.revoke(serial_number=serial)
    assert pki.ok("LIST", "certs/revoked")["data"] == {"keys": serials}
    assert pki.ok("LIST", "certs/revoked/")["data"] == {"keys": serials}
    assert pki.ok("GET", "certs/revoked", params={"list": "true"})["data"] == {"keys": serials}
    assert pki.fails("GET", "certs/revoked", None, 405) == [MULTI.format("unsupported operation")]
    assert pki.ok("LIST", "certs/revoked", params={"limit": "2"})["data"]["keys"] == serials[:2]
    second = serials[1]
    # ``after`` is compared as sent with the stored hyphen form: colon spelling skips the whole byte
    assert pki.ok("LIST", "certs/revoked", params={"after": second.replace(":", "-")})["data"]["keys"] == serials[2:]
    after_colon = [s for s in serials if s.replace(":", "-") > second]
    resp = pki.call("LIST", "certs/revoked", params={"after": second})
    assert (resp.json()["data"]["keys"] if resp.status_code == 200 else []) == after_colon
    resp = pki.call("LIST", "certs/revoked", token=None)
    assert (resp.status_code, resp.json()) == (403, {"errors": ["permission denied"]})


def test_crl_signing_usage_missing_gives_rebuild_warnings(pki):
    resp = pki.patch("issuer/root", {"usage": "read-only,issuing-certificates"})
    assert resp.status_code == 200, resp.text
    leaf = pki.issue()
    number = crl_number(pki.crl())
    body = pki.revoke(serial_number=leaf["serial_number"])
    warning = ("Warning 1 during CRL rebuild: warning from local CRL rebuild: Issuer equivalency set with associated "
               "keys lacked an issuer with CRL Signing KeyUsage; refusing to rebuild CRL for this group of issuers: "
               f"{pki.root['issuer_id']}")
    assert body["warnings"] == [warning]
    assert pki.ok("GET", "crl/rotate")["warnings"] == [warning]
    assert crl_number(pki.crl()) == number  # the old CRL stays


def test_pem_with_key_type_block_label(pki):
    """Upstream ignores the PEM block type."""
    leaf = pki.issue()
    relabelled = leaf["certificate"].replace("CERTIFICATE", "SOMETHING")
    assert pki.revoke(certificate=relabelled)["data"]["state"] == "revoked"
