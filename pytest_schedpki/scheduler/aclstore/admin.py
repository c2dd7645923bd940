"""The scheduler state's token administration from Python (a mixin of
:class:`~pytest_schedpki.scheduler.state.SchedulerState`): seeding tokens, bootstrap and its reset
index, lookups for the journal. The HTTP rules live in :mod:`.tokens` and :mod:`.bootstrap`.
"""

from __future__ import annotations

import datetime
from dataclasses import replace

from ..tokens import ACLToken, new_token, token_kind
from .bootstrap import bootstrap as _bootstrap
from .bootstrap import set_reset_file
from .token_table import drop_token
from .tokens import store_token


class TokenAdmin:
    """Token methods of the scheduler state (uses its ``_lock``, ``_tokens``, ``_raft``, ``acl``, ``clock``)."""

    def add_token(self, secret_id: str | None = None, type: str = "management", name: str = "",  # noqa: A002
                  expiration_time: datetime.datetime | None = None, global_: bool = True,
                  accessor_id: str | None = None, policies=None, roles=None) -> ACLToken:
        """Create an ACL token (one raft write) and return it.

        ``secret_id``/``accessor_id`` default to random UUIDs (any string is accepted as a secret);
        ``type`` is ``"management"`` or ``"client"``; ``expiration_time`` is a datetime (naive =
        UTC) after which the token is refused; ``global_=False`` makes a token valid only in the
        local region. ``policies`` (names) and ``roles`` (role names or IDs) give a client token its
        rules (unknown names are kept, as Nomad keeps a deleted policy's name, and grant nothing).
        Raises ValueError for another type, policies or roles on a management token, or a
        SecretID/AccessorID already in use.
        """
        with self._lock:
            if type == "management" and (policies or roles):
                raise ValueError("management token cannot be associated with policies or roles")
            ids = []
            for key in roles or ():
                role = self.acl.roles.get(key) or self.acl.role_by_name(key)
                if role is None:
                    raise ValueError(f"cannot find role {key}")
                ids.append(role.ID)
            links = (tuple(policies or ()), tuple(dict.fromkeys(ids)) or None) if policies or roles else None
            return self._add_token_locked(secret_id, type, name, expiration_time, global_, accessor_id, links)

    def _add_token_locked(self, secret, type_, name, expires, global_, accessor, links=None) -> ACLToken:
        local = not global_ and self._federated()
        index = (self._replica.raft_index if local else self._raft) + 1
        token = new_token(self._tokens, secret, type_, name, expires, global_, accessor, self.clock.now(), index)
        if links is not None:
            token = replace(token, Policies=links[0], Roles=links[1])
        return store_token(self, token, local)

    def bootstrap(self, bootstrap_secret: str = "") -> ACLToken:
        """``PUT /v1/acl/bootstrap`` from Python: the new management token (``BootstrapSecret``: a UUID
        to use as its SecretID). Raises SchedulerError as the endpoint answers (400 ``ACL bootstrap
        already done (reset index: <n>)``, ``invalid acl token``...); see :mod:`.aclstore.bootstrap`."""
        return _bootstrap(self, bootstrap_secret)[1]

    def set_bootstrap_reset_index(self, index: int | None) -> None:
        """Write (an int) or remove (None) the agent's ``<data_dir>/acl-bootstrap-reset`` file: with the
        current reset index in it, one more bootstrap is allowed."""
        set_reset_file(self, index)

    def unbootstrap(self) -> None:
        """Make this a fresh cluster: the ready management token is gone and ``PUT /v1/acl/bootstrap``
        is allowed again (what ``bootstrap=False`` starts with). Other tokens stay."""
        with self._lock:
            token = self._tokens.get(self.management_token)
            if token is not None and token.Name == "Bootstrap Token" and token.CreateIndex == 1:
                drop_token(self, token)
            self.acl.bootstrap_index = None

    @property
    def bootstrap_reset_index(self) -> int | None:
        """The reset index (the raft index of the last bootstrap), None before the first."""
        return self.acl.bootstrap_index

    def get_token(self, secret_id: str) -> ACLToken | None:
        """The token with this SecretID, or None."""
        with self._lock:
            return self._tokens.get(secret_id)

    def delete_token(self, secret_id: str) -> None:
        """Forget a token (later requests carrying it get 403). Raises KeyError if unknown."""
        with self._lock:
            drop_token(self, self._tokens[secret_id])

    def token_kind(self, secret: str) -> str:
        """For the journal: ``management``, ``client``, ``expired``, ``unknown`` or (``""``) ``anonymous``."""
        with self._lock:
            return token_kind(self._tokens.get(secret), self.clock.now()) if secret else "anonymous"

