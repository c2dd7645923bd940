"""Contract: certbot's ``acme`` library (``ClientV2``, what certbot itself drives) against the PKI
mount's ACME server: directory, new account, an EAB account, new order, http-01 answered by a small
HTTP server of the test, finalize, the chain downloaded, revocation - then the certificate parsed with
``cryptography`` and the CRL and OCSP (cryptography's ``ocsp`` module and ``openssl ocsp``) saying
REVOKED.

Against the double the test uses the plugin's ``schedpki`` fixture as a user would, with the
``challenge_address`` knob pointing validation at the test's server on a free port; against a real
``bao server -dev`` (marker ``parity``) the same body runs with the server on ``127.0.0.1:80``
(:func:`acme_helpers.port80`), the identifier being ``localhost``.
"""

from __future__ import annotations

import datetime
import shutil
import subprocess
import tempfile

import pytest
import requests
from acme_helpers import (
    ChallengeServer,
    call,
    crl_revoked_serials,
    ocsp_status,
    port80,
    setup_acme_mount,
)
from contract_helpers import unique_mount

acme_client = pytest.importorskip("acme.client", reason="certbot's acme library is not installed")
import josepy as jose  # noqa: E402
from acme import challenges, crypto_util, messages  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509 import ocsp  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID  # noqa: E402

DOUBLE_NAME = "www.acme-client.example.com"  # never resolved: the knob sends validation to the test's server


def _client(directory_url: str) -> tuple[acme_client.ClientV2, jose.JWKEC]:
    key = jose.JWKEC(key=ec.generate_private_key(ec.SECP256R1()))
    net = acme_client.ClientNetwork(key, alg=jose.ES256, user_agent="schedpki-contract")
    return acme_client.ClientV2(acme_client.ClientV2.get_directory(directory_url, net), net), key


def _csr(name: str) -> tuple[bytes, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return crypto_util.make_csr(pem, [name]), key


def _issue(client, account_key, server: ChallengeServer, name: str) -> tuple[list[x509.Certificate], ec.EllipticCurvePrivateKey]:
    csr, key = _csr(name)
    order = client.new_order(csr)
    assert order.body.status == messages.STATUS_PENDING
    assert [a.body.identifier.value for a in order.authorizations] == [name]
    for authz in order.authorizations:
        assert authz.body.identifier.typ == messages.IDENTIFIER_FQDN
        offered = [c.chall.typ for c in authz.body.challenges if not isinstance(c.chall, challenges.UnrecognizedChallenge)]
        assert "http-01" in offered and "dns-01" in offered, offered
        challb = next(c for c in authz.body.challenges if isinstance(c.chall, challenges.HTTP01))
        response, validation = challb.response_and_validation(account_key)
        server.serve(challb.chall.encode("token"), validation)
        client.answer_challenge(challb, response)
    order = client.poll_and_finalize(order, datetime.datetime.now() + datetime.timedelta(seconds=60))
    assert order.body.status == messages.STATUS_VALID
    with pytest.raises(messages.Error) as again:  # the authorization is valid now: nothing to accept
        client.answer_challenge(challb, response)
    authz_id = order.authorizations[-1].uri.rsplit("/", 1)[1]
    assert again.value.typ == "urn:ietf:params:acme:error:malformed"
    assert again.value.detail == ("error submitting challenge for validation: the request message was malformed: "
                                  f"cannot accept already validated authorization {authz_id} (valid)")
    return x509.load_pem_x509_certificates(order.fullchain_pem.encode()), key


def _openssl_ocsp(chain: list[x509.Certificate], responder: str) -> str:
    with tempfile.TemporaryDirectory(prefix="schedpki-acme-ocsp-") as tmp:
        for name, cert in (("leaf.pem", chain[0]), ("ca.pem", chain[-1])):
            with open(f"{tmp}/{name}", "wb") as f:
                f.write(cert.public_bytes(serialization.Encoding.PEM))
        done = subprocess.run(["openssl", "ocsp", "-issuer", "ca.pem", "-cert", "leaf.pem", "-CAfile", "ca.pem",
                               "-url", responder], cwd=tmp, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "Response verify OK" in done.stderr, done.stdout + done.stderr
    return done.stdout


def issue_and_revoke(url: str, mount: str, name: str, server: ChallengeServer) -> None:
    """The whole journey on one server (``url`` without ``/v1``); every check in one place so the
    double and bao are held to the same assertions."""
    root_pem = setup_acme_mount(url, mount)["certificate"]
    root = x509.load_pem_x509_certificate(root_pem.encode())
    directory = f"{url}/v1/{mount}/acme/directory"
    raw = requests.get(directory, timeout=30)
    assert raw.status_code == 200 and raw.headers["Content-Type"] == "application/json"
    assert set(raw.json()) == {"newNonce", "newAccount", "newOrder", "revokeCert", "keyChange", "meta"}
    assert raw.json()["newNonce"] == f"{url}/v1/{mount}/acme/new-nonce"

    client, account_key = _client(directory)
    account = client.new_account(messages.NewRegistration.from_data(email="ops@example.com",
                                                                    terms_of_service_agreed=True))
    assert account.body.status == "valid"
    assert account.uri.startswith(f"{url}/v1/{mount}/acme/account/")
    assert client.query_registration(account).body.status == "valid"

    chain, key = _issue(client, account_key, server, name)
    leaf = chain[0]
    assert chain[-1] == root and len(chain) == 2
    root.public_key().verify(leaf.signature, leaf.tbs_certificate_bytes, ec.ECDSA(leaf.signature_hash_algorithm))
    assert leaf.issuer == root.subject
    assert leaf.subject == x509.Name([])  # the CSR names no CN; the sign-verbatim role does not require one
    assert leaf.public_key().public_numbers() == key.public_key().public_numbers()
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [name]
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert leaf.not_valid_after_utc > datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    host = name if server.port == 80 else f"{name}:{server.port}"
    assert any(path.startswith("/.well-known/acme-challenge/") and seen in (name, host)
               for path, seen in server.seen), server.seen

    listed = call(url, "LIST", f"{mount}/certs")["data"]["keys"]
    serial_hex = f"{leaf.serial_number:x}"
    assert any(k.replace(":", "").lstrip("0") == serial_hex.lstrip("0") for k in listed)

    assert ocsp_status(url, mount, leaf, root).certificate_status == ocsp.OCSPCertStatus.GOOD
    client.revoke(leaf, 0)
    assert leaf.serial_number in crl_revoked_serials(url, mount)
    answer = ocsp_status(url, mount, leaf, root)
    assert answer.certificate_status == ocsp.OCSPCertStatus.REVOKED
    assert answer.serial_number == leaf.serial_number
    if shutil.which("openssl"):
        assert "leaf.pem: revoked" in _openssl_ocsp(chain, f"{url}/v1/{mount}/ocsp")
    with pytest.raises(messages.Error) as again:
        client.revoke(leaf, 0)
    assert again.value.typ == "urn:ietf:params:acme:error:alreadyRevoked", again.value

    client.deactivate_registration(account)
    with pytest.raises(messages.Error) as gone:
        client.new_order(_csr(name)[0])
    assert gone.value.typ == "urn:ietf:params:acme:error:unauthorized", gone.value


def eab_account(url: str, mount: str) -> None:
    """``eab_policy=always-required``: an account without a binding is refused with
    ``externalAccountRequired``; with a key from ``acme/new-eab`` it is created; the same key a second
    time is refused (``unauthorized``)."""
    setup_acme_mount(url, mount, eab_policy="always-required")
    directory = f"{url}/v1/{mount}/acme/directory"
    client, key = _client(directory)
    assert client.directory.meta.external_account_required is True
    with pytest.raises(messages.Error) as refused:
        client.new_account(messages.NewRegistration.from_data(terms_of_service_agreed=True))
    assert refused.value.typ == "urn:ietf:params:acme:error:externalAccountRequired"
    assert refused.value.detail == "the request must include a value for the 'externalAccountBinding' field"
    eab = call(url, "POST", f"{mount}/acme/new-eab")["data"]
    assert eab["key_type"] == "hs" and eab["acme_directory"] == "acme/directory"
    binding = messages.ExternalAccountBinding.from_data(account_public_key=key.public_key(), kid=eab["id"],
                                                       hmac_key=eab["key"], directory=client.directory)
    account = client.new_account(messages.NewRegistration.from_data(terms_of_service_agreed=True,
                                                                    external_account_binding=binding))
    assert account.body.status == "valid"
    other, other_key = _client(directory)
    reused = messages.ExternalAccountBinding.from_data(account_public_key=other_key.public_key(), kid=eab["id"],
                                                      hmac_key=eab["key"], directory=other.directory)
    with pytest.raises(messages.Error) as again:
        other.new_account(messages.NewRegistration.from_data(terms_of_service_agreed=True,
                                                             external_account_binding=reused))
    assert again.value.typ == "urn:ietf:params:acme:error:unauthorized"
    assert again.value.detail == "the client lacks sufficient authorization: failed to verify eab"


# ------------------------------------------------------------------ against the plugin's double

def test_acme_library_issues_and_revokes_against_the_double(schedpki, request):
    with ChallengeServer() as server:
        schedpki.acme_knobs(challenge_address=f"127.0.0.1:{server.port}")
        issue_and_revoke(schedpki.secrets.url, unique_mount("acme_", request), DOUBLE_NAME, server)
    schedpki.certs.assert_revoked(san=DOUBLE_NAME)  # an ACME certificate is a record like any other


def test_acme_library_eab_account_against_the_double(schedpki, request):
    eab_account(schedpki.secrets.url, unique_mount("acmeeab_", request))


# ------------------------------------------------------------------ the same against a real bao

@pytest.fixture
def bao_url(request):
    return request.getfixturevalue("_bao_server").url


@pytest.mark.parity
def test_acme_library_issues_and_revokes_against_bao(bao_url, request):
    mount = unique_mount("acme_", request)
    try:
        with port80(), ChallengeServer(80) as server:
            issue_and_revoke(bao_url, mount, "localhost", server)
    finally:
        call(bao_url, "DELETE", f"sys/mounts/{mount}")


@pytest.mark.parity
def test_acme_library_eab_account_against_bao(bao_url, request):
    mount = unique_mount("acmeeab_", request)
    try:
        eab_account(bao_url, mount)
    finally:
        call(bao_url, "DELETE", f"sys/mounts/{mount}")


# ------------------------------------------------------------------ refused identifiers, both servers

REFUSED_NAMES = {  # Go's x/net/idna (ValidateForRegistration) texts, read off bao 2.7.2
    "a..b": 'value argument (a..b) failed validation: idna: invalid label "a..b": the request message was malformed',
    "x" * 64 + ".example.com": (f'value argument ({"x" * 64}.example.com) failed validation: idna: invalid label '
                                f'"{"x" * 64}": the request message was malformed'),
    "-bad-.example.com": ('value argument (-bad-.example.com) failed validation: idna: invalid label "-bad-": the '
                          'request message was malformed'),
    "ab--c.example.com": ('value argument (ab--c.example.com) failed validation: idna: invalid label "ab--c": the '
                          'request message was malformed'),
    "Example.COM": ("value argument (Example.COM) failed validation: idna: disallowed rune U+0045: the request message "
                    "was malformed"),
    "a_b.example.com": ("value argument (a_b.example.com) failed validation: idna: disallowed rune U+005F: the request "
                        "message was malformed"),
}


def refused_identifiers(url: str, mount: str) -> None:
    from pytest_schedpki.acme.client import AcmeClient

    setup_acme_mount(url, mount)
    client = AcmeClient(f"{url}/v1/{mount}/acme/directory")
    assert client.new_account(terms_agreed=True).status == 201
    for name, detail in REFUSED_NAMES.items():
        answer = client.new_order([name])
        assert answer.status == 400, (name, answer.body)
        assert answer.json() == {"type": "urn:ietf:params:acme:error:malformed", "detail": detail}


def test_refused_identifiers_against_the_double(schedpki, request):
    refused_identifiers(schedpki.secrets.url, unique_mount("acmeid_", request))


@pytest.mark.parity
def test_refused_identifiers_against_bao(bao_url, request):
    mount = unique_mount("acmeid_", request)
    try:
        refused_identifiers(bao_url, mount)
    finally:
        call(bao_url, "DELETE", f"sys/mounts/{mount}")
