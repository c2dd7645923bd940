"""The certificate store's write transactions, ordered index and baseline checkouts, and what they
mean through the request pipeline: a refused write leaves no trace, ``LIST certs`` pages in storage
order, a reset returns to the baseline (CRL and revoked listing included)."""

from __future__ import annotations

import datetime
import random
from dataclasses import replace

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki import Double
from pytest_schedpki.secrets.engines.pki import certstore
from pytest_schedpki.secrets.engines.pki.certs import list_page
from pytest_schedpki.secrets.engines.pki.certstore import CertStore
from pytest_schedpki.secrets.engines.pki.model import CertRecord, serial_to_hex
from pytest_schedpki.secrets.engines.pki.revocation import revoke as revoke_module
from pytest_schedpki.secrets.framework.logical import LogicalError, user_error
from pytest_schedpki.secrets.http import dispatch

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
_KEY = ec.generate_private_key(ec.SECP256R1())
_CERT = (x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(x509.Name([]))
         .public_key(_KEY.public_key()).serial_number(1).not_valid_before(T0)
         .not_valid_after(T0 + datetime.timedelta(days=1)).sign(_KEY, hashes.SHA256()))


def _record(serial: str, revoked: bool = False, stored: bool = True) -> CertRecord:
    return CertRecord(serial_number=serial, certificate=_CERT, issuer_id="i",
                      revocation_time=T0 if revoked else None, stored=stored)


def _view(store: CertStore) -> tuple:
    """Everything a reader of the store can see."""
    return dict(store), store.revoked_serials(), store.stored_serials(), store.page("", 0)


def _serials(rng: random.Random, count: int) -> list[str]:
    return [serial_to_hex(rng.getrandbits(rng.choice((8, 16, 64, 159))) | 1) for _ in range(count)]


def test_page_is_list_page_over_the_stored_serials():
    rng = random.Random(16)
    store = CertStore()
    for serial in _serials(rng, 300):
        store[serial] = _record(serial, revoked=rng.random() < 0.2, stored=rng.random() < 0.9)
    for serial in rng.sample(list(store), 40):  # changes after the index was built keep it in order
        if rng.random() < 0.5:
            del store[serial]
        else:
            store[serial] = replace(store[serial], stored=not store[serial].stored)
    stored = [s for s, r in store.items() if r.stored]
    assert list(store.page()) == sorted(stored, key=lambda s: s.replace(":", "-"))
    afters = ["", "zz", "0", "7", "7f", "7f:", "7f-"] + [rng.choice(stored) for _ in range(10)]
    afters += [a.replace(":", "-") for a in afters]
    for after in afters:
        for limit in (-1, 0, 1, 2, 100, 1000):
            assert store.page(after, limit) == list_page(stored, after, limit), (after, limit)


def test_a_rolled_back_write_leaves_no_trace_in_records_or_indexes():
    store = CertStore({"01": _record("01"), "02": _record("02", revoked=True), "03": _record("03", stored=False)})
    before, version = _view(store), store.version
    mark = store.begin()
    store["04"] = _record("04", revoked=True)
    store["01"] = replace(store["01"], revocation_time=T0)
    del store["02"]
    store.pop("03")
    store["05"] = _record("05")
    store["05"] = _record("05", stored=False)
    store.setdefault("06", _record("06"))
    store.popitem()
    assert _view(store) != before
    store.end(mark, rollback=True)
    assert _view(store) == before
    assert store.version > version  # what cached on the version sees a change


def test_nested_writes_undo_only_their_own_changes():
    store = CertStore({"01": _record("01")})
    outer = store.begin()
    store["02"] = _record("02")
    inner = store.begin()
    store["03"] = _record("03", revoked=True)
    store.end(inner, rollback=True)
    assert set(store) == {"01", "02"} and store.revoked_serials() == set()
    store.end(outer)
    assert set(store) == {"01", "02"} and store.stored_serials() == ("01", "02")
    mark = store.begin()  # a committed write cannot be undone by the next one
    store.end(mark, rollback=True)
    assert set(store) == {"01", "02"}


def test_checkout_leaves_the_snapshot_alone_and_undoes_only_the_changes_since():
    baseline = CertStore({f"{n:02x}": _record(f"{n:02x}", revoked=n % 3 == 0) for n in range(1, 50)})
    expected = _view(baseline)
    live = baseline.checkout()
    live["aa"] = _record("aa", revoked=True)
    del live["01"]
    live["02"] = replace(live["02"], revocation_time=T0)
    assert _view(baseline) == expected  # the snapshot never changes
    again = baseline.checkout()
    assert again is live  # the same store, its changes undone rather than the baseline copied
    assert _view(again) == expected


def test_checkout_copies_again_when_the_log_outgrew_the_store(monkeypatch):
    monkeypatch.setattr(certstore, "UNDO_KEPT_MIN", 4)
    baseline = CertStore({"01": _record("01")})
    live = baseline.checkout()
    for n in range(10):  # 10 changes to a store of 1 record: undoing them would cost more than a copy
        mark = live.begin()
        live["01"] = _record("01", revoked=n % 2 == 0)
        live.end(mark)
    fresh = baseline.checkout()
    assert fresh is not live and _view(fresh) == _view(baseline)


# ----------------------------------------------------------------------- through the pipeline


@pytest.fixture
def double():
    double = Double()
    double.secrets.enable_mount("pki", max_lease_ttl=87600 * 3600)
    write("pki/root/generate/internal", {"common_name": "root", "key_type": "ec"}, double)
    write("pki/roles/ec", {"allow_any_name": True, "key_type": "ec", "ttl": "1h"}, double)
    return double


def write(path: str, body: dict, double: Double):
    return dispatch(double.secrets, "update", path, body, "root")


def listing(double: Double, path: str = "pki/certs/", **query) -> list[str]:
    try:
        return dispatch(double.secrets, "list", path, {k: str(v) for k, v in query.items()}, "root").data["keys"]
    except LogicalError as exc:
        assert exc.status == 404
        return []


def crl_serials(double: Double) -> set[str]:
    raw = dispatch(double.secrets, "read", "pki/crl", {}, None).raw[0]
    return {serial_to_hex(entry.serial_number) for entry in x509.load_der_x509_crl(raw)}


def test_a_revoke_refused_after_recording_leaves_no_trace(double, monkeypatch):
    serial = write("pki/issue/ec", {"common_name": "a.example.com"}, double).data["serial_number"]
    backend = double.secrets.mount("pki").backend
    crl_before = backend.state.crls

    def failing_rebuild(backend, force=False):
        raise user_error("error building CRLs: injected")

    monkeypatch.setattr(revoke_module, "rebuild_crls", failing_rebuild)
    with pytest.raises(LogicalError) as refused:
        write("pki/revoke", {"serial_number": serial}, double)
    assert refused.value.status == 400 and refused.value.errors == ["error building CRLs: injected"]
    record = dispatch(double.secrets, "read", f"pki/cert/{serial}", {}, None).data
    assert record["revocation_time"] == 0 and record["revocation_time_rfc3339"] == ""
    assert listing(double, "pki/certs/revoked/") == []
    assert backend.state.crls == crl_before and crl_serials(double) == set()
    monkeypatch.undo()
    assert write("pki/revoke", {"serial_number": serial}, double).data["revocation_time"] > 0
    assert listing(double, "pki/certs/revoked/") == [serial] and crl_serials(double) == {serial}


def test_list_certs_pages_after_writes(double):
    serials = [write("pki/issue/ec", {"common_name": f"{n}.example.com"}, double).data["serial_number"]
               for n in range(12)]
    everything = listing(double)
    assert sorted(everything, key=lambda s: s.replace(":", "-")) == everything and set(serials) < set(everything)
    pages, after = [], ""
    while page := listing(double, limit=5, **({"after": after} if after else {})):
        pages.append(page)
        after = page[-1].replace(":", "-")
    assert [len(p) for p in pages] == [5, 5, 3] and sum(pages, []) == everything


def test_reset_returns_to_the_baseline_store_crl_and_revoked_listing(double):
    kept = [write("pki/issue/ec", {"common_name": f"b{n}.example.com"}, double).data["serial_number"]
            for n in range(5)]
    write("pki/revoke", {"serial_number": kept[0]}, double)
    double.save_baseline()
    expected = (listing(double), listing(double, "pki/certs/revoked/"), crl_serials(double))
    assert expected[1] == [kept[0]] and expected[2] == {kept[0]}
    for round_ in range(3):
        new = write("pki/issue/ec", {"common_name": f"n{round_}.example.com"}, double).data["serial_number"]
        write("pki/revoke", {"serial_number": new}, double)
        write("pki/revoke", {"serial_number": kept[1]}, double)
        assert crl_serials(double) == {kept[0], kept[1], new}
        double.reset()
        assert (listing(double), listing(double, "pki/certs/revoked/"), crl_serials(double)) == expected
        record = dispatch(double.secrets, "read", f"pki/cert/{kept[1]}", {}, None).data
        assert record["revocation_time"] == 0


def test_reset_renews_an_unchanged_mount_and_rebuilds_a_replaced_one(double):
    serial = write("pki/issue/ec", {"common_name": "kept.example.com"}, double).data["serial_number"]
    double.save_baseline()
    expected = listing(double)
    mount = double.secrets.mount("pki")
    backend, uuid, listeners = mount.backend, mount.uuid, list(mount.backend.issuer_listeners)
    write("sys/mounts/pki/tune", {"default_lease_ttl": "1h", "description": "tuned"}, double)
    backend.external_policy = lambda request: None  # what a test may set on the engine
    backend.issuer_listeners.append(lambda backend: None)
    double.reset()
    assert double.secrets.mount("pki") is mount and mount.backend is backend  # renewed, not rebuilt
    assert (mount.default_lease_ttl, mount.description) == (0, "")
    assert not hasattr(backend, "external_policy") and backend.issuer_listeners == listeners
    assert listing(double) == expected and serial in expected

    dispatch(double.secrets, "delete", "sys/mounts/pki", {}, "root")
    double.secrets.enable_mount("pki")  # the same path, another mount
    assert listing(double) == []
    double.reset()
    assert double.secrets.mount("pki").uuid == uuid and listing(double) == expected
