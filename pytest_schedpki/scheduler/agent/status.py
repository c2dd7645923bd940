"""``/v1/status/leader`` and ``/v1/status/peers`` (``command/agent/status_endpoint.go``,
``nomad/status_endpoint.go`` ``Status.Leader``/``Status.Peers``).

GET only (else ``405 Invalid method``); the query string parsed as every read's; no ACL check
(auth errors are thrown away). Forwarded like any read: another region is answered by its leader,
the local region without a leader answers ``500 No cluster leader`` unless ``?stale``, when the
leader is ``""`` (raft knows none) while the peers are still the raft configuration's servers.

Bodies: the leader's RPC address as a JSON string (``"127.0.0.1:4647"``); the peers as a JSON
array of those addresses (``[]`` never ``null``). No ``X-Nomad-*`` headers: the handlers set none.
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from ..request import ANSWERS
from .profile import profile_of
from .reply import json_answer, read_route


def leader(state, request: Request) -> Response:
    """``GET /v1/status/leader``."""
    routed = read_route(state, request)
    if isinstance(routed, ANSWERS):
        return routed
    region, _stale = routed
    known = region != state.region or state.leader
    return json_answer(request, profile_of(state).rpc_addr if known else "")


def peers(state, request: Request) -> Response:
    """``GET /v1/status/peers``."""
    routed = read_route(state, request)
    if isinstance(routed, ANSWERS):
        return routed
    return json_answer(request, [profile_of(state).rpc_addr])
