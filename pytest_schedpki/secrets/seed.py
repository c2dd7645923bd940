"""The ``secrets:`` section of a seed file -> calls on the secrets service (same rules as the API).

Schema (every key optional)::

    secrets:
      policies:                    # ACL policies by name (HCL or JSON text)
        issuer: |
          path "pki/issue/*" { capabilities = ["update"] }
      tokens:                      # extra tokens besides the root token
        - id: app-token            # optional; random "s.<24 chars>" otherwise
          policies: [default]
          ttl: 1h                  # Go duration or seconds
      mounts:
        - path: pki                # required
          type: pki                # default pki
          config: {default_lease_ttl: 768h, max_lease_ttl: 87600h}
          urls: {issuing_certificates: [...], crl_distribution_points: [...]}
          issuers:                 # root/generate/internal parameters
            - common_name: Example Root CA
              issuer_name: root
              ttl: 87600h
              key_type: ec
        - path: pki_int
          issuers:                 # an intermediate: intermediate/generate/internal on this mount,
            - type: intermediate   # sign-intermediate on signed_by, then set-signed here
              signed_by: {mount: pki, issuer_ref: default, ttl: 43800h}
              common_name: Example Intermediate CA
              issuer_name: int
          roles:                   # roles/:name parameters (name is the role name)
            - name: example-dot-com
              allowed_domains: [example.com]
              allow_subdomains: true
              max_ttl: 72h
        - path: secret             # a KV mount: type kv (options.version 1 or 2) or kv-v2
          type: kv
          options: {version: 2}
          description: key/value secret storage
          secrets:                 # key -> value; on version 2 a list of values writes versions
            app/config: {db_host: db.example.com, port: 5432}
            app/history: [{v: 1}, {v: 2}]
      auth:                        # auth methods (sys/auth/:path); AppRole is the one besides token
        - path: approle            # required
          type: approle            # default approle
          roles:                   # role/:name parameters, plus a fixed role_id and secret IDs
            - name: web
              role_id: web-role-id
              secret_ids: [web-secret-id]   # custom-secret-id; an entry may be a mapping of its parameters
              token_policies: [default]

Each entry goes through the same handlers as the HTTP API with the root token, so a seed is
validated exactly like a request; the first failure raises SeedError naming the file, the entry
(``secrets.mounts[0].roles[1]``) and the upstream error text.
"""

from __future__ import annotations

from typing import Any

from ..errors import SeedError
from .framework.logical import LogicalError
from .http import dispatch
from .service import SecretsService

DEV_MOUNTS_SEED: dict[str, Any] = {"secrets": {"mounts": [
    {"path": "secret", "type": "kv", "options": {"version": "2"}, "description": "key/value secret storage"}]}}
"""The mounts ``bao server -dev`` creates besides sys/identity/cubbyhole: ``secret/`` as KV version 2."""

_MOUNT_KEYS = {"path", "type", "description", "config", "options", "urls", "issuers", "roles", "secrets"}


def _call(service: SecretsService, source: str, entry: str, operation: str, path: str, data: dict[str, Any]):
    try:
        return dispatch(service, operation, path, data, service.root_token)
    except LogicalError as exc:
        problem = "; ".join(e.strip() for e in exc.errors) or f"HTTP {exc.status}"
        raise SeedError(source, entry, problem) from None


def _mapping(value: Any, source: str, entry: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SeedError(source, entry, f"expected a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, source: str, entry: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SeedError(source, entry, f"expected a list, got {type(value).__name__}")
    return value


def _intermediate(service: SecretsService, source: str, entry: str, path: str, params: dict[str, Any]) -> None:
    signer = params.pop("signed_by", None)
    if not isinstance(signer, dict) or not signer.get("mount"):
        raise SeedError(source, f"{entry}.signed_by", "required for an intermediate: {mount: <parent mount>, issuer_ref: default, ttl: ...}")
    signer = dict(signer)
    parent = str(signer.pop("mount")).strip("/")
    issuer_ref = signer.pop("issuer_ref", "default")
    name = params.pop("issuer_name", None)
    csr = _call(service, source, entry, "update", f"{path}/intermediate/generate/internal", params).data["csr"]
    sign = {"csr": csr, "format": "pem_bundle", "common_name": params.get("common_name", ""), **signer}
    bundle = _call(service, source, f"{entry}.signed_by", "update", f"{parent}/issuer/{issuer_ref}/sign-intermediate", sign).data
    imported = _call(service, source, entry, "update", f"{path}/intermediate/set-signed", {"certificate": bundle["certificate"]}).data
    if name and imported.get("imported_issuers"):
        _call(service, source, entry, "patch", f"{path}/issuer/{imported['imported_issuers'][0]}", {"issuer_name": name})


def _kv_secrets(service: SecretsService, source: str, entry: str, path: str, secrets: Any) -> None:
    """Write a KV mount's ``secrets`` (``{key: value}``; a list of values writes successive versions
    on version 2) through the same handlers as ``bao kv put``."""
    if not secrets:
        return
    versioned = getattr(service.mount(path).backend, "version", 1) == 2
    for key, value in _mapping(secrets, source, f"{entry}.secrets").items():
        kentry = f"{entry}.secrets.{key}"
        values = value if isinstance(value, list) and versioned else [value]
        for item in values:
            item = dict(_mapping(item, source, kentry))
            if versioned:
                _call(service, source, kentry, "update", f"{path}/data/{key}", {"data": item})
            else:
                _call(service, source, kentry, "update", f"{path}/{key}", item)


def _auth_methods(service: SecretsService, source: str, methods: Any) -> None:
    """Enable the ``auth`` entries and write their AppRole roles and secret IDs."""
    for i, raw in enumerate(_list(methods, source, "secrets.auth")):
        entry = f"secrets.auth[{i}]"
        method = dict(_mapping(raw, source, entry))
        unknown = set(method) - {"path", "type", "description", "config", "roles"}
        if unknown:
            raise SeedError(source, f"{entry}.{sorted(unknown)[0]}", "unknown key; expected config, description, path, roles or type")
        path = str(method.get("path") or "").strip("/")
        if not path:
            raise SeedError(source, f"{entry}.path", "required: the auth mount path, e.g. approle")
        _call(service, source, entry, "update", f"sys/auth/{path}",
              {"type": method.get("type", "approle"), "description": method.get("description", "")})
        if method.get("config"):
            _call(service, source, f"{entry}.config", "update", f"sys/auth/{path}/tune",
                  dict(_mapping(method["config"], source, f"{entry}.config")))
        for j, role_raw in enumerate(_list(method.get("roles"), source, f"{entry}.roles")):
            rentry = f"{entry}.roles[{j}]"
            role = dict(_mapping(role_raw, source, rentry))
            name = role.pop("name", None)
            if not isinstance(name, str) or not name:
                raise SeedError(source, f"{rentry}.name", "required: the role name")
            secret_ids = _list(role.pop("secret_ids", None), source, f"{rentry}.secret_ids")
            base = f"auth/{path}/role/{name}"
            _call(service, source, rentry, "update", base, role)
            for k, secret in enumerate(secret_ids):
                params = dict(secret) if isinstance(secret, dict) else {"secret_id": str(secret)}
                _call(service, source, f"{rentry}.secret_ids[{k}]", "update", f"{base}/custom-secret-id", params)


def apply_secrets_seed(service: SecretsService, section: Any, source: str) -> None:
    """Apply a parsed ``secrets:`` section (see the module docstring). Raises SeedError."""
    section = _mapping(section, source, "secrets")
    unknown = set(section) - {"policies", "tokens", "mounts", "auth"}
    if unknown:
        raise SeedError(source, f"secrets.{sorted(unknown)[0]}", "unknown key; expected policies, tokens, mounts or auth")
    for name, text in _mapping(section.get("policies") or {}, source, "secrets.policies").items():
        _call(service, source, f"secrets.policies.{name}", "update", f"sys/policies/acl/{name}", {"policy": text})
    for i, raw in enumerate(_list(section.get("tokens"), source, "secrets.tokens")):
        entry = f"secrets.tokens[{i}]"
        token = dict(_mapping(raw, source, entry))
        _call(service, source, entry, "update", "auth/token/create", token)
    _auth_methods(service, source, section.get("auth"))
    for i, raw in enumerate(_list(section.get("mounts"), source, "secrets.mounts")):
        entry = f"secrets.mounts[{i}]"
        mount = _mapping(raw, source, entry)
        unknown = set(mount) - _MOUNT_KEYS
        if unknown:
            raise SeedError(source, f"{entry}.{sorted(unknown)[0]}", f"unknown key; expected one of {', '.join(sorted(_MOUNT_KEYS))}")
        path = mount.get("path")
        if not isinstance(path, str) or not path.strip("/"):
            raise SeedError(source, f"{entry}.path", "required: the mount path, e.g. pki")
        path = path.strip("/")
        enable = {"type": mount.get("type", "pki"), "description": mount.get("description", "")}
        if mount.get("options"):
            enable["options"] = dict(_mapping(mount["options"], source, f"{entry}.options"))
        _call(service, source, entry, "update", f"sys/mounts/{path}", enable)
        if mount.get("config"):
            _call(service, source, f"{entry}.config", "update", f"sys/mounts/{path}/tune",
                  dict(_mapping(mount["config"], source, f"{entry}.config")))
        if mount.get("urls"):
            _call(service, source, f"{entry}.urls", "update", f"{path}/config/urls",
                  dict(_mapping(mount["urls"], source, f"{entry}.urls")))
        for j, issuer in enumerate(_list(mount.get("issuers"), source, f"{entry}.issuers")):
            ientry = f"{entry}.issuers[{j}]"
            params = dict(_mapping(issuer, source, ientry))
            kind = params.pop("type", "root")
            if kind == "root":
                _call(service, source, ientry, "update", f"{path}/root/generate/internal", params)
            elif kind == "intermediate":
                _intermediate(service, source, ientry, path, params)
            else:
                raise SeedError(source, f"{ientry}.type", f"expected root or intermediate, got {kind!r}")
        _kv_secrets(service, source, entry, path, mount.get("secrets"))
        for j, role in enumerate(_list(mount.get("roles"), source, f"{entry}.roles")):
            rentry = f"{entry}.roles[{j}]"
            role = dict(_mapping(role, source, rentry))
            name = role.pop("name", None)
            if not isinstance(name, str) or not name:
                raise SeedError(source, f"{rentry}.name", "required: the role name")
            _call(service, source, rentry, "update", f"{path}/roles/{name}", role)
