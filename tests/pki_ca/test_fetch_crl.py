"""ca, ca/pem, ca_chain, cert/ca, cert/ca_chain, issuer/:ref/json|pem|der, config/urls, CRLs, config/crl."""

from __future__ import annotations

import dataclasses
import datetime

from ca_helpers import cert_of, errors
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from pytest_schedpki.secrets.engines.pki.codecs import x509 as pkix
from pytest_schedpki.secrets.engines.pki.model import CertRecord, serial_to_hex

UTC = datetime.timezone.utc


def test_fetch_paths_before_any_issuer(pki):
    for path, content_type in (("ca", "application/pkix-cert"), ("ca/pem", "application/pem-certificate-chain"),
                               ("ca_chain", "application/pkix-cert"), ("crl", "application/pkix-crl"),
                               ("crl/pem", "application/x-pem-file")):
        resp = pki.call("GET", path, token=None)
        assert (resp.status_code, resp.headers["Content-Type"], resp.content) == (204, content_type, b""), path
    for path in ("cert/ca", "cert/ca_chain"):
        resp = pki.call("GET", path, token=None)
        assert (resp.status_code, errors(resp)) == (400, ["no default issuer currently configured"])
    resp = pki.call("GET", "cert/crl", token=None)
    assert (resp.status_code, errors(resp)) == (500, ["no default issuer currently configured"])
    resp = pki.call("GET", "issuer/nope/crl/der", token=None)
    assert (resp.status_code, errors(resp)) == (500, ["unable to find PKI issuer for reference: nope"])
    resp = pki.call("GET", "issuer/default/pem", token=None)
    assert (resp.status_code, errors(resp)) == (500, ["no default issuer currently configured"])


def test_ca_fetch_paths(pki):
    root = pki.root(common_name="Root", issuer_name="root-a")
    pem = root["certificate"]
    der = cert_of(pem).public_bytes(serialization.Encoding.DER)
    expected = {"ca": (der, "application/pkix-cert"), "ca/pem": (pem.encode(), "application/pem-certificate-chain"),
                "ca_chain": (pem.encode(), "application/pkix-cert"), "cert/ca/raw": (der, "application/pkix-cert"),
                "cert/ca/raw/pem": (pem.encode(), "application/pem-certificate-chain"),
                "issuer/root-a/pem": ((pem + "\n").encode(), "application/pem-certificate-chain"),
                "issuer/default/der": (der, "application/pkix-cert")}
    for path, (body, content_type) in expected.items():
        resp = pki.call("GET", path, token="not-a-token")  # an invalid token is ignored on these paths
        assert (resp.status_code, resp.headers["Content-Type"], resp.content) == (200, content_type, body), path
    data = pki.ok("GET", "cert/ca", token=None)["data"]
    assert data == {"certificate": pem, "revocation_time": 0, "revocation_time_rfc3339": ""}
    data = pki.ok("GET", "cert/ca_chain", token=None)["data"]
    assert data == {"ca_chain": pem, "certificate": pem, "revocation_time": 0, "revocation_time_rfc3339": ""}
    data = pki.ok("GET", "issuer/root-a/json", token=None)["data"]
    assert data == {"ca_chain": [pem + "\n"], "certificate": pem + "\n", "issuer_id": root["issuer_id"],
                    "issuer_name": "root-a"}


def test_config_urls_merge_and_validation(pki):
    empty = pki.ok("GET", "config/urls")["data"]
    assert empty == {"crl_distribution_points": [], "delta_crl_distribution_points": [], "enable_templating": False,
                     "issuing_certificates": [], "ocsp_servers": []}
    resp = pki.call("POST", "config/urls", {"issuing_certificates": "not a url"})
    assert (resp.status_code, errors(resp)) == (400, [
        "invalid URL found in Authority Information Access (AIA) parameter issuing_certificates: not a url"])
    pki.ok("POST", "config/urls", {"issuing_certificates": "http://a/ca,http://b/ca", "ocsp_servers": ["http://o"]})
    after = pki.ok("POST", "config/urls", {"ocsp_servers": []})["data"]
    assert after["issuing_certificates"] == ["http://a/ca", "http://b/ca"] and after["ocsp_servers"] == []
    assert pki.ok("GET", "config/urls")["data"] == after


def _revoke(pki, cert: x509.Certificate, issuer_id: str, when: datetime.datetime) -> None:
    """Store a revoked certificate the way the revocation paths record one."""
    serial = serial_to_hex(cert.serial_number)
    pki.state.certs[serial] = CertRecord(serial_number=serial, certificate=cert, pem=pkix.pem_of(cert),
                                         issuer_id=issuer_id, revocation_time=when)


def _leaf(pki, issuer_id: str) -> x509.Certificate:
    issuer = pki.state.issuers[issuer_id]
    key = pkix.generate_key("ec", 256)[0]
    now = datetime.datetime.now(UTC)
    return pkix.sign_certificate(issuer_cert=issuer.certificate, issuer_key=pki.state.keys[issuer.key_id].private_key,
                                 public_key=key.public_key(), subject=pkix.build_subject(common_name="leaf"),
                                 serial=pkix.new_serial(), not_before=now, not_after=now + datetime.timedelta(hours=1),
                                 key_usage=["DigitalSignature"], ext_key_usage=["ServerAuth"])


def _crl_number(crl: x509.CertificateRevocationList) -> int:
    return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number


def test_crls_per_issuer(pki):
    a = pki.root(common_name="Root A", issuer_name="root-a", key_type="rsa")
    b = pki.root(common_name="Root B", issuer_name="root-b")
    root_a = cert_of(a["certificate"])
    crl = x509.load_der_x509_crl(pki.call("GET", "crl", token=None).content)
    assert len(crl) == 0 and crl.issuer == root_a.subject and crl.is_signature_valid(root_a.public_key())
    # built at the first root generation (1, delta 2), rebuilt at the second (3, delta 4)
    assert _crl_number(crl) == 3
    assert [e.oid._name for e in crl.extensions] == ["authorityKeyIdentifier", "cRLNumber"]
    aki = crl.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
    assert aki == x509.SubjectKeyIdentifier.from_public_key(root_a.public_key()).digest
    assert crl.next_update_utc - crl.last_update_utc == datetime.timedelta(hours=72)
    assert isinstance(crl.signature_hash_algorithm, hashes.SHA256)

    when = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    revoked_leaf = _leaf(pki, a["issuer_id"])
    _revoke(pki, revoked_leaf, a["issuer_id"], when)
    pem = pki.call("GET", "crl/pem", token=None)
    assert pem.headers["Content-Type"] == "application/x-pem-file" and not pem.text.endswith("\n")
    crl = x509.load_pem_x509_crl(pem.content)
    assert _crl_number(crl) == 5 and len(crl) == 1
    entry = crl.get_revoked_certificate_by_serial_number(revoked_leaf.serial_number)
    assert entry.revocation_date_utc == when and len(entry.extensions) == 0
    assert pki.ok("GET", "cert/crl", token=None)["data"] == {"certificate": pem.text, "revocation_time": 0,
                                                             "revocation_time_rfc3339": ""}
    # root-b has its own, empty CRL; the JSON and PEM forms of issuer/:ref/crl end with a newline
    b_json = pki.ok("GET", "issuer/root-b/crl", token=None)["data"]["crl"]
    assert b_json.endswith("-----END X509 CRL-----\n")
    b_crl = x509.load_pem_x509_crl(b_json.encode())
    assert len(b_crl) == 0 and b_crl.issuer == cert_of(b["certificate"]).subject
    assert pki.call("GET", "issuer/root-b/crl/pem", token=None).text == b_json
    assert x509.load_der_x509_crl(pki.call("GET", "issuer/root-b/crl/der").content) == b_crl
    rotated = pki.ok("GET", "crl/rotate")
    assert rotated["data"] == {"success": True}
    assert _crl_number(x509.load_der_x509_crl(pki.call("GET", "crl").content)) == 7
    delta = x509.load_der_x509_crl(pki.call("GET", "crl/delta", token=None).content)
    indicator = delta.extensions.get_extension_for_class(x509.DeltaCRLIndicator)
    assert (_crl_number(delta), indicator.value.crl_number, indicator.critical, len(delta)) == (8, 7, True, 0)
    assert pki.call("GET", "issuer/root-b/crl/delta/pem", token=None).text.endswith("-----END X509 CRL-----\n")
    assert pki.call("GET", "crl/rotate", token=None).status_code == 403


def test_config_crl(pki):
    defaults = pki.ok("GET", "config/crl")["data"]
    assert defaults == {"allow_expired_cert_revocation": False, "auto_rebuild": False, "auto_rebuild_grace_period": "12h",
                        "delta_rebuild_interval": "15m", "disable": False, "enable_delta": False, "expiry": "72h",
                        "ocsp_disable": False, "ocsp_expiry": "12h"}
    cases = [({"expiry": "bad"}, 'given expiry could not be decoded: strconv.ParseInt: parsing "ba": invalid syntax'),
             ({"expiry": "soon"}, 'given expiry could not be decoded: time: invalid duration "soon"'),
             ({"enable_delta": True}, "Delta CRLs cannot be enabled when auto rebuilding is disabled as the complete CRL "
                                      "is always regenerated!"),
             ({"auto_rebuild": True, "auto_rebuild_grace_period": "72h"},
              "CRL auto-rebuilding grace period (72h) must be strictly shorter than CRL expiry (72h) value when "
              "auto-rebuilding of CRLs is enabled")]
    for body, message in cases:
        resp = pki.call("POST", "config/crl", body)
        assert (resp.status_code, errors(resp)) == (400, [message])
    assert pki.ok("POST", "config/crl", {"expiry": "48h"})["data"] == {**defaults, "expiry": "48h"}
    root = pki.root(common_name="R")
    crl = x509.load_der_x509_crl(pki.call("GET", "crl").content)
    assert crl.next_update_utc - crl.last_update_utc == datetime.timedelta(hours=48)
    leaf = _leaf(pki, root["issuer_id"])
    _revoke(pki, leaf, root["issuer_id"], datetime.datetime.now(UTC))
    assert len(x509.load_der_x509_crl(pki.call("GET", "crl").content)) == 1
    pki.ok("POST", "config/crl", {"disable": True})
    assert len(x509.load_der_x509_crl(pki.call("GET", "crl").content)) == 0


def test_crl_signature_follows_revocation_signature_algorithm(pki):
    root = pki.root(common_name="R", key_type="rsa", signature_bits=512, issuer_name="r")
    assert pki.ok("GET", "issuer/r")["data"]["revocation_signature_algorithm"] == "SHA512WithRSA"
    crl = x509.load_der_x509_crl(pki.call("GET", "crl").content)
    assert isinstance(crl.signature_hash_algorithm, hashes.SHA512)
    assert dataclasses.is_dataclass(pki.state.issuers[root["issuer_id"]])
