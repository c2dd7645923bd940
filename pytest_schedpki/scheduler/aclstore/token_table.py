"""The ``acl_token`` table's writes and the local region's view of it.

Every token write goes through :func:`put_token` / :func:`drop_token`: the authoritative table
(``state._tokens``, by SecretID), the table index, and the local region's replica of the table, which
follows the replication knobs like the auth methods and binding rules (``set_lag``, ``set_lag_reads``,
``pause_replication``; in one region a lag delays what reads of the table see, as a follower behind
the leader). Token reads (``GET /v1/acl/token/:accessor``, ``GET /v1/acl/tokens``) answer from
:func:`token_view`; authentication always uses the authoritative table (the leader's). With a local
region other than the authoritative one, the view is the authoritative table (docs/divergences.md).
Callers hold the state's lock.
"""

from __future__ import annotations

from ..tokens import ACLToken


def put_token(state, token: ACLToken) -> ACLToken:
    """Store ``token`` (new or updated) at its ModifyIndex and queue it for the local view."""
    state._tokens[token.SecretID] = token
    state.acl.token_table = max(state.acl.token_table, token.ModifyIndex)
    state.acl.token_replica.commit(token.AccessorID, token, state.acl.token_table)
    return token


def drop_token(state, token: ACLToken, index: int | None = None) -> None:
    """Remove ``token``; ``index`` is the raft index of the delete (None: a Python-side removal that
    moves no index)."""
    del state._tokens[token.SecretID]
    if index is not None:
        state.acl.token_table = index
    state.acl.token_replica.commit(token.AccessorID, None, state.acl.token_table)


def token_view(state) -> tuple[dict[str, ACLToken], int]:
    """What a read of the local region sees: (AccessorID -> token, the table index)."""
    if state._federated():
        return {t.AccessorID: t for t in state._tokens.values()}, state.acl.token_table
    replica = state.acl.token_replica
    replica.advance()
    return replica.methods, replica.table_index
