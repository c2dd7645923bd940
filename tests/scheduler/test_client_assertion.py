"""The client-assertion JWT build Nomad attempts on upsert (``invalid OIDCClientAssertion: ...``)."""

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from sched_helpers import assert_plain

from pytest_schedpki.clock import ManualClock

PREFIX = "invalid OIDCClientAssertion: failed to build client_assertion jwt: "
NOT_BEFORE = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture(scope="module")
def keys():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nomad-client")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(NOT_BEFORE).not_valid_after(NOT_BEFORE + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    pkcs1 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                              serialization.NoEncryption()).decode()
    ec_key = ec.generate_private_key(ec.SECP256R1())
    return {
        "rsa": pkcs1,
        "rsa-one-line": pkcs1.replace("\n", ""),
        "ec-pkcs8": ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode(),
        "ec-sec1": ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                        serialization.NoEncryption()).decode(),
        "cert": cert.public_bytes(serialization.Encoding.PEM).decode(),
    }


def method(private_key: dict, client_id="nomad", **assertion) -> dict:
    return {"Name": "assert", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h", "Config": {
        "OIDCDiscoveryURL": "https://idp", "OIDCClientID": client_id,
        "OIDCClientAssertion": {"KeySource": "private_key", "PrivateKey": private_key, **assertion}}}


@pytest.mark.parametrize("key", ["rsa", "rsa-one-line"])
def test_rsa_key_with_key_id_is_accepted_and_redacted(sched, keys, key):
    r = sched.put("/v1/acl/auth-method", json=method({"PemKey": keys[key], "KeyID": "k1"}))
    assert r.status_code == 200, r.text
    out = r.json()["Config"]["OIDCClientAssertion"]
    assert out["PrivateKey"] == {"PemKey": "redacted", "PemKeyFile": "", "KeyIDHeader": "kid", "PemCert": "",
                                 "PemCertFile": "", "KeyID": "k1"}
    assert out["KeyAlgorithm"] == "RS256"
    assert sched.state.get_auth_method("assert").Config.OIDCClientAssertion.PrivateKey.PemKey == keys[key]


@pytest.mark.parametrize("key, text", [
    ("ec-pkcs8", "error parsing PemKey: key is not a valid RSA private key"),
    ("ec-sec1", "error parsing PemKey: x509: failed to parse private key (use ParseECPrivateKey instead for this key format)"),
])
def test_non_rsa_keys_are_refused(sched, keys, key, text):
    assert_plain(sched.put("/v1/acl/auth-method", json=method({"PemKey": keys[key], "KeyID": "k1"})), 400, PREFIX + text)


def test_certificate_validity_follows_the_double_clock(make_sched, keys):
    body = method({"PemKey": keys["rsa"], "PemCert": keys["cert"]})
    clock = ManualClock(NOT_BEFORE + datetime.timedelta(hours=1))
    s = make_sched(clock=clock)
    ok = s.put("/v1/acl/auth-method", json=body)
    assert ok.status_code == 200 and ok.json()["Config"]["OIDCClientAssertion"]["PrivateKey"]["KeyIDHeader"] == "x5t#S256"
    clock.advance(datetime.timedelta(days=2))
    assert_plain(s.put("/v1/acl/auth-method", json={**body, "TokenLocality": "global"}), 400,
                 PREFIX + "certificate has expired or is not yet valid")


def test_missing_files_and_bad_pem(sched, keys):
    assert_plain(sched.put("/v1/acl/auth-method", json=method({"PemKeyFile": "/nonexistent/key.pem", "KeyID": "k"})),
                 400, PREFIX + "error reading PemKeyFile: open /nonexistent/key.pem: no such file or directory")
    assert_plain(sched.put("/v1/acl/auth-method", json=method({"PemKey": keys["rsa"], "PemCert": "not pem"})),
                 400, PREFIX + "failed to decode PemCert PEM block")


def test_builder_errors_are_joined(sched, keys):
    body = method({"PemKey": keys["rsa"], "KeyID": "k1"}, client_id="", KeyAlgorithm="PS256",
                  ExtraHeaders={"kid": "x"})
    body["Config"]["OIDCClientID"] = ""
    r = sched.put("/v1/acl/auth-method", json=body)
    assert r.status_code == 400 and r.text.startswith("auth method 0 invalid")  # OIDC needs a client ID first
    jwt = {**body, "Type": "JWT"}  # JWT config validation skips the assertion; the build step does not
    assert_plain(sched.put("/v1/acl/auth-method", json=jwt), 400, PREFIX + "clientassertion.NewJWTWithRSAKey: "
                 'missing client ID\nRSAlgorithm.Validate: unsupported algorithm "PS256" for for RSA key\n'
                 'WithHeaders: "kid" not allowed in WithHeaders; use WithKeyID instead')
    bogus = {**jwt, "Config": {**jwt["Config"], "OIDCClientAssertion": {"KeySource": "bogus", "Audience": ["a"]}}}
    assert_plain(sched.put("/v1/acl/auth-method", json=bogus), 400, PREFIX + 'invalid KeySource "bogus"')
