"""ACME on the double alone: the knobs (challenge_address, always_valid, validation_delay,
bad_nonce_share), the three challenge types against local servers, failed validations, what the rest
of the double sees of an ACME certificate (``schedpki.certs``, the journal, CRL and OCSP), the control
endpoint and resets."""

from __future__ import annotations

import datetime
import json
import socket
import ssl
import struct
import threading
import time

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pytest_schedpki.acme import csr_for

DER = serialization.Encoding.DER


def _wait(client, url: str, statuses=("pending", "processing"), timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.post(url).json()
        if body["status"] not in statuses or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


def _order(acme, names=("www.example.com",), prefix_client=None):
    client = prefix_client or acme.client
    assert client.new_account(contact=["mailto:ops@example.com"]).status == 201
    answer = client.new_order(list(names))
    assert answer.status == 201, answer.body
    order = answer.json()
    authz = client.post(order["authorizations"][0]).json()
    return client, answer.headers["location"], order, authz


def _challenge(authz: dict, kind: str) -> dict:
    return next(c for c in authz["challenges"] if c["type"] == kind)


def test_http01_through_the_challenge_address_knob(schedpki, acme, responder):
    client, location, order, authz = _order(acme)
    challenge = _challenge(authz, "http-01")
    responder.serve(challenge["token"], client.key_authorization(challenge["token"]))
    assert client.post(challenge["url"], {}).json()["status"] == "processing"
    assert _wait(client, location)["status"] == "ready"
    assert responder.requests == [challenge["token"]]
    key = ec.generate_private_key(ec.SECP256R1())
    final = client.finalize(order["finalize"], csr_for(key, ["www.example.com"]))
    assert final.status == 200 and final.json()["status"] == "valid"
    chain = x509.load_pem_x509_certificates(client.post(final.json()["certificate"]).body)
    issued = schedpki.certs.assert_issued(san="www.example.com", mount=acme.name)
    assert issued.certificate == chain[0]
    account = schedpki.acme.assert_account(contact="mailto:ops@example.com", mount=acme.name, status="valid")
    order = schedpki.acme.assert_order(identifier="www.example.com", account=account.kid, status="valid")
    assert order.serial_number == issued.serial_number and order.authorizations == ("valid",)
    with pytest.raises(AssertionError, match="no ACME order with"):
        schedpki.acme.assert_order(identifier="nope.example.com")
    with pytest.raises(TypeError, match="unknown criteria: colour"):
        schedpki.acme.orders(colour="red")
    assert any(e.path.endswith("/finalize") for e in schedpki.journal.entries())
    assert client.revoke(chain[0].public_bytes(DER)).status == 200
    schedpki.certs.assert_revoked(san="www.example.com")
    crl = x509.load_der_x509_crl(acme.read("crl").content)
    assert crl.get_revoked_certificate_by_serial_number(chain[0].serial_number) is not None


def test_always_valid_fetches_nothing(schedpki, acme, responder):
    schedpki.acme_knobs(always_valid=True)
    client, location, order, authz = _order(acme)
    answer = client.post(_challenge(authz, "dns-01")["url"], {}).json()
    assert answer["status"] == "valid" and answer["validated"]
    assert client.post(location).json()["status"] == "ready"
    assert client.post(order["authorizations"][0]).json()["status"] == "valid"
    assert responder.requests == []


def test_validation_delay_keeps_the_challenge_processing(schedpki, acme, responder):
    schedpki.acme_knobs(validation_delay=30)
    client, location, order, authz = _order(acme)
    challenge = _challenge(authz, "http-01")
    responder.serve(challenge["token"], client.key_authorization(challenge["token"]))
    client.post(challenge["url"], {})
    assert client.post(challenge["url"]).json()["status"] == "processing"
    assert responder.requests == []


def test_bad_nonce_share_refuses_valid_nonces(schedpki, acme):
    schedpki.acme_knobs(bad_nonce_share=1)
    answer = acme.client.new_account()
    assert answer.status == 400
    assert answer.json() == {"type": "urn:ietf:params:acme:error:badNonce",
                             "detail": "invalid or reused nonce: the client sent an unacceptable anti-replay nonce"}
    schedpki.acme_knobs(bad_nonce_share=0.5, seed=7)
    first = [acme.client.new_account().status != 400 for _ in range(12)]
    schedpki.acme_knobs(bad_nonce_share=0.5, seed=7)
    again = [acme.client.new_account().status != 400 for _ in range(12)]
    assert first == again and True in first and False in first  # the same seeded pattern


def test_a_wrong_key_authorization_is_recorded_and_retried(acme, responder):
    client, location, order, authz = _order(acme)
    challenge = _challenge(authz, "http-01")
    responder.serve(challenge["token"], f"{challenge['token']}.{'x' * 43}")
    client.post(challenge["url"], {})
    deadline = time.monotonic() + 30
    while "error" not in (state := client.post(challenge["url"]).json()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert state["status"] == "processing"  # upstream retries after 5, 10, 15... seconds
    assert state["error"]["type"] == "urn:ietf:params:acme:error:incorrectResponse"
    assert state["error"]["detail"] == (
        f"response received didn't match the challenge's requirements: error validating http-01 challenge "
        f"{authz['challenges'][0]['url'].split('/')[-2]}-http-01: key authorization was invalid; this may occur if the "
        "validation target was misconfigured: check that challenge responses are available at the required "
        "locations and retry.")
    assert client.post(location).json()["status"] == "pending"


class _TxtServer:
    """A one-name UDP DNS server answering TXT ``records`` for every question."""

    def __init__(self, records: list[str]):
        self.records = records
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.questions: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                query, peer = self.sock.recvfrom(4096)
            except OSError:
                return
            end = query.index(b"\0", 12) + 5
            self.questions.append(query[12:end - 4])
            answers = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", 16, 1, 60, len(r) + 1) + bytes([len(r)]) + r.encode()
                               for r in self.records)
            header = query[:2] + struct.pack(">HHHHH", 0x8180, 1, len(self.records), 0, 0)
            self.sock.sendto(header + query[12:end] + answers, peer)

    def close(self) -> None:
        self.sock.close()


def test_dns01_asks_the_dns_server_of_the_knob(schedpki, acme):
    client, location, order, authz = _order(acme)
    challenge = _challenge(authz, "dns-01")
    server = _TxtServer(["unrelated", client.dns_txt(challenge["token"])])
    try:
        schedpki.acme_knobs(challenge_address=server.address)
        client.post(challenge["url"], {})
        assert _wait(client, location)["status"] == "ready"
        assert server.questions[0] == b"\x0f_acme-challenge\x03www\x07example\x03com\x00"
    finally:
        server.close()


def _alpn_certificate(name: str, digest: bytes):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.5.5.7.1.31"),
                                                      b"\x04\x20" + digest), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def test_tls_alpn01_checks_the_acme_identifier(schedpki, acme, tmp_path):
    client, location, order, authz = _order(acme)
    challenge = _challenge(authz, "tls-alpn-01")
    import hashlib
    digest = hashlib.sha256(client.key_authorization(challenge["token"]).encode()).digest()
    cert, key = _alpn_certificate("www.example.com", digest)
    (tmp_path / "c.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "k.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    context.set_alpn_protocols(["acme-tls/1"])
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        try:
            conn, _ = listener.accept()
            with context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)
        except OSError:
            pass
    threading.Thread(target=serve, daemon=True).start()
    try:
        schedpki.acme_knobs(challenge_address=f"127.0.0.1:{listener.getsockname()[1]}")
        client.post(challenge["url"], {})
        assert _wait(client, location)["status"] == "ready"
    finally:
        listener.close()


def test_control_endpoint_and_reset(schedpki, acme):
    control = schedpki.secrets.url + "/_schedpki/acme"
    token = getattr(schedpki.double, "control_token", None)
    headers = {"X-Schedpki-Control-Token": token} if token else {}
    assert requests.get(control, headers=headers).json() == {
        "challenge_address": "", "always_valid": False, "validation_delay": 0.0, "bad_nonce_share": 0.0, "seed": None}
    answer = requests.post(control, json={"always_valid": True, "challenge_address": "127.0.0.1:8080"}, headers=headers)
    assert answer.json()["always_valid"] is True and schedpki.acme.knobs.challenge_address == "127.0.0.1:8080"
    assert requests.post(control, json={"bad_nonce_share": 2}, headers=headers).status_code == 400
    assert requests.delete(control, headers=headers).json()["always_valid"] is False
    with pytest.raises(ValueError, match="unknown ACME knob"):
        schedpki.acme_knobs(nope=1)
    schedpki.acme_knobs(always_valid=True)
    assert acme.client.new_account().status == 201
    schedpki.double.reset()
    assert schedpki.acme.knobs.always_valid is False
    assert acme.read("config/acme").status_code == 404  # the mount is gone with the reset


def test_the_eab_hmac_key_never_reaches_the_journal(schedpki, acme):
    answer = acme.session.post(f"{acme.url}/acme/new-eab")
    key = answer.json()["data"]["key"]
    entries = [e for e in schedpki.journal.entries() if e.path.endswith("/acme/new-eab")]
    assert entries and key not in json.dumps([e.response for e in entries], default=str)
    assert entries[-1].response["data"]["key"] == "<redacted>"


def test_requests_clients_get_the_same_answers_in_process(schedpki, acme):
    """A requests-based client (certbot's acme library is one) goes through the plugin's in-process
    transport: HEAD new-nonce, the Replay-Nonce/Link/Location headers, 201 and problem documents."""
    head = requests.head(acme.client.directory()["newNonce"], timeout=10)
    assert head.status_code == 200 and head.headers["Replay-Nonce"] and "Content-Type" not in head.headers
    body = acme.client.jws(acme.client.directory()["newAccount"], {"termsOfServiceAgreed": True}, use_jwk=True,
                           nonce=head.headers["Replay-Nonce"])
    created = requests.post(acme.client.directory()["newAccount"], json=body, timeout=10,
                            headers={"Content-Type": "application/jose+json"})
    assert created.status_code == 201 and created.headers["Location"].startswith(acme.url + "/acme/account/")
    assert created.headers["Link"].endswith('/acme/directory>;rel="index"') and created.headers["Replay-Nonce"]
    again = requests.post(acme.client.directory()["newAccount"], json=body, timeout=10,
                          headers={"Content-Type": "application/jose+json"})
    assert again.status_code == 400 and again.headers["Content-Type"] == "application/problem+json"
    assert again.json()["type"] == "urn:ietf:params:acme:error:badNonce"
