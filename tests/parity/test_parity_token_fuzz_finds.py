"""Parity: what the differential fuzzer's token/sys family found (``scripts/differential.py --family
token``), each pinned against the real server: a ``token`` parameter that is not a string, and
``revoke-orphan``'s own checks."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

NOT_STRINGS = [None, 5, True, [], {}, 1.5, ["a"]]


@pytest.mark.parametrize("path", ["lookup", "renew", "revoke", "revoke-orphan"])
@pytest.mark.parametrize("value", NOT_STRINGS, ids=repr)
@pytest.mark.parametrize("token", ["root", "bogus"])
def test_a_token_parameter_that_is_not_a_string_is_an_invalid_token(pair, path, value, token):
    """request_handling.go reads ``token`` before the request's own token: 403 ``invalid token``,
    whoever asks (a lookup of ``null`` used to look up the caller, a revoke of ``5`` answered 204)."""
    pair.send("POST", f"/v1/auth/token/{path}", json={"token": value}, token=token).same().expect(
        403, errors=["invalid token"])


def test_revoke_orphan_checks_sudo_then_the_token(pair):
    policy = f"{pair.mount}-orphan".replace("_", "-")
    pair.send("PUT", f"/v1/sys/policies/acl/{policy}",
              json={"policy": 'path "auth/token/*" { capabilities = ["update", "read", "list"] }'}).same().expect(204)
    pair.send("POST", "/v1/auth/token/create", json={"policies": [policy]}).same().capture(
        "caller", lambda j: j["auth"]["client_token"])
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["default"]}).same().capture(
        "victim", lambda j: j["auth"]["client_token"])
    # update on the path is enough to reach the handler (only revoke-orphan/* is root-protected)
    for body in (lambda s: {"token": s.vars["victim"]}, {"token": "nope"}):
        pair.send("POST", "/v1/auth/token/revoke-orphan", json=body, token=lambda s: s.vars["caller"]).same().expect(
            400, errors=["root or sudo privileges required to revoke and orphan"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json={"token": ""}).same().expect(400, errors=["missing token ID"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json={"token": "nope"}).same().expect(
        400, errors=["token to revoke not found"])
    pair.send("POST", "/v1/auth/token/revoke-orphan", json=lambda s: {"token": s.vars["victim"]}).same().expect(204)
    pair.send("POST", "/v1/auth/token/revoke-orphan", json=lambda s: {"token": s.vars["victim"]}).same().expect(
        400, errors=["token to revoke not found"])
    pair.send("DELETE", f"/v1/sys/policies/acl/{policy}").same().expect(204)
