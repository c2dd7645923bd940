"""The bookkeeping behind the fast paths: the certificate store's indexes, the journal's body budget,
and CertRecord's PEM made on demand."""

from __future__ import annotations

import datetime
from dataclasses import replace

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.journal import DROPPED, ENTRY_OVERHEAD, Journal
from pytest_schedpki.secrets.engines.pki.codecs.x509 import pem_of
from pytest_schedpki.secrets.engines.pki.model import CertRecord, CertStore, PkiState

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _cert(serial: int = 1) -> x509.Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "t")])
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(serial).not_valid_before(T0).not_valid_after(T0 + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))


def _record(serial: str, revoked: bool = False, stored: bool = True) -> CertRecord:
    cert = _cert()
    return CertRecord(serial_number=serial, certificate=cert, pem=pem_of(cert), issuer_id="i",
                      revocation_time=T0 if revoked else None, stored=stored)


def test_cert_store_tracks_revocations_versions_and_the_stored_listing():
    store = CertStore()
    store["b"] = _record("b")
    store["a"] = _record("a", revoked=True)
    store["c"] = _record("c", stored=False)
    assert store.revoked_serials() == {"a"} and store.stored_serials() == ("a", "b")
    version = store.version
    store["b"] = replace(store["b"], revocation_time=T0)
    assert store.version > version and store.revoked_serials() == {"a", "b"}
    del store["a"]
    store.pop("missing", None)
    assert store.revoked_serials() == {"b"} and store.stored_serials() == ("b",)
    store.update({"d": _record("d", revoked=True)})
    store.setdefault("e", _record("e"))
    assert store.revoked_serials() == {"b", "d"} and store.stored_serials() == ("b", "d", "e")
    copy = store.copy()
    copy["f"] = _record("f", revoked=True)
    assert store.revoked_serials() == {"b", "d"} and copy.revoked_serials() == {"b", "d", "f"}
    store.clear()
    assert store.revoked_serials() == set() and store.stored_serials() == ()


def test_pki_state_copies_keep_a_cert_store():
    state = PkiState()
    state.certs["a"] = _record("a", revoked=True)
    snapshot = state.copy()
    assert isinstance(snapshot.certs, CertStore) and snapshot.certs.revoked_serials() == {"a"}
    state.certs = {"b": _record("b", revoked=True)}  # a test may put a plain dict there
    assert isinstance(state.copy().certs, CertStore) and state.copy().certs.revoked_serials() == {"b"}


def test_cert_record_makes_its_pem_on_demand():
    cert = _cert()
    record = CertRecord(serial_number="01", certificate=cert, pem=pem_of(cert), issuer_id="i")
    assert record.pem == pem_of(cert) and record.pem_text is None
    odd = CertRecord(serial_number="01", certificate=cert, pem=pem_of(cert) + "\n", issuer_id="i")
    assert odd.pem == pem_of(cert) + "\n" and replace(odd, role="r").pem == odd.pem
    assert replace(record, role="r") == CertRecord("01", cert, None, "i", "r")


def test_journal_evicts_its_oldest_entries_beyond_its_byte_bound():
    response = b'{"x": "%s"}' % (b"y" * 90)
    each = ENTRY_OVERHEAD + len("/v1/p0") + len(b'{"n": 0}') + len(response)  # one entry's counted bytes
    journal = Journal(max_bytes=3 * each)
    for i in range(5):
        journal.record("secrets", "POST", f"/v1/p{i}", {}, "root", b'{"n": %d}' % i, 200, response)
    entries = journal.entries()
    assert [e.path for e in entries] == ["/v1/p2", "/v1/p3", "/v1/p4"] and journal.evicted == 2
    assert entries[0].body == {"n": 2} and entries[2].response == {"x": "y" * 90} and entries[2].status == 200
    assert journal.size_bytes == 3 * each
    journal.record("secrets", "GET", "/v1/big", {}, "root", b"", 200, b'"%s"' % (b"z" * 10 * each))
    last = journal.entries()[-1]  # alone over the bound: metadata kept, bodies dropped
    assert (last.path, last.status, last.body, last.response) == ("/v1/big", 200, DROPPED, DROPPED)
    journal.clear()
    journal.record("secrets", "GET", "/v1/again", {}, "root", b"", 200, b"{}")
    assert journal.entries()[0].response == {} and journal.evicted == 0
