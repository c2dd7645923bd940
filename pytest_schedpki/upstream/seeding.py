"""Seed files applied over HTTP to a real server (upstream mode).

The same YAML as for the double (``pytest_schedpki.secrets.seed`` and
``pytest_schedpki.scheduler.seed`` describe the schema); each entry becomes the API request the
double's seeding makes in-process, sent to the real server with its root or management token. The
first refusal raises :class:`~pytest_schedpki.errors.SeedError` naming the file, the entry and the
server's error text. Scheduler tokens cannot be seeded into a real Nomad (it chooses the ids): such an
entry raises SeedError saying so.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import SeedError
from ..seed import SECTIONS, default_seed_path, is_default_seed, load_seed_file
from .client import Client, UpstreamError


def read_seed(seed: str | os.PathLike | dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``(mapping, source name)`` of a seed given as a path, ``"default"`` or a mapping."""
    if isinstance(seed, dict):
        return seed, "<dict>"
    if is_default_seed(seed):
        seed = default_seed_path()
    data = load_seed_file(seed)
    for key in data:
        if key not in SECTIONS:
            raise SeedError(os.fspath(seed), str(key), f"unknown section; expected one of: {', '.join(SECTIONS)}")
    return data, os.fspath(seed)


def _send(client: Client, source: str, entry: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
    try:
        return client.call(method, path, body).data()
    except UpstreamError as exc:
        raise SeedError(source, entry, str(exc)) from None


def _mapping(value: Any, source: str, entry: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SeedError(source, entry, f"expected a mapping, got {type(value).__name__}")
    return dict(value)


def _list(value: Any, source: str, entry: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SeedError(source, entry, f"expected a list, got {type(value).__name__}")
    return value


def apply_secrets_seed_http(client: Client, section: Any, source: str) -> None:
    """Apply a ``secrets:`` section to a real Vault/OpenBao through ``client`` (root token)."""
    section = _mapping(section, source, "secrets")
    unknown = set(section) - {"policies", "tokens", "mounts"}
    if unknown:
        raise SeedError(source, f"secrets.{sorted(unknown)[0]}", "unknown key; expected policies, tokens or mounts")
    for name, text in _mapping(section.get("policies") or {}, source, "secrets.policies").items():
        _send(client, source, f"secrets.policies.{name}", "PUT", f"/v1/sys/policies/acl/{name}", {"policy": text})
    for i, raw in enumerate(_list(section.get("tokens"), source, "secrets.tokens")):
        _send(client, source, f"secrets.tokens[{i}]", "POST", "/v1/auth/token/create",
              _mapping(raw, source, f"secrets.tokens[{i}]"))
    for i, raw in enumerate(_list(section.get("mounts"), source, "secrets.mounts")):
        entry = f"secrets.mounts[{i}]"
        mount = _mapping(raw, source, entry)
        path = str(mount.get("path") or "").strip("/")
        if not path:
            raise SeedError(source, f"{entry}.path", "required: the mount path, e.g. pki")
        _send(client, source, entry, "POST", f"/v1/sys/mounts/{path}",
              {"type": mount.get("type", "pki"), "description": mount.get("description", "")})
        if mount.get("config"):
            _send(client, source, f"{entry}.config", "POST", f"/v1/sys/mounts/{path}/tune",
                  _mapping(mount["config"], source, f"{entry}.config"))
        if mount.get("urls"):
            _send(client, source, f"{entry}.urls", "POST", f"/v1/{path}/config/urls",
                  _mapping(mount["urls"], source, f"{entry}.urls"))
        for j, raw_issuer in enumerate(_list(mount.get("issuers"), source, f"{entry}.issuers")):
            ientry = f"{entry}.issuers[{j}]"
            params = _mapping(raw_issuer, source, ientry)
            kind = params.pop("type", "root")
            if kind == "root":
                _send(client, source, ientry, "POST", f"/v1/{path}/root/generate/internal", params)
            elif kind == "intermediate":
                _intermediate(client, source, ientry, path, params)
            else:
                raise SeedError(source, f"{ientry}.type", f"expected root or intermediate, got {kind!r}")
        for j, raw_role in enumerate(_list(mount.get("roles"), source, f"{entry}.roles")):
            rentry = f"{entry}.roles[{j}]"
            role = _mapping(raw_role, source, rentry)
            name = role.pop("name", None)
            if not isinstance(name, str) or not name:
                raise SeedError(source, f"{rentry}.name", "required: the role name")
            _send(client, source, rentry, "POST", f"/v1/{path}/roles/{name}", role)


def _intermediate(client: Client, source: str, entry: str, path: str, params: dict[str, Any]) -> None:
    signer = params.pop("signed_by", None)
    if not isinstance(signer, dict) or not signer.get("mount"):
        raise SeedError(source, f"{entry}.signed_by",
                        "required for an intermediate: {mount: <parent mount>, issuer_ref: default, ttl: ...}")
    signer = dict(signer)
    parent = str(signer.pop("mount")).strip("/")
    issuer_ref = signer.pop("issuer_ref", "default")
    name = params.pop("issuer_name", None)
    csr = _send(client, source, entry, "POST", f"/v1/{path}/intermediate/generate/internal", params)["csr"]
    sign = {"csr": csr, "format": "pem_bundle", "common_name": params.get("common_name", ""), **signer}
    bundle = _send(client, source, f"{entry}.signed_by", "POST", f"/v1/{parent}/issuer/{issuer_ref}/sign-intermediate", sign)
    imported = _send(client, source, entry, "POST", f"/v1/{path}/intermediate/set-signed", {"certificate": bundle["certificate"]})
    if name and imported.get("imported_issuers"):
        _send(client, source, entry, "POST", f"/v1/{path}/issuer/{imported['imported_issuers'][0]}", {"issuer_name": name})


def apply_scheduler_seed_http(client: Client, section: Any, source: str) -> None:
    """Apply a ``scheduler:`` section to a running Nomad agent (management token): auth methods are
    created with ``PUT /v1/acl/auth-method``. Tokens raise SeedError (a real Nomad picks their ids)."""
    section = _mapping(section, source, "scheduler")
    unknown = set(section) - {"tokens", "auth_methods"}
    if unknown:
        raise SeedError(source, f"scheduler.{sorted(unknown)[0]}", "unknown key; expected tokens or auth_methods")
    if section.get("tokens"):
        raise SeedError(source, "scheduler.tokens", "tokens cannot be seeded into a scheduler upstream "
                        "(a real Nomad chooses SecretID and AccessorID); create them with the ACL token API")
    for i, raw in enumerate(_list(section.get("auth_methods"), source, "scheduler.auth_methods")):
        entry = f"scheduler.auth_methods[{i}]"
        method = _mapping(raw, source, entry)
        try:
            client.call("PUT", "/v1/acl/auth-method", method)
        except UpstreamError as exc:
            raise SeedError(source, entry, str(exc)) from None
