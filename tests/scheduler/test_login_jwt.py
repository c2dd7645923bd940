"""``POST /v1/acl/login`` with JWT auth methods: Nomad's ``ACL.Login`` (nomad/acl_endpoint.go),
``lib/auth/jwt`` Validate over hashicorp/cap ``jwt.Validator.Validate``, ``lib/auth/claims.go``,
``lib/auth/binder.go`` ``Binder.Bind`` and ``ACL.upsertTokens``; reference nomad-acl-sso.md §5-§9."""

import datetime
import time

import pytest
from freezegun import freeze_time
from sched_helpers import assert_plain
from sso_helpers import KeyServer, ec_key, go_time, jwk_of, jwt_method, mint, now_claims, public_pem, rsa_key

from pytest_schedpki.wire.tls import create_tls_material

SIG = "unable to validate provided token: unable to verify signature of JWT token: "


@pytest.fixture(scope="module")
def key():
    return rsa_key()


@pytest.fixture
def s(sched, key):
    sched.create(jwt_method(config={"JWTValidationPubKeys": [public_pem(key)]}))
    for name in ("eng", "ops", "readonly"):
        assert sched.put(f"/v1/acl/policy/{name}", json={"Name": name, "Rules": ""}).status_code == 200
    return sched


def rule(s, **body):
    r = s.put("/v1/acl/binding-rule", json={"AuthMethod": "ci", "BindType": "policy", **body})
    assert r.status_code == 200, r.text
    return r.json()


def login(s, token, method="ci"):
    return s.post("/v1/acl/login", json={"AuthMethodName": method, "LoginToken": token}, token=None)


def test_login_binds_templated_policies_and_returns_the_token(s, key):
    rule(s, Selector='"admins" in list.groups', BindName="${value.team}")
    r = login(s, mint(key, now_claims(team="ENG", groups=["admins"])))
    assert r.status_code == 200, r.text
    assert r.headers["X-Nomad-Index"] == "0"  # ACL.Login never fills the reply index
    t = r.json()
    assert list(t) == ["ExpirationTTL", "AccessorID", "SecretID", "Name", "Type", "Policies", "Roles", "Global",
                       "Hash", "CreateTime", "ExpirationTime", "CreateIndex", "ModifyIndex"]
    assert (t["Name"], t["Type"], t["Policies"], t["Roles"], t["Global"], t["ExpirationTTL"]) == (
        "JWT-ci", "client", ["eng"], [], False, "1h0m0s")
    assert go_time(t["ExpirationTime"]) - go_time(t["CreateTime"]) == datetime.timedelta(hours=1)
    me = s.get("/v1/acl/token/self", token=t["SecretID"])
    assert me.status_code == 200 and me.json()["AccessorID"] == t["AccessorID"]
    assert s.get("/v1/acl/policy/eng", token=t["SecretID"]).status_code == 200
    assert_plain(s.get("/v1/acl/binding-rules", token=t["SecretID"]), 403, "Permission denied")


def test_roles_are_linked_by_id_with_their_current_name(s, key):
    role = s.put("/v1/acl/role", json={"Name": "devs", "Policies": [{"Name": "ops"}]}).json()
    rule(s, BindType="role", BindName="devs")
    rule(s, BindType="role", BindName="missing-role")  # skipped silently
    t = login(s, mint(key, now_claims())).json()
    assert (t["Policies"], t["Roles"]) == ([], [{"ID": role["ID"], "Name": "devs"}])
    assert s.get("/v1/acl/policy/ops", token=t["SecretID"]).status_code == 200


def test_management_binding_drops_everything_else(s, key, monkeypatch):
    rule(s, BindName="eng")
    rule(s, BindType="management", BindName="", Selector='value.team == "root"')
    t = login(s, mint(key, now_claims(team="root"))).json()
    assert (t["Type"], t["Policies"], t["Roles"]) == ("management", None, None)
    assert s.get("/v1/acl/binding-rules", token=t["SecretID"]).status_code == 200


def test_global_locality_and_token_name_format(sched, key):
    sched.create(jwt_method(TokenLocality="global", TokenNameFormat="sso-${value.user}",
                            config={"JWTValidationPubKeys": [public_pem(key)]}))
    sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
    rule(sched, BindName="eng")
    t = login(sched, mint(key, now_claims(user="Alice"))).json()
    assert (t["Name"], t["Global"]) == ("sso-Alice", True)  # names keep the claim's case
    assert_plain(login(sched, mint(key, now_claims())), 500,
                 "failed to generate ACL token name: 1:7: unknown variable accessed: value.user")


def test_no_binding_matched(s, key):
    rule(s, BindName="eng", Selector='value.team == "eng"')
    rule(s, BindName="no-such-policy")
    assert_plain(login(s, mint(key, now_claims(team="ops"))), 400, "no role or policy bindings matched")


def test_request_and_method_errors(s, key):
    r = s.post("/v1/acl/login", json={}, token=None)
    assert_plain(r, 400, "invalid login request: 2 errors occurred:\n\t* missing auth method name\n\t"
                         "* missing login token\n\n")
    assert_plain(login(s, "x", method="nope"), 400, 'auth-method "nope" not found')
    s.create({"Name": "okta", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
              "Config": {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "c"}})
    assert_plain(login(s, "x", method="okta"), 400, "unsupported auth-method type: OIDC")
    assert_plain(s.get("/v1/acl/login"), 405, "Invalid method")
    assert_plain(s.post("/v1/acl/login", token=None), 400, "Request body is empty")


def test_signature_and_algorithm_failures(s, key):
    assert_plain(login(s, mint(rsa_key(), now_claims())), 401,
                 SIG + "error verifying token signature: no known key successfully validated the token signature")
    assert_plain(login(s, "not-a-jwt"), 401,
                 SIG + "error verifying token signature: go-jose/go-jose: compact JWS format must have three parts")
    assert_plain(login(s, mint(key, now_claims(), alg="RS512")), 401,
                 SIG + "invalid algorithm (alg) header parameter: token signed with unexpected algorithm")


def test_audience_is_checked_before_time(s, key):
    claims = now_claims(aud=["other"], exp=int(time.time()) - 3600)
    assert_plain(login(s, mint(key, claims)), 401,
                 SIG + "invalid audience (aud) claim: audience claim does not match any expected audience")


def test_time_claims_with_default_leeways(s, key):
    rule(s, BindName="eng")
    t0 = datetime.datetime(2030, 1, 1, 12, tzinfo=datetime.timezone.utc)
    base = int(t0.timestamp())
    with freeze_time(t0):
        assert login(s, mint(key, {"aud": "nomad", "exp": base - 20})).status_code == 200  # 60 s skew
        assert_plain(login(s, mint(key, {"aud": "nomad", "exp": base - 300})), 401,
                     SIG + "invalid expiration time (exp) claim: token is expired")
        assert_plain(login(s, mint(key, {"aud": "nomad", "iat": base - 600})), 401,
                     SIG + "invalid expiration time (exp) claim: token is expired")  # exp = iat + 150 s
        assert_plain(login(s, mint(key, {"aud": "nomad", "nbf": base + 120, "exp": base + 900})), 401,
                     SIG + "invalid not before (nbf) claim: token not yet valid")
        assert_plain(login(s, mint(key, {"aud": "nomad", "iat": base + 120, "nbf": base, "exp": base + 900})),
                     401, SIG + "invalid issued at (iat) claim: token issued in the future")
        assert_plain(login(s, mint(key, {"aud": "nomad"})), 401,
                     SIG + "no issued at (iat), not before (nbf), or expiration time (exp) claims in token")


def test_expiration_leeway_extends_a_token_without_exp(sched, key):
    sched.create(jwt_method(config={"JWTValidationPubKeys": [public_pem(key)], "ExpirationLeeway": "1h"}))
    sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
    rule(sched, BindName="eng")
    assert login(sched, mint(key, {"aud": "nomad", "iat": int(time.time()) - 600})).status_code == 200


def test_login_tokens_expire_on_the_doubles_clock(s, key):
    rule(s, BindName="eng")
    t0 = datetime.datetime(2030, 1, 1, 12, tzinfo=datetime.timezone.utc)
    with freeze_time(t0) as frozen:
        secret = login(s, mint(key, {"aud": "nomad", "iat": int(t0.timestamp())})).json()["SecretID"]
        frozen.tick(datetime.timedelta(minutes=59))
        assert s.get("/v1/acl/token/self", token=secret).status_code == 200
        frozen.tick(datetime.timedelta(minutes=2))
        assert_plain(s.get("/v1/acl/policy/eng", token=secret), 403, "Permission denied")


def test_issuer_checks(sched, key):
    sched.create(jwt_method(config={"JWTValidationPubKeys": [public_pem(key)], "BoundIssuer": ["https://ci"]}))
    sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
    rule(sched, BindName="eng")
    assert login(sched, mint(key, now_claims(iss="https://ci"))).status_code == 200
    assert_plain(login(sched, mint(key, now_claims())), 401, "unable to validate provided token: auth method "
                 "specifies BoundIssuers but the provided token does not contain issuer information")
    assert_plain(login(sched, mint(key, now_claims(iss=None))), 401,
                 "unable to validate provided token: unable to read iss property of provided token")
    # cap decodes the registered claims into go-jose's jwt.Claims first: a number is no string
    assert_plain(login(sched, mint(key, now_claims(iss=3))), 401,
                 "unable to validate provided token: unable to verify signature of JWT token: json: cannot "
                 "unmarshal number into Go struct field Claims.iss of type string")
    assert_plain(login(sched, mint(key, now_claims(iss="https://evil"))), 401,
                 "unable to validate provided token: invalid JWT issuer: https://evil")


def test_signing_algs_and_ec_keys(sched):
    k = ec_key()
    sched.create(jwt_method(config={"JWTValidationPubKeys": [public_pem(k)], "SigningAlgs": ["ES256"]}))
    sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
    rule(sched, BindName="eng")
    assert login(sched, mint(k, now_claims(), alg="ES256")).status_code == 200


def test_a_static_key_that_does_not_parse(sched, key):
    sched.create(jwt_method(config={"JWTValidationPubKeys": ["not a pem", public_pem(key)]}))
    assert_plain(login(sched, mint(key, now_claims())), 401, "unable to validate provided token: unable to parse "
                 "public key for JWT auth: data does not contain any valid RSA or ECDSA public keys")


def test_jwks_url_and_oidc_discovery(sched, key):
    server = KeyServer({"keys": [jwk_of(key, "k1")]})
    try:
        sched.create(jwt_method("jwks", config={"JWKSURL": server.url + "/jwks"}))
        sched.create(jwt_method("disc", config={"OIDCDiscoveryURL": server.url}))
        sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
        for method in ("jwks", "disc"):
            rule(sched, AuthMethod=method, BindName="eng")
            assert login(sched, mint(key, now_claims(), headers={"kid": "k1"}), method).status_code == 200
        assert_plain(login(sched, mint(rsa_key(), now_claims(), headers={"kid": "k1"}), "jwks"), 401,
                     SIG + "error verifying token signature: failed to verify id token signature")
        server.issuer = "https://elsewhere"
        assert_plain(login(sched, mint(key, now_claims()), "disc"), 401,
                     "unable to validate provided token: unable to get validation keys from OIDC provider: issuer "
                     f'did not match the returned issuer, expected "{server.url}" got "https://elsewhere"')
    finally:
        server.stop()


def test_claim_conversion_and_bind_name_errors(s, key):
    rule(s, BindName="${value.team}")
    assert_plain(login(s, mint(key, now_claims(team={"a": 1}))), 500,
                 "error converting claim 'team' to string from unknown type map[string]interface {}")
    assert_plain(login(s, mint(key, now_claims(team="Has Space"))), 500,
                 'computed "policy" bind name for bind target is invalid: "has space"')
    assert_plain(login(s, mint(key, now_claims(groups={"x": 1}))), 500,
                 '"groups" list claim could not be converted to string list')


def test_unknown_bind_variable(s, key):
    rule(s, BindName="${value.nope}")
    assert_plain(login(s, mint(key, now_claims())), 500,
                 'cannot compute "policy" bind name for bind target: 1:3: unknown variable accessed: value.nope')


def test_numbers_truncate_and_lists_select(s, key):
    s.create(jwt_method("num", config={"JWTValidationPubKeys": [s.state.get_auth_method("ci").Config
                                                                 .JWTValidationPubKeys[0]],
                                       "ClaimMappings": {"level": "level", "/org/unit": "unit"}}))
    rule(s, AuthMethod="num", BindName="eng", Selector='value.level == "3" and value.unit == "platform"')
    t = login(s, mint(key, now_claims(level=3.9, org={"unit": "platform"})), "num")
    assert t.status_code == 200 and t.json()["Policies"] == ["eng"]


def test_jwks_and_discovery_over_tls_trust_the_configured_ca(sched, key, tmp_path):
    """cap's createCAContext: ``JWKSCACert`` / ``DiscoveryCaPem[0]`` are the TLS roots for the fetches."""
    tls = create_tls_material(directory=str(tmp_path))
    ca = open(tls.ca_path).read()
    server = KeyServer({"keys": [jwk_of(key, "k1")]}, tls=tls)
    try:
        sched.put("/v1/acl/policy/eng", json={"Name": "eng"})
        sched.create(jwt_method("jwks", config={"JWKSURL": server.url + "/jwks", "JWKSCACert": ca}))
        sched.create(jwt_method("disc", config={"OIDCDiscoveryURL": server.url, "DiscoveryCaPem": [ca]}))
        sched.create(jwt_method("untrusted", config={"JWKSURL": server.url + "/jwks"}))
        for method in ("jwks", "disc", "untrusted"):
            rule(sched, AuthMethod=method, BindName="eng")
        token = mint(key, now_claims(), headers={"kid": "k1"})
        assert login(sched, token, "jwks").status_code == 200
        assert login(sched, token, "disc").status_code == 200
        refused = login(sched, token, "untrusted")  # the system roots do not know the test CA
        assert refused.status_code == 401
        assert refused.text.startswith(SIG + "error verifying token signature: fetching keys oidc: get keys failed: ")
        sched.create(jwt_method("badca", config={"JWKSURL": server.url + "/jwks", "JWKSCACert": "not a pem"}))
        assert_plain(login(sched, token, "badca"), 401, "unable to validate provided token: unable to get validation "
                     "keys from JWKS: could not parse CA PEM value successfully")
    finally:
        server.stop()


def test_hostile_inputs_get_answers_not_tracebacks(sched, key):
    """A key of another type than the token's alg, a JWKS that is not an object, a selector nested
    past any parser's patience: Nomad answers 401/400; the double must too (no 500 traceback)."""
    ec = ec_key()
    sched.create(jwt_method("ec", config={"JWTValidationPubKeys": [public_pem(ec)]}))
    assert_plain(login(sched, mint(key, now_claims()), "ec"), 401,
                 SIG + "error verifying token signature: no known key successfully validated the token signature")
    server = KeyServer([1])
    try:
        sched.create(jwt_method("weird", config={"JWKSURL": server.url + "/jwks"}))
        r = login(sched, mint(key, now_claims()), "weird")
        assert r.status_code == 401 and "fetching keys oidc: failed to decode keys" in r.text
    finally:
        server.stop()
    deep = "(" * 3000 + 'value.team == "x"' + ")" * 3000
    r = sched.put("/v1/acl/binding-rule", json={"AuthMethod": "ec", "BindType": "management", "Selector": deep})
    assert r.status_code == 400 and r.text.startswith("binding rule 0 invalid: 1 error occurred:\n\t* selector is invalid: ")
