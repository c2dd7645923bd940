"""Contract: ``certbot`` itself (``certonly --standalone``, ``renew``, ``revoke``) against the PKI
mount's ACME server, non-root, every state in a temporary directory.

certbot's standalone authenticator serves http-01 itself on ``--http-01-address``/``--http-01-port``.
Against the double (the plugin's ``schedpki`` fixture) that is a free port the double's
``challenge_address`` knob points validation at; against a real ``bao server -dev`` (marker
``parity``) it is ``127.0.0.1:80`` (bao fetches port 80 of the identifier, here ``localhost``), held
under :func:`acme_helpers.port80`'s lock. Renewal runs with ``--no-random-sleep-on-renew`` (certbot
otherwise sleeps up to 8 minutes when it has no terminal).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile

import pytest
from acme_helpers import call, crl_revoked_serials, ocsp_status, port80, setup_acme_mount
from contract_helpers import unique_mount
from cryptography import x509
from cryptography.x509 import ocsp

pytestmark = pytest.mark.skipif(shutil.which("certbot") is None, reason="certbot is not installed (pip install certbot)")

CERTBOT_TIMEOUT = 120  # seconds per certbot command
DOUBLE_NAME = "certbot.example.com"  # never resolved: the knob sends validation to certbot's own server


class Certbot:
    """``certbot`` with its config/work/logs directories and HOME under ``root``, talking to ``server``."""

    def __init__(self, root: str, server: str, port: int):
        self.root, self.server, self.port = root, server, port
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": root}

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        dirs = ["--config-dir", f"{self.root}/config", "--work-dir", f"{self.root}/work", "--logs-dir", f"{self.root}/logs"]
        return subprocess.run(["certbot", *args, "--non-interactive", *dirs], env=self.env, capture_output=True,
                              text=True, timeout=CERTBOT_TIMEOUT, check=False)

    def ok(self, *args: str) -> str:
        done = self(*args)
        assert done.returncode == 0, f"certbot {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def certonly(self, name: str) -> str:
        return self.ok("certonly", "--standalone", "--agree-tos", "--register-unsafely-without-email",
                       "--server", self.server, "-d", name, "--http-01-address", "127.0.0.1",
                       "--http-01-port", str(self.port), "--key-type", "ecdsa")

    def cert(self, name: str, which: str = "cert.pem") -> x509.Certificate:
        with open(f"{self.root}/config/live/{name}/{which}", "rb") as f:
            return x509.load_pem_x509_certificates(f.read())[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def issue_renew_revoke(url: str, mount: str, name: str, port: int) -> None:
    """certonly, renew (a new serial, same name), a refused revocation reason, revoke; the CRL and OCSP
    then say revoked. Same assertions for the double and bao."""
    root = x509.load_pem_x509_certificate(setup_acme_mount(url, mount)["certificate"].encode())
    with tempfile.TemporaryDirectory(prefix="schedpki-certbot-") as tmp:
        certbot = Certbot(tmp, f"{url}/v1/{mount}/acme/directory", port)
        assert "Successfully received certificate." in certbot.certonly(name)
        first = certbot.cert(name)
        assert first.issuer == root.subject
        san = first.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert san.get_values_for_type(x509.DNSName) == [name]
        assert certbot.cert(name, "chain.pem") == root

        out = certbot.ok("renew", "--force-renewal", "--no-random-sleep-on-renew")
        assert "Congratulations, all renewals succeeded" in out, out
        second = certbot.cert(name)
        assert second.serial_number != first.serial_number
        assert second.extensions.get_extension_for_class(x509.SubjectAlternativeName).value == san
        assert os.path.exists(f"{tmp}/config/archive/{name}/cert2.pem")

        refused = certbot("revoke", "--cert-name", name, "--reason", "keycompromise", "--no-delete-after-revoke")
        assert refused.returncode != 0
        assert ("OpenBao does not support revocation reasons (got 1; expected omitted or 0/unspecified): "
                "the revocation reason provided is not allowed by the server") in refused.stdout + refused.stderr
        assert second.serial_number not in crl_revoked_serials(url, mount)

        out = certbot.ok("revoke", "--cert-name", name, "--no-delete-after-revoke")
        assert "successfully revoked" in out, out
        assert second.serial_number in crl_revoked_serials(url, mount)
        assert first.serial_number not in crl_revoked_serials(url, mount)
        assert ocsp_status(url, mount, second, root).certificate_status == ocsp.OCSPCertStatus.REVOKED
        assert ocsp_status(url, mount, first, root).certificate_status == ocsp.OCSPCertStatus.GOOD


@pytest.mark.parametrize("schedpki", ["tcp"], indirect=True)  # certbot is another process: TCP only
def test_certbot_issues_renews_and_revokes_against_the_double(schedpki, request):
    port = free_port()
    schedpki.acme_knobs(challenge_address=f"127.0.0.1:{port}")
    issue_renew_revoke(schedpki.secrets.url, unique_mount("certbot_", request), DOUBLE_NAME, port)
    schedpki.certs.assert_issued(count=2, san=DOUBLE_NAME)
    schedpki.certs.assert_revoked(san=DOUBLE_NAME)


@pytest.mark.parity
def test_certbot_issues_renews_and_revokes_against_bao(request):
    url = request.getfixturevalue("_bao_server").url
    mount = unique_mount("certbot_", request)
    try:
        with port80() as port:
            issue_renew_revoke(url, mount, "localhost", port)
    finally:
        call(url, "DELETE", f"sys/mounts/{mount}")
