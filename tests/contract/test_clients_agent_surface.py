"""Contract: the agent surface (scheduler/agent/) driven by nomadpy and python-nomad, the way a
harness first talks to a server: ``status.leader``/``peers``, ``agent.self`` (region, datacenter,
node name), ``operator.metrics_summary``, and ``acl_identity.create_client_introduction_token``
verified against ``/.well-known/jwks.json``. Expected values follow Nomad's
``command/agent/{status,agent,metrics,acl,keyring}_endpoint.go`` (scheduler half only)."""

from __future__ import annotations

import jwt
import nomad
import nomad.api.exceptions as nomad_exc
import nomadpy
import pytest
import requests


@pytest.fixture
def client(schedpki):
    return nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))


@pytest.fixture
def n(schedpki):
    return nomad.Nomad(address=schedpki.scheduler.url, token=schedpki.scheduler.token)


def test_nomadpy_status_and_agent_self(client):
    assert client.status.leader() == "127.0.0.1:4647"
    assert client.status.peers() == ["127.0.0.1:4647"]
    assert client.status.region_leader("global") == "127.0.0.1:4647"
    me = client.agent.self()
    assert (me.config["Region"], me.config["Datacenter"], me.member.name) == ("global", "dc1", "schedpki.global")
    assert (client.agent.region(), client.agent.datacenter(), client.agent.node_name()) == \
        ("global", "dc1", "schedpki.global")


def test_nomadpy_agent_self_without_token_is_refused(schedpki):
    anonymous = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url))
    with pytest.raises(nomadpy.UnexpectedResponseError) as err:
        anonymous.agent.self()
    assert (err.value.status_code, err.value.body) == (403, "Permission denied")


def test_nomadpy_metrics(client):
    summary, _ = client.operator.metrics_summary()
    assert summary.timestamp.endswith(" +0000 UTC") and summary.gauges
    assert b"# TYPE" in client.operator.metrics(nomadpy.QueryOptions(params={"format": "prometheus"}))


def test_nomadpy_client_introduction_token(client, schedpki):
    resp, _ = client.acl_identity.create_client_introduction_token(ttl=600 * 10**9, node_name="n1", node_pool="gpu")
    (key,) = requests.get(schedpki.scheduler.url + "/.well-known/jwks.json", timeout=10).json()["keys"]
    claims = jwt.decode(resp.jwt, jwt.PyJWK(key).key, algorithms=["RS256"], audience="nomadproject.io")
    assert claims["sub"] == "node-introduction:global:gpu:n1:default" and claims["exp"] - claims["iat"] == 600


def test_python_nomad_status_agent_metrics(n):
    assert n.status.leader.get_leader() == "127.0.0.1:4647"
    assert n.status.peers.get_peers() == ["127.0.0.1:4647"]
    assert n.agent.get_agent()["config"]["Region"] == "global"
    assert set(n.metrics.get_metrics()) >= {"Timestamp", "Gauges", "Counters", "Samples"}


def test_python_nomad_agent_self_refused_without_agent_read(schedpki):
    anonymous = nomad.Nomad(address=schedpki.scheduler.url)
    with pytest.raises(nomad_exc.URLNotAuthorizedNomadException):
        anonymous.agent.get_agent()
