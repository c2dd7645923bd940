"""Answers of the agent routes, shaped as Nomad's ``wrap`` writes them (``command/agent/http.go``).

:func:`json_answer` encodes with go-codec's JSON rules as Nomad's HTTP layer does (compact, no HTML
escaping; with ``?pretty`` 4-space indented plus a newline); :func:`read_route` runs ``parse`` (the
query-string checks) and Nomad's RPC forwarding for a read: an unknown ``?region=`` is
``500 No path to region``, no leader without ``?stale`` is ``500 No cluster leader``.
"""

from __future__ import annotations

import json

from werkzeug.wrappers import Request, Response

from ..model import SchedulerError
from ..request import ANSWERS, parse_query, pretty, reply

NO_LEADER = "No cluster leader"
NO_PATH = "No path to region"


def json_answer(request: Request, value: object, headers: dict | None = None) -> Response:
    """A 200 ``application/json`` answer holding ``value``."""
    if pretty(request):
        text = json.dumps(value, ensure_ascii=False, indent=4) + "\n"
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return reply(text, 200, "application/json", headers)


def target_region(state, region: str) -> str:
    """The RPC's region (``parseRegion``: the agent's own when empty); ``500 No path to region``
    for one the double does not serve."""
    region = region or state.region
    if region not in state.known_regions:
        raise SchedulerError(500, NO_PATH)
    return region


def read_route(state, request: Request) -> tuple[str, bool] | Response:
    """``parse`` then ``rpcHandler.forward`` for a read: ``(region, stale)`` or the 400 answer.

    Raises ``500 No path to region`` / ``500 No cluster leader`` (the local region without a
    leader and without ``?stale``; another region is answered by its own leader)."""
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    region, _index, _wait, stale = parsed
    region = target_region(state, region)
    if region == state.region and not stale and not state.leader:
        raise SchedulerError(500, NO_LEADER)
    return region, stale


def query_meta(state, region: str, index: int) -> dict:
    """``setMeta`` for a query answered in ``region``: index, last contact, known leader."""
    local = region == state.region and not state.leader
    return {"X-Nomad-Index": str(index), "X-Nomad-LastContact": "0",
            "X-Nomad-KnownLeader": "false" if local else "true"}
