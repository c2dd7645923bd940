"""``auth/<mount>/login`` of AppRole (upstream ``path_login.go``).

Checks, in order, with OpenBao 2.7.2's answers:

1. ``role_id`` missing: 500 ``missing role_id`` (sic: the live server answers 500);
2. no role has that role ID: 400 ``invalid role or secret ID``;
3. when the role binds a secret ID: ``secret_id`` missing, 400 ``missing secret_id``; unknown or
   expired, 400 ``invalid role or secret ID``; the request's remote address outside the secret ID's
   ``cidr_list``, 400 ``source address "<ip>" unauthorized through CIDR restrictions on the secret
   ID``;
4. the remote address outside the role's ``secret_id_bound_cidrs``: 400 ``source address "<ip>"
   unauthorized by CIDR restrictions on the role: %!w(<nil>)``;
5. a secret ID with uses left loses one (the last use removes it).

The token comes from the service's token store (``tokens.create``) and is then marked as the login's:
``path`` ``auth/<mount>/login``, ``display_name`` ``<mount name>``, metadata ``role_name`` plus the
secret ID's metadata, the role's policies, TTLs (``CalculateTTL`` from the role's ``token_ttl``,
``token_period``, ``token_max_ttl`` and ``token_explicit_max_ttl`` and the mount's lease TTLs, with its
capping warnings; a renewal asks the backend's ``login_renewal`` for the role's current values) and
``token_num_uses``. The token is an orphan and renewable, like upstream's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.fields import STRING, Field
from pytest_schedpki.secrets.framework.lease_ttl import calculate_ttl, mount_ttls
from pytest_schedpki.secrets.framework.logical import LogicalError, LogicalResponse, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .model import Role, SecretId, address_in

if TYPE_CHECKING:  # pragma: no cover
    from .backend import ApproleBackend

INVALID = "invalid role or secret ID"


def _secret(req: LogicalRequest, backend: ApproleBackend, role: Role) -> SecretId | None:
    if not role.bind_secret_id:
        return None
    secret_id = req.data.get("secret_id")
    if not secret_id:
        raise user_error("missing secret_id")
    entry = backend.state.find_secret(role.name, secret_id)
    if entry is None or entry.expired(backend.now()):
        raise user_error(INVALID)
    if entry.cidr_list and not address_in(req.remote_addr, entry.cidr_list):
        raise user_error(f'source address "{req.remote_addr}" unauthorized through CIDR restrictions on the secret ID')
    return entry


def login(req: LogicalRequest) -> LogicalResponse:
    backend: ApproleBackend = req.mount.backend  # type: ignore[union-attr,assignment]
    role_id = req.data.get("role_id")
    if not role_id:
        raise LogicalError(500, ["missing role_id"])
    role = backend.state.role_by_id(role_id)
    if role is None:
        raise user_error(INVALID)
    entry = _secret(req, backend, role)
    if role.secret_id_bound_cidrs and not address_in(req.remote_addr, role.secret_id_bound_cidrs):
        raise user_error(f'source address "{req.remote_addr}" unauthorized by CIDR restrictions on the role: %!w(<nil>)')
    if entry is not None and entry.num_uses:
        if entry.num_uses == 1:
            backend.state.secret_ids[role.name].pop(entry.accessor, None)
        else:
            entry.num_uses -= 1
            entry.updated = backend.now()
    meta: dict[str, Any] = {"role_name": role.name, **(entry.metadata if entry else {})}
    mount = req.mount
    assert mount is not None
    service = req.service
    now = service.clock.now()
    explicit = role.token_explicit_max_ttl
    ttl, warnings = calculate_ttl(0, role.token_ttl, role.token_period, explicit, now, now,
                                  mount_ttls(mount, role.token_max_ttl))
    token = service.tokens.create(
        now, policies=list(role.token_policies), ttl=ttl, meta=meta, num_uses=role.token_num_uses,
        renewable=True, no_default_policy=role.token_no_default_policy, explicit_max_ttl=explicit)
    name = mount.path.strip("/")
    token = replace(token, path=f"auth/{name}/login", display_name=name.replace("/", "-"),
                    extra={**token.extra, "bound_cidrs": list(role.token_bound_cidrs), "period": role.token_period},
                    entity_id=backend.entity_id(role.name))
    service.tokens.tokens[token.id] = token
    return LogicalResponse(data=None, auth=token.auth_block(), warnings=warnings)


def paths(backend: ApproleBackend) -> list[Path]:
    """The unauthenticated login route."""
    return [Path("login", {"role_id": Field(STRING), "secret_id": Field(STRING)}, {"update": login},
                 unauthenticated=True)]



