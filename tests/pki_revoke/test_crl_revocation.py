"""CRLs after revocations, parsed with cryptography: entries and dates, issuer, AKI, CRL numbers,
signature, validity window; per-issuer CRLs; crl/rotate; disable; auto_rebuild (lazy, as the periodic
rebuild) and delta CRLs; a frozen clock through freezegun."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from freezegun import freeze_time
from revoke_helpers import T0, cert_of, crl_number, entries, serial_int

SECOND = datetime.timedelta(seconds=1)


def _check_crl(crl: x509.CertificateRevocationList, issuer_pem: str, this_update: datetime.datetime,
               expiry: datetime.timedelta = datetime.timedelta(hours=72)) -> None:
    issuer = cert_of(issuer_pem)
    assert crl.issuer == issuer.subject
    assert crl.is_signature_valid(issuer.public_key())
    assert isinstance(crl.signature_hash_algorithm, hashes.SHA256)
    assert [e.oid for e in crl.extensions] == [x509.oid.ExtensionOID.AUTHORITY_KEY_IDENTIFIER,
                                               x509.oid.ExtensionOID.CRL_NUMBER]
    aki = crl.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
    assert aki == issuer.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    assert crl.last_update_utc == this_update.replace(microsecond=0)
    assert crl.next_update_utc - crl.last_update_utc == expiry
    assert all(len(e.extensions) == 0 for e in crl)


def test_crl_lists_exactly_the_revoked_serials(pki, clock):
    assert crl_number(pki.crl()) == 1 and len(pki.crl()) == 0  # built at root generation
    leaves = [pki.issue() for _ in range(3)]
    pki.issue()  # never revoked
    expected = {}
    for n, leaf in enumerate(leaves):
        clock.advance(10)
        pki.revoke(serial_number=leaf["serial_number"])
        expected[serial_int(leaf["serial_number"])] = (T0 + (n + 1) * 10 * SECOND).replace(microsecond=0)
        crl = pki.crl()
        assert crl_number(crl) == 3 + 2 * n  # complete n, delta n+1 at each rebuild
        assert entries(crl) == expected
        _check_crl(crl, pki.root["certificate"], clock.now())
    # entries in the order OpenBao's storage lists them: by the lowercase colon-hex serial string
    by_text = sorted(expected, key=lambda n: ":".join(f"{b:02x}" for b in n.to_bytes((n.bit_length() + 7) // 8, "big")))
    assert [e.serial_number for e in crl] == by_text
    pem_resp = pki.call("GET", "crl/pem", token=None)
    assert pem_resp.headers["Content-Type"] == "application/x-pem-file" and not pem_resp.text.endswith("\n")
    assert x509.load_pem_x509_crl(pem_resp.content) == crl
    assert x509.load_pem_x509_crl(pki.ok("GET", "issuer/root/crl", token=None)["data"]["crl"].encode()) == crl
    assert pki.ok("GET", "cert/crl", token=None)["data"]["certificate"] == pem_resp.text
    assert pki.crl("issuer/default/crl/der") == crl


def test_each_issuer_has_its_own_crl(pki):
    other = pki.ok("POST", "root/generate/internal", {"common_name": "Second Root", "key_type": "ec",
                                                      "issuer_name": "second", "ttl": "8760h"})["data"]
    leaf_a = pki.issue()  # the default issuer is still "root"
    leaf_b = pki.ok("POST", "issuer/second/issue/web", {"common_name": "b.example.com"})["data"]
    pki.revoke(serial_number=leaf_a["serial_number"])
    pki.revoke(certificate=leaf_b["certificate"])
    crl_a, crl_b = pki.crl("issuer/root/crl/der"), pki.crl("issuer/second/crl/der")
    assert set(entries(crl_a)) == {serial_int(leaf_a["serial_number"])}
    assert set(entries(crl_b)) == {serial_int(leaf_b["serial_number"])}
    _check_crl(crl_b, other["certificate"], T0)
    assert pki.ok("GET", f"cert/{leaf_b['serial_number']}")["data"]["issuer_id"] == other["issuer_id"]
    assert (crl_number(crl_a), crl_number(crl_b)) == (7, 5)  # numbered per issuer; every rebuild covers both


def test_crl_rotate(pki, clock):
    leaf = pki.issue()
    pki.revoke(serial_number=leaf["serial_number"])
    before = pki.crl()
    clock.advance(3600)
    assert pki.ok("GET", "crl/rotate")["data"] == {"success": True}
    after = pki.crl()
    assert crl_number(after) == crl_number(before) + 2 and entries(after) == entries(before)
    _check_crl(after, pki.root["certificate"], clock.now())
    assert pki.fails("POST", "crl/rotate", {}, 405) == ["1 error occurred:\n\t* unsupported operation\n\n"]
    assert pki.call("GET", "crl/rotate", token=None).status_code == 403


def test_disabled_crl_ignores_revocations_and_rotation(pki):
    first = pki.issue()
    pki.revoke(serial_number=first["serial_number"])
    pki.ok("POST", "config/crl", {"disable": True})
    empty = pki.crl()
    assert len(empty) == 0
    second = pki.issue()
    pki.revoke(serial_number=second["serial_number"])
    pki.ok("GET", "crl/rotate")
    assert pki.crl() == empty  # neither the revocation nor the rotation rebuilt it
    pki.ok("POST", "config/crl", {"disable": False})
    crl = pki.crl()
    assert crl_number(crl) == crl_number(empty) + 2
    assert set(entries(crl)) == {serial_int(first["serial_number"]), serial_int(second["serial_number"])}


def test_auto_rebuild_waits_for_the_grace_period(pki, clock):
    """auto_rebuild: a revocation leaves the CRL alone; the CRL is rebuilt once it is within the grace
    period of its nextUpdate (upstream: by its periodic function; the double: when a CRL is served)."""
    pki.ok("POST", "config/crl", {"auto_rebuild": True})  # expiry 72h, grace 12h; no rebuild on this change
    built = pki.crl()
    leaf = pki.issue()
    clock.advance(60)
    pki.revoke(serial_number=leaf["serial_number"])
    assert pki.revoked_list() == [leaf["serial_number"]]
    assert pki.crl() == built
    clock.set(T0 + datetime.timedelta(hours=60))  # exactly nextUpdate - grace: not yet
    assert pki.crl() == built
    clock.advance(1)
    crl = pki.crl()
    assert crl_number(crl) == crl_number(built) + 2
    assert entries(crl) == {serial_int(leaf["serial_number"]): (T0 + 60 * SECOND).replace(microsecond=0)}
    _check_crl(crl, pki.root["certificate"], clock.now())
    assert pki.crl() == crl  # the next one is due 60h later
    pki.ok("POST", "config/crl", {"auto_rebuild": False})  # turning it off rebuilds at once
    assert crl_number(pki.crl()) == crl_number(crl) + 2


def test_delta_crls(pki, clock):
    pki.ok("POST", "config/crl", {"auto_rebuild": True, "enable_delta": True})  # rebuilds (delta changed)
    complete = pki.crl()
    delta = pki.crl("crl/delta")
    assert (crl_number(complete), crl_number(delta)) == (3, 4) and len(delta) == 0
    leaves = [pki.issue() for _ in range(2)]
    pki.revoke(serial_number=leaves[0]["serial_number"])
    assert pki.crl("crl/delta") == delta and pki.crl() == complete
    assert pki.ok("GET", "crl/rotate-delta") ["warnings"] is None
    delta = pki.crl("crl/delta")
    indicator = delta.extensions.get_extension_for_class(x509.DeltaCRLIndicator)
    assert (crl_number(delta), indicator.value.crl_number, indicator.critical) == (5, 3, True)
    assert set(entries(delta)) == {serial_int(leaves[0]["serial_number"])}
    assert delta.is_signature_valid(cert_of(pki.root["certificate"]).public_key())
    pki.ok("GET", "crl/rotate-delta")
    assert crl_number(pki.crl("crl/delta")) == 6  # forced: rebuilt even without news
    pki.revoke(serial_number=leaves[1]["serial_number"])
    clock.advance(14 * 60)
    assert crl_number(pki.crl("crl/delta")) == 6  # delta_rebuild_interval (15m) not over
    clock.advance(60)
    delta = pki.crl("issuer/root/crl/delta/der")
    assert crl_number(delta) == 7 and len(delta) == 2
    assert pki.crl() == complete
    pki.ok("GET", "crl/rotate")
    complete = pki.crl()
    assert crl_number(complete) == 8 and len(complete) == 2
    assert crl_number(pki.crl("crl/delta")) == 9 and len(pki.crl("crl/delta")) == 0


def test_rotate_delta_without_delta_crls(pki):
    body = pki.ok("GET", "crl/rotate-delta")
    assert body["data"] == {"success": True}
    assert body["warnings"] == ["requested rebuild of delta CRL when delta CRL is not enabled; this is a no-op"]


def test_crl_expiry_setting(pki, clock):
    pki.ok("POST", "config/crl", {"expiry": "24h"})
    leaf = pki.issue()
    pki.revoke(serial_number=leaf["serial_number"])
    _check_crl(pki.crl(), pki.root["certificate"], T0, expiry=datetime.timedelta(hours=24))


@pytest.mark.parametrize("frozen", ["2031-05-06T07:08:09.5Z"])
def test_freezegun_pins_revocation_times(empty, double, frozen):
    previous = double.clock.inner
    double.clock.use("follow")
    try:
        with freeze_time(frozen):
            root = empty.ok("POST", "root/generate/internal", {"common_name": "F", "key_type": "ec", "ttl": "8760h"})
            empty.ok("POST", "roles/web", {"allow_any_name": True, "key_type": "ec"})
            leaf = empty.issue(ttl="1h")
            data = empty.revoke(serial_number=leaf["serial_number"])["data"]
            assert data == {"revocation_time": 1935817689, "revocation_time_rfc3339": "2031-05-06T07:08:09.5Z",
                            "state": "revoked"}
            crl = empty.crl()
            assert entries(crl) == {serial_int(leaf["serial_number"]): datetime.datetime(
                2031, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)}
            _check_crl(crl, root["data"]["certificate"], datetime.datetime(2031, 5, 6, 7, 8, 9,
                                                                        tzinfo=datetime.timezone.utc))
    finally:
        double.clock.inner = previous
