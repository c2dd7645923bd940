"""The agent surface's routes, Nomad's mux patterns (``command/agent/http.go`` ``registerHandlers``):
exact paths, each refusing other methods with ``405 Invalid method`` before anything else.

:func:`dispatch` answers a request for one of them and returns None for any other path.
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from ..request import error
from . import agent_self, intro, keys, metrics, status

_GET = {keys.JWKS_PATH: keys.jwks, keys.DISCOVERY_PATH: keys.discovery,
        "/v1/status/leader": status.leader, "/v1/status/peers": status.peers,
        "/v1/agent/self": agent_self.agent_self, "/v1/metrics": metrics.metrics}
INTRO_PATH = "/v1/acl/identity/client-introduction-token"


def dispatch(state, request: Request, path: str, verb: str) -> Response | None:
    """Serve ``path`` (already cleaned) if it is an agent route, else None. ``SchedulerError``
    escapes to the app, which answers its status and text."""
    handler = _GET.get(path)
    if handler is not None:
        return handler(state, request) if verb == "GET" else error(405, "Invalid method")
    if path == INTRO_PATH:
        return intro.create(state, request) if verb in ("PUT", "POST") else error(405, "Invalid method")
    return None
