"""``POST tidy``, ``GET tidy-status`` and ``POST tidy-cancel`` over HTTP, on a manual clock: the 202
answer byte for byte, validation texts, the status before and after a run, what each operation removes
(and only past its safety buffer), the CRLs afterwards, issuer associations and expired issuers."""

from __future__ import annotations

import datetime
import json

import pytest
from tidy_helpers import (
    HOUR,
    MULTI,
    NOTHING,
    STARTED,
    STATUS_KEYS,
    T0_TEXT,
    crl_entries,
    crl_number,
    not_after,
    serial_int,
)

from pytest_schedpki.secrets.engines.pki.codecs.rfc3339 import format_rfc3339_nano
from pytest_schedpki.secrets.engines.pki.revocation.tidy_paths import tidy_status

SECOND = datetime.timedelta(seconds=1)


def _accepted_body(warning: str) -> bytes:
    return json.dumps({"request_id": "", "lease_id": "", "renewable": False, "lease_duration": 0, "data": None,
                       "wrap_info": None, "warnings": [warning], "auth": None}, separators=(",", ":")).encode()


def test_status_before_any_run_is_inactive(empty, pki):
    data = empty.status()
    assert sorted(data) == STATUS_KEYS  # 28 keys, no last_auto_tidy_finished yet
    assert data["state"] == "Inactive"
    assert {k for k, v in data.items() if v is not None} == {"state", "internal_backend_uuid"}
    uuid = data["internal_backend_uuid"]
    assert len(uuid) == 36 and uuid.count("-") == 4
    assert empty.status()["internal_backend_uuid"] == uuid


def test_each_mount_has_its_own_backend_uuid(double, empty):
    double.secrets.enable_mount("td_other")
    try:
        other = double.secrets.mount("td_other").backend
        assert tidy_status(other)["internal_backend_uuid"] != empty.status()["internal_backend_uuid"]
    finally:
        double.secrets.disable_mount("td_other")


def test_nothing_selected_answers_202_and_still_runs(empty):
    resp = empty.tidy()
    assert resp.content == _accepted_body(NOTHING)  # no trailing newline, request_id ""
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.headers["Cache-Control"] == "no-store"
    data = empty.status()
    assert sorted(data) == sorted([*STATUS_KEYS, "last_auto_tidy_finished"])
    assert data == {
        "acme_account_deleted_count": 0, "acme_account_revoked_count": 0, "acme_account_safety_buffer": 2592000,
        "acme_orders_deleted_count": 0, "cert_store_deleted_count": 0, "current_cert_store_count": None,
        "current_revoked_cert_count": None, "error": None, "internal_backend_uuid": data["internal_backend_uuid"],
        "issuer_safety_buffer": 31536000, "last_auto_tidy_finished": T0_TEXT, "message": None,
        "missing_issuer_cert_count": 0, "page_size": 1000, "pause_duration": "0s", "revoked_cert_deleted_count": 0,
        "revoked_safety_buffer": 259200, "safety_buffer": 259200, "state": "Finished", "tidy_acme": False,
        "tidy_cert_store": False, "tidy_expired_issuers": False, "tidy_invalid_certs": False,
        "tidy_move_legacy_ca_bundle": False, "tidy_revoked_cert_issuer_associations": False,
        "tidy_revoked_certs": False, "time_finished": T0_TEXT, "time_started": T0_TEXT,
        "total_acme_account_count": 0}


def test_started_answer_and_recorded_parameters(empty, clock):
    clock.advance(90)
    resp = empty.tidy(tidy_cert_store=True, tidy_revoked_certs="true", safety_buffer="2h", revoked_safety_buffer=60,
                      issuer_safety_buffer="1d", acme_account_safety_buffer="10m", pause_duration="90",
                      page_size=-1, tidy_invalid_certs=True, tidy_acme=True, tidy_move_legacy_ca_bundle=True,
                      tidy_revoked_cert_issuer_associations=True, tidy_expired_issuers=True, bogus=1)
    # the unknown parameter is not reported: upstream's 202 body is serialised before the framework adds it
    assert resp.content == _accepted_body(STARTED)
    data = empty.status()
    stamp = format_rfc3339_nano(clock.now())
    assert (data["time_started"], data["time_finished"], data["last_auto_tidy_finished"]) == (stamp, stamp, stamp)
    assert {k: data[k] for k in ("safety_buffer", "revoked_safety_buffer", "issuer_safety_buffer",
                                 "acme_account_safety_buffer", "pause_duration", "page_size")} == {
        "safety_buffer": 7200, "revoked_safety_buffer": 60, "issuer_safety_buffer": 86400,
        "acme_account_safety_buffer": 600, "pause_duration": "1m30s", "page_size": -1}
    assert {k: v for k, v in data.items() if k.startswith("tidy_")} == {
        "tidy_acme": True, "tidy_cert_store": True, "tidy_expired_issuers": True,
        "tidy_invalid_certs": False,  # upstream never records it in the status
        "tidy_move_legacy_ca_bundle": True, "tidy_revoked_cert_issuer_associations": True,
        "tidy_revoked_certs": True}


@pytest.mark.parametrize(("pause", "shown"), [("500ms", "500ms"), ("2d", "48h0m0s"), ("", "0s"), (7, "7s"),
                                              ("1h30m", "1h30m0s")])
def test_pause_duration_is_shown_as_a_go_duration(empty, pause, shown):
    empty.tidy(pause_duration=pause, page_size=0)
    data = empty.status()
    assert (data["pause_duration"], data["page_size"]) == (shown, 0)


def test_tidy_revocation_list_is_a_synonym(empty):
    assert empty.tidy(tidy_revocation_list=True).content == _accepted_body(STARTED)
    assert empty.status()["tidy_revoked_certs"] is True


@pytest.mark.parametrize(("body", "error"), [
    ({"safety_buffer": 0}, "safety_buffer must be greater than zero"),
    ({"safety_buffer": "0s"}, "safety_buffer must be greater than zero"),
    ({"safety_buffer": "-1"}, "Field validation failed: error converting input for field \"safety_buffer\": "
                              "cannot provide negative value '-1'"),
    ({"safety_buffer": "abc"}, "Field validation failed: error converting input for field \"safety_buffer\": "
                               "time: invalid duration \"abc\""),
    ({"safety_buffer": True}, "Field validation failed: error converting input for field \"safety_buffer\": "
                              "could not parse duration from input"),
    ({"revoked_safety_buffer": 0}, "revokedSafetyBuffer must be greater than zero"),
    ({"issuer_safety_buffer": 0}, "issuer_safety_buffer must be greater than zero"),
    ({"acme_account_safety_buffer": 0}, "acme_account_safety_buffer must be greater than zero"),
    ({"pause_duration": "x"}, "Error parsing pause_duration: time: invalid duration \"x\""),
    ({"pause_duration": "1.5"}, "Error parsing pause_duration: time: missing unit in duration \"1.5\""),
    ({"pause_duration": "1x"}, "Error parsing pause_duration: time: unknown unit \"x\" in duration \"1x\""),
    ({"pause_duration": " 5"}, "Error parsing pause_duration: time: invalid duration \" 5\""),
    ({"pause_duration": "-1s"}, "received invalid, negative pause_duration"),
    ({"page_size": 3}, "page_size must be greater than five"),
    ({"page_size": "abc"}, "Field validation failed: error converting input for field \"page_size\": '' cannot "
                           "parse value as 'int': strconv.ParseInt: invalid syntax"),
    ({"tidy_cert_store": "maybe"}, "Field validation failed: error converting input for field \"tidy_cert_store\": "
                                   "'' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"),
])
def test_refused_requests_run_nothing(pki, clock, body, error):
    leaf = pki.issue()
    clock.advance(10 * 24 * HOUR)
    assert pki.fails("POST", "tidy", {"tidy_cert_store": True, **body}, 400) == [error]
    assert pki.status()["state"] == "Inactive"
    assert leaf["serial_number"] in pki.listed("certs")


def test_cancel_and_wrong_operations(empty):
    cancelled = empty.ok("POST", "tidy-cancel", {"foo": 1})
    assert cancelled["data"] is None
    assert cancelled["warnings"] == ["Tidy operation cannot be cancelled as none is currently running.",
                                     "Endpoint ignored these unrecognized parameters: [foo]"]
    empty.tidy()
    assert empty.ok("PUT", "tidy-cancel")["warnings"] == [
        "Tidy operation cannot be cancelled as none is currently running."]
    unsupported = [MULTI.format("unsupported operation")]
    for method, path in (("GET", "tidy"), ("GET", "tidy-cancel"), ("POST", "tidy-status"), ("DELETE", "tidy"),
                         ("DELETE", "tidy-status")):
        assert empty.fails(method, path, None, 405) == unsupported, (method, path)
    assert empty.fails("LIST", "tidy-status", None, 404) == [MULTI.format("unsupported path")]


def test_tidy_paths_need_a_token(empty):
    for method, path in (("POST", "tidy"), ("GET", "tidy-status"), ("POST", "tidy-cancel"),
                         ("GET", "config/auto-tidy")):
        resp = empty.call(method, path, {} if method == "POST" else None, token=None)
        assert (resp.status_code, resp.json()) == (403, {"errors": ["permission denied"]}), path


# ------------------------------------------------------------------------------- the certificate store

def test_cert_store_removes_certificates_expired_past_the_safety_buffer(pki, clock):
    short = pki.issue(ttl="10m")
    long = pki.issue(ttl="1h")
    nostore = pki.issue(role="nostore", ttl="10m")
    root_serial = pki.root["serial_number"]
    assert sorted(pki.listed("certs")) == sorted([root_serial, short["serial_number"], long["serial_number"]])
    expiry = not_after(short["certificate"])
    clock.set(expiry + datetime.timedelta(seconds=60))  # exactly safety_buffer past NotAfter: kept
    pki.tidy(tidy_cert_store=True, safety_buffer=60)
    assert pki.status()["cert_store_deleted_count"] == 0
    clock.advance(SECOND)
    pki.tidy(tidy_cert_store=True, safety_buffer=60)
    assert pki.status()["cert_store_deleted_count"] == 1
    assert sorted(pki.listed("certs")) == sorted([root_serial, long["serial_number"]])
    assert pki.call("GET", f"cert/{short['serial_number']}", token=None).status_code == 404
    raw = pki.call("GET", f"cert/{short['serial_number']}/raw", token=None)
    assert (raw.status_code, raw.content) == (204, b"")
    assert pki.fails("POST", "revoke", {"serial_number": short["serial_number"]}, 400) == [
        f"certificate with serial {short['serial_number']} not found."]
    # the no_store certificate was never in storage: nothing to count
    assert nostore["serial_number"] not in pki.listed("certs")
    # the default safety buffer is 72h
    clock.set(not_after(long["certificate"]) + datetime.timedelta(hours=72))
    pki.tidy(tidy_cert_store=True)
    assert (pki.status()["cert_store_deleted_count"], long["serial_number"] in pki.listed("certs")) == (0, True)
    clock.advance(SECOND)
    pki.tidy(tidy_cert_store=True)
    assert (pki.status()["cert_store_deleted_count"], pki.listed("certs")) == (1, [root_serial])


def test_expired_issuer_certificates_leave_the_store_too(empty, clock):
    root = empty.ok("POST", "root/generate/internal", {"common_name": "Short Root", "key_type": "ec", "ttl": "1h"})
    serial = root["data"]["serial_number"]
    clock.set(not_after(root["data"]["certificate"]) + 2 * SECOND)
    empty.tidy(tidy_cert_store=True, safety_buffer=1)
    assert empty.status()["cert_store_deleted_count"] == 1
    assert empty.listed("certs") == []
    # the issuer itself is untouched
    assert empty.ok("GET", "issuer/default")["data"]["certificate"].rstrip("\n") == root["data"]["certificate"]
    assert empty.ok("LIST", "issuers")["data"]["key_info"][root["data"]["issuer_id"]]["serial_number"] == serial


def test_cert_store_alone_keeps_the_revocation_entry(pki, clock):
    leaf = pki.issue(ttl="10m")
    serial = leaf["serial_number"]
    revoked = pki.revoke(serial)
    number = crl_number(pki.crl())
    clock.set(not_after(leaf["certificate"]) + 2 * SECOND)
    pki.tidy(tidy_cert_store=True, safety_buffer=1)
    data = pki.status()
    assert (data["cert_store_deleted_count"], data["revoked_cert_deleted_count"]) == (1, 0)
    assert serial not in pki.listed("certs")
    assert pki.call("GET", f"cert/{serial}", token=None).status_code == 404
    assert pki.listed("certs/revoked") == [serial]
    crl = pki.crl()
    assert crl_number(crl) == number  # nothing rebuilt
    assert serial_int(serial) in crl_entries(crl)
    # by serial the certificate is gone; by PEM it is stored again and answers the original revocation
    assert pki.fails("POST", "revoke", {"serial_number": serial}, 400) == [f"certificate with serial {serial} not found."]
    again = pki.ok("POST", "revoke", {"certificate": leaf["certificate"]})["data"]
    assert again == revoked
    assert serial in pki.listed("certs")


def test_revoked_certs_removes_entries_and_rebuilds_the_crls(pki, clock):
    old = pki.issue(ttl="10m")
    recent = pki.issue(ttl="1h")
    kept = pki.issue(ttl="10m")
    for leaf in (old, recent):
        pki.revoke(leaf["serial_number"])
    number = crl_number(pki.crl())
    clock.set(not_after(old["certificate"]) + 2 * SECOND)
    pki.tidy(tidy_revoked_certs=True, safety_buffer=1)
    data = pki.status()
    assert (data["cert_store_deleted_count"], data["revoked_cert_deleted_count"]) == (0, 1)
    assert pki.listed("certs/revoked") == [recent["serial_number"]]
    assert old["serial_number"] not in pki.listed("certs")  # certificate and entry both go
    assert kept["serial_number"] in pki.listed("certs")  # not revoked: tidy_cert_store's business
    assert pki.call("GET", f"cert/{old['serial_number']}", token=None).status_code == 404
    crl = pki.crl()
    assert crl_number(crl) == number + 2
    assert list(crl_entries(crl)) == [serial_int(recent["serial_number"])]
    assert crl.last_update_utc == pki.double.clock.now().replace(microsecond=0)


def test_both_operations_count_a_revoked_certificate_in_both_counters(pki, clock):
    leaf = pki.issue(ttl="10m")
    pki.revoke(leaf["serial_number"])
    other = pki.issue(ttl="10m")
    number = crl_number(pki.crl())
    clock.set(not_after(leaf["certificate"]) + 2 * SECOND)
    pki.tidy(tidy_cert_store=True, tidy_revoked_certs=True, safety_buffer=1)
    data = pki.status()
    assert (data["cert_store_deleted_count"], data["revoked_cert_deleted_count"]) == (2, 1)
    assert pki.listed("certs/revoked") == []
    assert pki.listed("certs") == [pki.root["serial_number"]]
    assert other["serial_number"] not in pki.listed("certs")
    crl = pki.crl()
    assert (crl_number(crl), len(crl)) == (number + 2, 0)


def test_revoked_safety_buffer_applies_to_revoked_certificates(pki, clock):
    revoked = pki.issue(ttl="10m")
    plain = pki.issue(ttl="10m")
    pki.revoke(revoked["serial_number"])
    clock.set(not_after(plain["certificate"]) + datetime.timedelta(minutes=30))
    pki.tidy(tidy_cert_store=True, tidy_revoked_certs=True, safety_buffer="10m", revoked_safety_buffer="1h")
    data = pki.status()
    assert (data["safety_buffer"], data["revoked_safety_buffer"]) == (600, 3600)
    assert (data["cert_store_deleted_count"], data["revoked_cert_deleted_count"]) == (1, 0)
    assert pki.listed("certs/revoked") == [revoked["serial_number"]]
    clock.advance(datetime.timedelta(hours=1))
    pki.tidy(tidy_revoked_certs=True, safety_buffer="10m", revoked_safety_buffer="1h")
    assert pki.status()["revoked_cert_deleted_count"] == 1
    assert pki.listed("certs/revoked") == []


def test_auto_rebuild_leaves_the_crl_to_the_periodic_rebuild(pki, clock):
    pki.ok("POST", "config/crl", {"auto_rebuild": True})
    leaf = pki.issue(ttl="1m")
    pki.revoke(leaf["serial_number"])
    clock.advance(datetime.timedelta(minutes=2))  # still far from nextUpdate - grace: no periodic rebuild
    before = pki.crl()
    pki.tidy(tidy_revoked_certs=True, safety_buffer=1)
    assert pki.status()["revoked_cert_deleted_count"] == 1
    assert pki.listed("certs/revoked") == []
    assert pki.crl() == before


def test_no_store_certificate_revoked_by_pem_is_tidied_like_a_stored_one(pki, clock):
    leaf = pki.issue(role="nostore", ttl="10m")
    pki.ok("POST", "revoke", {"certificate": leaf["certificate"]})
    assert leaf["serial_number"] in pki.listed("certs")
    clock.set(not_after(leaf["certificate"]) + 2 * SECOND)
    pki.tidy(tidy_cert_store=True, tidy_revoked_certs=True, safety_buffer=1)
    assert (pki.status()["cert_store_deleted_count"], pki.status()["revoked_cert_deleted_count"]) == (1, 1)
    assert pki.listed("certs/revoked") == []


# ------------------------------------------------------------------------------- issuer associations

def test_issuer_associations_are_checked_and_repaired(pki):
    second = pki.ok("POST", "issuers/generate/root/internal", {"common_name": "Second", "key_type": "ec",
                                                               "issuer_name": "second", "ttl": "8760h"})["data"]
    leaf = pki.ok("POST", "issuer/second/issue/web", {"common_name": "b.example.com"})["data"]
    kept = pki.issue()
    for serial in (leaf["serial_number"], kept["serial_number"]):
        pki.revoke(serial)
    pki.ok("DELETE", "issuer/second")
    # the entry still names the deleted issuer, and the CRL of the default issuer lists it (unassigned)
    assert pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]["issuer_id"] == second["issuer_id"]
    assert serial_int(leaf["serial_number"]) in crl_entries(pki.crl())
    pki.tidy(tidy_revoked_cert_issuer_associations=True)
    assert pki.status()["missing_issuer_cert_count"] == 1
    data = pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]
    assert "issuer_id" not in data and data["revocation_time"] > 0
    assert pki.ok("GET", f"cert/{kept['serial_number']}")["data"]["issuer_id"] == pki.root["issuer_id"]
    pki.tidy(tidy_revoked_cert_issuer_associations=True)
    assert pki.status()["missing_issuer_cert_count"] == 1  # still without a valid issuer
    # importing the issuer again: the CRL rebuild associates the entry with it
    imported = pki.ok("POST", "issuers/import/cert", {"pem_bundle": second["certificate"]})["data"]
    new_id = imported["imported_issuers"][0]
    assert pki.ok("GET", f"cert/{leaf['serial_number']}")["data"]["issuer_id"] == new_id
    pki.tidy(tidy_revoked_cert_issuer_associations=True)
    assert pki.status()["missing_issuer_cert_count"] == 0


# ------------------------------------------------------------------------------- expired issuers

def test_expired_issuers_are_removed_except_the_default(pki, clock):
    short = pki.ok("POST", "issuers/generate/root/internal", {"common_name": "Short", "key_type": "ec",
                                                              "issuer_name": "short", "ttl": "1h"})["data"]
    number = crl_number(pki.crl())
    clock.set(not_after(short["certificate"]) + datetime.timedelta(days=365))
    pki.tidy(tidy_expired_issuers=True)  # default issuer_safety_buffer: one year, not yet past it
    assert sorted(pki.ok("LIST", "issuers")["data"]["keys"]) == sorted([pki.root["issuer_id"], short["issuer_id"]])
    clock.advance(SECOND)
    pki.tidy(tidy_expired_issuers=True)
    data = pki.status()
    assert (data["tidy_expired_issuers"], data["issuer_safety_buffer"]) == (True, 31536000)
    assert pki.ok("LIST", "issuers")["data"]["keys"] == [pki.root["issuer_id"]]
    assert pki.fails("GET", "issuer/short", None, 500) == [MULTI.format("unable to find PKI issuer for reference: short")]
    assert short["key_id"] in pki.ok("LIST", "keys")["data"]["keys"]  # the key stays
    assert short["serial_number"] in pki.listed("certs")  # and so does its stored certificate
    assert crl_number(pki.crl()) == number + 2  # CRLs rebuilt


def test_an_expired_default_issuer_is_kept(empty, clock):
    old = empty.ok("POST", "root/generate/internal", {"common_name": "Old", "key_type": "ec", "ttl": "1h",
                                                      "issuer_name": "old"})["data"]
    clock.set(not_after(old["certificate"]) + datetime.timedelta(hours=1))
    empty.tidy(tidy_expired_issuers=True, issuer_safety_buffer=1)
    assert empty.ok("LIST", "issuers")["data"]["keys"] == [old["issuer_id"]]
    assert empty.status()["state"] == "Finished"


def test_a_refused_tidy_keeps_the_previous_status(pki, clock):
    pki.tidy(tidy_cert_store=True, safety_buffer="1h")
    before = pki.status()
    clock.advance(60)
    pki.fails("POST", "tidy", {"safety_buffer": 0}, 400)
    assert pki.status() == before
