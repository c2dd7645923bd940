"""``PUT /v1/acl/bootstrap``: the first management token (``nomad/acl_endpoint.go`` ``Bootstrap``
and ``fileBootstrapResetIndex``; ``nomad/state/state_store.go`` ``CanBootstrapACLToken``,
``BootstrapACLTokens``).

* Until the first bootstrap, anyone may call it (no token is checked) and gets a global management
  token named ``Bootstrap Token`` (new UUIDs, or the request's ``BootstrapSecret`` as SecretID; one
  that is not a UUID is ``400 invalid acl token``). The raft index of that write becomes the
  *reset index*.
* Afterwards: ``400 ACL bootstrap already done (reset index: <n>)``. An operator allows one more
  bootstrap by writing the reset index into ``<data_dir>/acl-bootstrap-reset``; the double's
  equivalent is :func:`set_reset_file` (``SchedulerState.set_bootstrap_reset_index``). A file
  holding another number: ``400 Invalid bootstrap reset index (specified <f>, reset index: <n>)``.
  The file stays, so the next call is refused until it is changed to the new reset index.
* ACLs off: ``400 ACL support disabled``. Earlier tokens stay valid after a reset bootstrap.
"""

from __future__ import annotations

import uuid

from ..model import SchedulerError
from ..tokens import ACLToken
from .objects import token_hash
from .token_table import put_token
from .tokens import is_uuid


def set_reset_file(state, index: int | None) -> None:
    """What ``<data_dir>/acl-bootstrap-reset`` holds: a reset index, or None for no file."""
    with state._lock:
        state.acl.reset_file = index


def bootstrap(state, bootstrap_secret: str = "") -> tuple[int, ACLToken]:
    """``ACL.Bootstrap``: returns (raft index, the new management token)."""
    with state._lock:
        state._check_acl()
        if not state.leader and not state._federated():
            raise SchedulerError(500, "No cluster leader")
        reset_index = state.acl.bootstrap_index
        if reset_index is not None:
            specified = state.acl.reset_file or 0
            if specified == 0:
                raise SchedulerError(400, f"ACL bootstrap already done (reset index: {reset_index})")
            if specified != reset_index:
                raise SchedulerError(
                    400, f"Invalid bootstrap reset index (specified {specified}, reset index: {reset_index})")
        secret = str(uuid.uuid4())
        if bootstrap_secret:
            if not is_uuid(bootstrap_secret):
                raise SchedulerError(400, "invalid acl token")
            secret = bootstrap_secret
        if secret in state._tokens:  # the secret index is unique: the raft apply fails, nothing changes
            raise SchedulerError(500, "upserting token failed: UUID lookup failed: duplicate SecretID")
        state._raft += 1
        index = state._raft
        token = ACLToken(str(uuid.uuid4()), secret, "Bootstrap Token", "management", True, state.clock.now(),
                         None, index, index)
        token = ACLToken(**{**token.__dict__, "Hash": token_hash(token)})
        put_token(state, token)
        state.acl.bootstrap_index = index
        state._cond.notify_all()
        return index, token
