"""One AppRole mount: its state (:class:`~.model.ApproleState`) and routes."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from pytest_schedpki.secrets.framework.engine import EngineHost, MountInfo
from pytest_schedpki.secrets.framework.logical import internal_error
from pytest_schedpki.secrets.framework.router import Router

from . import login, role_fields, roles, secret_ids
from .model import ApproleState


class ApproleBackend:
    """The AppRole method of one ``sys/auth`` mount: ``state``, ``router`` and snapshots.

    ``entity_id(role)`` is the identity entity a role's logins are attached to (random, stable per
    role for the mount's life, as OpenBao creates one entity per role ID alias)."""

    def __init__(self, service: EngineHost, mount: MountInfo):
        self.service = service
        self.mount = mount
        self.state = ApproleState()
        self.entities: dict[str, str] = {}
        self.router = Router([*login.paths(self), *secret_ids.paths(self), *role_fields.paths(self), *roles.paths(self)])

    def now(self) -> datetime.datetime:
        return self.service.clock.now()

    def entity_id(self, role: str) -> str:
        return self.entities.setdefault(role, str(uuid.uuid4()))

    def login_renewal(self, token: Any) -> tuple[int, int, int]:
        """What ``pathLoginRenew`` answers for a login token being renewed: the role's ``(token_ttl,
        token_period, token_max_ttl)`` in seconds (the token store then applies ``CalculateTTL`` with
        this mount's TTLs). Raises LogicalError 500 ``failed to renew entry: role "<name>" does not exist
        during renewal`` when the role the token logged in with is gone."""
        name = token.meta.get("role_name", "")
        role = self.state.roles.get(name)
        if role is None:
            raise internal_error(f'failed to renew entry: role "{name}" does not exist during renewal')
        return role.token_ttl, role.token_period, role.token_max_ttl

    def snapshot(self) -> Any:
        return (self.state.copy(), dict(self.entities))

    def restore(self, snapshot: Any) -> None:
        if snapshot is None:
            self.state, self.entities = ApproleState(), {}
        else:
            self.state, self.entities = snapshot[0].copy(), dict(snapshot[1])
