"""The KV engine inside the double: time (manual clock, freezegun), seeds, factories, the
``schedpki.kv`` inspection helper and the ``schedpki_dev_mounts`` option."""

from __future__ import annotations

import datetime

import pytest
import requests
from freezegun import freeze_time

from pytest_schedpki.errors import SeedError
from pytest_schedpki.secrets.framework.logical import LogicalError

ROOT = {"X-Vault-Token": "root"}


def _kv2(schedpki, path="secret"):
    r = requests.post(f"{schedpki.secrets.url}/v1/sys/mounts/{path}", headers=ROOT, json={"type": "kv-v2"})
    assert r.status_code == 204


def test_delete_version_after_follows_the_manual_clock(schedpki):
    clock = schedpki.clock.use("manual", datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc))
    url = schedpki.secrets.url
    _kv2(schedpki)
    assert requests.post(f"{url}/v1/secret/config", headers=ROOT, json={"delete_version_after": "1h"}).status_code == 204
    r = requests.post(f"{url}/v1/secret/data/app", headers=ROOT, json={"data": {"k": "v"}})
    assert r.json()["data"]["created_time"] == "2030-01-01T00:00:00Z"
    assert r.json()["data"]["deletion_time"] == "2030-01-01T01:00:00Z"
    clock.advance(3599)
    assert requests.get(f"{url}/v1/secret/data/app", headers=ROOT).json()["data"]["data"] == {"k": "v"}
    clock.advance(1)
    r = requests.get(f"{url}/v1/secret/data/app", headers=ROOT)
    assert r.status_code == 404
    assert r.json()["data"] == {"data": None, "metadata": {
        "created_time": "2030-01-01T00:00:00Z", "custom_metadata": None, "deletion_time": "2030-01-01T01:00:00Z",
        "destroyed": False, "version": 1}}


def test_key_delete_version_after_shorter_than_config_wins_under_freezegun(schedpki):
    url = schedpki.secrets.url
    _kv2(schedpki)
    with freeze_time("2031-05-01T12:00:00Z") as frozen:
        requests.post(f"{url}/v1/secret/config", headers=ROOT, json={"delete_version_after": "2h"})
        requests.post(f"{url}/v1/secret/metadata/app", headers=ROOT, json={"delete_version_after": "10m"})
        r = requests.post(f"{url}/v1/secret/data/app", headers=ROOT, json={"data": {"k": 1}})
        assert r.json()["data"]["deletion_time"] == "2031-05-01T12:10:00Z"
        frozen.tick(datetime.timedelta(minutes=10))
        assert requests.get(f"{url}/v1/secret/data/app", headers=ROOT).status_code == 404
        assert requests.post(f"{url}/v1/secret/undelete/app", headers=ROOT, json={"versions": [1]}).status_code == 204
        r = requests.get(f"{url}/v1/secret/data/app", headers=ROOT)
        assert (r.status_code, r.json()["data"]["data"]) == (200, {"k": 1})


def test_soft_delete_time_is_the_clock_time(schedpki):
    schedpki.clock.use("manual", datetime.datetime(2030, 6, 1, 8, 30, tzinfo=datetime.timezone.utc))
    url = schedpki.secrets.url
    _kv2(schedpki)
    requests.post(f"{url}/v1/secret/data/a", headers=ROOT, json={"data": {"x": 1}})
    assert requests.delete(f"{url}/v1/secret/data/a", headers=ROOT).status_code == 204
    meta = requests.get(f"{url}/v1/secret/metadata/a", headers=ROOT).json()["data"]
    assert meta["versions"]["1"]["deletion_time"] == "2030-06-01T08:30:00Z"


def test_refused_write_changes_nothing(schedpki):
    url = schedpki.secrets.url
    _kv2(schedpki)
    requests.post(f"{url}/v1/secret/data/a", headers=ROOT, json={"data": {"x": 1}})
    r = requests.post(f"{url}/v1/secret/data/a", headers=ROOT, json={"data": {"x": 2}, "options": {"cas": 7}})
    assert (r.status_code, r.json()) == (400, {"errors": ["check-and-set parameter did not match the current version"]})
    meta = requests.get(f"{url}/v1/secret/metadata/a", headers=ROOT).json()["data"]
    assert meta["current_version"] == 1 and list(meta["versions"]) == ["1"]
    assert schedpki.kv.writes() == ["secret/a"]


def test_seed_writes_v2_versions_and_v1_values(schedpki):
    schedpki.seed({"secrets": {"mounts": [
        {"path": "secret", "type": "kv", "options": {"version": 2},
         "secrets": {"app/config": {"db": "db.example.com", "port": 5432}, "app/hist": [{"v": 1}, {"v": 2}]}},
        {"path": "legacy", "type": "kv", "secrets": {"team/a": {"k": "v"}}},
    ]}})
    url = schedpki.secrets.url
    r = requests.get(f"{url}/v1/secret/data/app/config", headers=ROOT).json()["data"]
    assert r["data"] == {"db": "db.example.com", "port": 5432} and r["metadata"]["version"] == 1
    assert requests.get(f"{url}/v1/secret/data/app/hist", headers=ROOT).json()["data"]["metadata"]["version"] == 2
    assert requests.get(f"{url}/v1/legacy/team/a", headers=ROOT).json()["data"] == {"k": "v"}
    mount = requests.get(f"{url}/v1/sys/mounts/secret", headers=ROOT).json()["data"]
    assert (mount["type"], mount["options"]) == ("kv", {"version": "2"})


def test_seed_errors_name_the_entry(schedpki):
    with pytest.raises(SeedError) as exc:
        schedpki.seed({"secrets": {"mounts": [{"path": "secret", "type": "kv", "options": {"version": 3}}]}})
    assert 'nil backend of type "kv" returned from factory' in str(exc.value)
    with pytest.raises(SeedError) as exc:
        schedpki.seed({"secrets": {"mounts": [{"path": "kv1", "type": "kv", "secrets": {"a": {}}}]}})
    assert "secrets.mounts[0].secrets.a" in str(exc.value) and "missing data fields" in str(exc.value)


def test_factories_and_inspection(schedpki):
    written = schedpki.factories.secrets.kv_secret("app/config", {"password": "s3cret"})
    assert written["version"] == 1 and written["destroyed"] is False
    assert schedpki.factories.secrets.kv_secret("app/config", {"password": "new"}, cas=1)["version"] == 2
    with pytest.raises(LogicalError) as exc:
        schedpki.factories.secrets.kv_secret("app/config", {"password": "x"}, cas=1)
    assert exc.value.errors == ["check-and-set parameter did not match the current version"]
    schedpki.factories.secrets.kv_mount("legacy", version=1)
    assert schedpki.factories.secrets.kv_secret("a", {"k": "v"}, mount="legacy") is None
    schedpki.kv.assert_not_read("app/config")
    r = requests.get(f"{schedpki.secrets.url}/v1/secret/data/app/config", headers=ROOT)
    assert r.json()["data"]["data"] == {"password": "new"}
    access = schedpki.kv.assert_read("app/config")
    assert (access.mount, access.version) == ("secret", 2)
    assert schedpki.kv.reads() == ["secret/app/config"]
    assert schedpki.kv.writes() == ["secret/app/config", "secret/app/config", "legacy/a"]
    assert schedpki.kv.value("app/config", version=1) == {"password": "s3cret"}
    assert schedpki.kv.value("a", mount="legacy") == {"k": "v"}
    with pytest.raises(AssertionError, match="secret/other was not read; reads: \\['secret/app/config'\\]"):
        schedpki.kv.assert_read("other")


def test_dev_mounts_option_mounts_secret_as_kv_v2(pytester):
    pytester.makeini("[pytest]\nschedpki_dev_mounts = true\n")
    pytester.makepyfile(
        """
        import requests

        def test_secret_mount(schedpki):
            r = requests.get(schedpki.secrets.url + "/v1/sys/mounts/secret", headers={"X-Vault-Token": "root"})
            data = r.json()["data"]
            assert (data["type"], data["options"], data["description"]) == ("kv", {"version": "2"}, "key/value secret storage")
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_without_the_option_there_is_no_secret_mount(schedpki):
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/mounts/secret", headers=ROOT)
    assert (r.status_code, r.json()) == (400, {"errors": ["No secret engine mount at secret/"]})


def test_baseline_survives_in_place_changes_of_later_requests():
    """Snapshots share records with the live state: every change must go to a private copy, so a
    reset brings back the seeded versions exactly (soft delete, destroy, metadata, config)."""
    from pytest_schedpki import Double
    from pytest_schedpki.secrets.http import dispatch

    double = Double()
    double.seed({"secrets": {"mounts": [{"path": "secret", "type": "kv-v2", "secrets": {"a": [{"v": 1}, {"v": 2}]}}],
                             "auth": [{"path": "approle", "roles": [{"name": "web", "secret_ids": ["s"],
                                                                     "secret_id_num_uses": 2}]}]}})
    double.save_baseline()
    service = double.secrets

    def call(operation, path, data=None):
        return dispatch(service, operation, path, data or {}, "root")

    call("delete", "secret/data/a")
    call("update", "secret/destroy/a", {"versions": [1]})
    call("update", "secret/metadata/a", {"max_versions": 1, "custom_metadata": {"k": "v"}})
    call("update", "secret/config", {"max_versions": 7})
    role_id = call("read", "auth/approle/role/web/role-id").data["role_id"]
    call("update", "auth/approle/login", {"role_id": role_id, "secret_id": "s"})
    assert call("update", "auth/approle/role/web/secret-id/lookup", {"secret_id": "s"}).data["secret_id_num_uses"] == 1
    double.reset()
    assert call("read", "secret/data/a").data["data"] == {"v": 2}
    meta = call("read", "secret/metadata/a").data
    assert (meta["max_versions"], meta["custom_metadata"], meta["versions"]["1"]["destroyed"]) == (0, None, False)
    assert call("read", "secret/config").data["max_versions"] == 0
    assert call("update", "auth/approle/role/web/secret-id/lookup", {"secret_id": "s"}).data["secret_id_num_uses"] == 2


def test_reset_renews_an_unchanged_kv_mount_and_its_version_and_rebuilds_a_replaced_one():
    from pytest_schedpki import Double
    from pytest_schedpki.secrets.http import dispatch

    double = Double()
    double.seed({"secrets": {"mounts": [{"path": "kv", "type": "kv", "options": {"version": 1},
                                         "secrets": {"a": {"v": 1}}}]}})
    double.save_baseline()
    service = double.secrets

    def call(operation, path, data=None):
        return dispatch(service, operation, path, data or {}, "root")

    mount = service.mount("kv")
    backend, uuid, seeded = mount.backend, mount.uuid, list(mount.backend.events)
    call("update", "sys/mounts/kv/tune", {"options": {"version": "2"}})  # upgrades the mount in place
    assert call("read", "kv/data/a").data["data"] == {"v": 1}
    backend.marker = "set by a test"
    double.reset()
    assert service.mount("kv") is mount and mount.backend is backend  # renewed, not rebuilt
    assert not hasattr(backend, "marker") and backend.version == 1 and backend.events == seeded
    assert call("read", "kv/a").data == {"v": 1}

    call("delete", "sys/mounts/kv")
    service.enable_mount("kv", type="kv")  # the same path, another mount
    double.reset()
    assert service.mount("kv").uuid == uuid and service.mount("kv").backend is not backend
    assert call("read", "kv/a").data == {"v": 1}
