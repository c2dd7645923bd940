"""A request's token to the ACL that decides it (``nomad/auth/auth.go``: ``Authenticate``,
``ResolveACL``, ``resolveTokenFromSnapshotCache``, ``resolveACLFromToken``;
``nomad/structs/acl.go`` ``CompileACLObject``).

* ACLs disabled: an ACL that allows everything (``acl.ACLsDisabledACL``);
* no token: the anonymous token, whose only policy is ``anonymous`` (it grants what a policy of
  that name grants, nothing when there is none);
* an unknown secret: ``Authenticate`` fails and the endpoint answers ``403 Permission denied``;
  an expired token likewise (``ErrTokenExpired`` becomes ``Permission denied`` at the endpoint);
* a management token: the management ACL;
* a client token: its policies, then its roles' policies, each parsed non-strictly (what was
  valid when written stays valid) and compiled with :func:`..acl.evaluate.new_acl`; names of
  policies or roles that no longer exist grant nothing.

Compiled ACLs are cached by the (name, ModifyIndex) of the policies they come from, as Nomad's
``ACLCache`` is, and the cache is bounded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..acl.evaluate import ACL, new_acl
from ..acl.policy import PolicyError, parse
from ..model import SchedulerError
from ..tokens import ACLToken

PERMISSION_DENIED = "Permission denied"
ANONYMOUS_POLICY = "anonymous"
CACHE_SIZE = 512

MANAGEMENT = new_acl(True, [])
_cache: OrderedDict[tuple, ACL] = OrderedDict()
_cache_lock = threading.Lock()  # the cache is shared by every double of the process, each with its own lock


def _compile(policies: list) -> ACL:
    key = tuple((p.Name, p.ModifyIndex, p.Rules) for p in policies)
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    parsed = []
    for policy in policies:
        try:
            parsed.append(parse(policy.Rules, strict=False))
        except PolicyError:  # stored rules were valid when written; a seed may bypass that
            continue
    acl = new_acl(False, parsed)
    with _cache_lock:
        _cache[key] = acl
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return acl


def token_acl(state, token: ACLToken | None) -> ACL:
    """``resolveACLFromToken`` for a live ``token`` (None = anonymous) under the state's lock."""
    if token is not None and token.Type == "management":
        return MANAGEMENT
    store = state.acl
    names = [ANONYMOUS_POLICY] if token is None else list(token.Policies or ())
    if token is not None:
        for role_id in token.Roles or ():
            role = store.roles.get(role_id)
            if role is not None:
                names.extend(role.Policies)
    policies = [store.policies[n] for n in names if n in store.policies]
    return _compile(policies)


def resolve_acl(state, secret: str | None) -> ACL:
    """The ACL for the request's ``secret`` (``""``/None = anonymous) on ``state``
    (a :class:`~pytest_schedpki.scheduler.state.SchedulerState`).

    Raises :class:`~..model.SchedulerError` ``403 Permission denied`` for an unknown or expired
    secret. With ACLs disabled every request is allowed (no token is looked at).
    """
    with state._lock:
        if not state._acl_enabled:
            return MANAGEMENT
        token = None
        if secret:
            token = state._tokens.get(secret)
            if token is None or token.expired(state.clock.now()):
                raise SchedulerError(403, PERMISSION_DENIED)
        return token_acl(state, token)
