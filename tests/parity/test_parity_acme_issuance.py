"""Parity: a whole ACME issuance by http-01 on bao and on the double - account, order, authorization,
challenge accepted (``processing``), validation, finalize, certificate download, revocation by the
certificate's key and by the account - with the certificates parsed.

bao validates by ``GET http://localhost:80/...``: the test binds 127.0.0.1:80 (it needs root, and the
port free); the double validates against the same responder through its ``challenge_address`` knob.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
import time

import acme_parity as a
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from pytest_schedpki.acme import Http01Responder, csr_for

pytestmark = pytest.mark.parity

DER = serialization.Encoding.DER


# the lock every test that binds 127.0.0.1:80 holds for as long as it needs the port (certbot's contract
# test, the differential ACME runner): certbot binds and frees the port between its steps
PORT80_LOCK = os.path.join(tempfile.gettempdir(), "schedpki-acme-port80.lock")


@pytest.fixture
def port80():
    """An http-01 responder on 127.0.0.1:80, under the port-80 lock (waits up to 60 s for the port;
    skips without root)."""
    if os.geteuid() != 0:
        pytest.skip("bao's http-01 validation connects to port 80: binding it needs root")
    with open(PORT80_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    responder = Http01Responder("127.0.0.1", 80)
                    break
                except OSError as exc:
                    if exc.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                        pytest.skip(f"port 80 is not free: {exc}")
                    time.sleep(0.5)
            yield responder
            responder.stop()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _poll(client, url: str, until: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.post(url).json()
        if body["status"] != "pending" and body["status"] != "processing" or time.monotonic() > deadline:
            return body
        time.sleep(0.5)


@pytest.mark.parametrize("prefix", ["acme/", "roles/web/acme/"])
def test_http01_issuance_and_revocation(web, port80, prefix):
    pki = web
    a.enable(pki)
    pki.double_obj.secrets.acme_knobs.update(challenge_address=port80.address)
    acme = a.AcmeSides(pki, prefix)
    acme.account()
    orders = acme.both(lambda c, s: c.new_order(["localhost"]), 201)
    order = {n: o.json() for n, o in orders.items()}
    authz = {n: acme.clients[n].post(order[n]["authorizations"][0]).json() for n in order}
    challenge = {n: next(c for c in authz[n]["challenges"] if c["type"] == "http-01") for n in authz}
    for name, client in acme.clients.items():
        port80.serve(challenge[name]["token"], client.key_authorization(challenge[name]["token"]))
    accepted = acme.both(lambda c, s: c.post(challenge[s.name]["url"], {}), 200)
    assert {ans.json()["status"] for ans in accepted.values()} == {"processing"}
    for name, client in acme.clients.items():
        assert _poll(client, orders[name].headers["location"], "ready")["status"] == "ready", name
    acme.both(lambda c, s: c.post(order[s.name]["authorizations"][0]), 200)
    acme.both(lambda c, s: c.post(challenge[s.name]["url"]), 200)
    cert_key = ec.generate_private_key(ec.SECP256R1())
    acme.both(lambda c, s: c.finalize(order[s.name]["finalize"], csr_for(c.key, ["localhost"])), 400, (
        "badCSR", "the CSR is unacceptable: certificate public key must not match account key"))
    acme.both(lambda c, s: c.finalize(order[s.name]["finalize"], csr_for(cert_key, ["other.example"])), 400, (
        "badCSR", "the CSR is unacceptable: CSR is missing order DNS identifier localhost"))
    if prefix != "acme/":  # the role's key rules apply (web: EC P-256)
        rsa_key = rsa.generate_private_key(65537, 2048)
        acme.both(lambda c, s: c.finalize(order[s.name]["finalize"], csr_for(rsa_key, ["localhost"])), 400, (
            "badCSR", "the CSR is unacceptable: refusing to sign CSR: role requires keys of type ec"))
    final = acme.both(lambda c, s: c.finalize(order[s.name]["finalize"], csr_for(cert_key, ["localhost"])), 200)
    downloads = acme.both(lambda c, s: c.post(final[s.name].json()["certificate"]), 200, compare_body=False)
    leaves = {}
    for side in pki.sides:
        answer = downloads[side.name]
        assert answer.headers["content-type"] == "application/pem-certificate-chain"
        chain = x509.load_pem_x509_certificates(answer.body)
        assert len(chain) == 2 and chain[1] == x509.load_pem_x509_certificate(side.vars["root_pem"].encode())
        leaf = leaves[side.name] = chain[0]
        assert leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
            x509.DNSName) == ["localhost"]
        assert list(leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
            ExtendedKeyUsageOID.SERVER_AUTH]
        assert leaf.public_key().public_numbers() == cert_key.public_key().public_numbers()
        if prefix == "acme/":  # sign-verbatim directory: the CSR's (empty) subject, no CN added
            assert leaf.subject == x509.Name([])
            assert leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).critical
        else:  # the role (require_cn) gets the first name as CN; its client flag is dropped for ACME
            assert leaf.subject.rfc4514_string() == "CN=localhost"
    lifetimes = {(leaf.not_valid_after_utc - leaf.not_valid_before_utc).total_seconds() for leaf in leaves.values()}
    assert lifetimes == ({768 * 3600 + 30} if prefix == "acme/" else {24 * 3600 + 30}), lifetimes  # mount / role TTL  # the mount's default TTL (below the 90-day cap) + 30 s
    acme.both(lambda c, s: c.revoke(leaves[s.name].public_bytes(DER), key=ec.generate_private_key(ec.SECP256R1())),
              400, ("malformed", "unable to revoke certificate: unable to verify proof of possession of private key "
                                 "provided by proxy: provided private key does not match certificate's public key: "
                                 "the request message was malformed"))
    acme.both(lambda c, s: c.revoke(leaves[s.name].public_bytes(DER), key=cert_key), 200)
    acme.both(lambda c, s: c.revoke(leaves[s.name].public_bytes(DER)), 400, (
        "alreadyRevoked", "unable to revoke certificate: the request specified a certificate to be revoked that has "
                          "already been revoked"))
    serials = {n: ":".join(f"{b:02x}" for b in leaf.serial_number.to_bytes(20, "big").lstrip(b"\0").rjust(1, b"\0"))
               for n, leaf in leaves.items()}
    pki.send("GET", lambda s: f"/v1/{pki.mount}/cert/{serials[s.name]}").expect(200).check(
        lambda s, r: r.json()["data"]["revocation_time"] > 0)


def test_bad_nonce_answers_carry_no_new_nonce(pki):
    a.enable(pki)
    acme = a.AcmeSides(pki)
    answers = acme.both(lambda c, s: c.new_account(terms_agreed=True) if False else c.post(
        c.directory()["newAccount"], {}, nonce="bm9uY2U"), 400)
    for answer in answers.values():
        assert "replay-nonce" not in answer.headers


def test_a_failed_http01_attempt_is_recorded_in_the_challenge(web, port80):
    a.enable(web)
    web.double_obj.secrets.acme_knobs.update(challenge_address=port80.address)
    acme = a.AcmeSides(web)
    acme.account()
    orders = acme.both(lambda c, s: c.new_order(["localhost"]), 201)
    authz = {n: acme.clients[n].post(o.json()["authorizations"][0]).json() for n, o in orders.items()}
    challenge = {n: next(c for c in authz[n]["challenges"] if c["type"] == "http-01") for n in authz}
    for name in acme.clients:
        port80.serve(challenge[name]["token"], f"{challenge[name]['token']}.{'x' * 43}")
    acme.both(lambda c, s: c.post(challenge[s.name]["url"], {}), 200)
    for name, client in acme.clients.items():
        deadline = time.monotonic() + 30
        while "error" not in client.post(challenge[name]["url"]).json() and time.monotonic() < deadline:
            time.sleep(0.2)
    answers = acme.both(lambda c, s: c.post(challenge[s.name]["url"]), 200)
    body = answers["double"].json()
    assert body["status"] == "processing" and body["error"]["status"] == 400
    assert "key authorization was invalid" in body["error"]["detail"]
    acme.both(lambda c, s: c.post(orders[s.name].headers["location"]), 200)
