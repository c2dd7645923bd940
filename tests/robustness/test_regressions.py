"""One plain test per defect the robustness suites found, named after it (upstream behaviour from
OpenBao 2.7.2 ``bao server -dev``, Nomad's source, or Go's ``net/http``)."""

from __future__ import annotations

import base64
import datetime
import json
import os
import socket
import tempfile
import time

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from robust_helpers import secrets_fingerprint

from pytest_schedpki import Double
from pytest_schedpki.factories import Factories
from pytest_schedpki.wire import middleware
from pytest_schedpki.wire.server import ServiceServer
from pytest_schedpki.wire.tls import create_tls_material

V = {"X-Vault-Token": "root"}
N = {"X-Nomad-Token": "root"}


@pytest.fixture
def fresh(double):
    double.reset()
    factories = Factories(double.scheduler, double.secrets)
    factories.secrets.root_issuer("pki", issuer_name="root")
    factories.secrets.role("web")
    return double


def _errors(r: requests.Response) -> list[str]:
    assert r.headers["Content-Type"] == "application/json", r.text[:200]
    return r.json()["errors"]


# -- journal and server guard ------------------------------------------------------------------

def test_deeply_nested_json_does_not_break_the_journal_into_an_html_500(fresh):
    for url, headers in ((fresh.secrets_url + "/v1/pki/roles/x", V), (fresh.scheduler_url + "/v1/acl/auth-method", N)):
        r = requests.post(url, data="[" * 5000 + "]" * 5000, headers=headers)
        assert r.status_code == 400 and "<html" not in r.text.lower()
    assert not fresh.pop_handler_errors()
    bodies = [e.body for e in fresh.journal.entries()]
    assert bodies == ["<redacted: nested too deeply to check for secrets>"] * 2


def test_an_exception_after_start_response_still_gets_the_service_error_shape():
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        raise RuntimeError("late failure")

    from pytest_schedpki.secrets.http import error_response

    server = ServiceServer("secrets", app, error_response).start()
    try:
        r = requests.get(server.url + "/v1/x", timeout=5)
        assert r.status_code == 500 and r.headers["Content-Type"] == "application/json"
        assert "late failure" in r.json()["errors"][0]
        assert [type(e.exception) for e in server.pop_handler_errors()] == [RuntimeError]
    finally:
        server.stop()


# -- secrets: body limits -------------------------------------------------------------------------

def test_json_with_more_than_1000_strings_is_refused_before_the_token(fresh):
    body = json.dumps({f"k{i}": "v" for i in range(501)})  # 1002 strings
    for headers in (V, {}):
        r = requests.post(fresh.secrets_url + "/v1/pki/roles/x", data=body, headers=headers)
        assert (r.status_code, _errors(r)) == (
            400, ["refused JSON input due to high complexity: exceeded maximum number of strings"])


def test_nesting_between_python_and_go_limits_decodes_like_go(fresh):
    r = requests.post(fresh.secrets_url + "/v1/pki/roles/x", data="[" * 5000 + "]" * 5000, headers=V)
    assert _errors(r) == ["failed to decode JSON input: json: cannot unmarshal array into Go value of type "
                          "map[string]interface {}"]
    r = requests.post(fresh.secrets_url + "/v1/pki/roles/x", data="[" * 10001 + "]" * 10001, headers=V)
    assert _errors(r) == ["failed to decode JSON input: exceeded max depth"]


def test_a_chunked_body_over_32_mib_is_413_not_unexpected_eof(fresh):
    def chunks():
        yield b'{"allowed_domains":"example.com","pad":"'
        for _ in range(33):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    r = requests.post(fresh.secrets_url + "/v1/pki/roles/x", data=chunks(), headers=V)
    assert (r.status_code, _errors(r)) == (413, ["http: request body too large"])


def test_a_body_longer_than_the_journal_keeps_reaches_the_application_whole(monkeypatch, fresh):
    monkeypatch.setattr(middleware, "JOURNAL_BODY_LIMIT", 64 * 1024)  # 64 MiB in real use
    body = {"Name": "big", "Type": "JWT", "TokenLocality": "global", "MaxTokenTTL": "1h",
            "Config": {"JWKSURL": "https://idp.example.com/jwks", "BoundAudiences": ["a"]}, "Pad": "x" * 200_000}
    r = requests.put(fresh.scheduler_url + "/v1/acl/auth-method", json=body, headers=N)
    assert r.status_code == 200, r.text[:200]
    assert len(fresh.journal.entries()[-1].body) == 64 * 1024  # the journal keeps the head only


def _wire(url: str, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send a raw request, half-close, and return (status, body) of the answer."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize("framing", ["Content-Length: 40\r\n\r\n", "Transfer-Encoding: chunked\r\n\r\nzz\r\n"])
def test_a_body_cut_short_or_badly_chunked_is_unexpected_eof_not_a_crash(fresh, framing):
    vault = f"POST /v1/sys/mounts/x HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n{framing}"
    assert _wire(fresh.secrets_url, vault) == (400, b'{"errors":["failed to decode JSON input: unexpected EOF"]}\n')
    nomad = f"PUT /v1/acl/auth-method HTTP/1.1\r\nHost: x\r\nX-Nomad-Token: root\r\n{framing}"
    assert _wire(fresh.scheduler_url, nomad) == (400, b"unexpected EOF")
    # requests that never read their body are served, as by a Go server
    assert _wire(fresh.secrets_url, f"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n{framing}")[0] == 200
    assert _wire(fresh.scheduler_url, f"GET /v1/acl/auth-methods HTTP/1.1\r\nHost: x\r\n{framing}")[0] == 200
    assert not fresh.pop_handler_errors()


# -- secrets: state left untouched by refused requests ----------------------------------------------

def test_unwrap_with_a_token_that_wraps_nothing_keeps_that_token(fresh):
    child = requests.post(fresh.secrets_url + "/v1/auth/token/create", json={}, headers=V).json()["auth"]["client_token"]
    for token, body in ((child, {}), ("root", {"token": child}), ("root", {})):
        r = requests.post(fresh.secrets_url + "/v1/sys/wrapping/unwrap", json=body, headers={"X-Vault-Token": token})
        assert (r.status_code, _errors(r)) == (400, ["wrapping token is not valid or does not exist"])
    for token in (child, "root"):
        assert requests.get(fresh.secrets_url + "/v1/auth/token/lookup-self",
                            headers={"X-Vault-Token": token}).status_code == 200


def test_a_refused_bundle_import_stores_none_of_its_keys(fresh):
    leaf = requests.post(fresh.secrets_url + "/v1/pki/issue/web", json={"common_name": "a.example.com", "ttl": "1h"},
                         headers=V).json()["data"]
    before = secrets_fingerprint(fresh.secrets)
    r = requests.post(fresh.secrets_url + "/v1/pki/issuers/import/bundle",
                      json={"pem_bundle": leaf["certificate"] + "\n" + leaf["private_key"]}, headers=V)
    assert r.status_code == 400 and _errors(r)[0].startswith("Error parsing issuer 0: Refusing to import non-CA certificate")
    assert secrets_fingerprint(fresh.secrets) == before


def test_a_bad_wrap_ttl_header_refuses_the_request_before_it_runs(fresh):
    for ttl, reason in (("-1", "requested wrap ttl cannot be negative"), ("soon", 'time: invalid duration "soon"')):
        for headers in ({**V, "X-Vault-Wrap-TTL": ttl}, {"X-Vault-Wrap-TTL": ttl}):
            r = requests.post(fresh.secrets_url + "/v1/pki/roles/new", json={}, headers=headers)
            assert (r.status_code, _errors(r)) == (400, [f"error parsing X-Vault-Wrap-TTL header: {reason}"])
    assert "new" not in fresh.secrets.mount("pki").backend.state.roles
    r = requests.post(fresh.secrets_url + "/v1/pki/roles/new", json={}, headers={**V, "X-Vault-Wrap-TTL": "0"})
    assert r.status_code == 200 and r.json()["wrap_info"] is None  # 0 means no wrapping
    assert requests.get(fresh.secrets_url + "/v1/sys/health", headers={"X-Vault-Wrap-TTL": "-1"}).status_code == 200


# -- secrets: PEM input -------------------------------------------------------------------------

def _off_curve(der: bytes, point: bytes) -> bytes:
    out = bytearray(der)
    out[der.index(point) + len(point) - 1] ^= 0x01
    return bytes(out)


def _pem(kind: str, der: bytes) -> str:
    return f"-----BEGIN {kind}-----\n{base64.encodebytes(der).decode()}-----END {kind}-----\n"


def test_an_off_curve_public_key_is_a_400_parse_error_not_a_crash(fresh):
    key = ec.generate_private_key(ec.SECP256R1())
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.example.com")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(7).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    bad_csr = _pem("CERTIFICATE REQUEST", _off_curve(csr.public_bytes(serialization.Encoding.DER), point))
    bad_cert = _pem("CERTIFICATE", _off_curve(cert.public_bytes(serialization.Encoding.DER), point))
    url = fresh.secrets_url + "/v1/pki/"
    for path in ("sign/web", "sign-verbatim", "root/sign-intermediate"):
        r = requests.post(url + path, json={"csr": bad_csr, "common_name": "a.example.com"}, headers=V)
        assert (r.status_code, _errors(r)) == (400, ["certificate request could not be parsed: P256 point not on curve"])
    r = requests.post(url + "root/sign-self-issued", json={"certificate": bad_cert}, headers=V)
    assert (r.status_code, _errors(r)) == (400, ["error parsing certificate: P256 point not on curve"])
    r = requests.post(url + "issuers/import/bundle", json={"pem_bundle": bad_cert}, headers=V)
    assert r.status_code == 400 and _errors(r)[0].startswith("Error parsing issuer 0: P256 point not on curve\n")
    r = requests.post(url + "revoke", json={"certificate": bad_cert}, headers=V)
    assert (r.status_code, _errors(r)) == (500, ["1 error occurred:\n\t* certificate could not be parsed: P256 point not on curve\n\n"])
    assert not fresh.pop_handler_errors()


def test_a_name_with_an_invalid_string_is_a_parse_error_not_a_crash(fresh):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "org-name"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "a.example.com")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(7).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    bad = b"org\xffname"  # not UTF-8 in a UTF8String (cryptography reads names lazily, Go at once)
    bad_csr = _pem("CERTIFICATE REQUEST", csr.public_bytes(serialization.Encoding.DER).replace(b"org-name", bad))
    bad_cert = _pem("CERTIFICATE", cert.public_bytes(serialization.Encoding.DER).replace(b"org-name", bad))
    why = "x509: invalid RDNSequence: invalid attribute value: invalid UTF-8 string"
    url = fresh.secrets_url + "/v1/pki/"
    for path in ("sign/web", "sign-verbatim", "root/sign-intermediate"):
        r = requests.post(url + path, json={"csr": bad_csr}, headers=V)
        assert (r.status_code, _errors(r)) == (400, [f"certificate request could not be parsed: {why}"])
    r = requests.post(url + "root/sign-self-issued", json={"certificate": bad_cert}, headers=V)
    assert (r.status_code, _errors(r)) == (400, [f"error parsing certificate: {why}"])
    r = requests.post(url + "intermediate/set-signed", json={"certificate": bad_cert}, headers=V)
    assert r.status_code == 400 and _errors(r)[0].startswith(f"Error parsing issuer 0: {why}\n")
    r = requests.post(url + "revoke", json={"certificate": bad_cert}, headers=V)
    assert (r.status_code, _errors(r)) == (500, [f"1 error occurred:\n\t* certificate could not be parsed: {why}\n\n"])
    assert not fresh.pop_handler_errors()


def test_a_key_on_an_unknown_curve_or_of_an_unknown_algorithm_is_refused_not_a_crash(fresh):
    key = ec.generate_private_key(ec.SECP256R1())
    p256, unknown_curve = bytes.fromhex("06082a8648ce3d030107"), bytes.fromhex("06082a8648ce3d030106")
    ec_public, unknown_alg = bytes.fromhex("06072a8648ce3d0201"), bytes.fromhex("06072a8648ce3d0204")
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.example.com")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256()).public_bytes(
        serialization.Encoding.DER)
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(9).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256())
            ).public_bytes(serialization.Encoding.DER)
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    url = fresh.secrets_url + "/v1/pki/"
    curve_csr = _pem("CERTIFICATE REQUEST", csr.replace(p256, unknown_curve))
    alg_csr = _pem("CERTIFICATE REQUEST", csr.replace(ec_public, unknown_alg))
    for path in ("sign/web", "sign-verbatim"):
        r = requests.post(url + path, json={"csr": curve_csr}, headers=V)
        assert (r.status_code, _errors(r)) == (400, ["certificate request could not be parsed: x509: unsupported elliptic curve"])
        r = requests.post(url + path, json={"csr": alg_csr}, headers=V)
        assert r.status_code == 400 and _errors(r)[0].startswith("Refusing to sign CSR with empty PublicKey.")
    curve_cert = _pem("CERTIFICATE", cert.replace(p256, unknown_curve))
    r = requests.post(url + "issuers/import/bundle", json={"pem_bundle": curve_cert}, headers=V)
    assert r.status_code == 400 and _errors(r)[0].startswith("Error parsing issuer 0: x509: unsupported elliptic curve\n")
    r = requests.post(url + "issuers/import/bundle", json={"pem_bundle": _pem("CERTIFICATE", cert.replace(ec_public, unknown_alg))},
                      headers=V)
    assert r.status_code == 400 and _errors(r)[0].startswith("Error parsing issuer 0: Refusing to import CA certificate with empty PublicKey.")
    r = requests.post(url + "root/sign-self-issued", json={"certificate": curve_cert}, headers=V)
    assert (r.status_code, _errors(r)) == (400, ["error parsing certificate: x509: unsupported elliptic curve"])
    for bad in (pkcs8.replace(ec_public, unknown_alg), pkcs8.replace(p256, unknown_curve)):
        r = requests.post(url + "keys/import", json={"pem_bundle": _pem("PRIVATE KEY", bad)}, headers=V)
        assert r.status_code == 400  # the wording of key parse errors is approximate (see the report)
    assert not fresh.pop_handler_errors()


def test_a_csr_extension_cryptography_cannot_decode_is_a_400_on_every_signing_path(fresh):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.example.com")])
    csr = (x509.CertificateSigningRequestBuilder().subject_name(name)
           .add_extension(x509.IssuerAlternativeName([x509.DNSName("a.example.com")]), critical=False)
           .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER))
    broken = csr.replace(b"\x82\x0da.example.com", b"\x01\x0da.example.com")  # dNSName tag -> BOOLEAN
    for path in ("sign/web", "sign-verbatim", "root/sign-intermediate"):
        r = requests.post(fresh.secrets_url + "/v1/pki/" + path, json={"csr": _pem("CERTIFICATE REQUEST", broken)},
                          headers=V)
        assert (r.status_code, _errors(r)) == (400, ["certificate request could not be parsed: x509: malformed extension"])
    assert not fresh.pop_handler_errors()


@pytest.mark.filterwarnings("ignore:Attribute's length must be")  # cryptography's warning for such names
def test_subject_fields_of_any_length_are_accepted_as_go_accepts_them(fresh):
    for country in ("Australia", "A", "ÄÖ"):
        r = requests.post(fresh.secrets_url + "/v1/pki/root/generate/internal",
                          json={"common_name": "x", "key_type": "ec", "country": country}, headers=V)
        assert r.status_code == 200, r.text
        cert = x509.load_pem_x509_certificate(r.json()["data"]["certificate"].encode())
        assert cert.subject.get_attributes_for_oid(NameOID.COUNTRY_NAME)[0].value == country
    assert not fresh.pop_handler_errors()


# -- secrets: CRLs ----------------------------------------------------------------------------------

def test_changing_the_default_issuer_does_not_rebuild_crls(fresh):
    url = fresh.secrets_url + "/v1/pki/"
    other = requests.post(url + "root/generate/internal", json={"common_name": "B", "key_type": "ec", "issuer_name": "b"},
                          headers=V).json()["data"]["issuer_id"]
    serial = requests.post(url + "issue/web", json={"common_name": "a.example.com", "ttl": "1h"}, headers=V).json()["data"]["serial_number"]
    requests.post(url + "revoke", json={"serial_number": serial}, headers=V)
    requests.post(url + "config/issuers", json={"default": other}, headers=V)
    assert requests.delete(url + "issuer/root", headers=V).status_code == 200  # its revocation is now unassigned

    def crl(ref):
        c = x509.load_der_x509_crl(requests.get(url + f"issuer/{ref}/crl/der").content)
        return c.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number, [e.serial_number for e in c]

    number, listed = crl("b")
    assert len(listed) == 1  # unassigned revocations go to the default issuer of the rebuild
    third = requests.post(url + "root/generate/internal", json={"common_name": "C", "key_type": "ec", "issuer_name": "c"},
                          headers=V).json()["data"]["issuer_id"]
    number, listed = crl("b")
    requests.post(url + "config/issuers", json={"default": third}, headers=V)
    assert crl("b") == (number, listed) and crl("c") == (1, [])  # as OpenBao: nothing moves until a rebuild
    requests.get(url + "crl/rotate", headers=V)
    assert crl("b") == (number + 2, []) and crl("c") == (3, listed)


# -- scheduler ------------------------------------------------------------------------------------

def test_a_key_file_that_is_a_device_or_fifo_is_refused_without_reading(fresh):
    fifo = os.path.join(tempfile.mkdtemp(), "fifo")
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        body = {"Name": "m", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
                "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "c", "BoundAudiences": ["c"],
                           "AllowedRedirectURIs": ["http://localhost/cb"],
                           "OIDCClientAssertion": {"KeySource": "private_key", "KeyAlgorithm": "RS256", "Audience": ["x"],
                                                   "PrivateKey": {"PemKeyFile": path, "KeyID": "k"}}}}
        r = requests.put(fresh.scheduler_url + "/v1/acl/auth-method", json=body, headers=N, timeout=10)
        assert (r.status_code, r.text) == (400, "invalid OIDCClientAssertion: failed to build client_assertion jwt: "
                                                f"error reading PemKeyFile: open {path}: not a regular file")


# -- TLS and logging ----------------------------------------------------------------------------------

def test_a_client_that_never_handshakes_does_not_block_a_tls_listener():
    material = create_tls_material()
    double = Double().start(ssl_context=material.server_context())
    host, port = double.secrets_url.split("//", 1)[1].rsplit(":", 1)
    idle = socket.create_connection((host, int(port)), timeout=5)
    try:
        started = time.monotonic()
        assert requests.get(double.secrets_url + "/v1/sys/health", verify=material.ca_path, timeout=5).status_code == 200
        assert time.monotonic() - started < 2
    finally:
        idle.close()
        double.stop()


def test_plain_http_to_a_tls_listener_gets_go_s_answer():
    material = create_tls_material()
    double = Double().start(ssl_context=material.server_context())
    try:
        r = requests.get(double.scheduler_url.replace("https://", "http://") + "/v1/acl/auth-methods", timeout=5)
        assert (r.status_code, r.text) == (400, "Client sent an HTTP request to an HTTPS server.\n")
    finally:
        double.stop()


def test_a_token_in_a_query_string_is_neither_logged_nor_journaled(capfd, caplog):
    import logging

    caplog.set_level(logging.INFO)
    double = Double().start(log_requests=True)
    try:
        wrapped = requests.post(double.secrets_url + "/v1/auth/token/create", json={},
                                headers={**V, "X-Vault-Wrap-TTL": "60"}).json()["wrap_info"]["token"]
        assert requests.get(double.secrets_url + "/v1/sys/wrapping/lookup", params={"token": wrapped},
                            headers=V).status_code == 200
        time.sleep(0.1)
        out, err = capfd.readouterr()
        logged = out + err + "\n".join(r.getMessage() for r in caplog.records if r.name == "werkzeug")
        assert "/v1/sys/wrapping/lookup?token=<redacted>" in logged and wrapped not in logged
        recorded = json.dumps([(e.query, e.body, e.response) for e in double.journal.entries()])
        assert wrapped not in recorded and '"token": "<redacted>"' in recorded
    finally:
        double.stop()


def test_the_journal_redacts_token_ids_in_bodies(fresh):
    r = requests.post(fresh.secrets_url + "/v1/auth/token/create", json={"id": "custom-token-id"}, headers=V)
    assert r.status_code == 200
    requests.get(fresh.secrets_url + "/v1/auth/token/lookup-self", headers={"X-Vault-Token": "custom-token-id"})
    requests.post(fresh.secrets_url + "/v1/auth/token/lookup", json={"token": "custom-token-id"}, headers=V)
    recorded = json.dumps([(e.body, e.response) for e in fresh.journal.entries()])
    assert "custom-token-id" not in recorded


# -- X.509 versions cryptography cannot load (found by the CSR/PEM fuzzer in CI) -------------------
def _with_version(der: bytes, marker: bytes, value: int) -> bytes:
    data = bytearray(der)
    data[data.index(marker) + len(marker) - 1] = value
    return bytes(data)


def _pem(kind: str, der: bytes) -> str:
    return f"-----BEGIN {kind}-----\n" + base64.encodebytes(der).decode() + f"-----END {kind}-----\n"


def test_a_csr_or_certificate_with_an_unloadable_version_is_refused_not_a_crash(fresh):
    """cryptography raises InvalidVersion (not ValueError) for a CSR other than v1 and a certificate
    version above v3; every parsing path must answer with an error, never a 500 from the guard."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.example.com")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    bad_csr = _pem("CERTIFICATE REQUEST", _with_version(csr.public_bytes(serialization.Encoding.DER), b"\x02\x01\x00", 1))
    import datetime

    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key()).serial_number(5)
            .not_valid_before(datetime.datetime(2020, 1, 1)).not_valid_after(datetime.datetime(2030, 1, 1))
            .add_extension(x509.BasicConstraints(True, None), True).sign(key, hashes.SHA256()))
    bad_cert = _pem("CERTIFICATE", _with_version(cert.public_bytes(serialization.Encoding.DER), b"\xa0\x03\x02\x01\x02", 7))
    url = fresh.secrets_url + "/v1/pki/"
    for path in ("sign/web", "sign-verbatim", "root/sign-intermediate"):
        r = requests.post(url + path, headers=V, json={"csr": bad_csr})
        assert (r.status_code, _errors(r)) == (400, ["certificate request could not be parsed: "
                                                     "x509: unsupported certificate request version"])
    r = requests.post(url + "root/sign-self-issued", headers=V, json={"certificate": bad_cert})
    assert (r.status_code, _errors(r)) == (400, ["error parsing certificate: x509: invalid version"])
    r = requests.post(url + "revoke", headers=V, json={"certificate": bad_cert})
    assert (r.status_code, _errors(r)) == (500, ["1 error occurred:\n\t* certificate could not be parsed: x509: invalid version\n\n"])
    for path, field in (("issuers/import/bundle", "pem_bundle"), ("config/ca", "pem_bundle"), ("intermediate/set-signed", "certificate")):
        r = requests.post(url + path, headers=V, json={field: bad_cert})
        assert r.status_code == 400 and _errors(r)[0].startswith("Error parsing issuer 0: x509: invalid version\n")
    assert fresh.pop_handler_errors() == []


def test_revoke_with_key_of_a_certificate_with_a_negative_serial_is_refused_not_a_crash(fresh):
    """Found by the PEM fuzzer: ``OverflowError`` in ``serial_to_hex`` (a 500 traceback). Go refuses
    the certificate while parsing; OpenBao answers 500 ``certificate could not be parsed: x509:
    negative serial number`` (tests/parity/test_parity_negative_serial.py)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "negative")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(0x7F1234).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    der = bytearray(cert.public_bytes(serialization.Encoding.DER))
    der[der.find(bytes([0x02, 0x03, 0x7F, 0x12, 0x34])) + 2] = 0xFF
    pem = "-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(bytes(der)).decode() + "-----END CERTIFICATE-----\n"
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    for path in ("revoke", "revoke-with-key"):
        r = requests.post(f"{fresh.secrets_url}/v1/pki/{path}", json={"certificate": pem, "private_key": key_pem}, headers=V)
        assert r.status_code == 500
        assert _errors(r) == ["1 error occurred:\n\t* certificate could not be parsed: x509: negative serial number\n\n"]
    assert not fresh.pop_handler_errors()


@pytest.mark.parametrize("serial", [0, -5])
def test_a_serial_that_is_not_positive_is_no_500_under_warnings_as_errors(fresh, serial):
    """cryptography warns (a UserWarning) when it loads such a certificate; under a suite's ``-W error``
    that warning used to escape the handler as a 500. Go refuses a negative serial and reads a zero one."""
    import warnings

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Zero CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # building it warns too
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
    der = cert.public_bytes(serialization.Encoding.DER)
    one = bytes.fromhex("020101")
    wanted = bytes.fromhex("020100") if serial == 0 else bytes.fromhex("0201fb")
    pem = _pem("CERTIFICATE", der.replace(one, wanted, 1))  # same length: the signature no longer matches
    url = fresh.secrets_url + "/v1/pki/"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        signed = requests.post(url + "root/sign-self-issued", json={"certificate": pem}, headers=V)
        imported = requests.post(url + "issuers/import/cert", json={"pem_bundle": pem}, headers=V)
        revoked = requests.post(url + "revoke", json={"certificate": pem}, headers=V)
        rotated = requests.get(url + "crl/rotate", headers=V)  # every issuer's serial is read again
    assert rotated.status_code == 200, rotated.text
    assert not fresh.pop_handler_errors()
    if serial < 0:
        assert (signed.status_code, _errors(signed)) == (400, ["error parsing certificate: x509: negative serial number"])
        assert imported.status_code == 400
        assert _errors(imported)[0].startswith("Error parsing issuer 0: x509: negative serial number\n")
        assert (revoked.status_code, _errors(revoked)) == (
            500, ["1 error occurred:\n\t* certificate could not be parsed: x509: negative serial number\n\n"])
    else:  # Go signs a serial of 0; cryptography cannot (docs/divergences.md, "rare CSR/certificate inputs")
        assert (signed.status_code, _errors(signed)) == (
            500, ["1 error occurred:\n\t* error signing self-issued certificate: x509: The serial number should be "
                  "positive.\n\n"])
        assert imported.status_code == 200, imported.text
        assert revoked.status_code == 500 and "unable to verify signature" in _errors(revoked)[0]


def test_a_policy_escape_go_cannot_unquote_is_a_400_not_an_internal_error(fresh):
    """``path "\\500"``: HCL1's scanner lets three octal digits through, then ``Token.Value`` cannot unquote
    them (above 0377). OpenBao 2.7.2 panics and drops the connection (docs/divergences.md); the double
    answered 500 ``internal error in the double: JSONDecodeError``. Now a 400 that stores nothing."""
    url = fresh.secrets_url + "/v1/sys/policies/acl/escapes"
    r = requests.put(url, json={"policy": 'path "\\500" { capabilities = ["read"] }'}, headers=V)
    assert r.status_code == 400
    assert r.json() == {"errors": ['failed to parse policy: At 1:6: unquote "\\500" err: invalid syntax']}
    assert requests.get(url, headers=V).status_code == 404


@pytest.mark.parametrize("rules", [
    'namespace "x" {' * 3000 + "}" * 3000,
    'path "x" { capabilities = ' + "[" * 3000 + "]" * 3000 + " }",
    'path "x" { a = ' + "{ b = " * 3000 + "1" + "}" * 3000 + " }",
], ids=["blocks", "lists", "objects"])
def test_policy_rules_nested_deeper_than_python_recurses_are_a_policy_error_not_a_500(fresh, rules):
    """HCL nested thousands deep (Go parses it; Python's recursion limit stops the double's parser):
    the policy error of each service (docs/divergences.md), nothing stored, no handler error."""
    r = requests.post(fresh.secrets_url + "/v1/sys/policies/acl/deep", json={"policy": rules}, headers=V)
    assert (r.status_code, _errors(r)) == (400, ["failed to parse policy: nested too deeply"])
    assert requests.get(fresh.secrets_url + "/v1/sys/policies/acl/deep", headers=V).status_code == 404
    r = requests.post(fresh.scheduler_url + "/v1/acl/policy/deep", json={"Name": "deep", "Rules": rules}, headers=N)
    assert r.status_code == 400
    assert r.text.endswith("* failed to parse rules: Failed to parse ACL Policy: nested too deeply\n\n"), r.text[-200:]
    assert requests.get(fresh.scheduler_url + "/v1/acl/policy/deep", headers=N).status_code == 404
    assert not fresh.pop_handler_errors()
