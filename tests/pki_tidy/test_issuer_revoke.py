"""``POST issuer/:ref/revoke`` over HTTP, on a manual clock: the answer and its warnings, the issuer
afterwards (usage, signing refused everywhere, usage not restorable), the stored copy's revocation
entry, the CRLs (a revoked intermediate on its parent's CRL, a root never on its own), idempotence,
errors, and tidy's view of the revoked issuer's entry."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from tidy_helpers import MULTI, T0, T0_TEXT, crl_entries, crl_number, serial_int

from pytest_schedpki.secrets.engines.pki.revocation.issuer_revoke import IS_DEFAULT, NO_PARENT, SELF_SIGNED

REVOKED_USAGE = "crl-signing,ocsp-signing,read-only"
ISSUER_KEYS = sorted(["ca_chain", "certificate", "crl_distribution_points", "delta_crl_distribution_points",
                      "issuer_id", "issuer_name", "issuing_certificates", "key_id", "leaf_not_after_behavior",
                      "manual_chain", "ocsp_servers", "revocation_signature_algorithm", "revocation_time",
                      "revocation_time_rfc3339", "revoked", "usage"])


def _refused(issuer_id: str, name: str) -> list[str]:
    return [MULTI.format(f"error fetching CA certificate: error while attempting to use issuer {issuer_id}: requested "
                         f"usage issuing-certificates for issuer [id:{issuer_id} / name:{name}] but only had usage "
                         f"{REVOKED_USAGE}")]


def _intermediate(pki) -> dict:
    """An intermediate generated in ``pki``'s own mount, signed by ``root`` (so stored there) and
    imported as issuer ``inter``; returns ``{"issuer_id", "serial_number", "certificate", "csr"}``."""
    csr = pki.ok("POST", "issuers/generate/intermediate/internal", {"common_name": "Inter", "key_type": "ec"})["data"]
    signed = pki.ok("POST", "root/sign-intermediate", {"csr": csr["csr"], "ttl": "8760h"})["data"]
    imported = pki.ok("POST", "issuers/import/cert", {"pem_bundle": signed["certificate"]})["data"]
    issuer_id = imported["imported_issuers"][0]
    pki.ok("POST", f"issuer/{issuer_id}", {"issuer_name": "inter"})
    return {"issuer_id": issuer_id, "serial_number": signed["serial_number"], "certificate": signed["certificate"],
            "csr": csr["csr"]}


def test_revoking_the_default_root(pki, clock):
    root_id, serial = pki.root["issuer_id"], pki.root["serial_number"]
    number = crl_number(pki.crl())
    answer = pki.ok("POST", "issuer/root/revoke", {"bogus": 1})
    data = answer["data"]
    assert sorted(data) == ISSUER_KEYS
    assert (data["issuer_id"], data["issuer_name"], data["revoked"], data["usage"]) == (
        root_id, "root", True, REVOKED_USAGE)
    assert (data["revocation_time"], data["revocation_time_rfc3339"]) == (int(T0.timestamp()), T0_TEXT)
    assert answer["warnings"] == [SELF_SIGNED, NO_PARENT, IS_DEFAULT,
                                  "Endpoint ignored these unrecognized parameters: [bogus]"]
    assert pki.ok("GET", "issuer/root")["data"] == data
    assert pki.ok("GET", "config/issuers")["data"]["default"] == root_id  # still the default
    # the stored copy of the root gets a bare revocation entry
    assert pki.listed("certs/revoked") == [serial]
    assert pki.ok("GET", f"cert/{serial}", token=None)["data"] == {
        "certificate": pki.root["certificate"], "revocation_time": int(T0.timestamp()),
        "revocation_time_rfc3339": T0_TEXT}
    # never on its own CRL, which is still signed by it and rebuilt
    crl = pki.crl()
    assert (crl_number(crl), len(crl)) == (number + 2, 0)
    assert crl.is_signature_valid(x509.load_pem_x509_certificate(pki.root["certificate"].encode()).public_key())
    assert pki.fails("POST", "revoke", {"serial_number": serial}, 400) == [
        f"adding issuer (id: {root_id}) to its own CRL is not allowed"]


def test_revoking_again_answers_the_first_revocation(pki, clock):
    first = pki.ok("POST", "issuer/root/revoke")["data"]
    number = crl_number(pki.crl())
    clock.advance(3600)
    again = pki.ok("PUT", "issuer/default/revoke")
    assert again["data"] == first and again["warnings"] is None
    assert crl_number(pki.crl()) == number


def test_a_revoked_issuer_cannot_sign(pki):
    leaf = pki.issue()
    root_id = pki.root["issuer_id"]
    pki.ok("POST", "issuer/root/revoke")
    csr = pki.ok("POST", "intermediate/generate/internal", {"common_name": "x", "key_type": "ec"})["data"]["csr"]
    refused = _refused(root_id, "root")
    for path, body in (("issue/web", {"common_name": "a.example.com"}),
                       ("issuer/root/issue/web", {"common_name": "a.example.com"}),
                       ("sign/web", {"csr": csr, "common_name": "a.example.com"}),
                       ("root/sign-intermediate", {"csr": csr}),
                       ("issuer/root/sign-intermediate", {"csr": csr}),
                       ("sign-verbatim", {"csr": csr}),
                       ("issuer/root/sign-self-issued", {"certificate": pki.root["certificate"]})):
        assert pki.fails("POST", path, body, 500) == refused, path
    # the usage cannot be given back, by PATCH or by a full replace
    give_back = ("This issuer was revoked; unable to modify its usage to include certificate signing again. Reissue "
                 "this certificate (preferably with a new key) and modify that entry instead.")
    resp = pki.patch("issuer/root", {"usage": "read-only,issuing-certificates,crl-signing"})
    assert (resp.status_code, resp.json()) == (400, {"errors": [give_back]})
    assert pki.fails("POST", "issuer/root", {"issuer_name": "root"}, 400) == [give_back]
    # but it still signs CRLs: revoking an earlier leaf works and lands on its CRL
    pki.revoke(leaf["serial_number"])
    assert list(crl_entries(pki.crl())) == [serial_int(leaf["serial_number"])]


def test_references_and_operations(pki):
    assert pki.fails("POST", "issuer/nope/revoke", None, 500) == [
        MULTI.format("unable to find PKI issuer for reference: nope")]
    for method in ("GET", "DELETE"):
        assert pki.fails(method, "issuer/root/revoke", None, 405) == [MULTI.format("unsupported operation")]
    resp = pki.call("POST", "issuer/root/revoke", token=None)
    assert (resp.status_code, resp.json()) == (403, {"errors": ["permission denied"]})
    assert pki.ok("POST", f"issuer/{pki.root['issuer_id']}/revoke")["data"]["revoked"] is True
    assert pki.ok("POST", "issuer/DEFAULT/revoke")["warnings"] is None


def test_default_reference_without_a_default_issuer(empty):
    assert empty.fails("POST", "issuer/default/revoke", None, 500) == [
        MULTI.format("no default issuer currently configured")]


def test_revoked_intermediate_lands_on_its_parents_crl(pki, clock):
    inter = _intermediate(pki)
    leaf = pki.ok("POST", "issuer/inter/issue/web", {"common_name": "i.example.com"})["data"]
    root_number, inter_number = crl_number(pki.crl("root")), crl_number(pki.crl("inter"))
    clock.advance(60)
    answer = pki.ok("POST", "issuer/inter/revoke")
    moment = T0 + datetime.timedelta(seconds=60)
    assert answer["warnings"] is None  # not self-signed, has a parent here, not the default
    assert (answer["data"]["revoked"], answer["data"]["usage"], answer["data"]["ca_chain"].__len__()) == (
        True, REVOKED_USAGE, 2)
    root_crl = pki.crl("root")
    assert crl_number(root_crl) == root_number + 2
    assert crl_entries(root_crl) == {serial_int(inter["serial_number"]): moment.replace(microsecond=0)}
    inter_crl = pki.crl("inter")
    assert (crl_number(inter_crl), len(inter_crl)) == (inter_number + 2, 0)
    assert pki.listed("certs/revoked") == [inter["serial_number"]]
    assert "issuer_id" not in pki.ok("GET", f"cert/{inter['serial_number']}")["data"]
    assert pki.fails("POST", "issuer/inter/issue/web", {"common_name": "i.example.com"}, 500) == _refused(
        inter["issuer_id"], "inter")
    # leaves it signed earlier are still revocable, on its own CRL
    pki.revoke(leaf["serial_number"])
    assert list(crl_entries(pki.crl("inter"))) == [serial_int(leaf["serial_number"])]
    assert list(crl_entries(pki.crl("root"))) == [serial_int(inter["serial_number"])]
    # once deleted, its stored revocation entry keeps it on the root's CRL, with its unassigned leaf
    pki.ok("DELETE", "issuer/inter")
    assert sorted(crl_entries(pki.crl("root"))) == sorted([serial_int(inter["serial_number"]),
                                                          serial_int(leaf["serial_number"])])


def test_revoking_a_root_does_not_touch_its_intermediate(pki):
    inter = _intermediate(pki)
    answer = pki.ok("POST", "issuer/root/revoke")
    assert answer["warnings"] == [SELF_SIGNED, NO_PARENT, IS_DEFAULT]
    assert pki.ok("GET", "issuer/inter")["data"]["revoked"] is False
    assert len(pki.crl("inter")) == 0 and len(pki.crl("root")) == 0
    assert pki.listed("certs/revoked") == [pki.root["serial_number"]]
    assert pki.ok("GET", f"cert/{inter['serial_number']}")["data"]["revocation_time"] == 0
    assert pki.ok("POST", "issuer/inter/issue/web", {"common_name": "i.example.com"})["data"]["serial_number"]


def test_keyless_imported_intermediate(double, pki):
    """An intermediate this mount did not store: no revocation entry, no CRL anywhere (its parent has
    no key here), but a parent in the mount, so no warning."""
    inter = _intermediate(pki)
    double.secrets.enable_mount("td_keyless")
    try:
        other = pki.__class__(double, "td_keyless")
        imported = other.ok("POST", "issuers/import/cert", {
            "pem_bundle": pki.root["certificate"] + "\n" + inter["certificate"]})["data"]["imported_issuers"]
        inter_id = next(i for i in imported if other.ok("GET", f"issuer/{i}")["data"]["certificate"].strip()
                        == inter["certificate"].strip())
        answer = other.ok("POST", f"issuer/{inter_id}/revoke")
        assert answer["warnings"] is None
        assert (answer["data"]["key_id"], answer["data"]["revoked"]) == ("", True)
        assert other.listed("certs/revoked") == []
    finally:
        double.secrets.disable_mount("td_keyless")


def test_pss_warning_comes_first(empty):
    empty.ok("POST", "root/generate/internal", {"common_name": "RSA Root", "key_type": "rsa", "issuer_name": "rsa",
                                                "ttl": "8760h"})
    assert empty.patch("issuer/rsa", {"revocation_signature_algorithm": "SHA256WithRSAPSS"}).status_code == 200
    warnings = empty.ok("POST", "issuer/rsa/revoke")["warnings"]
    assert warnings[0].startswith("Issuer uses a PSS Revocation Signature Algorithm.")
    assert warnings[1:] == [SELF_SIGNED, NO_PARENT, IS_DEFAULT]


@pytest.mark.parametrize("auto_rebuild", [False, True])
def test_crls_are_rebuilt_whatever_auto_rebuild_says(pki, auto_rebuild):
    inter = _intermediate(pki)
    pki.ok("POST", "config/crl", {"auto_rebuild": auto_rebuild})
    pki.ok("POST", "issuer/inter/revoke")
    assert list(crl_entries(pki.crl("root"))) == [serial_int(inter["serial_number"])]


def test_tidy_associates_the_revoked_issuers_entry(pki):
    serial = pki.root["serial_number"]
    pki.ok("POST", "issuer/root/revoke")
    pki.tidy(tidy_revoked_cert_issuer_associations=True)
    assert pki.status()["missing_issuer_cert_count"] == 1
    assert pki.ok("GET", f"cert/{serial}")["data"]["issuer_id"] == pki.root["issuer_id"]
    assert len(pki.crl()) == 0  # still not on its own CRL
    pki.tidy(tidy_revoked_cert_issuer_associations=True)
    assert pki.status()["missing_issuer_cert_count"] == 0


def test_snapshots_keep_the_revocation(double, pki):
    pki.ok("POST", "issuer/root/revoke")
    saved = double.secrets.snapshot()
    double.secrets.restore(saved)
    data = pki.ok("GET", "issuer/root")["data"]
    assert (data["revoked"], data["usage"], data["revocation_time_rfc3339"]) == (True, REVOKED_USAGE, T0_TEXT)
