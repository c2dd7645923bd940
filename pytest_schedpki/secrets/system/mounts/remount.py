"""``sys/remount`` (move a secrets engine or an auth method to a new path) and
``sys/remount/status/:migration_id``, answered as OpenBao 2.7's dev server does.

OpenBao queues the move and answers at once; the double moves the mount inside the request, so the
status of every migration it reports is ``success``. Upstream: ``vault/logical_system.go``
(``handleRemount``, ``handleRemountStatusCheck``) and ``vault/mount.go`` (``remountSecretsEngine``,
``remountCredential``).

What a move does (checked against ``bao server -dev``): the mount keeps its type, accessor, uuid,
config and all its stored data; the leases issued under a moved secrets engine are dropped without
revoking their secrets (a PKI certificate stays unrevoked); the tokens issued by logins of a moved
auth method are revoked (its roles stay).
"""

from __future__ import annotations

import uuid

from ...framework.fields import ANY, STRING, Field
from ...framework.logical import LogicalResponse, not_found, user_error
from ...framework.router import LogicalRequest, Path
from ...service import RESERVED_MOUNT_PREFIXES

#: secrets mounts that cannot be moved (``cannot remount "<p>"``)
_PROTECTED_SOURCES = ("sys/", "cubbyhole/", "identity/")
QUEUED_WARNING = ("Mount move has been queued. Progress will be reported in OpenBao's server log, tagged with the "
                  "returned migration_id")


def _norm(path: str) -> str:
    return path.strip("/") + "/"


def _in_use(table_paths: list[str], wanted: str, shown: str) -> None:
    for existing in table_paths:
        if wanted.startswith(existing) or existing.startswith(wanted):
            raise user_error(f'path already in use at "{shown}{existing}"')


def remount(service, source: str, target: str) -> str:
    """Move the mount at ``source`` to ``target`` (both relative to ``/v1/``; an auth method is
    ``auth/<path>``) and return the migration id (a UUID).

    Raises LogicalError 400: ``cannot remount "<src>/"`` (``sys/``, ``cubbyhole/``, ``identity/``,
    ``auth/token/``), ``cannot remount auth mount to non-auth mount "<dst>/"``, ``cannot remount to
    destination <dst>/`` (a reserved prefix such as ``auth/`` or ``sys/``), ``no matching mount at
    "<src>/"``, ``path already in use at "<p>/"`` (the target, a parent or a child of it is mounted).
    """
    src, dst = _norm(source), _norm(target)
    with service.lock:
        if src.startswith("auth/"):
            if not dst.startswith("auth/"):
                raise user_error(f'cannot remount auth mount to non-auth mount "{dst}"')
            if src == "auth/token/":
                raise user_error(f'cannot remount "{src}"')
            table, key, new_key = service.auth_mounts, src[len("auth/"):], dst[len("auth/"):]
            if key not in table:
                raise user_error(f'no matching mount at "{src}"')
            _in_use([service.token_auth.path, *table], new_key, "auth/")
        else:
            if src in _PROTECTED_SOURCES:
                raise user_error(f'cannot remount "{src}"')
            if dst.startswith(RESERVED_MOUNT_PREFIXES):
                raise user_error(f"cannot remount to destination {dst}")
            table, key, new_key = service.mounts, src, dst
            if key not in table:
                raise user_error(f'no matching mount at "{src}"')
            _in_use(list(table), new_key, "")
        mount = table.pop(key)
        mount.path = new_key
        table[new_key] = mount
        if table is service.mounts:
            service.tokens.leases = {k: v for k, v in service.tokens.leases.items() if v.mount != src}
        else:
            for token_id in [t.id for t in service.tokens.tokens.values() if t.path.startswith(src)]:
                service.tokens.tokens.pop(token_id, None)
        migration_id = str(uuid.uuid4())
        service.migrations[migration_id] = {"source_mount": src, "target_mount": dst, "status": "success"}
        return migration_id


def _remount(req: LogicalRequest) -> LogicalResponse:
    source, target = req.data.get("from"), req.data.get("to")
    if not isinstance(source, str) or not isinstance(target, str) or not source or not target:
        raise user_error("both 'from' and 'to' path must be specified as a string")
    migration_id = remount(req.service, source, target)
    data = {"migration_id": migration_id}
    return LogicalResponse(data=data, extra_top=data, warnings=[QUEUED_WARNING])


def _status(req: LogicalRequest) -> LogicalResponse:
    migration_id = req.data.get("migration_id")
    info = req.service.migrations.get(migration_id)
    if info is None:
        raise not_found()
    return LogicalResponse(data={"migration_id": migration_id, "migration_info": dict(info)})


REMOUNT_PATHS = [
    Path("remount", {"from": Field(ANY), "to": Field(ANY)}, {"update": _remount}),
    Path("remount/status/(?P<migration_id>.+)", {"migration_id": Field(STRING)}, {"read": _status}),
]
