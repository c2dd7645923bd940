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
        - path: secret             # a KV mount: type kv (options.version 1 or 2) or kv-v2; a path
                                   # already mounted with the same type and version is reused
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

from collections.abc import Callable
from typing import Any

from ..errors import SeedError
from .framework.logical import LogicalError
from .http import dispatch
from .service import SecretsService

DEV_MOUNTS_SEED: dict[str, Any] = {"secrets": {"mounts": [
    {"path": "secret", "type": "kv", "options": {"version": "2"}, "description": "key/value secret storage"}]}}
"""The mounts ``bao server -dev`` creates besides sys/identity/cubbyhole: ``secret/`` as KV version 2."""

_MOUNT_KEYS = {"path", "type", "description", "config", "options", "urls", "issuers", "roles", "secrets"}


SeedCall = Callable[[str, str, str, dict[str, Any]], dict[str, Any]]
"""How a seed reaches a server: ``call(entry, operation, path, body)`` runs one API operation
(``update``, ``patch``...) on ``path`` (relative to ``/v1/``) with the root token and returns the
answer's ``data`` (``{}`` when none); a refusal raises SeedError naming ``entry`` and the upstream
text. :func:`in_process` makes one for the double; upstream mode sends the same calls over HTTP."""


def in_process(service: SecretsService, source: str) -> SeedCall:
    """A :data:`SeedCall` on the double's secrets service (the HTTP layer's ``dispatch``, no socket)."""
    def call(entry: str, operation: str, path: str, data: dict[str, Any]) -> dict[str, Any]:
        try:
            response = dispatch(service, operation, path, data, service.root_token)
        except LogicalError as exc:
            problem = "; ".join(e.strip() for e in exc.errors) or f"HTTP {exc.status}"
            raise SeedError(source, entry, problem) from None
        return (response.data if response is not None else None) or {}

    return call


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


def _intermediate(call: SeedCall, source: str, entry: str, path: str, params: dict[str, Any]) -> None:
    signer = params.pop("signed_by", None)
    if not isinstance(signer, dict) or not signer.get("mount"):
        raise SeedError(source, f"{entry}.signed_by", "required for an intermediate: {mount: <parent mount>, issuer_ref: default, ttl: ...}")
    signer = dict(signer)
    parent = str(signer.pop("mount")).strip("/")
    issuer_ref = signer.pop("issuer_ref", "default")
    name = params.pop("issuer_name", None)
    csr = call(entry, "update", f"{path}/intermediate/generate/internal", params)["csr"]
    sign = {"csr": csr, "format": "pem_bundle", "common_name": params.get("common_name", ""), **signer}
    bundle = call(f"{entry}.signed_by", "update", f"{parent}/issuer/{issuer_ref}/sign-intermediate", sign)
    imported = call(entry, "update", f"{path}/intermediate/set-signed", {"certificate": bundle["certificate"]})
    if name and imported.get("imported_issuers"):
        call(entry, "patch", f"{path}/issuer/{imported['imported_issuers'][0]}", {"issuer_name": name})


def _kv_secrets(call: SeedCall, source: str, entry: str, path: str, versioned: bool, secrets: Any) -> None:
    """Write a KV mount's ``secrets`` (``{key: value}``; a list of values writes successive versions
    on version 2) through the same handlers as ``bao kv put``."""
    if not secrets:
        return
    for key, value in _mapping(secrets, source, f"{entry}.secrets").items():
        kentry = f"{entry}.secrets.{key}"
        values = value if isinstance(value, list) and versioned else [value]
        for item in values:
            item = dict(_mapping(item, source, kentry))
            if versioned:
                call(kentry, "update", f"{path}/data/{key}", {"data": item})
            else:
                call(kentry, "update", f"{path}/{key}", item)


def _auth_methods(call: SeedCall, source: str, methods: Any) -> None:
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
        call(entry, "update", f"sys/auth/{path}",
              {"type": method.get("type", "approle"), "description": method.get("description", "")})
        if method.get("config"):
            call(f"{entry}.config", "update", f"sys/auth/{path}/tune",
                  dict(_mapping(method["config"], source, f"{entry}.config")))
        for j, role_raw in enumerate(_list(method.get("roles"), source, f"{entry}.roles")):
            rentry = f"{entry}.roles[{j}]"
            role = dict(_mapping(role_raw, source, rentry))
            name = role.pop("name", None)
            if not isinstance(name, str) or not name:
                raise SeedError(source, f"{rentry}.name", "required: the role name")
            secret_ids = _list(role.pop("secret_ids", None), source, f"{rentry}.secret_ids")
            base = f"auth/{path}/role/{name}"
            call(rentry, "update", base, role)
            for k, secret in enumerate(secret_ids):
                params = dict(secret) if isinstance(secret, dict) else {"secret_id": str(secret)}
                call(f"{rentry}.secret_ids[{k}]", "update", f"{base}/custom-secret-id", params)


def _kv_version(mount_type: str, options: Any) -> str:
    """``"2"`` for a KV version 2 mount (``kv-v2``, or ``kv`` with ``options.version`` 2), else ``"1"``."""
    version = str((options or {}).get("version") or "1")
    return "2" if mount_type == "kv-v2" else version


def _same_kind_mounted(call: SeedCall, entry: str, path: str, enable: dict[str, Any]) -> bool:
    """Whether ``path`` is already mounted with the type (and KV version) the entry asks for: such a
    mount is reused, so a seed that describes ``secret/`` applies on ``bao server -dev`` (which
    mounts it) as on an empty double."""
    existing = call(entry, "read", "sys/mounts", {}).get(f"{path}/")
    if not isinstance(existing, dict):
        return False
    wanted, found = enable["type"], existing.get("type")
    if wanted in ("kv", "kv-v2") and found in ("kv", "kv-v2"):
        return _kv_version(wanted, enable.get("options")) == _kv_version(found, existing.get("options"))
    return wanted == found


def apply_secrets_seed(service: SecretsService, section: Any, source: str) -> None:
    """Apply a parsed ``secrets:`` section to the double (see the module docstring). Raises SeedError."""
    walk_secrets_seed(in_process(service, source), section, source)


def walk_secrets_seed(call: SeedCall, section: Any, source: str) -> None:
    """Check a parsed ``secrets:`` section and make its API calls through ``call``, in order:
    policies, tokens, auth methods, then each mount (enable, tune, URLs, issuers, KV secrets,
    roles). Raises SeedError naming the first bad or refused entry."""
    section = _mapping(section, source, "secrets")
    unknown = set(section) - {"policies", "tokens", "mounts", "auth"}
    if unknown:
        raise SeedError(source, f"secrets.{sorted(unknown)[0]}", "unknown key; expected policies, tokens, mounts or auth")
    for name, text in _mapping(section.get("policies") or {}, source, "secrets.policies").items():
        call(f"secrets.policies.{name}", "update", f"sys/policies/acl/{name}", {"policy": text})
    for i, raw in enumerate(_list(section.get("tokens"), source, "secrets.tokens")):
        entry = f"secrets.tokens[{i}]"
        token = dict(_mapping(raw, source, entry))
        call(entry, "update", "auth/token/create", token)
    _auth_methods(call, source, section.get("auth"))
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
        try:
            call(entry, "update", f"sys/mounts/{path}", enable)
        except SeedError:
            if not _same_kind_mounted(call, entry, path, enable):
                raise
        if mount.get("config"):
            call(f"{entry}.config", "update", f"sys/mounts/{path}/tune",
                  dict(_mapping(mount["config"], source, f"{entry}.config")))
        if mount.get("urls"):
            call(f"{entry}.urls", "update", f"{path}/config/urls",
                  dict(_mapping(mount["urls"], source, f"{entry}.urls")))
        for j, issuer in enumerate(_list(mount.get("issuers"), source, f"{entry}.issuers")):
            ientry = f"{entry}.issuers[{j}]"
            params = dict(_mapping(issuer, source, ientry))
            kind = params.pop("type", "root")
            if kind == "root":
                call(ientry, "update", f"{path}/root/generate/internal", params)
            elif kind == "intermediate":
                _intermediate(call, source, ientry, path, params)
            else:
                raise SeedError(source, f"{ientry}.type", f"expected root or intermediate, got {kind!r}")
        versioned = _kv_version(enable["type"], enable.get("options")) == "2"
        _kv_secrets(call, source, entry, path, versioned, mount.get("secrets"))
        for j, role in enumerate(_list(mount.get("roles"), source, f"{entry}.roles")):
            rentry = f"{entry}.roles[{j}]"
            role = dict(_mapping(role, source, rentry))
            name = role.pop("name", None)
            if not isinstance(name, str) or not name:
                raise SeedError(source, f"{rentry}.name", "required: the role name")
            call(rentry, "update", f"{path}/roles/{name}", role)
