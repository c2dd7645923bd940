"""The runner of the token family (:mod:`.token_gen`): same exchange and comparison as the PKI
runner, another set-up.

Per sequence both servers get the same fresh state: the real server (and, in self-check mode, the
second one) is scrubbed of what earlier sequences or tests left in the token store and the ACL
store - every token except the root token revoked (by accessor), every token role and every policy
but ``default``/``root`` deleted - and the double is reset (and given the ``secret/`` KV version 2
mount a dev server has). Then, compared like any request: a KV
mount ``d<n>`` (the ``{mount}`` of the sequence's paths), the policy ``dev`` (:data:`DEV_POLICY`),
the token role ``ops`` (:data:`OPS_ROLE`) and token #0 (policy ``dev``, ttl 1h). Each side's root
token accessor is kept in ``vars["root_accessor"]`` (mapped like token accessors); each side's
created tokens in ``vars["tokens"]`` as ``(id, accessor)``.
"""

from __future__ import annotations

from typing import Any

import parity_harness as h

from .runner import Runner

DEV_POLICY = ('path "secret/*" { capabilities = ["read", "list"] }\n'
              'path "auth/token/*" { capabilities = ["create", "read", "update", "list"] }\n'
              'path "sys/capabilities-self" { capabilities = ["update"] }\n')
OPS_ROLE = {"allowed_policies": "dev,default", "renewable": True, "token_explicit_max_ttl": "2h"}
FIRST_TOKEN = {"policies": ["dev"], "ttl": "1h"}
DEV_SECRET_MOUNT = {"type": "kv", "options": {"version": "2"}, "description": "key/value secret storage"}
_ROOT_ACCESSOR: dict[str, str] = {}


def _json(resp) -> Any:
    return h.body_json(resp) or {}


def root_accessor(side: h.Side) -> str:
    """The root token's accessor on ``side``'s server (looked up once per URL)."""
    if side.url not in _ROOT_ACCESSOR:
        resp = side.request("GET", "/v1/auth/token/lookup-self")
        _ROOT_ACCESSOR[side.url] = _json(resp)["data"]["accessor"]
    return _ROOT_ACCESSOR[side.url]


def _keys(side: h.Side, method: str, path: str) -> list[str]:
    data = _json(side.request(method, path)).get("data")
    return list(data.get("keys") or []) if isinstance(data, dict) else []


def scrub(side: h.Side) -> None:
    """Revoke every token but the root token, delete every token role and every policy but
    ``default``/``root`` on a REAL server (only state this family creates)."""
    keep = root_accessor(side)
    for accessor in _keys(side, "LIST", "/v1/auth/token/accessors"):
        if accessor != keep:
            side.request("POST", "/v1/auth/token/revoke-accessor", json={"accessor": accessor})
    for role in _keys(side, "LIST", "/v1/auth/token/roles"):
        side.request("DELETE", f"/v1/auth/token/roles/{role}")
    for name in _keys(side, "LIST", "/v1/sys/policies/acl"):
        if name not in ("default", "root"):
            side.request("DELETE", f"/v1/sys/policies/acl/{name}")


class TokenRunner(Runner):
    """:class:`Runner` with the token family's set-up and tear-down."""

    def setup(self) -> h.Pair:
        if self.double is not None:
            self.double.reset()
            self.double.pop_handler_errors()
        pair = self._pair()
        real_sides = [pair.real] if self.double is not None else [pair.real, pair.double]
        for side in real_sides:
            scrub(side)
        for side in pair.sides:
            side.vars["root_accessor"] = root_accessor(side) if side in real_sides else self._double_root(side)
            side.vars["tokens"] = []
        pair.mounts.remove(pair.mounts[1])  # the PKI family's second mount is not made here
        if self.double is not None:  # `bao server -dev` has secret/ (KV version 2); the reset double has not
            pair.double.request("POST", "/v1/sys/mounts/secret", json=DEV_SECRET_MOUNT)
        pair.send("POST", f"/v1/sys/mounts/{pair.mount}", json={"type": "kv"}).same().expect(204)
        pair.send("POST", "/v1/sys/policies/acl/dev", json={"policy": DEV_POLICY}).same().expect(204)
        pair.send("POST", "/v1/auth/token/roles/ops", json=OPS_ROLE).same().expect(204)
        ex = pair.send("POST", "/v1/auth/token/create", json=FIRST_TOKEN).same().expect(200)
        for side in pair.sides:
            auth = ex.json(side)["auth"]
            side.vars["tokens"].append((auth["client_token"], auth["accessor"]))
        return pair

    @staticmethod
    def _double_root(side: h.Side) -> str:
        return _json(side.request("GET", "/v1/auth/token/lookup-self"))["data"]["accessor"]

    def teardown(self, pair: h.Pair) -> None:
        super().teardown(pair)
        scrub(pair.real)
        if self.double is None:
            scrub(pair.double)
