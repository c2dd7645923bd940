"""The agent surface a client or harness touches first (scheduler/agent/): JWKS and OIDC discovery,
status leader/peers, agent self, metrics and client-introduction tokens, each as the Nomad
function named in its test says (command/agent/*.go, nomad/*_endpoint.go at aa026cc9)."""

from __future__ import annotations

import base64
import datetime
import json

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_helpers import assert_plain

from pytest_schedpki.scheduler.aclstore.objects import Policy
from pytest_schedpki.scheduler.agent.intro import decode_request
from pytest_schedpki.scheduler.agent.profile import profile_of

INTRO = "/v1/acl/identity/client-introduction-token"


def client_token(sched, rules: str | None = None) -> str:
    """A client token holding one policy with ``rules`` (none: no policy)."""
    name = f"p{sched.state.last_index}"
    if rules is not None:
        sched.state.acl.upsert_policy(Policy(Name=name, Rules=rules))
    return sched.state.add_token(type="client", policies=[name] if rules is not None else None).SecretID


def _public_key(jwk: dict) -> rsa.RSAPublicKey:
    n, e = (int.from_bytes(base64.urlsafe_b64decode(jwk[k] + "=" * (-len(jwk[k]) % 4)), "big") for k in ("n", "e"))
    return rsa.RSAPublicNumbers(e, n).public_key()


# -- /.well-known/jwks.json: JWKSRequest -> Keyring.ListPublic ---------------------------------------------
def test_jwks_is_one_rsa_signing_key_for_any_token(sched):
    for token in (None, "root", "not-a-token"):  # ListPublic ignores auth errors
        r = sched.get("/.well-known/jwks.json", token=token)
        assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
        (key,) = r.json()["keys"]
        assert list(key) == ["use", "kty", "kid", "alg", "n", "e"]  # go-jose's rawJSONWebKey order
        assert (key["use"], key["kty"], key["alg"], key["e"]) == ("sig", "RSA", "RS256", "AQAB")
        assert key["kid"] == profile_of(sched.state).key.key_id and len(key["kid"]) == 36
        assert _public_key(key).key_size == 2048  # structs.NewRootKey: rsa.GenerateKey(2048)
        assert r.headers["X-Nomad-KnownLeader"] == "true" and int(r.headers["X-Nomad-Index"]) >= 1


def test_jwks_cache_control_is_half_the_rotation_threshold_plus_a_stagger(sched):
    # helper.ExpiryToRenewTime(create + 720h): half of what is left, plus up to a tenth of it.
    age = int(sched.get("/.well-known/jwks.json").headers["Cache-Control"].removeprefix("max-age="))
    assert 360 * 3600 - 60 <= age <= 396 * 3600


def test_jwks_key_survives_the_per_test_reset(sched):
    before = sched.get("/.well-known/jwks.json").json()
    sched.state.restore(None)
    assert sched.get("/.well-known/jwks.json").json() == before


def test_jwks_refuses_other_methods_and_bad_query_and_needs_a_leader(sched):
    assert_plain(sched.put("/.well-known/jwks.json"), 405, "Invalid method")
    assert_plain(sched.get("/.well-known/jwks.json?wait=x"), 400, "Invalid wait time")
    assert_plain(sched.get("/.well-known/jwks.json?region=mars"), 500, "No path to region")
    sched.state.set_leader(False)
    assert_plain(sched.get("/.well-known/jwks.json"), 500, "No cluster leader")
    r = sched.get("/.well-known/jwks.json?stale")
    assert r.status_code == 200 and r.headers["X-Nomad-KnownLeader"] == "false"


def test_openid_configuration_is_disabled_without_an_issuer(sched):
    # OIDCDiscoveryRequest: Keyring.GetConfig's OIDCDiscovery is nil unless oidc_issuer is set.
    assert_plain(sched.get("/.well-known/openid-configuration"), 404, "OIDC Discovery endpoint disabled")
    assert_plain(sched.post("/.well-known/openid-configuration"), 405, "Invalid method")


def test_openid_configuration_with_an_issuer(sched):
    profile = profile_of(sched.state)
    profile.oidc_issuer = "https://nomad.example.com"
    try:
        body = sched.get("/.well-known/openid-configuration", token=None).json()
    finally:
        profile.oidc_issuer = ""
    assert body == {"issuer": "https://nomad.example.com", "jwks_uri": "https://nomad.example.com/.well-known/jwks.json",
                    "id_token_signing_alg_values_supported": ["RS256", "EdDSA"],
                    "response_types_supported": ["code"], "subject_types_supported": ["public"]}


# -- /v1/status/leader and /v1/status/peers: StatusLeaderRequest/Status.Leader, Status.Peers ---------------
def test_status_leader_and_peers(sched):
    r = sched.get("/v1/status/leader", token=None)  # Status.Leader throws auth errors away
    assert (r.status_code, r.text, r.headers["Content-Type"]) == (200, '"127.0.0.1:4647"', "application/json")
    assert "X-Nomad-Index" not in r.headers
    r = sched.get("/v1/status/peers", token="bogus")
    assert (r.status_code, r.json()) == (200, ["127.0.0.1:4647"])
    assert_plain(sched.delete("/v1/status/leader"), 405, "Invalid method")
    assert_plain(sched.put("/v1/status/peers"), 405, "Invalid method")
    assert_plain(sched.get("/v1/status/leader?index=x"), 400, "Invalid index")


def test_status_without_a_leader(sched):
    # rpcHandler.forward: no leader -> ErrNoLeader; ?stale is served locally: raft knows no leader
    # (""), its configuration still lists the server.
    sched.state.set_leader(False)
    assert_plain(sched.get("/v1/status/leader"), 500, "No cluster leader")
    assert_plain(sched.get("/v1/status/peers"), 500, "No cluster leader")
    assert sched.get("/v1/status/leader?stale").text == '""'
    assert sched.get("/v1/status/peers?stale=true").json() == ["127.0.0.1:4647"]
    sched.state.set_leader(True)
    assert sched.get("/v1/status/leader").json() == "127.0.0.1:4647"


# -- /v1/agent/self: AgentSelfRequest ----------------------------------------------------------------------
def test_agent_self_with_management_token(sched):
    r = sched.get("/v1/agent/self")
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"config", "member", "stats"}
    config = body["config"]
    assert (config["Region"], config["Datacenter"], config["ACL"]["Enabled"]) == ("global", "dc1", True)
    assert config["ACL"]["ReplicationToken"] == "" and config["Version"]["Version"] == "2.0.6"
    assert set(body["member"]) == {"Name", "Addr", "Port", "Tags", "Status", "ProtocolMin", "ProtocolMax",
                                   "ProtocolCur", "DelegateMin", "DelegateMax", "DelegateCur"}
    assert body["member"]["Name"] == "schedpki.global" and body["member"]["Status"] == "alive"
    assert all(isinstance(v, str) for section in body["stats"].values() for v in section.values())


@pytest.mark.parametrize(("rules", "allowed"), [
    ('agent { policy = "read" }', True), ('agent { policy = "write" }', True),
    ('agent { policy = "deny" }', False), ('node { policy = "write" }', False), (None, False)])
def test_agent_self_needs_agent_read(sched, rules, allowed):
    r = sched.get("/v1/agent/self", token=client_token(sched, rules))
    if allowed:
        assert r.status_code == 200
    else:
        assert_plain(r, 403, "Permission denied")


def test_agent_self_refusals(sched):
    assert_plain(sched.get("/v1/agent/self", token=None), 403, "Permission denied")  # anonymous: no policy
    assert_plain(sched.get("/v1/agent/self", token="4c0f4b3e-0000-4000-8000-000000000000"), 403, "Permission denied")
    assert_plain(sched.put("/v1/agent/self"), 405, "Invalid method")
    sched.state.set_leader(False)  # the agent answers itself
    assert sched.get("/v1/agent/self").json()["stats"]["nomad"]["leader"] == "false"


def test_agent_self_with_an_expired_token_is_a_500(sched):
    # HTTPServer.ResolveToken wraps ErrTokenExpired; its text ends in neither "Permission denied"
    # nor "ACL token not found", so wrap answers 500 with the whole text.
    past = sched.state.clock.now() - datetime.timedelta(minutes=1)
    secret = sched.state.add_token(type="management", expiration_time=past).SecretID
    assert_plain(sched.get("/v1/agent/self", token=secret), 500,
                 "ACL token not found or invalid workload identity: ACL token expired")
    assert_plain(sched.put(INTRO, json={}, token=secret), 403, "Permission denied")  # the RPC: authErr -> 403


def test_agent_self_with_acls_disabled(sched):
    sched.state.set_acl_enabled(False)
    r = sched.get("/v1/agent/self", token=None)
    assert r.status_code == 200 and r.json()["config"]["ACL"]["Enabled"] is False


# -- /v1/metrics: MetricsRequest ---------------------------------------------------------------------------
def test_metrics_json_summary(sched):
    r = sched.get("/v1/metrics", token=None)  # no ACL check upstream
    assert r.status_code == 200
    body = r.json()
    assert list(body) == ["Timestamp", "Gauges", "PrecisionGauges", "Points", "Counters", "Samples"]
    stamp = datetime.datetime.strptime(body["Timestamp"], "%Y-%m-%d %H:%M:%S +0000 UTC")
    assert stamp.second % 10 == 0  # an interval start, time.Time.String() in UTC
    assert all(set(g) == {"Name", "Value", "Labels"} for g in body["Gauges"])
    assert_plain(sched.post("/v1/metrics"), 405, "Invalid method")


def test_metrics_prometheus(sched):
    r = sched.get("/v1/metrics?format=prometheus")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert "# TYPE nomad_runtime_num_goroutines gauge" in r.text
    profile = profile_of(sched.state)
    profile.prometheus_metrics = False
    try:
        assert_plain(sched.get("/v1/metrics?format=prometheus"), 415, "Prometheus is not enabled")
    finally:
        profile.prometheus_metrics = True


# -- client-introduction-token: ACLCreateClientIntroductionTokenRequest -> ACL.CreateClientIntroductionToken
def _verify(sched, token: str) -> tuple[dict, dict]:
    (key,) = sched.get("/.well-known/jwks.json").json()["keys"]
    claims = jwt.decode(token, _public_key(key), algorithms=["RS256"], audience="nomadproject.io",
                        options={"verify_exp": False, "verify_nbf": False, "verify_iat": False})
    return jwt.get_unverified_header(token), claims


def test_intro_token_defaults(sched):
    r = sched.put(INTRO, json={})
    assert r.status_code == 200 and list(r.json()) == ["JWT"] and "X-Nomad-Index" not in r.headers
    header, claims = _verify(sched, r.json()["JWT"])
    assert (header["alg"], header["typ"], header["kid"]) == ("RS256", "JWT", profile_of(sched.state).key.key_id)
    assert claims["sub"] == "node-introduction:global:default::default"
    assert (claims["nomad_node_pool"], claims["nomad_node_name"], claims["aud"]) == ("default", "", "nomadproject.io")
    assert claims["exp"] - claims["iat"] == 300 and claims["nbf"] == claims["iat"]  # default_identity_ttl 5m
    assert len(claims["jti"]) == 36


@pytest.mark.parametrize(("ttl", "seconds"), [
    ("10m", 600), (120 * 10**9, 120), (120000000000.9, 120), ("2h", 1800), (0, 300), ("", 300), (None, 300)])
def test_intro_token_ttl_rules(sched, ttl, seconds):
    # IdentityTTL: 0 -> server default; above max_identity_ttl (30m) -> the maximum, no error.
    r = sched.post(INTRO, json={"TTL": ttl, "NodeName": "n1", "NodePool": "gpu"})
    _, claims = _verify(sched, r.json()["JWT"])
    assert claims["exp"] - claims["iat"] == seconds
    assert claims["sub"] == "node-introduction:global:gpu:n1:default"


def test_intro_token_negative_ttl_has_no_expiry(sched):
    _, claims = _verify(sched, sched.put(INTRO, json={"TTL": "-1m"}).json()["JWT"])  # setExpiry: only ttl > 0
    assert "exp" not in claims


@pytest.mark.parametrize(("body", "text"), [
    (b"", "Request body is empty"),
    (b"{", "unexpected EOF"),
    (b'{"TTL": "abc"}', 'time: invalid duration "abc"'),
    (b'{"TTL": true}', "unexpected TTL type: true"),
    (b'{"TTL": {"a": 1}}', "unexpected TTL type: map[a:1]"),
    (b'{"NodeName": 5}', "json: cannot unmarshal number into Go struct field .NodeName of type string"),
    (b"[1]", "json: cannot unmarshal array into Go value of type struct { TTL interface {}; *structs.Alias }"),
    (b'{"TTL": 1e400}', "json: cannot unmarshal number 1e400 into Go struct field .TTL of type float64")])
def test_intro_token_body_errors(sched, body, text):
    assert_plain(sched.put(INTRO, data=body), 400, text)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=40), st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.sampled_from(["TTL", "ttl", "NodeName", "NodePool", "Region", "AuthToken", "x"]), inner, max_size=4)),
    max_leaves=8).map(lambda v: json.dumps(v).encode())))
def test_any_intro_body_is_decoded_or_refused_with_a_text(body):
    """decode_request never raises anything but the ValueError holding the 400 text."""
    try:
        args = decode_request(body)
    except ValueError as exc:
        assert str(exc) and "Traceback" not in str(exc)
    else:
        assert isinstance(args["TTL"], int) and isinstance(args["NodeName"], str)


def test_intro_token_needs_node_write(sched):
    # Unlike the other ACL RPCs: node write, not management.
    assert sched.put(INTRO, json={}, token=client_token(sched, 'node { policy = "write" }')).status_code == 200
    for rules in ('node { policy = "read" }', 'agent { policy = "write" }', None):
        assert_plain(sched.put(INTRO, json={}, token=client_token(sched, rules)), 403, "Permission denied")
    assert_plain(sched.put(INTRO, json={}, token=None), 403, "Permission denied")
    assert_plain(sched.put(INTRO, json={}, token="bogus"), 403, "Permission denied")
    assert_plain(sched.get(INTRO), 405, "Invalid method")


def test_intro_token_body_auth_token_and_region_override(sched):
    # The embedded WriteRequest is decoded after parseWriteRequest: the body's AuthToken wins.
    assert_plain(sched.put(INTRO, json={"AuthToken": ""}), 403, "Permission denied")
    assert_plain(sched.put(INTRO, json={"Region": "mars"}), 500, "No path to region")
    assert_plain(sched.put(INTRO + "?region=mars", json={}), 500, "No path to region")


def test_intro_token_needs_a_leader(sched):
    sched.state.set_leader(False)
    assert_plain(sched.put(INTRO, json={}, token="bogus"), 500, "No cluster leader")  # forward before auth
