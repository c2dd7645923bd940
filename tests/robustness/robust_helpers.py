"""Shared pieces of the robustness suites: Hypothesis settings, a raw HTTP client, the upstream
answer shapes of both services, state fingerprints, seeded baselines and input strategies."""

from __future__ import annotations

import base64
import datetime
import http.client
import json
import os
import unicodedata
import urllib.parse
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from hypothesis import settings
from hypothesis import strategies as st

from pytest_schedpki import Double
from pytest_schedpki.factories import Factories
from pytest_schedpki.secrets.http import dispatch

PROFILE = os.environ.get("SCHEDPKI_HYPOTHESIS_PROFILE", "schedpki-ci")
SCALE = float(os.environ.get("SCHEDPKI_ROBUSTNESS_SCALE", "1"))


def robust(examples: int, **overrides: Any) -> settings:
    """The selected profile with ``examples`` (times the scale) examples."""
    return settings(settings.get_profile(PROFILE), max_examples=max(1, int(examples * SCALE)), **overrides)


def start_double(**start: Any) -> Double:
    return Double().start(**start)


# -- raw HTTP ------------------------------------------------------------------------------------

@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class RawClient:
    """http.client on one keep-alive connection: any verb, any (already encoded) target, bytes
    bodies, no redirects, no retries beyond one reconnect of a stale idle connection."""

    def __init__(self, base_url: str, timeout: float = 30.0):
        parts = urllib.parse.urlsplit(base_url)
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout
        self.conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method: str, target: str, headers: dict[str, str] | None = None,
                body: bytes | None = None) -> Reply:
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, target, body=body, headers=headers or {})
                resp = self.conn.getresponse()
                reply = Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 2:
                    raise
                continue
            if resp.will_close:
                self.close()
            return reply
        raise AssertionError("unreachable")


# -- upstream answer shapes ----------------------------------------------------------------------

SECRETS_STATUSES = {200, 202, 204, 400, 403, 404, 405, 413, 415, 500, 503}
SCHEDULER_STATUSES = {200, 400, 403, 404, 405, 413, 500}  # 413: bodies over the double's 1 MiB limit
SCHEDULER_500 = {"ACL auth method not found", "No path to region", "No cluster leader"}
PLAIN = "text/plain; charset=utf-8"


def _no_debris(reply: Reply, context: str) -> None:
    lowered = reply.body[:4096].lower()
    assert b"<html" not in lowered and b"<!doctype" not in lowered, f"HTML page: {context}\n{reply.text()[:500]}"
    assert b"traceback (most recent call last)" not in lowered, f"traceback: {context}\n{reply.text()[:2000]}"


def unprintable_target(context: str) -> bool:
    """Whether the request target that starts ``context`` (``METHOD /path...``) decodes to a path with a
    rune Go's ``unicode.IsPrint`` refuses (OpenBao then answers a bare 400: ``PrintablePathCheckHandler``)."""
    target = context.split(" ", 2)[1] if context.count(" ") >= 1 else ""
    path = urllib.parse.unquote_to_bytes(target.split("?", 1)[0]).decode("utf-8", "replace")
    return not all(ch == " " or unicodedata.category(ch)[0] in "LMNPS" for ch in path)


def check_secrets_reply(reply: Reply, method: str, context: str = "") -> Any:
    """Assert an OpenBao-shaped answer; returns the parsed JSON body (or None)."""
    context = f"{context} -> {reply.status} {reply.text()[:300]!r}"
    _no_debris(reply, context)
    assert reply.status in SECRETS_STATUSES, context
    if method == "HEAD":
        assert reply.body == b"", context
        return None
    if reply.status == 400 and unprintable_target(context):  # go-cleanhttp's bare refusal, before OpenBao
        assert reply.body == b"" and reply.content_type == "", context
        return None
    if reply.status >= 400:
        assert reply.content_type == "application/json", context
        payload = json.loads(reply.body)
        assert isinstance(payload, dict) and list(payload) == ["errors"], context
        assert isinstance(payload["errors"], list) and all(isinstance(e, str) for e in payload["errors"]), context
        for text in payload["errors"]:
            assert "internal error in the double" not in text, context
        return payload
    if reply.status == 204:
        assert reply.body == b"", context
        return None
    if reply.content_type == "application/json":
        payload = json.loads(reply.body)
        assert isinstance(payload, dict), context
        return payload
    assert reply.content_type in {"application/pkix-cert", "application/pem-certificate-chain", "application/pkix-crl",
                                  "application/x-pem-file"}, context
    return None


def check_scheduler_reply(reply: Reply, method: str, context: str = "") -> Any:
    """Assert a Nomad-shaped answer; returns the parsed JSON body of a 200 (or None)."""
    context = f"{context} -> {reply.status} {reply.text()[:300]!r}"
    _no_debris(reply, context)
    assert reply.status in SCHEDULER_STATUSES, context
    if reply.status == 200:
        if method == "DELETE" or method == "HEAD":
            assert reply.body == b"", context
            return None
        assert reply.content_type == "application/json", context
        return json.loads(reply.body)
    if reply.body or reply.status != 404:
        assert reply.content_type == PLAIN, context
    if reply.status == 500:
        assert reply.text() in SCHEDULER_500, context
    return None


# -- state fingerprints ----------------------------------------------------------------------------

def secrets_fingerprint(service) -> Any:
    """Everything a write could change in the secrets service, as comparable values."""
    with service.lock:
        mounts = {}
        for path, mount in service.mounts.items():
            state = mount.backend.state
            mounts[path] = (
                (mount.type, mount.description, mount.default_lease_ttl, mount.max_lease_ttl, dict(mount.options)),
                dict(state.keys), {k: repr(v) for k, v in state.issuers.items()}, state.default_issuer_id,
                state.default_follows_latest_issuer, state.default_key_id, dict(state.roles), dict(state.certs),
                repr(state.config_urls), repr(state.config_crl), dict(state.crl_numbers),
                {k: id(v) for k, v in state.crls.items()}, repr(sorted(state.extra.items(), key=lambda kv: kv[0])),
            )
        return (mounts, {k: (p.text, p.version) for k, p in service.policies.items()}, dict(service.tokens.tokens),
                sorted(service.wrapped), service.sealed)


def scheduler_fingerprint(state) -> Any:
    """The scheduler's state as the API exposes it: both regions' methods and indexes, tokens, leader,
    ACL switch (records are immutable dataclasses, so == compares contents). Internal bookkeeping
    such as the replica's count of reads is left out."""
    auth, local = state.authoritative_view(), state.replicated_view()
    return (dict(auth.methods), auth.table_index, auth.raft_index, dict(local.methods), local.table_index,
            local.raft_index, local.pending, dict(state._tokens), state.leader, state._acl_enabled)


# -- baselines ---------------------------------------------------------------------------------------

class SecretsBaseline:
    """What :func:`seed_secrets` created (a plain class: Hypothesis prints it with every failure)."""

    def __init__(self, root_a: dict, root_b: dict, leaf: dict, revoked_serial: str, pems: dict):
        self.root_a, self.root_b, self.leaf, self.revoked_serial, self.pems = root_a, root_b, leaf, revoked_serial, pems
        self.limited_token = "limited-token"

    def __repr__(self) -> str:
        return f"SecretsBaseline(root_a={self.root_a['issuer_id']}, leaf={self.leaf['serial_number']})"


def seed_secrets(double: Double) -> SecretsBaseline:
    """Mount ``pki`` (87600h) with two EC roots (``root-a`` default, ``root-b``), roles ``web`` (EC,
    example.com), ``rsa`` and ``nostore`` (EC, ``no_store``), one issued and one revoked leaf, and a token ``limited-token`` that may
    only read ``pki/*``. Saves the baseline."""
    f = Factories(double.scheduler, double.secrets).secrets
    f.mount("pki")
    root_a = f.root_issuer("pki", common_name="Robust Root A", issuer_name="root-a")
    root_b = f.root_issuer("pki", common_name="Robust Root B", issuer_name="root-b")
    f.role("web")
    f.role("rsa", key_type="rsa", key_bits=2048)
    f.role("nostore", no_store=True)
    leaf = dispatch(double.secrets, "update", "pki/issue/web", {"common_name": "a.example.com"}, "root").data
    gone = dispatch(double.secrets, "update", "pki/issue/web", {"common_name": "b.example.com"}, "root").data
    dispatch(double.secrets, "update", "pki/revoke", {"serial_number": gone["serial_number"]}, "root")
    f.policy("limited", 'path "pki/*" { capabilities = ["read", "list"] }')
    double.secrets.create_token(policies=["limited"], token_id="limited-token")
    double.save_baseline()
    return SecretsBaseline(root_a, root_b, leaf, gone["serial_number"], pems=pem_materials(root_a, leaf))


def seed_scheduler(double: Double) -> None:
    """Two auth methods (``okta`` OIDC, ``jwt-default`` JWT and default), a client token
    ``client-secret``; saves the baseline."""
    f = Factories(double.scheduler, double.secrets).scheduler
    f.oidc_auth_method("okta")
    f.jwt_auth_method("jwt-default", Default=True)
    f.token(type="client", secret_id="client-secret")
    double.save_baseline()


# -- PEM / CSR / DER material ------------------------------------------------------------------------

def _pem(kind: str, der: bytes) -> str:
    b64 = base64.b64encode(der).decode()
    lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----\n"


def pem_materials(root: dict, leaf: dict) -> dict[str, str]:
    """Valid and broken PEM texts: CSRs, certificates (this mount's and a foreign CA's), keys."""
    key = ec.generate_private_key(ec.SECP256R1())
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "csr.example.com")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    ca_csr = (x509.CertificateSigningRequestBuilder().subject_name(name)
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    now = datetime.datetime.now(datetime.timezone.utc)
    foreign = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .sign(key, hashes.SHA256()))
    csr_der = csr.public_bytes(serialization.Encoding.DER)
    odd = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "odd-org-name"),
                     x509.NameAttribute(NameOID.COMMON_NAME, "csr.example.com")])
    odd_csr = x509.CertificateSigningRequestBuilder().subject_name(odd).sign(key, hashes.SHA256())
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    foreign_der = foreign.public_bytes(serialization.Encoding.DER)
    cert_der = x509.load_pem_x509_certificate(leaf["certificate"].encode()).public_bytes(serialization.Encoding.DER)
    pkcs8 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()).decode()
    return {
        "csr": csr.public_bytes(serialization.Encoding.PEM).decode(),
        "ca_csr": ca_csr.public_bytes(serialization.Encoding.PEM).decode(),
        "rsa1024_csr": x509.CertificateSigningRequestBuilder().subject_name(name).sign(rsa_key, hashes.SHA256())
        .public_bytes(serialization.Encoding.PEM).decode(),
        "root": root["certificate"],
        "leaf": leaf["certificate"],
        "leaf_key": leaf["private_key"],
        "foreign": foreign.public_bytes(serialization.Encoding.PEM).decode(),
        "foreign_key": pkcs8,
        "rsa_key": rsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                         serialization.NoEncryption()).decode(),
        "csr_der_b64": base64.b64encode(csr_der).decode(),
        "cert_der_b64": base64.b64encode(cert_der).decode(),
        "csr_as_cert": _pem("CERTIFICATE", csr_der),
        "cert_as_csr": _pem("CERTIFICATE REQUEST", cert_der),
        "truncated_csr": _pem("CERTIFICATE REQUEST", csr_der[: len(csr_der) // 2]),
        "truncated_cert": _pem("CERTIFICATE", cert_der[:-7]),
        "empty_block": "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        "bad_base64": "-----BEGIN CERTIFICATE REQUEST-----\n!!!!not base64$$$\n-----END CERTIFICATE REQUEST-----\n",
        "unterminated": "-----BEGIN CERTIFICATE-----\n" + base64.b64encode(cert_der).decode()[:80] + "\n",
        "two_certs": leaf["certificate"] + "\n" + root["certificate"],
        "cert_and_key": leaf["certificate"] + "\n" + leaf["private_key"],
        "garbage_around": "junk before\n" + leaf["certificate"] + "\njunk after",
        "encrypted_key": "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n"
                         "AAAA\n-----END EC PRIVATE KEY-----\n",
        "not_a_cert": "not a cert",
        "csr_bad_point": _pem("CERTIFICATE REQUEST", _off_curve(csr_der, point)),
        "cert_bad_point": _pem("CERTIFICATE", _off_curve(foreign_der, point)),
        "csr_bad_utf8_name": _pem("CERTIFICATE REQUEST", odd_csr.public_bytes(serialization.Encoding.DER)
                                  .replace(b"odd-org-name", b"odd-org\xffname")),
        "cert_bad_utf8_name": _pem("CERTIFICATE", foreign_der.replace(b"csr.example.com", b"csr.exam\xffle.com")),
    }


def _off_curve(der: bytes, point: bytes) -> bytes:
    """``der`` with its EC public point moved off the curve (one bit of y flipped)."""
    out = bytearray(der)
    out[bytes(der).index(point) + len(point) - 1] ^= 0x01
    return bytes(out)


@st.composite
def mutated_pem(draw, materials: dict[str, str]) -> str:
    """A valid DER (CSR, certificate, key) with bytes flipped, cut or inserted, re-armoured as PEM
    under a chosen block type, or a broken fixed material."""
    if draw(st.booleans()):
        return materials[draw(st.sampled_from(sorted(materials)))]
    kind, source = draw(st.sampled_from([("CERTIFICATE REQUEST", "csr"), ("CERTIFICATE", "leaf"),
                                         ("CERTIFICATE", "root"), ("PRIVATE KEY", "foreign_key"),
                                         ("CERTIFICATE REQUEST", "ca_csr")]))
    text = materials[source]
    lines = [ln for ln in text.strip().splitlines() if not ln.startswith("-----")]
    der = bytearray(base64.b64decode("".join(lines)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        pos = draw(st.integers(0, max(0, len(der) - 1)))
        if op == "flip" and der:
            der[pos] ^= draw(st.integers(1, 255))
        elif op == "cut":
            del der[pos:pos + draw(st.integers(1, 16))]
        elif op == "insert":
            der[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        else:
            del der[pos:]
    block = draw(st.sampled_from([kind, "CERTIFICATE", "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST",
                                  "PRIVATE KEY", "EC PRIVATE KEY", "X509 CRL", "JUNK"]))
    return _pem(block, bytes(der))


# -- JSON and body strategies -----------------------------------------------------------------------

json_scalars = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=16)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def hostile_bodies(json_keys: list[str] | None = None) -> st.SearchStrategy[bytes]:
    """Bodies of every sort: empty, JSON of any type, deep nesting, many strings, huge strings,
    trailing garbage, broken UTF-8, BOMs, form encoding and raw bytes."""
    keys = json_keys or ["common_name", "Name"]
    key = st.sampled_from(keys)
    return st.one_of(
        st.just(b""),
        st.sampled_from([b"null", b"{}", b"[]", b'""', b"0", b"true", b" ", b"\n\t", b"{", b"}", b"[", b"nul", b"tru"]),
        json_values.map(_dumps),
        st.dictionaries(key, json_values, max_size=3).map(_dumps),
        st.binary(max_size=200),
        st.integers(1, 12_000).map(lambda n: b"[" * n + b"]" * n),
        st.integers(1, 2_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        st.integers(995, 1005).map(lambda n: _dumps({f"k{i}": 1 for i in range(n)})),
        st.tuples(key, st.integers(0, 1_500_000)).map(lambda kn: _dumps({kn[0]: "a" * kn[1]})),
        st.tuples(json_values, st.binary(min_size=1, max_size=10)).map(lambda v: _dumps(v[0]) + v[1]),
        st.tuples(key, st.binary(max_size=10)).map(lambda kb: b'{"' + kb[0].encode() + b'":"' + kb[1] + b'"}'),
        json_values.map(lambda v: b"\xef\xbb\xbf" + _dumps(v)),
        st.dictionaries(st.text(max_size=8), st.text(max_size=12), max_size=4).map(
            lambda d: urllib.parse.urlencode(d).encode()),
        st.sampled_from([b"1e999", b"-0", b"1" * 400, b'{"a":1e999}', b'{"a":-}', b'{"a":"\\ud800"}',
                         b'{"a":"\\u12"}', b'{"a" 1}', b'{"a":1,}', b"[1,]", b'{"a":1}{"b":2}', b'{"a":1}]']),
    )


header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


def quote_path(path: str) -> str:
    """Percent-encode what http.client refuses in a request target (spaces, controls, non-ASCII)."""
    return urllib.parse.quote(path, safe="/:@!$&'()*+,;=-._~%")
