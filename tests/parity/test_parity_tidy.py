"""Parity: tidy (``tidy``, ``tidy-status``, ``tidy-cancel``, ``config/auto-tidy``) and issuer revocation
(``issuer/:ref/revoke``).

The real server tidies in a background goroutine; :func:`_tidy` waits until its ``tidy-status``
shows the new run finished (the double runs synchronously). Expiry-based scenarios issue
certificates and issuers with a 2 s lifetime and sleep once (about 4 s), then tidy with 1 s buffers:
well clear of both boundaries on both servers.
"""

from __future__ import annotations

import time

import parity_harness as h
import pytest
from cryptography import x509

pytestmark = pytest.mark.parity

MULTI = "1 error occurred:\n\t* {}\n\n"
OPERATIONS = ("tidy_cert_store / tidy_revoked_certs / tidy_invalid_certs / tidy_revoked_cert_issuer_associations / "
              "tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_acme")
STARTED = ("Tidy operation successfully started. Any information from the operation will be printed to OpenBao's "
           "server logs.")
NOTHING = f"Manual tidy requested but no tidy operations were set. Enable at least one tidy operation to be run ({OPERATIONS})."
NOT_RUNNING = "Tidy operation cannot be cancelled as none is currently running."
SELF_SIGNED = ("This issuer is a self-signed (potentially root) certificate. This means it may not be considered "
               "revoked if there is not an external, cross-signed variant of this certificate. This issuer's serial "
               "number will not appear on its own CRL.")
NO_PARENT = ("This issuer lacks another parent issuer within the mount. This means it will not appear on any other "
             "CRLs and may not be considered revoked by clients. Consider adding this issuer to its issuer's CRL as "
             "well if it is not self-signed.")
IS_DEFAULT = ("This issuer is currently configured as the default issuer for this mount; operations such as "
              "certificate issuance may not work until a new default issuer is selected.")
REVOKED_USAGE = "crl-signing,ocsp-signing,read-only"
AUTO_TIDY_DEFAULTS = {
    "acme_account_safety_buffer": 2592000, "enabled": False, "interval_duration": 43200,
    "issuer_safety_buffer": 31536000, "maintain_stored_certificate_counts": False, "page_size": 1000,
    "pause_duration": "0s", "publish_stored_certificate_count_metrics": False, "revoked_safety_buffer": 259200,
    "safety_buffer": 259200, "tidy_acme": False, "tidy_cert_store": False, "tidy_expired_issuers": False,
    "tidy_invalid_certs": False, "tidy_move_legacy_ca_bundle": False, "tidy_revoked_cert_issuer_associations": False,
    "tidy_revoked_certs": False,
}
SHORT_ROLE = {"allow_any_name": True, "key_type": "ec", "ttl": "1h", "max_ttl": "72h"}


def _status(side: h.Side, mount: str) -> dict:
    resp = side.request("GET", f"/v1/{mount}/tidy-status")
    assert resp.status_code == 200, (side.name, resp.text)
    return resp.json()["data"]


def _tidy(p: h.Pair, body: dict, warning: str = STARTED) -> h.Exchange:
    """``POST tidy`` on both sides (202 with ``warning``, no trailing newline), then wait until each
    side's ``tidy-status`` reports this run as finished."""
    before = {side.name: _status(side, p.mount)["time_started"] for side in p.sides}
    ex = p.send("POST", "/v1/{mount}/tidy", json=body).same().expect(202, warnings=[warning], data=None)
    ex.check(lambda side, r: _no_newline(r))
    for side in p.sides:
        deadline = time.monotonic() + 10
        while True:
            data = _status(side, p.mount)
            if data["time_started"] != before[side.name] and data["state"] == "Finished":
                break
            assert time.monotonic() < deadline, (side.name, data)
            time.sleep(0.05)
    time.sleep(0.1)  # upstream releases its "tidy running" guard just after recording the finish
    return ex


def _no_newline(resp) -> None:
    assert resp.json()["request_id"] == ""
    assert not resp.content.endswith(b"\n")


def _counts(p: h.Pair, **expected: int) -> h.Exchange:
    """``tidy-status`` compared between the sides, with the counters pinned."""
    return p.send("GET", "/v1/{mount}/tidy-status").same().expect(200, data={"state": "Finished", **expected})


def _issue(p: h.Pair, name: str, role: str = "short", path: str = "issue", **body) -> None:
    body.setdefault("common_name", f"{name.replace('_', '-')}.example.com")
    ex = p.send("POST", f"/v1/{{mount}}/{path}/{role}", json=body).same(cert_keys=("certificate",)).expect(200)
    ex.capture(name, lambda j: j["data"]["serial_number"])


def _names(side: h.Side, values) -> list[str]:
    """Serials (colon strings or ints) as the side's var names."""
    by_serial = {int(v.replace(":", ""), 16): k for k, v in side.vars.items()
                 if isinstance(v, str) and h.SERIAL_COLON_RE.fullmatch(v)}
    return sorted(by_serial.get(v if isinstance(v, int) else int(v.replace(":", ""), 16), f"#{v}") for v in values)


def _listed(p: h.Pair, path: str) -> list[str]:
    """``LIST <path>`` on both sides (compared), as var names."""
    ex = p.send("LIST", f"/v1/{{mount}}/{path}").same()
    out = {}
    for side in p.sides:
        resp = ex.response(side)
        out[side.name] = _names(side, resp.json()["data"]["keys"]) if resp.status_code == 200 else []
    assert out["bao"] == out["double"], out
    return out["bao"]


def _crl(p: h.Pair, ref: str) -> tuple[int, list[str]]:
    """``issuer/<ref>/crl/der`` on both sides: (CRL number, entries as var names), compared."""
    out = {}
    for side in p.sides:
        resp = side.request("GET", f"/v1/{p.mount}/issuer/{ref}/crl/der", token=None)
        assert resp.status_code == 200, (side.name, ref, resp.status_code)
        crl = x509.load_der_x509_crl(resp.content)
        number = crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
        out[side.name] = (number, _names(side, [e.serial_number for e in crl]))
    assert out["bao"] == out["double"], out
    return out["bao"]


# ------------------------------------------------------------------------------ tidy: the endpoints

def test_tidy_status_and_auto_tidy_before_any_run(pair):
    pair.enable_pki()
    ex = pair.send("GET", "/v1/{mount}/tidy-status").same()
    ex.expect(200, data={"state": "Inactive", "safety_buffer": None, "time_started": None, "cert_store_deleted_count": None},
              warnings=None)
    assert len(ex.data("bao")) == 28
    pair.send("GET", "/v1/{mount}/config/auto-tidy").same().expect(200, data=AUTO_TIDY_DEFAULTS)


def test_tidy_answers_and_recorded_parameters(pair):
    pair.enable_pki()  # no certificate stored: pause_duration is never slept upstream
    _tidy(pair, {}, NOTHING)
    _counts(pair, cert_store_deleted_count=0, safety_buffer=259200, revoked_safety_buffer=259200,
            issuer_safety_buffer=31536000, acme_account_safety_buffer=2592000, pause_duration="0s", page_size=1000,
            tidy_cert_store=False, message=None, error=None)
    _tidy(pair, {"tidy_cert_store": True, "tidy_revocation_list": "true", "safety_buffer": "2h",
                 "revoked_safety_buffer": 60, "issuer_safety_buffer": "1d", "acme_account_safety_buffer": "10m",
                 "pause_duration": "90", "page_size": -1, "tidy_invalid_certs": True, "tidy_acme": True,
                 "tidy_move_legacy_ca_bundle": True, "tidy_revoked_cert_issuer_associations": True,
                 "tidy_expired_issuers": True, "bogus": 1})
    _counts(pair, safety_buffer=7200, revoked_safety_buffer=60, issuer_safety_buffer=86400,
            acme_account_safety_buffer=600, pause_duration="1m30s", page_size=-1, tidy_cert_store=True,
            tidy_revoked_certs=True, tidy_invalid_certs=False, tidy_acme=True, tidy_move_legacy_ca_bundle=True,
            tidy_revoked_cert_issuer_associations=True, tidy_expired_issuers=True)
    for pause, shown in (("500ms", "500ms"), ("2d", "48h0m0s"), ("", "0s")):
        _tidy(pair, {"pause_duration": pause, "page_size": 0}, NOTHING)
        _counts(pair, pause_duration=shown, page_size=0)


@pytest.mark.parametrize(("body", "error"), [
    ({"safety_buffer": 0}, "safety_buffer must be greater than zero"),
    ({"safety_buffer": "-1"}, "Field validation failed: error converting input for field \"safety_buffer\": "
                              "cannot provide negative value '-1'"),
    ({"safety_buffer": True}, "Field validation failed: error converting input for field \"safety_buffer\": "
                              "could not parse duration from input"),
    ({"revoked_safety_buffer": "0s"}, "revokedSafetyBuffer must be greater than zero"),
    ({"issuer_safety_buffer": 0}, "issuer_safety_buffer must be greater than zero"),
    ({"acme_account_safety_buffer": 0}, "acme_account_safety_buffer must be greater than zero"),
    ({"pause_duration": "x"}, "Error parsing pause_duration: time: invalid duration \"x\""),
    ({"pause_duration": "1.5"}, "Error parsing pause_duration: time: missing unit in duration \"1.5\""),
    ({"pause_duration": "-1s"}, "received invalid, negative pause_duration"),
    ({"page_size": 3}, "page_size must be greater than five"),
    ({"tidy_cert_store": "maybe"}, "Field validation failed: error converting input for field \"tidy_cert_store\": "
                                   "'' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_tidy_refusals(pki, body, error):
    pki.send("POST", "/v1/{mount}/tidy", json=body).same().expect(400, errors=[error])
    pki.send("GET", "/v1/{mount}/tidy-status").same().expect(200, data={"state": "Inactive"})


def test_tidy_cancel_and_wrong_operations(pair):
    pair.enable_pki()
    pair.send("POST", "/v1/{mount}/tidy-cancel", json={"foo": 1}).same().expect(
        200, data=None, warnings=[NOT_RUNNING, "Endpoint ignored these unrecognized parameters: [foo]"])
    unsupported = [MULTI.format("unsupported operation")]
    for method, path in (("GET", "tidy"), ("GET", "tidy-cancel"), ("POST", "tidy-status"),
                         ("DELETE", "config/auto-tidy")):
        pair.send(method, f"/v1/{{mount}}/{path}").same().expect(405, errors=unsupported)
    pair.send("LIST", "/v1/{mount}/config/auto-tidy").same().expect(404, errors=[MULTI.format("unsupported path")])


def test_auto_tidy_configuration(pair):
    pair.enable_pki()
    expected = {**AUTO_TIDY_DEFAULTS, "enabled": True, "tidy_cert_store": True, "interval_duration": 3600,
                "safety_buffer": 600, "revoked_safety_buffer": 600, "pause_duration": "2s", "page_size": 5,
                "issuer_safety_buffer": 172800}
    pair.send("POST", "/v1/{mount}/config/auto-tidy", json={
        "enabled": True, "tidy_cert_store": True, "interval_duration": "1h", "safety_buffer": "10m",
        "pause_duration": "2", "page_size": 5, "issuer_safety_buffer": "48h", "bogus": 1}).same().expect(
        200, data=expected, warnings=["Endpoint ignored these unrecognized parameters: [bogus]"])
    pair.send("GET", "/v1/{mount}/config/auto-tidy").same().expect(200, data=expected, warnings=None)
    pair.send("POST", "/v1/{mount}/config/auto-tidy", json={
        "revoked_safety_buffer": "1h", "maintain_stored_certificate_counts": True,
        "publish_stored_certificate_count_metrics": True, "pause_duration": "1500ms"}).same().expect(
        200, data={**expected, "revoked_safety_buffer": 3600, "maintain_stored_certificate_counts": True,
                   "publish_stored_certificate_count_metrics": True, "pause_duration": "1.5s"})
    pair.send("GET", "/v1/{mount}/tidy-status").same().expect(
        200, data={"state": "Inactive", "current_cert_store_count": None, "current_revoked_cert_count": None})
    for body, error in (
            ({"tidy_cert_store": False}, f"Auto-tidy enabled but no tidy operations were requested. Enable at least "
                                         f"one tidy operation to be run ({OPERATIONS})."),
            ({"safety_buffer": 0}, "given safety_buffer must be at least one second; got: 0"),
            ({"revoked_safety_buffer": "0s"}, "revoked_safety_buffer must be at least one second; got: 0"),
            ({"issuer_safety_buffer": 0}, "given safety_buffer must be at least one second; got: 0"),
            ({"acme_account_safety_buffer": 0}, "given acme_account_safety_buffer must be at least one second; got: 0"),
            ({"pause_duration": "x"}, "unable to parse given pause_duration: time: invalid duration \"x\""),
            ({"pause_duration": "-1s"}, "received invalid, negative pause_duration"),
            ({"page_size": 4}, "page_size must be at least 5"),
            ({"interval_duration": "-5"}, "Field validation failed: error converting input for field "
                                          "\"interval_duration\": cannot provide negative value '-5'"),
            ({"maintain_stored_certificate_counts": False},
             "Can not publish a running storage metrics count to metrics without first maintaining that count.  "
             "Enable `maintain_stored_certificate_counts` to enable `publish_stored_certificate_count_metrics`.")):
        pair.send("POST", "/v1/{mount}/config/auto-tidy", json=body).same().expect(400, errors=[error])


# ------------------------------------------------------------------------------ tidy: what it removes

def test_tidy_removes_what_expired_past_the_buffers(pki):
    pki.create_role("short", SHORT_ROLE)
    # 2 s certificates are within revoke's 2 s "already expired" margin: allow their revocation
    pki.send("POST", "/v1/{mount}/config/crl", json={"allow_expired_cert_revocation": True}).same().expect(200)
    for name in ("plain", "revoked_a", "revoked_b"):
        _issue(pki, name, ttl="2s")
    _issue(pki, "long", ttl="1h")
    ex = pki.send("POST", "/v1/{mount}/issuers/generate/root/internal", json={
        "common_name": "Old Root", "key_type": "ec", "ttl": "2s", "issuer_name": "old"}).same().expect(200)
    ex.capture("old_serial", lambda j: j["data"]["serial_number"])
    for name in ("revoked_a", "revoked_b", "long"):
        pki.send("POST", "/v1/{mount}/revoke", json=lambda s, n=name: {"serial_number": s.vars[n]}).same().expect(200)
    number, names = _crl(pki, "default")
    assert names == ["long", "revoked_a", "revoked_b"]
    time.sleep(4.2)

    # the certificate store alone: revocation entries stay (and the CRL is not rebuilt)
    _tidy(pki, {"tidy_cert_store": True, "safety_buffer": "1s"})
    _counts(pki, cert_store_deleted_count=4, revoked_cert_deleted_count=0, missing_issuer_cert_count=0)
    assert _listed(pki, "certs") == ["long", "root_serial"]
    assert _listed(pki, "certs/revoked") == ["long", "revoked_a", "revoked_b"]
    pki.send("GET", "/v1/{mount}/cert/{revoked_a}", token=None).same().expect(404, errors=[])
    pki.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["revoked_a"]}).same().expect(
        400, errors=["certificate with serial <SERIAL> not found."])
    assert _crl(pki, "default") == (number, ["long", "revoked_a", "revoked_b"])

    # the revocation entries: gone past the buffer, CRL rebuilt
    _tidy(pki, {"tidy_revoked_certs": True, "safety_buffer": "1s"})
    _counts(pki, cert_store_deleted_count=0, revoked_cert_deleted_count=2)
    assert _listed(pki, "certs/revoked") == ["long"]
    assert _crl(pki, "default") == (number + 2, ["long"])

    # expired issuers other than the default; the key stays
    _tidy(pki, {"tidy_expired_issuers": True, "issuer_safety_buffer": "1s"})
    pki.send("LIST", "/v1/{mount}/issuers").same().expect(200)
    pki.send("GET", "/v1/{mount}/issuer/old").same().expect(
        500, errors=[MULTI.format("unable to find PKI issuer for reference: old")])
    pki.send("LIST", "/v1/{mount}/keys").same().expect(200)
    assert _crl(pki, "default") == (number + 4, ["long"])


def test_tidy_issuer_associations(pki):
    pki.create_role("short", SHORT_ROLE)
    ex = pki.send("POST", "/v1/{mount}/issuers/generate/root/internal", json={
        "common_name": "Second", "key_type": "ec", "ttl": "8760h", "issuer_name": "second"}).same().expect(200)
    ex.capture("second_pem", lambda j: j["data"]["certificate"])
    _issue(pki, "leaf", path="issuer/second/issue")
    pki.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
    pki.send("DELETE", "/v1/{mount}/issuer/second").same().expect(200)
    pki.send("GET", "/v1/{mount}/cert/{leaf}").same().expect(200)
    assert _crl(pki, "default")[1] == ["leaf"]
    _tidy(pki, {"tidy_revoked_cert_issuer_associations": True})
    _counts(pki, missing_issuer_cert_count=1)
    pki.send("GET", "/v1/{mount}/cert/{leaf}").same().expect(200, data_keys=[
        "certificate", "revocation_time", "revocation_time_rfc3339"])
    pki.send("POST", "/v1/{mount}/issuers/import/cert", json=lambda s: {"pem_bundle": s.vars["second_pem"]}).same()
    pki.send("GET", "/v1/{mount}/cert/{leaf}").same().expect(200, data_keys=[
        "certificate", "issuer_id", "revocation_time", "revocation_time_rfc3339"])
    _tidy(pki, {"tidy_revoked_cert_issuer_associations": True})
    _counts(pki, missing_issuer_cert_count=0)


# ------------------------------------------------------------------------------ issuer revocation

def test_revoke_the_default_root(pki):
    pki.create_role("short", SHORT_ROLE)
    pki.send("GET", "/v1/{mount}/issuer/default/revoke").same().expect(405, errors=[MULTI.format("unsupported operation")])
    pki.send("POST", "/v1/{mount}/issuer/nope/revoke").same().expect(
        500, errors=[MULTI.format("unable to find PKI issuer for reference: nope")])
    number = _crl(pki, "default")[0]
    ex = pki.send("POST", "/v1/{mount}/issuer/default/revoke", json={"bogus": 1}).same()
    ex.expect(200, data={"revoked": True, "usage": REVOKED_USAGE}, warnings=[
        SELF_SIGNED, NO_PARENT, IS_DEFAULT, "Endpoint ignored these unrecognized parameters: [bogus]"])
    pki.send("POST", "/v1/{mount}/issuer/{root_id}/revoke").same().expect(200, warnings=None)
    pki.send("GET", "/v1/{mount}/issuer/default").same().expect(200, data={"revoked": True})
    assert _listed(pki, "certs/revoked") == ["root_serial"]
    pki.send("GET", "/v1/{mount}/cert/{root_serial}", token=None).same().expect(
        200, data_keys=["certificate", "revocation_time", "revocation_time_rfc3339"])
    assert _crl(pki, "default") == (number + 2, [])
    pki.send("POST", "/v1/{mount}/issue/short", json={"common_name": "a.example.com"}).same().expect(
        500, errors=[MULTI.format("error fetching CA certificate: error while attempting to use issuer <UUID>: "
                                  "requested usage issuing-certificates for issuer [id:<UUID>] but only had usage "
                                  f"{REVOKED_USAGE}")])
    pki.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["root_serial"]}).same().expect(
        400, errors=["adding issuer (id: <UUID>) to its own CRL is not allowed"])
    pki.send("PATCH", "/v1/{mount}/issuer/default", json={"usage": "read-only,issuing-certificates"},
             headers={"Content-Type": "application/merge-patch+json"}).same().expect(400)


def test_revoke_an_intermediate_of_the_same_mount(pki):
    pki.create_role("short", SHORT_ROLE)
    ex = pki.send("POST", "/v1/{mount}/issuers/generate/intermediate/internal",
                  json={"common_name": "Inter", "key_type": "ec"}).same().expect(200)
    ex.capture("inter_csr", lambda j: j["data"]["csr"])
    ex = pki.send("POST", "/v1/{mount}/root/sign-intermediate",
                  json=lambda s: {"csr": s.vars["inter_csr"], "ttl": "8760h"}).same().expect(200)
    ex.capture("inter_serial", lambda j: j["data"]["serial_number"])
    ex.capture("inter_pem", lambda j: j["data"]["certificate"])
    ex = pki.send("POST", "/v1/{mount}/issuers/import/cert", json=lambda s: {"pem_bundle": s.vars["inter_pem"]}).same()
    ex.capture("inter_id", lambda j: j["data"]["imported_issuers"][0])
    pki.send("POST", "/v1/{mount}/issuer/{inter_id}", json={"issuer_name": "inter"}).same().expect(200)
    _issue(pki, "leaf", path="issuer/inter/issue")
    root_before, inter_before = _crl(pki, "default"), _crl(pki, "inter")
    pki.send("POST", "/v1/{mount}/issuer/inter/revoke").same().expect(
        200, data={"revoked": True, "usage": REVOKED_USAGE, "issuer_name": "inter"}, warnings=None)
    assert _crl(pki, "default") == (root_before[0] + 2, ["inter_serial"])
    assert _crl(pki, "inter") == (inter_before[0] + 2, [])
    assert _listed(pki, "certs/revoked") == ["inter_serial"]
    pki.send("GET", "/v1/{mount}/cert/{inter_serial}").same().expect(
        200, data_keys=["certificate", "revocation_time", "revocation_time_rfc3339"])
    pki.send("POST", "/v1/{mount}/issuer/inter/issue/short", json={"common_name": "b.example.com"}).same().expect(500)
    pki.send("POST", "/v1/{mount}/issuer/inter/sign-intermediate",
             json=lambda s: {"csr": s.vars["inter_csr"]}).same().expect(500)
    pki.send("POST", "/v1/{mount}/revoke", json=lambda s: {"serial_number": s.vars["leaf"]}).same().expect(200)
    assert _crl(pki, "inter")[1] == ["leaf"]
    assert _crl(pki, "default")[1] == ["inter_serial"]
    pki.send("DELETE", "/v1/{mount}/issuer/inter").same().expect(200)
    assert _crl(pki, "default")[1] == ["inter_serial", "leaf"]
    # revoking the root now: self-signed, no other parent, the default
    pki.send("POST", "/v1/{mount}/issuer/default/revoke").same().expect(200, warnings=[SELF_SIGNED, NO_PARENT, IS_DEFAULT])
    assert _listed(pki, "certs/revoked") == ["inter_serial", "leaf", "root_serial"]
