"""``GET /v1/agent/self`` (``command/agent/agent_endpoint.go`` ``AgentSelfRequest``).

GET only (else ``405 Invalid method``); then ``HTTPServer.ResolveToken``: an unknown token is
``403 Permission denied``; an expired one ``500 ACL token not found or invalid workload identity: ACL
token expired`` (``ResolveToken`` wraps ``Authenticate``'s ``ErrTokenExpired``, and ``wrap`` maps
only texts ending in ``Permission denied`` or ``ACL token not found`` to 403); then ``AllowAgentRead`` (agent ``read`` or ``write``, or management),
else ``403 Permission denied``. Not forwarded: the agent answers itself, with or without a leader.

The body is ``agentSelf``: ``config`` (the agent's ``Config``, Go field names), ``member`` (the
server's serf member) and ``stats``. The double fills what the Go ``api`` client
(``Agent.populateCache``: ``Config["Region"]``, ``Config["Datacenter"]``, ``Member.Name``),
python-nomad and nomadpy read, and a consistent subset around it: ``config.ACL`` (``Enabled``,
the TTLs in nanoseconds, ``ReplicationToken`` empty), ``Version``, ``Server``/``Client`` enabled
flags, ``Telemetry.PrometheusMetrics``; ``member`` with every ``Member`` field; ``stats`` with
the ``nomad`` and ``runtime`` sections (all values strings).
"""

from __future__ import annotations

import platform

from werkzeug.wrappers import Request, Response

from ..aclstore.resolve import resolve_acl
from ..model import SchedulerError
from ..request import request_token
from .profile import profile_of
from .reply import json_answer

VERSION = {"Revision": "aa026cc99cfb74a77e519a1c1f0c78ba1b452705", "Version": "2.0.6",
           "VersionMetadata": "", "VersionPrerelease": "dev"}
_SECOND = 10**9


def self_document(state) -> dict:
    """The ``agentSelf`` value the double answers (see the module doc)."""
    profile = profile_of(state)
    region = state.region
    host, _, rpc_port = profile.rpc_addr.rpartition(":")
    acl = {"Enabled": bool(getattr(state, "_acl_enabled", True)), "TokenTTL": 30 * _SECOND,
           "PolicyTTL": 30 * _SECOND, "RoleTTL": 30 * _SECOND, "ReplicationToken": "",
           "TokenMinExpirationTTL": getattr(state, "_min_ttl", 60 * _SECOND),
           "TokenMaxExpirationTTL": getattr(state, "_max_ttl", 86_400 * _SECOND)}
    config = {"Region": region, "Datacenter": profile.datacenter, "NodeName": profile.node_name,
              "BindAddr": host, "DevMode": True, "ACL": acl, "Version": dict(VERSION),
              "Server": {"Enabled": True, "AuthoritativeRegion": state.authoritative_region,
                         "BootstrapExpect": 1},
              "Client": {"Enabled": False},
              "Telemetry": {"PrometheusMetrics": profile.prometheus_metrics}}
    tags = {"role": "nomad", "region": region, "dc": profile.datacenter, "build": "2.0.6-dev",
            "port": rpc_port, "bootstrap": "1", "expect": "1", "rpc_addr": host, "raft_vsn": "3",
            "vsn": "1", "mvn": "1"}
    member = {"Name": f"{profile.node_name}.{region}", "Addr": host, "Port": profile.serf_port, "Tags": tags,
              "Status": "alive", "ProtocolMin": 1, "ProtocolMax": 5, "ProtocolCur": 2,
              "DelegateMin": 2, "DelegateMax": 5, "DelegateCur": 4}
    leader = "true" if state.leader else "false"
    stats = {"nomad": {"server": "true", "leader": leader, "leader_addr": profile.rpc_addr if state.leader else "",
                       "bootstrap": "false", "known_regions": str(len(state.known_regions))},
             "runtime": {"arch": platform.machine() or "amd64", "version": "go1.26.5", "max_procs": "2",
                         "goroutines": "57", "cpu_count": "2", "kernel.name": platform.system().lower()}}
    return {"config": config, "member": member, "stats": stats}


def agent_self(state, request: Request) -> Response:
    """``GET /v1/agent/self`` (see the module doc)."""
    secret = request_token(request)
    if getattr(state, "_acl_enabled", True) and secret and state.token_kind(secret) == "expired":
        raise SchedulerError(500, "ACL token not found or invalid workload identity: ACL token expired")
    acl = resolve_acl(state, secret)
    if not acl.allow_agent_read():
        raise SchedulerError(403, "Permission denied")
    return json_answer(request, self_document(state))
