"""Parity: the KV version-2 engine (config, data, metadata, delete/undelete/destroy, subkeys) and its
error texts, request for request against ``bao server -dev``."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

PATCH = {"Content-Type": "application/merge-patch+json"}
INVALID = ("Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints "
           "to use. If using the OpenBao CLI, use 'bao kv {}' for this operation.")


@pytest.fixture
def kv2(pair):
    pair.send("POST", f"/v1/sys/mounts/{pair.mount}", json={"type": "kv-v2"}).same().expect(204)
    return pair


def test_mount_shapes_for_every_kv_spelling(pair):
    m = pair.mount
    for suffix, body in (("a", {"type": "kv"}), ("b", {"type": "kv", "options": {"version": "1"}}),
                         ("c", {"type": "kv-v2"}), ("d", {"type": "kv", "options": {"version": 2}})):
        name = pair.new_mount(suffix)
        pair.send("POST", f"/v1/sys/mounts/{name}", json=body).same().expect(204)
        pair.send("GET", f"/v1/sys/mounts/{name}").same(volatile=("uuid",)).expect(200)
        pair.send("GET", f"/v1/sys/mounts/{name}/tune").same().expect(200)
    for version in ("3", "x"):
        pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "kv", "options": {"version": version}}).same().expect(
            400, errors=['nil backend of type "kv" returned from factory'])


def test_config_read_write_and_errors(kv2):
    m = kv2.mount
    kv2.send("GET", f"/v1/{m}/config").same().expect(200, data={"max_versions": 0, "delete_version_after": "0s"})
    kv2.send("POST", f"/v1/{m}/config", json={"max_versions": 3, "cas_required": False,
                                              "delete_version_after": "1h"}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/config").same().expect(200, data={"max_versions": 3, "delete_version_after": "1h0m0s"})
    kv2.send("POST", f"/v1/{m}/config", json={"delete_version_after": "-1s"}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/config").same().expect(200, data={"delete_version_after": "-1s"})
    kv2.send("POST", f"/v1/{m}/config", json={"max_versions": "x"}).same().expect(400, errors=[
        "Field validation failed: error converting input for field \"max_versions\": '' cannot parse value as "
        "'int': strconv.ParseInt: invalid syntax"])
    kv2.send("POST", f"/v1/{m}/config", json={"metadata_cas_required": True}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/config").same().expect(200, data={"metadata_cas_required": True})


def test_write_read_versions_and_cas(kv2):
    m = kv2.mount
    kv2.send("GET", f"/v1/{m}/data/foo").same().expect(404, errors=[])
    kv2.send("POST", f"/v1/{m}/data/foo", json={"data": {"a": 1, "b": {"c": 2}, "f": 1.5}}).same().expect(
        200, data={"version": 1, "destroyed": False, "deletion_time": "", "custom_metadata": None})
    kv2.send("POST", f"/v1/{m}/data/foo", json={"data": {"a": 2}, "options": {"cas": 0}}).same().expect(
        400, errors=["check-and-set parameter did not match the current version"])
    kv2.send("POST", f"/v1/{m}/data/foo", json={"data": {"a": 2}, "options": {"cas": 1}}).same().expect(200)
    kv2.send("POST", f"/v1/{m}/data/foo", json={"data": {"a": 2}, "options": {"cas": "x"}}).same().expect(
        400, errors=["error parsing check-and-set parameter"])
    for body in ({"a": 2}, {}):
        kv2.send("POST", f"/v1/{m}/data/foo", json=body).same().expect(400, errors=["no data provided"])
    kv2.send("POST", f"/v1/{m}/data/foo", json={"data": "str"}).same().expect(400, errors=[
        "error converting input for field \"data\": '' expected type 'map[string]interface {}', got unconvertible "
        "type 'string'"])
    kv2.send("GET", f"/v1/{m}/data/foo", params={"version": "1"}).same().expect(
        200, data={"data": {"a": 1, "b": {"c": 2}, "f": 1.5}})
    kv2.send("GET", f"/v1/{m}/data/foo").same().expect(200, data={"data": {"a": 2}})
    kv2.send("GET", f"/v1/{m}/data/foo", params={"version": "9"}).same().expect(404, errors=[])
    kv2.send("GET", f"/v1/{m}/data/foo", params={"version": "x"}).same().expect(400, errors=[
        "Field validation failed: error converting input for field \"version\": '' cannot parse value as 'int': "
        "strconv.ParseInt: invalid syntax"])
    kv2.send("POST", f"/v1/{m}/data/empty", json={"data": {}}).same().expect(200)
    kv2.send("GET", f"/v1/{m}/data/empty").same().expect(200, data={"data": {}})
    kv2.send("GET", f"/v1/{m}/metadata/foo").same().expect(200, data={"current_version": 2, "oldest_version": 0})


def test_cas_required_by_config_and_by_key(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/config", json={"cas_required": True}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/data/cc", json={"data": {"v": 4}}).same().expect(
        400, errors=["check-and-set parameter required for this call"])
    kv2.send("POST", f"/v1/{m}/data/cc", json={"data": {"v": 4}, "options": {"cas": 0}}).same().expect(200)
    kv2.send("PATCH", f"/v1/{m}/data/cc", json={"data": {"v": 5}}, headers=PATCH).same().expect(
        400, errors=["check-and-set parameter required for this call"])
    kv2.send("PATCH", f"/v1/{m}/data/cc", json={"data": {"v": 5}, "options": {"cas": 1}}, headers=PATCH).same().expect(200)
    kv2.send("POST", f"/v1/{m}/config", json={"cas_required": False}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/metadata/cc", json={"cas_required": True}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/data/cc", json={"data": {"v": 6}}).same().expect(
        400, errors=["check-and-set parameter required for this call"])


def test_patch_merges_and_refuses(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/data/p", json={"data": {"a": 1, "b": {"c": 2, "d": 3}}}).same().expect(200)
    kv2.send("PATCH", f"/v1/{m}/data/p", json={"data": {"b": {"c": None}, "e": "x"}}, headers=PATCH).same().expect(
        200, data={"version": 2})
    kv2.send("GET", f"/v1/{m}/data/p").same().expect(200, data={"data": {"a": 1, "b": {"d": 3}, "e": "x"}})
    kv2.send("PATCH", f"/v1/{m}/data/nope", json={"data": {"a": None}}, headers=PATCH).same().expect(404)
    for body in ({"v": 5}, {}):
        kv2.send("PATCH", f"/v1/{m}/data/p", json=body, headers=PATCH).same().expect(400, errors=["no data provided"])
    kv2.send("PATCH", f"/v1/{m}/data/p", json={"data": {"a": 2}}).same().expect(415)
    kv2.send("DELETE", f"/v1/{m}/data/p").same().expect(204)
    kv2.send("PATCH", f"/v1/{m}/data/p", json={"data": {"a": 2}}, headers=PATCH).same().expect(404)


def test_max_versions_and_delete_version_after(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/metadata/m", json={"max_versions": 2, "delete_version_after": "1h"}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/m").same().expect(200, data={"versions": {}, "current_metadata_version": 1})
    for n in range(1, 4):
        kv2.send("POST", f"/v1/{m}/data/m", json={"data": {"v": n}}).same().expect(200, data={"version": n})
    kv2.send("GET", f"/v1/{m}/metadata/m").same().expect(200, data={"oldest_version": 2, "current_version": 3})
    kv2.send("GET", f"/v1/{m}/data/m", params={"version": "1"}).same().expect(404, errors=[])
    kv2.send("POST", f"/v1/{m}/metadata/x", json={"max_versions": -1, "custom_metadata": {"k": 1}}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/x").same().expect(200, data={"max_versions": 4294967295,
                                                                      "custom_metadata": {"k": "1"}})
    kv2.send("POST", f"/v1/{m}/metadata/x", json={"custom_metadata": "a"}).same().expect(400, errors=[
        "error converting input for field \"custom_metadata\": '' expected type 'map[string]interface {}', got "
        "unconvertible type 'string'"])
    kv2.send("POST", f"/v1/{m}/metadata/x", json={"delete_version_after": "bad"}).same().expect(400, errors=[
        "error converting input for field \"delete_version_after\": strconv.ParseInt: parsing \"ba\": invalid syntax"])


def test_soft_delete_undelete_destroy(kv2):
    m = kv2.mount
    for n in range(1, 4):
        kv2.send("POST", f"/v1/{m}/data/foo", json={"data": {"v": n}}).same().expect(200)
    kv2.send("POST", f"/v1/{m}/delete/foo", json={"versions": [1]}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/delete/foo", json={}).same().expect(400, errors=["No version number provided"])
    kv2.send("DELETE", f"/v1/{m}/data/foo").same().expect(204)
    kv2.send("GET", f"/v1/{m}/data/foo").same().expect(404)
    kv2.send("GET", f"/v1/{m}/subkeys/foo").same().expect(404)
    kv2.send("POST", f"/v1/{m}/undelete/foo", json={"versions": [3]}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/undelete/foo", json={}).same().expect(400, errors=["No version number provided"])
    kv2.send("GET", f"/v1/{m}/data/foo").same().expect(200, data={"data": {"v": 3}})
    kv2.send("POST", f"/v1/{m}/destroy/foo", json={"versions": [1]}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/destroy/foo", json={}).same().expect(400, errors=["no version number provided"])
    kv2.send("GET", f"/v1/{m}/data/foo", params={"version": "1"}).same().expect(404)
    kv2.send("GET", f"/v1/{m}/metadata/foo").same().expect(200)
    kv2.send("POST", f"/v1/{m}/delete/foo", json={"versions": "2,3"}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/delete/foo", json={"versions": ["a"]}).same().expect(400, errors=[
        "Field validation failed: error converting input for field \"versions\": decoding failed due to the "
        "following error(s):\n\n'[0]' cannot parse value as 'int': strconv.ParseInt: invalid syntax"])
    kv2.send("GET", f"/v1/{m}/metadata/foo").same().expect(200)
    for verb in ("delete", "undelete", "destroy"):
        kv2.send("POST", f"/v1/{m}/{verb}/nope", json={"versions": [1]}).same().expect(204)


def test_subkeys_depth(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/data/s", json={"data": {"a": {"b": {"c": 1}, "e": {}}, "f": [1]}}).same().expect(200)
    for depth in (None, "-1", "1", "2", "0"):
        kv2.send("GET", f"/v1/{m}/subkeys/s", params={"depth": depth} if depth else None).same().expect(200)
    kv2.send("GET", f"/v1/{m}/subkeys/nope").same().expect(404, errors=[])


def test_metadata_list_patch_delete(kv2):
    m = kv2.mount
    for key in ("a/b/c", "a/d", "e"):
        kv2.send("POST", f"/v1/{m}/data/{key}", json={"data": {"v": 1}}).same().expect(200)
    kv2.send("LIST", f"/v1/{m}/metadata").same().expect(200, data={"keys": ["a/", "e"]})
    kv2.send("LIST", f"/v1/{m}/metadata/a").same().expect(200, data={"keys": ["b/", "d"]})
    kv2.send("GET", f"/v1/{m}/metadata/a/", params={"list": "true"}).same().expect(200)
    kv2.send("LIST", f"/v1/{m}/metadata/zz").same().expect(404, errors=[])
    kv2.send("LIST", f"/v1/{m}/data/").same().expect(405)
    kv2.send("POST", f"/v1/{m}/metadata/e", json={"custom_metadata": {"k": "v", "z": "1"}}).same().expect(204)
    kv2.send("PATCH", f"/v1/{m}/metadata/e", json={"custom_metadata": {"k": None, "y": "2"}, "max_versions": 4},
             headers=PATCH).same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/e").same().expect(200, data={"custom_metadata": {"y": "2", "z": "1"},
                                                                     "max_versions": 4, "current_metadata_version": 2})
    kv2.send("GET", f"/v1/{m}/data/e").same().expect(200)
    kv2.send("PATCH", f"/v1/{m}/metadata/nope", json={"max_versions": 1}, headers=PATCH).same().expect(404)
    kv2.send("DELETE", f"/v1/{m}/metadata/e").same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/e").same().expect(404, errors=[])
    kv2.send("GET", f"/v1/{m}/data/e").same().expect(404, errors=[])
    kv2.send("DELETE", f"/v1/{m}/metadata/nope").same().expect(204)


def test_metadata_cas_required(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/config", json={"metadata_cas_required": True}).same().expect(204)
    kv2.send("POST", f"/v1/{m}/metadata/cm", json={"max_versions": 3}).same().expect(
        400, errors=["metadata check-and-set parameter required for this call"])
    kv2.send("POST", f"/v1/{m}/data/cm", json={"data": {"x": 1}}).same().expect(200)
    for cas in (0, 1):
        kv2.send("POST", f"/v1/{m}/metadata/cm", json={"max_versions": 3, "cas": cas}).same().expect(
            400, errors=["metadata check-and-set parameter required for this call"])
    kv2.send("PATCH", f"/v1/{m}/metadata/cm", json={"max_versions": 3}, headers=PATCH).same().expect(
        400, errors=["metadata check-and-set parameter required for this call"])
    kv2.send("GET", f"/v1/{m}/metadata/cm").same().expect(200, data={"current_metadata_version": 0})


def test_invalid_paths_and_trailing_slash(kv2):
    m = kv2.mount
    for method, verb in (("GET", "get"), ("PUT", "put"), ("DELETE", "delete"), ("LIST", "list")):
        body = {"a": 1} if method == "PUT" else None
        kv2.send(method, f"/v1/{m}/foo", json=body).same().expect(404, warnings=[INVALID.format(verb)])
    kv2.send("GET", f"/v1/{m}/config/x").same().expect(404, warnings=[INVALID.format("get")])
    kv2.send("GET", f"/v1/{m}/data/").same().expect(404, errors=[])
    for path in ("data/", "metadata/"):
        kv2.send("POST", f"/v1/{m}/{path}", json={"data": {}}).same().expect(
            400, errors=["cannot write to a path ending in '/'"])


@pytest.mark.parametrize(("config", "key", "writes"), [(0, 2, 4), (5, 2, 4), (2, 0, 4), (2, 5, 7), (3, 2, 5)])
def test_max_versions_of_config_and_key(kv2, config, key, writes):
    m = kv2.mount
    if config:
        kv2.send("POST", f"/v1/{m}/config", json={"max_versions": config}).same().expect(204)
    if key:
        kv2.send("POST", f"/v1/{m}/metadata/k", json={"max_versions": key}).same().expect(204)
    for n in range(1, writes + 1):
        kv2.send("POST", f"/v1/{m}/data/k", json={"data": {"v": n}}).same().expect(200, data={"version": n})
    kv2.send("GET", f"/v1/{m}/metadata/k").same().expect(200)


def test_destroyed_version_stays_destroyed(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/data/j", json={"data": {"v": 1}}).same().expect(200)
    kv2.send("GET", f"/v1/{m}/data/j", params={"version": "0"}).same().expect(200)
    kv2.send("POST", f"/v1/{m}/data/j", json={"data": {"v": 1}, "options": "x"}).same().expect(400, errors=[
        "error converting input for field \"options\": '' expected type 'map[string]interface {}', got "
        "unconvertible type 'string'"])
    for verb in ("destroy", "undelete", "delete"):
        kv2.send("POST", f"/v1/{m}/{verb}/j", json={"versions": [1]}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/j").same().expect(200)
    kv2.send("GET", f"/v1/{m}/data/j").same().expect(404, data={"data": None})


def _limit(text):
    return f"1 error occurred:\n\t* custom_metadata validation failed: {text}\n\n"


@pytest.mark.parametrize(("custom", "error"), [
    ({f"k{i}": "v" for i in range(65)}, _limit("payload must contain at most 64 keys, provided 65")),
    ({"k" * 129: "v"}, _limit(f'length of key "{"k" * 129}" is 129 but must be 0 < len(key) <= 128')),
    ({"k": "v" * 513}, _limit('length of value for key "k" is 513 but must be 0 < len(value) <= 512')),
    ({"": "v"}, _limit('length of key "" is 0 but must be 0 < len(key) <= 128')),
    ({"k": None}, _limit('length of value for key "k" is 0 but must be 0 < len(value) <= 512')),
    ({"k": ["a"]}, "custom_metadata validation failed: '' expected type 'string', got unconvertible type "
                   "'[]interface {}'"),
])
def test_custom_metadata_limits(kv2, custom, error):
    kv2.send("POST", f"/v1/{kv2.mount}/metadata/cm", json={"custom_metadata": custom}).same().expect(400, errors=[error])
    kv2.send("GET", f"/v1/{kv2.mount}/metadata/cm").same().expect(404)


def test_metadata_and_data_conversions(kv2):
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/metadata/cv", json={"max_versions": "x"}).same().expect(400, errors=[
        "error converting input for field \"max_versions\": '' cannot parse value as 'int': strconv.ParseInt: "
        "invalid syntax"])
    kv2.send("POST", f"/v1/{m}/metadata/cv", json={"cas_required": "x"}).same().expect(400, errors=[
        "error converting input for field \"cas_required\": '' cannot parse value as 'bool': strconv.ParseBool: "
        "invalid syntax"])
    kv2.send("POST", f"/v1/{m}/metadata/cv", json={"custom_metadata": {"k": 1.5, "t": True}}).same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/cv").same().expect(200, data={"custom_metadata": {"k": "1.5", "t": "1"}})
    kv2.send("POST", f"/v1/{m}/data/zz", json={"data": {"a": 1}, "options": {"cas": -1}}).same().expect(
        400, errors=["check-and-set parameter did not match the current version"])
    kv2.send("POST", f"/v1/{m}/data/zz", json={"data": {"a": 1}, "options": {"cas": "1.5"}}).same().expect(
        400, errors=["error parsing check-and-set parameter"])
    kv2.send("GET", f"/v1/{m}/subkeys/zz", params={"depth": "x"}).same().expect(400, errors=[
        "Field validation failed: error converting input for field \"depth\": '' cannot parse value as 'int': "
        "strconv.ParseInt: invalid syntax"])


def test_ui_mount_lookup_the_cli_uses(kv2):
    kv2.send("GET", f"/v1/sys/internal/ui/mounts/{kv2.mount}/some/key").same(volatile=("uuid",)).expect(
        200, data={"options": {"version": "2"}, "type": "kv", "path": f"{kv2.mount}/"})
    kv2.send("GET", "/v1/sys/internal/ui/mounts/nope-not-mounted").same().expect(403, errors=[
        "preflight capability check returned 403, please ensure client's policies grant access to path "
        "\"nope-not-mounted/\""])


def test_a_trailing_slash_names_the_key_without_it(kv2):
    """The plugin stores metadata under ``path.Join(prefix, key)`` (``a/`` is ``a``) but a version's
    data under a hash of the key as sent: ``data/a/`` reads and deletes ``a``'s metadata and then
    finds no data (500 ``could not find version data``) while the version is live."""
    m = kv2.mount
    kv2.send("POST", f"/v1/{m}/data/a", json={"data": {"x": {"y": 1}}}).same().expect(200)
    for path in ("data/a/", "subkeys/a/"):
        kv2.send("GET", f"/v1/{m}/{path}").same().expect(500, errors=[
            "1 error occurred:\n\t* could not find version data\n\n"])
    kv2.send("GET", f"/v1/{m}/metadata/a/").same(volatile=("created_time", "updated_time")).expect(
        200, data={"current_version": 1})
    kv2.send("DELETE", f"/v1/{m}/data/a/").same().expect(204)
    kv2.send("GET", f"/v1/{m}/data/a").same(volatile=("created_time", "deletion_time")).expect(404)
    kv2.send("GET", f"/v1/{m}/subkeys/a/").same(volatile=("created_time", "deletion_time")).expect(404)
    kv2.send("DELETE", f"/v1/{m}/metadata/a/").same().expect(204)
    kv2.send("GET", f"/v1/{m}/metadata/a").same().expect(404)
