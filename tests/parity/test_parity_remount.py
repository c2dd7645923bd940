"""Parity: ``sys/remount`` and ``sys/remount/status/:id`` (moving a secrets engine or an auth
method), against ``bao server -dev``. hvac's ``sys.move_backend`` calls it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

QUEUED = ("Mount move has been queued. Progress will be reported in OpenBao's server log, tagged with the "
          "returned migration_id")


def _migration_id(side, resp) -> None:
    body = resp.json()
    assert sorted(body["data"]) == ["migration_id"] and body["migration_id"] == body["data"]["migration_id"], body


def test_remount_moves_a_kv_mount_with_its_data(pair):
    m = pair.mount
    try:
        pair.send("POST", f"/v1/sys/mounts/{m}", json={"type": "kv"}).same().expect(204)
        pair.send("POST", f"/v1/{m}/foo", json={"a": "b"}).same().expect(204)
        move = pair.send("POST", "/v1/sys/remount", json={"from": m, "to": f"{m}_moved/deep"})
        move.same(volatile=("migration_id",)).expect(200, warnings=[QUEUED]).check(_migration_id)
        pair.send("GET", f"/v1/sys/mounts/{m}").same().expect(400, errors=[f"No secret engine mount at {m}/"])
        pair.send("GET", f"/v1/sys/mounts/{m}_moved/deep").same(volatile=("uuid",)).expect(200, data={"type": "kv"})
        pair.send("GET", f"/v1/{m}_moved/deep/foo").same().expect(200, data={"a": "b"})
        pair.send("GET", lambda side: f"/v1/sys/remount/status/{move.data(side)['migration_id']}").same().expect(
            200, data={"migration_info": {"source_mount": f"{m}/", "target_mount": f"{m}_moved/deep/",
                                          "status": "success"}})
        pair.send("GET", "/v1/sys/remount/status/nope").same().expect(404, errors=[])
    finally:
        pair.real.request("DELETE", f"/v1/sys/mounts/{m}_moved/deep")


@pytest.mark.parametrize(("body", "error"), [
    ({"from": "{m}"}, "both 'from' and 'to' path must be specified as a string"),
    ({"to": "{m}_x"}, "both 'from' and 'to' path must be specified as a string"),
    ({"from": "{m}", "to": ""}, "both 'from' and 'to' path must be specified as a string"),
    ({"from": "{m}_nope", "to": "{m}_x"}, 'no matching mount at "{m}_nope/"'),
    ({"from": "{m}", "to": "{m}_kv"}, 'path already in use at "{m}_kv/"'),
    ({"from": "{m}", "to": "{m}_kv/sub"}, 'path already in use at "{m}_kv/"'),
    ({"from": "{m}", "to": "{m}"}, 'path already in use at "{m}/"'),
    ({"from": "sys", "to": "{m}_x"}, 'cannot remount "sys/"'),
    ({"from": "cubbyhole", "to": "{m}_x"}, 'cannot remount "cubbyhole/"'),
    ({"from": "{m}", "to": "sys/{m}"}, "cannot remount to destination sys/{m}/"),
    ({"from": "{m}", "to": "auth/{m}"}, "cannot remount to destination auth/{m}/"),
    ({"from": "{m}", "to": "cubbyhole/{m}"}, "cannot remount to destination cubbyhole/{m}/"),
    ({"from": "auth/token", "to": "auth/{m}_t"}, 'cannot remount "auth/token/"'),
    ({"from": "auth/{m}_nope", "to": "auth/{m}_x"}, 'no matching mount at "auth/{m}_nope/"'),
    ({"from": "auth/{m}_nope", "to": "{m}_x"}, 'cannot remount auth mount to non-auth mount "{m}_x/"'),
], ids=["no_to", "no_from", "empty_to", "unknown", "taken", "taken_parent", "onto_itself", "protected",
        "cubby", "to_system", "to_auth", "to_cubby", "token_method", "unknown_auth", "auth_to_secrets"])
# (ids keep the mount names from ending in "sys": bao 2.7.2 then refuses every later mount that shares
# the name's part before "sys" with "existing mount at <that part>")
def test_remount_refusals(pair, body, error):
    m = pair.mount
    try:
        for path in (m, f"{m}_kv"):
            pair.send("POST", f"/v1/sys/mounts/{path}", json={"type": "kv"}).same().expect(204)
        filled = {k: v.format(m=m) for k, v in body.items()}
        pair.send("POST", "/v1/sys/remount", json=filled).same().expect(400, errors=[error.format(m=m)])
        pair.send("GET", f"/v1/sys/mounts/{m}").same(volatile=("uuid",)).expect(200, data={"type": "kv"})
    finally:
        for path in (m, f"{m}_kv"):
            pair.real.request("DELETE", f"/v1/sys/mounts/{path}")


def test_remount_of_an_auth_method_keeps_roles_and_revokes_its_tokens(pair):
    m = pair.mount
    a = f"auth/{m}"
    try:
        pair.send("POST", f"/v1/sys/auth/{m}", json={"type": "approle"}).same().expect(204)
        pair.send("POST", f"/v1/{a}/role/r", json={"token_policies": "default"}).same().expect(204)
        role_id = pair.send("GET", f"/v1/{a}/role/r/role-id")
        secret_id = pair.send("POST", f"/v1/{a}/role/r/secret-id", json={})
        login = pair.send("POST", f"/v1/{a}/login", token=None, json=lambda side: {
            "role_id": role_id.data(side)["role_id"], "secret_id": secret_id.data(side)["secret_id"]})
        login.expect(200)

        def client_token(side):
            return login.response(side).json()["auth"]["client_token"]

        pair.send("GET", "/v1/auth/token/lookup-self", token=client_token).same(
            volatile=("accessor", "id", "entity_id", "creation_time", "expire_time", "issue_time", "ttl",
                      "creation_ttl", "meta")).expect(200)
        pair.send("POST", "/v1/sys/remount", json={"from": a, "to": f"{a}_moved"}).same(
            volatile=("migration_id",)).expect(200, warnings=[QUEUED])
        pair.send("GET", "/v1/auth/token/lookup-self", token=client_token).same().expect(403,
                                                                                          errors=["permission denied"])
        pair.send("GET", f"/v1/{a}_moved/role/r/role-id").check(
            lambda side, resp: _same_role_id(resp, role_id.data(side)["role_id"]))
        pair.send("GET", f"/v1/sys/auth/{m}_moved").same(volatile=("uuid",)).expect(200, data={"type": "approle"})
        pair.send("GET", f"/v1/sys/auth/{m}").same().expect(400)
    finally:
        pair.real.request("DELETE", f"/v1/sys/auth/{m}_moved")


def _same_role_id(resp, role_id: str) -> None:
    assert resp.status_code == 200 and resp.json()["data"]["role_id"] == role_id, resp.text
