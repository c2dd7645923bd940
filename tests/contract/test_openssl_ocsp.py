"""Contract: ``openssl ocsp`` (OpenSSL's own OCSP client: a POST with ``Content-Type:
application/ocsp-request``, a nonce it checks for, the response verified against the CA) asking the PKI
mount's responder about a leaf, good then revoked - against the double over TCP and, marked ``parity``,
against a real ``bao server -dev``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import pytest
import requests
from contract_helpers import h, unique_mount
from cryptography import x509
from cryptography.x509.oid import AuthorityInformationAccessOID

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl binary is not on PATH")


def _call(url: str, method: str, path: str, body: dict | None = None) -> dict:
    resp = requests.request(method, f"{url}/v1/{path}", json=body, headers={"X-Vault-Token": h.ROOT_TOKEN}, timeout=30)
    assert resp.status_code in (200, 204), (path, resp.status_code, resp.text)
    return resp.json() if resp.status_code == 200 else {}


def _openssl_ocsp(workdir: str, url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["openssl", "ocsp", "-issuer", "ca.pem", "-cert", "leaf.pem", "-CAfile", "ca.pem", "-url", url, "-resp_text"],
        cwd=workdir, capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="schedpki-ocsp-") as path:
        yield path


def test_openssl_ocsp_good_then_revoked(target, request, workdir):
    url = target[1]
    mount = unique_mount("ocsp_", request)
    _call(url, "POST", f"sys/mounts/{mount}", {"type": "pki"})
    _call(url, "POST", f"sys/mounts/{mount}/tune", {"max_lease_ttl": "87600h"})
    root = _call(url, "POST", f"{mount}/root/generate/internal",
                 {"common_name": "OCSP Root", "ttl": "87600h", "key_type": "ec"})["data"]
    responder = f"{url}/v1/{mount}/ocsp"
    _call(url, "POST", f"{mount}/config/urls", {"ocsp_servers": [responder]})
    _call(url, "POST", f"{mount}/roles/web", {"allowed_domains": ["example.com"], "allow_subdomains": True,
                                              "key_type": "ec", "ttl": "1h"})
    leaf = _call(url, "POST", f"{mount}/issue/web", {"common_name": "ocsp.example.com"})["data"]
    with open(os.path.join(workdir, "ca.pem"), "w") as f:
        f.write(root["certificate"] + "\n")
    with open(os.path.join(workdir, "leaf.pem"), "w") as f:
        f.write(leaf["certificate"] + "\n")
    assert leaf_aia(leaf["certificate"]) == [responder]  # the leaf names the responder

    try:
        good = _openssl_ocsp(workdir, responder)
        assert good.returncode == 0, good.stderr
        assert "leaf.pem: good" in good.stdout, good.stdout
        assert "Response verify OK" in good.stderr, good.stderr
        assert "OCSP Response Status: successful (0x0)" in good.stdout
        assert "Responder Id: CN = OCSP Root" in good.stdout
        assert "WARNING: no nonce in response" in good.stderr + good.stdout  # upstream echoes no nonce
        assert re.search(r"Next Update: ", good.stdout)

        revoked_at = _call(url, "POST", f"{mount}/revoke", {"serial_number": leaf["serial_number"]})["data"]
        revoked = _openssl_ocsp(workdir, responder)
        assert revoked.returncode == 0, revoked.stderr
        assert "leaf.pem: revoked" in revoked.stdout, revoked.stdout
        assert "Revocation Time: " in revoked.stdout and "Reason" not in revoked.stdout
        assert "Response verify OK" in revoked.stderr
        assert revoked_at["revocation_time"] > 0
    finally:
        _call(url, "DELETE", f"sys/mounts/{mount}")


def leaf_aia(pem: str) -> list[str]:
    """The OCSP URLs of a certificate's AuthorityInformationAccess."""
    aia = h.load_certificate(pem).extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    return [d.access_location.value for d in aia if d.access_method == AuthorityInformationAccessOID.OCSP]
