"""Parity: how the system backend's path patterns read the edges of a path (OpenBao 2.7.2
``logical_system_paths.go``): ``mounts$``/``auth$``/``internal/ui/mounts`` take no trailing slash,
``mounts/(?P<path>.+?)`` reads the mount serving the path (``MatchingMountEntry``), and policy names
are ``.+`` (slashes allowed), trimmed and lower-cased by the policy store, read and deleted through
its ``path.Join``'d key (``a/b/`` is ``a/b``)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

RULES = 'path "secret/*" { capabilities = ["read"] }'
UNSUPPORTED = ["1 error occurred:\n\t* unsupported path\n\n"]


@pytest.mark.parametrize("method", ["GET", "LIST", "DELETE"])
@pytest.mark.parametrize("path", ["sys/mounts/", "sys/auth/"])
def test_the_mount_tables_take_no_trailing_slash(pair, method, path):
    pair.send(method, f"/v1/{path}").same().expect(404, errors=UNSUPPORTED)


def test_reading_a_mount_finds_the_mount_serving_the_path(pair):
    pair.enable_pki()
    m = pair.mount
    for path in (f"{m}/roles/x", f"{m}/tune/", f"{m}/"):
        pair.send("GET", f"/v1/sys/mounts/{path}").same().expect(200, data={"type": "pki"})
    pair.send("GET", f"/v1/sys/mounts/{m}x").same().expect(400, errors=[f"No secret engine mount at {m}x/"])


def test_policy_names_with_slashes_spaces_and_trailing_slashes(pair):
    n = pair.mount
    try:
        pair.send("PUT", f"/v1/sys/policy/{n}/a", json={"policy": RULES}).same().expect(204)
        for path in (f"sys/policy/{n}/a", f"sys/policy/{n}/a/", f"sys/policies/acl/{n}/A/", f"sys/policy/%20{n}/a%20"):
            pair.send("GET", f"/v1/{path}").same().expect(200, data={"name": f"{n}/a"})
        pair.send("PUT", f"/v1/sys/policies/acl/{n}/b/", json={"policy": RULES}).same().expect(
            400, errors=["cannot write to a path ending in '/'"])
        pair.send("DELETE", "/v1/sys/policy/root/").same().expect(400, errors=['cannot delete "root" policy'])
        pair.send("DELETE", "/v1/sys/policies/acl/default/").same().expect(400, errors=["cannot delete default policy"])
        pair.send("DELETE", f"/v1/sys/policies/acl/{n}/a/").same().expect(204)
        pair.send("GET", f"/v1/sys/policies/acl/{n}/a").same().expect(404)
    finally:
        pair.send("DELETE", f"/v1/sys/policies/acl/{n}/a")


def test_policy_lists_take_a_prefix_and_walk_storage_order(pair):
    """``ListPoliciesWithPrefix(prefix, recursive)``: names under a folder-like prefix (lower-cased),
    in the order ``logical.ScanView`` walks storage (a folder's keys first, its sub-folders after:
    ``<n>q`` comes before ``<n>/one``); an empty list is 404 on ``policies/acl`` and
    ``{"policies": null}`` on the legacy path. The whole lists hold other tests' policies on the
    shared bao, so only this test's names are compared there."""
    n = pair.mount
    names = [f"{n}/one", f"{n}/two/three", f"{n}q", f"{n}/two/a b"]
    try:
        for name in names:
            pair.send("PUT", f"/v1/sys/policies/acl/{name}", json={"policy": RULES}).same().expect(204)
        for path in (f"sys/policies/acl/{n}/", f"sys/policies/acl/{n.upper()}/", f"sys/policy/{n}/two"):
            pair.send("LIST", f"/v1/{path}").same().expect(200)
        pair.send("LIST", f"/v1/sys/policies/acl/{n}x/").same().expect(404, errors=[])
        pair.send("LIST", f"/v1/sys/policy/{n}x/").same().expect(200, data={"policies": None})

        def mine_in_storage_order(side, resp):
            keys = [k for k in resp.json()["data"]["keys"] if k.startswith(n)]
            assert keys == [f"{n}q", f"{n}/one", f"{n}/two/a b", f"{n}/two/three"]

        for path in ("/v1/sys/policies/acl", "/v1/sys/policy"):
            pair.send("LIST", path).expect(200).check(mine_in_storage_order)
    finally:
        for name in names:
            pair.send("DELETE", f"/v1/sys/policies/acl/{name}")
