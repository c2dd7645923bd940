"""State of the secrets service: mounts (each with its engine), tokens, and the service clock.

Everything the HTTP layer does goes through :class:`SecretsService`; fixtures and seed files call
the same object directly (no HTTP).
"""

from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..clock import Clock
from .acl import Policy, default_policies
from .acme_knobs import AcmeKnobs
from .auth.registry import AUTH_METHODS
from .auth.token.store import TokenStore, random_id, rfc3339_nano
from .engines.registry import ENGINES, MOUNT_NORMALISERS
from .framework.engine import Engine
from .framework.logical import user_error
from .policy_parser import PolicyError, decode_policy_text, parse_policy_full

SYSTEM_DEFAULT_LEASE_TTL = 768 * 3600  # seconds; a dev server's default_lease_ttl and max_lease_ttl
SYSTEM_MAX_LEASE_TTL = 768 * 3600
VERSION = "2.7.2"  # the OpenBao release whose behaviour the double follows
RESERVED_MOUNT_PREFIXES = ("sys/", "auth/", "identity/", "cubbyhole/")


@dataclass
class Mount:
    """A secrets engine mount. ``path`` ends with ``/`` (``"pki/"``); TTLs are seconds, 0 meaning
    "the system default" (768h on a dev server)."""

    path: str
    type: str
    description: str = ""
    default_lease_ttl: int = 0
    max_lease_ttl: int = 0
    listing_visibility: str = ""  # "", "hidden" or "unauth" (sys/mounts/:path/tune)
    tune_lists: dict = field(default_factory=dict)  # audit_non_hmac_*_keys, passthrough/allowed headers
    accessor: str = ""
    uuid: str = ""
    options: dict = field(default_factory=dict)
    local: bool = False
    seal_wrap: bool = False
    backend: Engine | None = field(default=None, repr=False)

    def effective_default_ttl(self) -> int:
        """The mount's default lease TTL in seconds (tuned value or the system default)."""
        return self.default_lease_ttl or SYSTEM_DEFAULT_LEASE_TTL

    def effective_max_ttl(self) -> int:
        """The mount's max lease TTL in seconds (tuned value or the system max)."""
        return self.max_lease_ttl or SYSTEM_MAX_LEASE_TTL

    def _config(self) -> dict[str, Any]:
        """The mount's ``config`` as ``sys/mounts`` lists it (keys sorted, as Go writes a map)."""
        config: dict[str, Any] = {"default_lease_ttl": self.default_lease_ttl, "force_no_cache": False,
                                  "max_lease_ttl": self.max_lease_ttl}
        if self.listing_visibility:
            config["listing_visibility"] = self.listing_visibility
        config.update({name: list(values) for name, values in self.tune_lists.items() if values})
        return {key: config[key] for key in sorted(config)}

    def describe(self) -> dict[str, Any]:
        """The mount as ``GET /v1/sys/mounts`` lists it."""
        return {
            "accessor": self.accessor,
            "config": self._config(),
            "description": self.description,
            "external_entropy_access": False,
            "local": self.local,
            "options": dict(self.options),
            "plugin_version": "",
            "running_plugin_version": f"v{VERSION}+builtin.bao",
            "running_sha256": "",
            "seal_wrap": self.seal_wrap,
            "type": self.type,
            "uuid": self.uuid,
        } | ({} if self.type == "generic" else {"deprecation_status": "supported"})  # generic: no status


_MOUNT_FIELDS = tuple(f.name for f in fields(Mount) if f.name not in ("backend", "options"))


class SecretsService:
    """Mounts, tokens and the clock of the secrets service.

    ``root_token`` is the dev server's root token id (default ``"root"``). All state changes hold
    :attr:`lock` (an RLock), so concurrent requests never interleave inside one operation.

    ``enterprise`` (default ``False``: exactly OpenBao) switches on the emulation of Vault
    Enterprise's PKI extras (``no_store_metadata``, ``cert_metadata``, ``cert-metadata/:serial``,
    ``config/external-policy`` and the ``external-policy/...`` CIEPS paths), see docs/enterprise.md.
    It is read at request time, kept in snapshots, and left as is by ``restore(None)``.
    """

    enterprise: bool = False

    def __init__(self, clock: Clock, root_token: str = "root"):
        self.clock = clock
        self.root_token = root_token
        self.lock = threading.RLock()
        self.mounts: dict[str, Mount] = {}
        self.auth_mounts: dict[str, Mount] = {}  # sys/auth mounts besides token/, by path ("approle/")
        self.token_auth = Mount(path="token/", type="token", description="token based credentials",
                                accessor=f"auth_token_{uuid.uuid4().hex[:8]}", uuid=str(uuid.uuid4()))
        self.tokens = TokenStore(root_token, clock.now())
        self.policies: dict[str, Policy] = default_policies(clock.now())
        self.wrapped: dict[str, Any] = {}
        self.migrations: dict[str, dict] = {}  # sys/remount's migration id -> migration_info
        self.cluster_name = "vault-cluster-" + uuid.uuid4().hex[:8]
        self.cluster_id = str(uuid.uuid4())
        self.sealed = False
        self.acme_knobs = AcmeKnobs()  # the ACME engine's test knobs (acme_knobs.py), all off
        self.unseal_key = os.urandom(32)  # the dev server's single unseal key (see sys_seal.py)

    # -- mounts ------------------------------------------------------------------------------------
    def enable_mount(self, path: str, type: str = "pki", description: str = "",
                     default_lease_ttl: int = 0, max_lease_ttl: int = 0, options: dict | None = None) -> Mount:
        """Mount an engine at ``path`` (``"pki"`` or ``"pki/"``; nested paths allowed).

        Raises LogicalError 400: ``path is already in use at <p>/`` (also when one mount would nest
        in another), ``cannot mount "<p>/"`` for reserved prefixes, ``plugin not found in the
        catalog: <type>`` for engine types the double does not implement (it has ``pki``, ``kv``, ``kv-v2``,
        ``generic``);
        ``nil backend of type "kv" returned from factory`` for a KV ``options.version`` other than 1 or 2.
        """
        norm = path.strip("/") + "/"
        if norm == "/":
            raise user_error('cannot mount "/"')
        with self.lock:
            if norm.startswith(RESERVED_MOUNT_PREFIXES) or norm in ("sys/", "auth/"):
                raise user_error(f'cannot mount "{norm}"')
            for existing in self.mounts:
                if norm.startswith(existing) or existing.startswith(norm):
                    raise user_error(f"path is already in use at {existing}")
            factories = ENGINES
            if type not in factories:
                raise user_error(f"plugin not found in the catalog: {type}")
            if type in MOUNT_NORMALISERS:
                type, options = MOUNT_NORMALISERS[type](type, options)
            mount = Mount(path=norm, type=type, description=description, default_lease_ttl=default_lease_ttl,
                          max_lease_ttl=max_lease_ttl, accessor=f"{type}_{uuid.uuid4().hex[:8]}",
                          uuid=str(uuid.uuid4()), options=dict(options or {}))
            mount.backend = factories[type](self, mount)
            self.mounts[norm] = mount
            return mount

    def disable_mount(self, path: str) -> None:
        """Unmount ``path`` and drop all its state and its leases. Unknown paths are a no-op (OpenBao
        answers 204)."""
        norm = path.strip("/") + "/"
        with self.lock:
            self.mounts.pop(norm, None)
            self.tokens.leases = {k: v for k, v in self.tokens.leases.items() if v.mount != norm}

    def find_mount(self, path: str) -> tuple[Mount, str] | None:
        """The mount that serves ``path`` (longest prefix) and the path inside it, or ``None``."""
        best: Mount | None = None
        for prefix, mount in self.mounts.items():
            if (path + "/").startswith(prefix) or path.startswith(prefix):
                if best is None or len(prefix) > len(best.path):
                    best = mount
        if best is None:
            return None
        return best, path[len(best.path):] if len(path) >= len(best.path) else ""

    def mount(self, path: str) -> Mount:
        """The mount at exactly ``path``; raises KeyError if there is none."""
        return self.mounts[path.strip("/") + "/"]

    # -- auth methods ----------------------------------------------------------------------------------
    def enable_auth(self, path: str, type: str, description: str = "", default_lease_ttl: int = 0,
                    max_lease_ttl: int = 0, options: dict | None = None) -> Mount:
        """Enable auth method ``type`` at ``auth/<path>`` (``sys/auth/:path``).

        Raises LogicalError 400: ``path is already in use at <p>/`` (``token/`` included), ``token
        credential backend cannot be instantiated`` (a second token method), ``plugin not found in
        the catalog: <type>`` for a method the double does not implement (``approle`` is the one it
        has besides ``token``).
        """
        norm = path.strip("/") + "/"
        with self.lock:
            for existing in [self.token_auth.path, *self.auth_mounts]:
                if norm.startswith(existing) or existing.startswith(norm):
                    raise user_error(f"path is already in use at {existing}")
            if type == "token":
                raise user_error("token credential backend cannot be instantiated")
            if type not in AUTH_METHODS:
                raise user_error(f"plugin not found in the catalog: {type}")
            mount = Mount(path=norm, type=type, description=description, default_lease_ttl=default_lease_ttl,
                          max_lease_ttl=max_lease_ttl, accessor=f"auth_{type}_{uuid.uuid4().hex[:8]}",
                          uuid=str(uuid.uuid4()), options=dict(options or {}))
            mount.backend = AUTH_METHODS[type](self, mount)
            self.auth_mounts[norm] = mount
            return mount

    def disable_auth(self, path: str) -> None:
        """Disable the auth method at ``auth/<path>`` and revoke the tokens its logins created
        (unknown paths are a no-op, answered 204)."""
        norm = path.strip("/") + "/"
        with self.lock:
            if self.auth_mounts.pop(norm, None) is not None:
                prefix = f"auth/{norm}"
                for token_id in [t.id for t in self.tokens.tokens.values() if t.path.startswith(prefix)]:
                    self.tokens.tokens.pop(token_id, None)

    def find_auth_mount(self, path: str) -> tuple[Mount, str] | None:
        """The auth mount serving ``path`` (relative to ``auth/``) and the path inside it, or ``None``."""
        for prefix, mount in sorted(self.auth_mounts.items(), key=lambda item: -len(item[0])):
            if path.startswith(prefix) or path + "/" == prefix:
                return mount, path[len(prefix):]
        return None

    # -- tokens ------------------------------------------------------------------------------------
    def create_token(self, policies: list[str] | None = None, ttl: int = 0, display_name: str = "",
                     token_id: str | None = None, meta: dict | None = None, num_uses: int = 0,
                     renewable: bool = True, no_default_policy: bool = False):
        """Create a token directly (no HTTP); see TokenStore.create. Returns the Token record."""
        with self.lock:
            return self.tokens.create(self.clock.now(), policies=policies, ttl=ttl, display_name=display_name,
                                      token_id=token_id, meta=meta, num_uses=num_uses, renewable=renewable,
                                      no_default_policy=no_default_policy)

    # -- response wrapping ---------------------------------------------------------------------------
    def wrap(self, response: Any, ttl: int, creation_path: str) -> dict[str, Any]:
        """Keep ``response`` (a LogicalResponse) behind a new single-use wrapping token valid for
        ``ttl`` seconds (as OpenBao makes it: ``num_uses`` 1, ``explicit_max_ttl`` = ``ttl``, ``path``
        the creation path); returns the ``wrap_info`` block (token, accessor, ttl, creation_time,
        creation_path) as OpenBao sends it."""
        with self.lock:
            now = self.clock.now()
            token = self.tokens.create(now, policies=["response-wrapping"], ttl=ttl, no_default_policy=True,
                                       renewable=False, num_uses=1, explicit_max_ttl=ttl, path=creation_path)
            self.wrapped[token.id] = (response, creation_path, now, ttl)
        return {"token": token.id, "accessor": token.accessor, "ttl": ttl,
                "creation_time": rfc3339_nano(now), "creation_path": creation_path}

    def unwrap(self, token_id: str) -> Any:
        """The wrapped LogicalResponse (once: the token is then gone), or ``None``. The wrapping token
        may be on its last use (sent as the request's token), as ``lookupTainted`` allows."""
        with self.lock:
            if self.tokens.lookup(token_id, self.clock.now(), tainted=True) is None:
                return None
            entry = self.wrapped.pop(token_id, None)
            if entry is None:  # not a wrapping token: refused, and the token stays valid
                return None
            self.tokens.tokens.pop(token_id, None)
        return entry[0]

    def wrapping_info(self, token_id: str) -> dict[str, Any] | None:
        """``sys/wrapping/lookup`` data for a live wrapping token, or ``None``."""
        with self.lock:
            if self.tokens.lookup(token_id, self.clock.now(), tainted=True) is None or token_id not in self.wrapped:
                return None
            _, path, created, ttl = self.wrapped[token_id]
        return {"creation_path": path, "creation_time": rfc3339_nano(created), "creation_ttl": ttl}

    # -- policies ----------------------------------------------------------------------------------
    def put_policy(self, name: str, text: str) -> Policy:
        """Create or replace ACL policy ``name`` (HCL or JSON text).

        Raises LogicalError 400, in upstream's order: ``'policy' parameter not supplied or empty``,
        ``failed to parse policy: ...`` (the text is parsed first, whatever the name), then
        ``cannot update "root" policy`` / ``cannot update "response-wrapping" policy``.
        """
        name = name.strip().lower()
        if not text:  # whitespace alone is an empty, valid policy
            raise user_error("'policy' parameter not supplied or empty")
        text = decode_policy_text(text)
        try:
            rules, parameters = parse_policy_full(text)
        except PolicyError as exc:
            raise user_error(str(exc)) from None
        if name in ("root", "response-wrapping"):
            raise user_error(f'cannot update "{name}" policy')
        with self.lock:
            previous = self.policies.get(name)
            policy = Policy(name, text, rules, self.clock.now(), (previous.version + 1) if previous else 1,
                            parameters)
            self.policies[name] = policy
            return policy

    def delete_policy(self, name: str) -> None:
        """Delete ACL policy ``name`` (lower-cased, trimmed, a trailing ``/`` dropped: ``a/b/`` deletes
        ``a/b``, as OpenBao's policy store does); unknown names are a no-op. Raises LogicalError 400
        ``cannot delete default policy`` / ``cannot delete "root" policy`` (upstream quotes only one)."""
        name = name.strip().lower().rstrip("/")  # the store's sanitizeName, then its path.Join'd key
        if name == "default":
            raise user_error("cannot delete default policy")
        if name == "root":
            raise user_error('cannot delete "root" policy')
        with self.lock:
            self.policies.pop(name, None)

    # -- snapshots -----------------------------------------------------------------------------------
    def snapshot(self) -> Any:
        """An opaque copy of all state; cheap (engines share immutable keys and certificates)."""
        with self.lock:
            mounts = [(replace(m, backend=None), m.backend.snapshot()) for m in self.mounts.values()]
            auth = [(replace(m, backend=None), m.backend.snapshot()) for m in self.auth_mounts.values()]
            return {"mounts": mounts, "auth_mounts": auth, "token_auth": replace(self.token_auth), "tokens": self.tokens.copy(), "sealed": self.sealed, "policies": dict(self.policies),
                    "wrapped": dict(self.wrapped), "enterprise": self.enterprise,
                    "migrations": dict(self.migrations)}

    def _restored_mount(self, live: dict[str, Mount], record: Mount, backend_snapshot: Any,
                        factories: dict[str, Any]) -> Mount:
        """The mount of ``record`` with its engine restored to ``backend_snapshot``. The live mount is
        kept when it is the same mount (path, uuid, type) and its engine can be renewed (``renew()``:
        back to how it was built, the PKI and KV engines): its record's fields are set back and its engine
        restores its own state (a PKI engine in O(changes)), without building the engine and its
        routes again; otherwise a new engine is made."""
        mount = live.get(record.path)
        if mount is not None and mount.uuid == record.uuid and mount.type == record.type \
                and hasattr(mount.backend, "renew"):
            for name in _MOUNT_FIELDS:
                setattr(mount, name, getattr(record, name))
            mount.options = dict(record.options)
            mount.backend.renew()
        else:
            mount = replace(record, options=dict(record.options))
            mount.backend = factories[mount.type](self, mount)
        mount.backend.restore(backend_snapshot)
        return mount

    def restore(self, snapshot: Any) -> None:
        """Return to ``snapshot`` (``None``: no mounts, only the root token)."""
        with self.lock:
            if snapshot is None:
                self.mounts = {}
                self.auth_mounts = {}
                self.token_auth = replace(self.token_auth, default_lease_ttl=0, max_lease_ttl=0,
                                          description="token based credentials")
                self.tokens = TokenStore(self.root_token, self.clock.now())
                self.policies = default_policies(self.clock.now())
                self.wrapped = {}
                self.migrations = {}
                self.sealed = False
                return
            self.mounts = {record.path: self._restored_mount(self.mounts, record, backend_snapshot, ENGINES)
                           for record, backend_snapshot in snapshot["mounts"]}
            self.auth_mounts = {record.path: self._restored_mount(self.auth_mounts, record, backend_snapshot,
                                                                  AUTH_METHODS)
                                for record, backend_snapshot in snapshot.get("auth_mounts", [])}
            self.token_auth = replace(snapshot.get("token_auth", self.token_auth))
            self.tokens = snapshot["tokens"].copy()
            self.sealed = snapshot["sealed"]
            self.policies = dict(snapshot["policies"])
            self.wrapped = dict(snapshot["wrapped"])
            self.migrations = dict(snapshot.get("migrations", {}))
            self.enterprise = snapshot.get("enterprise", self.enterprise)


__all__ = ["SecretsService", "Mount", "random_id", "SYSTEM_DEFAULT_LEASE_TTL", "SYSTEM_MAX_LEASE_TTL", "VERSION"]
