"""The secrets side as the page shows it: mounts, PKI issuers with their CRLs and roles, KV keys and
versions (values only through :func:`kv_value`), tokens by accessor, AppRole roles.

Never in an answer: a token's id, a private key (issuer keys, ``CertRecord.private_key_pem``), a
secret ID (only its accessor), a KV value unless :func:`kv_value` is asked for that one key. The
certificates themselves are paged by :mod:`.cert_views`. Every function holds the service's lock.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from cryptography import x509

from ..secrets.kv_inspection import KvInspector
from .cert_views import _time, decode

if TYPE_CHECKING:  # pragma: no cover
    from ..secrets.service import SecretsService


def _mounts_of(service: SecretsService, kind: str) -> list[tuple[str, Any]]:
    return [(path.rstrip("/"), mount.backend) for path, mount in sorted(service.mounts.items()) if mount.type == kind]


def mounts(service: SecretsService) -> list[dict[str, Any]]:
    """Secrets engine and auth mounts: ``{"path", "kind" ("secrets"/"auth"), "type", "description",
    "accessor", "default_lease_ttl", "max_lease_ttl", "options"}``."""
    with service.lock:
        out = []
        for kind, table in (("secrets", service.mounts), ("auth", {"token/": service.token_auth, **service.auth_mounts})):
            for path, mount in sorted(table.items()):
                out.append({"path": path, "kind": kind, "type": mount.type, "description": mount.description,
                            "accessor": mount.accessor, "default_lease_ttl": mount.effective_default_ttl(),
                            "max_lease_ttl": mount.effective_max_ttl(), "options": dict(mount.options)})
        return out


def _crl(cached: dict | None) -> dict[str, Any] | None:
    if not cached:
        return None
    crl = cached["crl"]
    try:
        number = crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
    except x509.ExtensionNotFound:
        number = None
    return {"number": number, "this_update": _time(crl.last_update_utc), "next_update": _time(crl.next_update_utc),
            "revoked": len(crl)}


def pki(service: SecretsService, acme=None) -> list[dict[str, Any]]:
    """Per PKI mount: ``{"mount", "issuers": [{"issuer_id", "issuer_name", "default", "subject", "key",
    "has_key", "usage", "not_before", "not_after", "revoked", "crl": {"number", "this_update",
    "next_update", "revoked"} or None}], "roles": [{"name", ...role fields}], "certificates": count,
    "revoked": count, "acme": ...}``. ``acme(backend)`` is the ACME hook: what it returns for the mount
    goes in ``"acme"`` (``None`` until the ACME server exists; see :func:`acme_view`)."""
    acme = acme or acme_view
    with service.lock:
        out = []
        for path, backend in _mounts_of(service, "pki"):
            state = backend.state
            issuers = []
            for issuer_id, issuer in state.issuers.items():
                fields = decode(issuer.certificate)
                issuers.append({"issuer_id": issuer_id, "issuer_name": issuer.issuer_name,
                                "default": issuer_id == state.default_issuer_id, "subject": fields["subject"],
                                "key": fields["key"], "has_key": bool(issuer.key_id), "usage": issuer.usage,
                                "not_before": fields["not_before"], "not_after": fields["not_after"],
                                "revoked": issuer.revoked, "crl": _crl(state.crls.get(issuer_id))})
            roles = [_role(name, role) for name, role in sorted(state.roles.items())]
            out.append({"mount": path, "issuers": issuers, "roles": roles, "certificates": len(state.certs),
                        "revoked": len(state.certs.revoked_serials()), "acme": acme(backend)})
        return out


def acme_view(backend) -> Any:
    """The mount's ACME accounts and orders (``backend.state.extra["acme"]``, the PKI engine's ACME
    store) as plain dicts - ``{"accounts": [{kid, directory, status, contact, thumbprint, eab,
    created}], "orders": [{id, account, status, identifiers, authorizations, serial_number,
    expires}]}`` - never an account's key; ``None`` when the mount has no ACME state."""
    store = getattr(getattr(backend, "state", None), "extra", {}).get("acme")
    if store is None or not (store.accounts or store.orders):
        return None
    accounts = [{"kid": a.kid, "directory": a.directory, "status": a.status, "contact": list(a.contact),
                 "thumbprint": a.thumbprint, "eab": a.eab, "created": _iso(a.created)}
                for a in sorted(store.accounts.values(), key=lambda a: (a.created, a.kid))]
    orders = [{"id": o.id, "account": o.account, "status": o.status,
               "identifiers": [i.original for i in o.identifiers],
               "authorizations": [store.authorizations[a].status for a in o.authorizations
                                  if a in store.authorizations],
               "serial_number": o.serial, "expires": _iso(o.expires)}
              for o in sorted(store.orders.values(), key=lambda o: (o.expires, o.id))]
    return {"accounts": accounts, "orders": orders}


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def _role(name: str, role: Any) -> dict[str, Any]:
    fields = dataclasses.asdict(role) if dataclasses.is_dataclass(role) else dict(role)
    return {"name": name, **{k: v for k, v in fields.items() if k != "name"}}


def kv(service: SecretsService) -> list[dict[str, Any]]:
    """Per KV mount: ``{"mount", "version", "keys": [{"path", "current_version", "versions": [{"version",
    "created", "deleted", "destroyed"}]}]}`` (version 1: one entry per key, no versions). No values."""
    with service.lock:
        out = []
        for path, backend in _mounts_of(service, "kv"):
            now = backend.now()
            if backend.version == 1:
                keys = [{"path": key, "current_version": None, "versions": []} for key in sorted(backend.state.v1)]
            else:
                keys = []
                for key, meta in sorted(backend.state.metadata.items()):
                    versions = [{"version": n, "created": _time(v.created), "deleted": v.deleted(now),
                                 "destroyed": v.destroyed} for n, v in sorted(meta.versions.items())]
                    keys.append({"path": key, "current_version": meta.current_version, "versions": versions})
            out.append({"mount": path, "version": backend.version, "keys": keys})
        return out


def kv_value(service: SecretsService, mount: str, path: str, version: int = 0) -> dict[str, Any] | None:
    """The value of one KV key (version 2: ``version``, 0 the current one), or ``None`` when missing,
    deleted or destroyed: the only answer of the page that holds a secret, sent when the user asks for
    that key. Raises KeyError for a mount that is not a KV mount."""
    with service.lock:
        found = service.mounts.get(mount.strip("/") + "/")
        if found is None or found.type != "kv":
            raise KeyError(f"no KV mount {mount!r}")
    return KvInspector(service).value(path, mount.strip("/"), version)


def tokens(service: SecretsService) -> list[dict[str, Any]]:
    """Tokens by accessor: ``{"accessor", "display_name", "policies", "ttl" (remaining seconds),
    "creation_ttl", "expire_time", "creation_time", "renewable", "orphan", "num_uses", "path", "role",
    "root"}`` - the token's id never."""
    with service.lock:
        now = service.clock.now()
        out = []
        for token in sorted(service.tokens.tokens.values(), key=lambda t: (t.creation_time, t.accessor)):
            data = token.lookup_data(now)
            out.append({"accessor": token.accessor, "display_name": token.display_name,
                        "policies": list(token.policies), "ttl": data["ttl"], "creation_ttl": token.ttl,
                        "expire_time": data["expire_time"], "creation_time": _time(token.creation_time),
                        "renewable": token.renewable, "orphan": token.orphan, "num_uses": token.num_uses,
                        "path": token.path, "role": token.role, "root": token.is_root})
        return out


def approle(service: SecretsService) -> list[dict[str, Any]]:
    """Per AppRole mount: ``{"mount", "roles": [{"name", "token_policies", "token_ttl", "token_max_ttl",
    "bind_secret_id", "secret_id_ttl", "secret_id_num_uses", "secret_id_accessors": [...]}]}``. Neither
    role IDs nor secret IDs."""
    with service.lock:
        out = []
        for path, mount in sorted(service.auth_mounts.items()):
            if mount.type != "approle":
                continue
            state = mount.backend.state
            roles = []
            for name, role in sorted(state.roles.items()):
                secret_ids = state.secret_ids.get(name, {})
                roles.append({"name": name, "token_policies": list(role.token_policies), "token_ttl": role.token_ttl,
                              "token_max_ttl": role.token_max_ttl, "bind_secret_id": role.bind_secret_id,
                              "secret_id_ttl": role.secret_id_ttl, "secret_id_num_uses": role.secret_id_num_uses,
                              "secret_id_accessors": sorted(s.accessor for s in secret_ids.values())})
            out.append({"mount": path.rstrip("/"), "roles": roles})
        return out


def secrets_view(service: SecretsService) -> dict[str, Any]:
    """Everything above but the certificates and KV values: ``{"sealed", "mounts", "pki", "kv",
    "tokens", "approle"}``."""
    return {"sealed": service.sealed, "mounts": mounts(service), "pki": pki(service), "kv": kv(service),
            "tokens": tokens(service), "approle": approle(service)}
