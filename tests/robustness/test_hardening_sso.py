"""One plain test per defect a hostile pass found in the scheduler's SSO login (Nomad's
``ACL.Login`` / ``OIDCAuthURL`` / ``OIDCCompleteAuth`` over hashicorp/cap v0.13.0, go-jose v3.0.5,
go-bexpr v0.1.16 and Go's ``net/url``), and in the double's built-in identity provider."""

from __future__ import annotations

import json
import time

import jwt
import pytest
import requests
from served_process import ServedProcess

from pytest_schedpki.factories import Factories
from pytest_schedpki.scheduler.sso.idp import KID

N = {"X-Nomad-Token": "root"}
SIG = "unable to validate provided token: unable to verify signature of JWT token: "
NUMERIC_DATE = SIG + "go-jose/go-jose/jwt: expected number value to unmarshal NumericDate"
AUDIENCE = SIG + "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience"


@pytest.fixture
def sso(double):
    """Two JWT methods trusting the built-in IdP key: ``static`` (JWTValidationPubKeys) and ``jwks``
    (its JWKS URL); a rule binding policy ``eng`` on each."""
    double.reset()
    f = Factories(double.scheduler, double.secrets, double.scheduler_url).scheduler
    f.jwt_auth_method("static", builtin_idp=True)
    f.jwt_auth_method("jwks", Config={"JWKSURL": double.scheduler_url + "/idp/jwks"})
    f.policy("eng")
    for method in ("static", "jwks"):
        f.binding_rule(method, "policy", "eng")
    return double


def _now(double) -> int:
    return int(double.scheduler.clock.now().timestamp())


def _login(double, method: str, payload: bytes | dict) -> requests.Response:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    token = jwt.PyJWS().encode(body, double.scheduler.idp.key, algorithm="RS256", headers={"kid": KID})
    return requests.post(double.scheduler_url + "/v1/acl/login", json={"AuthMethodName": method, "LoginToken": token},
                         timeout=60)


def _plain(r: requests.Response) -> tuple[int, str]:
    assert r.headers["Content-Type"].startswith("text/plain") or r.status_code == 200, r.headers
    return r.status_code, r.text


# -- JWT time claims (items 8 and 9) --------------------------------------------------------------

@pytest.mark.parametrize("claim", ["exp", "iat"])
@pytest.mark.parametrize("literal, go_error", [
    ("1e999", "json: cannot unmarshal number 1e999 into Go value of type float64"),
    ("-1e999", "json: cannot unmarshal number -1e999 into Go value of type float64"),
    ("NaN", "invalid character 'N' looking for beginning of value"),
    ("Infinity", "invalid character 'I' looking for beginning of value"),
    ("-Infinity", "invalid character 'I' in numeric literal"),
])
def test_a_time_claim_go_cannot_decode_is_401_not_a_500(sso, claim, literal, go_error):
    # Go's JSON decoding refuses the payload while the key set verifies it: go-jose's Claims fails
    # for every static key; a JWKS key set (go-oidc + cap) returns encoding/json's error.
    other = "iat" if claim == "exp" else "exp"
    payload = f'{{"aud":"nomad","sub":"alice","{other}":{_now(sso) + 60},"{claim}":{literal}}}'.encode()
    assert _plain(_login(sso, "static", payload)) == (401, SIG + "error verifying token signature: no known key "
                                                      "successfully validated the token signature")
    assert _plain(_login(sso, "jwks", payload)) == (401, SIG + "error verifying token signature: " + go_error)


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
@pytest.mark.parametrize("value", ["yesterday", "1700000000", True, False, {"at": 1}, [1]])
def test_a_time_claim_that_is_not_a_number_is_refused_as_go_jose_refuses_it(sso, claim, value):
    now = _now(sso)
    claims = {"aud": "nomad", "sub": "alice", "iat": now, "nbf": now, "exp": now + 300, claim: value}
    for method in ("static", "jwks"):
        assert _plain(_login(sso, method, claims)) == (401, NUMERIC_DATE)


def test_an_expired_exp_written_as_a_string_does_not_log_in(sso):
    now = _now(sso)
    claims = {"aud": "nomad", "sub": "alice", "iat": now, "exp": str(now - 86400)}
    assert _plain(_login(sso, "static", claims)) == (401, NUMERIC_DATE)


def test_time_claims_decode_as_go_jose_numeric_dates(sso):
    now = _now(sso)
    ok = {"aud": "nomad", "sub": "alice"}
    # null is an absent date; 0 (and 0.9, truncated) count as absent too
    assert _login(sso, "static", {**ok, "iat": now, "exp": None, "nbf": None}).status_code == 200
    assert _plain(_login(sso, "static", {**ok, "iat": 0.9, "exp": 0})) == (
        401, SIG + "no issued at (iat), not before (nbf), or expiration time (exp) claims in token")
    # encoding/json matches field names case-insensitively: "EXP" is the expiry
    assert _plain(_login(sso, "static", {**ok, "iat": now, "EXP": now - 86400})) == (
        401, SIG + "invalid expiration time (exp) claim: token is expired")
    # int64(1e300) is MinInt64 on amd64: an expiry far in the past
    assert _plain(_login(sso, "static", {**ok, "iat": now, "exp": 1e300})) == (
        401, SIG + "invalid expiration time (exp) claim: token is expired")


@pytest.mark.parametrize("aud", [None, 3, [1], {"a": "nomad"}, ["nomad", None]])
def test_an_audience_that_is_not_strings_is_refused_as_go_jose_refuses_it(sso, aud):
    now = _now(sso)
    assert _plain(_login(sso, "static", {"aud": aud, "sub": "alice", "iat": now})) == (401, AUDIENCE)


# -- binding-rule selectors with `matches` (item 4) ------------------------------------------------

@pytest.fixture
def selector_login(sso):
    """Login on ``static`` with claim ``sub`` mapped to ``value.sub``, the only rule being ``selector``."""
    f = Factories(sso.scheduler, sso.secrets, sso.scheduler_url).scheduler
    f.jwt_auth_method("sel", builtin_idp=True, Config={"ClaimMappings": {"sub": "sub"}})

    def run(selector: str, sub: str) -> requests.Response:
        f.binding_rule("sel", "policy", "eng", selector=selector)
        try:
            return _login(sso, "sel", {"aud": "nomad", "sub": sub, "iat": _now(sso)})
        finally:
            for rule_id in list(sso.scheduler.binding_rules.rules):
                if sso.scheduler.binding_rules.rules[rule_id].AuthMethod == "sel":
                    sso.scheduler.binding_rules.delete(rule_id)
    return run


NO_BINDING = (400, "no role or policy bindings matched")


@pytest.mark.parametrize("pattern, sub", [
    (r"^(a)\\1$", "aa"),            # a backreference: Go's regexp refuses it
    (r"^a(?=a)", "aa"),             # lookahead
    (r"(?<=a)a$", "aa"),            # lookbehind
    (r"^a\\Z", "a"),                # \Z: Go has only \z
    (r"^(?P<x>a)(?P=x)$", "aa"),    # a named backreference
])
def test_a_regex_go_refuses_makes_the_rule_not_match(selector_login, pattern, sub):
    # go-bexpr compiles `matches` with Go's regexp at login; a compile error is an evaluation
    # error, and Nomad's binder takes that as "no match" (the rule itself was accepted: parse only)
    assert _plain(selector_login(f'value.sub matches "{pattern}"', sub)) == NO_BINDING


@pytest.mark.parametrize("pattern, sub", [(r"^a+$", "aaa"), (r"(?i)^A\\pL$", "ab"), (r"^(?<n>a)b$", "ab"),
                                          (r"(?U)a+", "a"), (r"^\\x{61}\\z", "a")])
def test_go_regex_syntax_still_matches(selector_login, pattern, sub):
    assert selector_login(f'value.sub matches "{pattern}"', sub).status_code == 200


def test_a_catastrophic_regex_is_linear_and_the_login_answers():
    # ^(a+)+$ backtracks 2**n steps in a backtracking engine, holding the GIL and the state lock
    # (29 characters took ~6.5 s; 41 take hours). RE2 answers at once. The server runs in a child
    # process so that a hang is a client timeout here: the timeout bounds a hang, nothing is timed.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    served = ServedProcess()
    try:
        url = f"http://127.0.0.1:{served.ports['scheduler']}"
        for path, body in (("/v1/acl/auth-method", {"Name": "sel", "Type": "JWT", "TokenLocality": "local",
                                                    "MaxTokenTTL": "1h", "Config": {"JWTValidationPubKeys": [pem],
                                                    "ClaimMappings": {"sub": "sub"}}}),
                           ("/v1/acl/policy/eng", {"Name": "eng"}),
                           ("/v1/acl/binding-rule", {"AuthMethod": "sel", "BindType": "policy", "BindName": "eng",
                                                     "Selector": 'value.sub matches "^(a+)+$"'})):
            assert requests.put(url + path, json=body, headers=N, timeout=30).status_code == 200
        token = jwt.encode({"sub": "a" * 40 + "!", "iat": int(time.time())}, key, algorithm="RS256")
        r = requests.post(url + "/v1/acl/login", json={"AuthMethodName": "sel", "LoginToken": token}, timeout=30)
        assert _plain(r) == NO_BINDING
    finally:
        served.stop(timeout=5)


def test_selectors_are_evaluated_outside_the_scheduler_lock(sso, selector_login, monkeypatch):
    from pytest_schedpki.scheduler.sso import bexpr

    real, held = bexpr.matches, []

    def spy(selector, datum):
        held.append(sso.scheduler._lock._is_owned())
        return real(selector, datum)

    monkeypatch.setattr(bexpr, "matches", spy)
    assert selector_login('value.sub matches "^al"', "alice").status_code == 200
    assert held == [False]


# -- OIDC redirect URIs (item 3) ------------------------------------------------------------------

CALLBACK = "http://localhost:4649/oidc/callback"
AUTH_URL = "failed to generate auth URL: Provider.AuthURL: Provider.validRedirect: "


def _auth_url(double, redirect: str, method: str = "okta") -> requests.Response:
    return requests.post(double.scheduler_url + "/v1/acl/oidc/auth-url", timeout=60,
                         json={"AuthMethodName": method, "RedirectURI": redirect, "ClientNonce": "n-" + redirect})


@pytest.fixture
def okta(sso):
    Factories(sso.scheduler, sso.secrets, sso.scheduler_url).scheduler.oidc_auth_method("okta", builtin_idp=True)
    return sso


@pytest.mark.parametrize("redirect", [
    "http://user:pw@localhost:4649/oidc/callback",   # userinfo stays in the port-less comparison
    "http://alice@localhost:4649/oidc/callback",
    "http://LOCALHOST:4649/oidc/callback",           # Hostname() keeps the case: not a loopback name
    "http://localhost.:4649/oidc/callback",
    "http://localhost:4649/oidc/callback/",
])
def test_a_redirect_cap_does_not_allow_is_refused(okta, redirect):
    assert _plain(_auth_url(okta, redirect)) == (500, f"{AUTH_URL}redirect URI {redirect}: unauthorized redirect_uri")


@pytest.mark.parametrize("redirect, reason", [
    ("http://evil.example\\@localhost:4649/oidc/callback", "net/url: invalid userinfo"),
    ("http://a b@localhost:4649/oidc/callback", "net/url: invalid userinfo"),
    ("http://local%68ost:4649/oidc/callback", 'invalid URL escape "%68"'),
    ("http://localhost:46a9/oidc/callback", 'invalid port ":46a9" after host'),
])
def test_a_redirect_go_cannot_parse_is_an_invalid_uri(okta, redirect, reason):
    quoted = json.dumps(redirect)
    assert _plain(_auth_url(okta, redirect)) == (
        500, f"{AUTH_URL}redirect URI {redirect} is an invalid URI parse {quoted}: {reason}: invalid parameter")


@pytest.mark.parametrize("redirect", [CALLBACK, "http://localhost:1/oidc/callback", "http://localhost/oidc/callback"])
def test_a_loopback_redirect_on_any_port_is_still_allowed(okta, redirect):
    assert _auth_url(okta, redirect).status_code == 200


def test_an_allowed_redirect_go_cannot_parse_fails_the_check(okta):
    f = Factories(okta.scheduler, okta.secrets, okta.scheduler_url).scheduler
    f.oidc_auth_method("bad", builtin_idp=True, Config={"AllowedRedirectURIs": ["http://a\\@b/cb", CALLBACK]})
    assert _plain(_auth_url(okta, "http://localhost:1/oidc/callback", "bad")) == (
        500, f'{AUTH_URL}allowed redirect URI <nil> is an invalid URI parse "http://a\\\\@b/cb": net/url: invalid '
             "userinfo: invalid parameter")


# -- the built-in identity provider's codes (item 5) ----------------------------------------------

@pytest.fixture
def idp(double):
    """The double on a manual clock (back to following real time afterwards); ``authorize(**params)``
    runs ``GET /idp/authorize`` on one keep-alive session."""
    double.reset()
    clock = double.clock.use("manual")
    session = requests.Session()

    def authorize(**params) -> requests.Response:
        query = {"client_id": "nomad", "redirect_uri": CALLBACK, "state": "st", "nonce": "n", **params}
        return session.get(double.scheduler_url + "/idp/authorize", params=query, allow_redirects=False, timeout=60)

    yield double, clock, authorize, session
    session.close()
    double.clock.use("follow")


def _code(reply: requests.Response) -> str:
    assert reply.status_code == 302, reply.text
    return reply.headers["Location"].split("code=")[1].split("&")[0]


def test_authorization_codes_are_capped_and_expire_after_60_seconds(idp):
    double, clock, authorize, _ = idp
    idp_state = double.scheduler.idp
    for _ in range(1000):
        _code(authorize())
    assert len(idp_state.codes) == 1000
    r = authorize()
    assert (r.status_code, r.json()["error"]) == (503, "temporarily_unavailable")
    assert len(idp_state.codes) == 1000
    clock.advance(61)
    _code(authorize())
    assert len(idp_state.codes) == 1  # the expired ones are gone


def test_an_authorization_code_older_than_60_seconds_is_an_invalid_grant(idp):
    double, clock, authorize, session = idp
    code = _code(authorize())
    clock.advance(61)
    r = session.post(double.scheduler_url + "/idp/token", timeout=60,
                     data={"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK})
    assert (r.status_code, r.json()) == (400, {"error": "invalid_grant"})


def test_access_tokens_expire_with_their_expires_in(idp):
    double, clock, authorize, session = idp
    r = session.post(double.scheduler_url + "/idp/token", timeout=60,
                     data={"grant_type": "authorization_code", "code": _code(authorize()), "redirect_uri": CALLBACK})
    access, expires_in = r.json()["access_token"], r.json()["expires_in"]
    userinfo = double.scheduler_url + "/idp/userinfo"
    assert session.get(userinfo, headers={"Authorization": "Bearer " + access}, timeout=60).status_code == 200
    clock.advance(expires_in + 1)
    r = session.get(userinfo, headers={"Authorization": "Bearer " + access}, timeout=60)
    assert (r.status_code, r.json()) == (401, {"error": "invalid_token"})
    assert double.scheduler.idp.access_tokens == {}


@pytest.mark.parametrize("name", ["redirect_uri", "state", "nonce", "client_id", "code_challenge", "scope"])
def test_an_authorize_parameter_over_4096_bytes_is_a_400(idp, name):
    double, _, authorize, _ = idp
    value = CALLBACK + "?x=" + "a" * 4096 if name == "redirect_uri" else "é" * 2049
    r = authorize(**{name: value})
    assert (r.status_code, r.json()) == (400, {"error": "invalid_request", "error_description":
                                               f"parameter {name} is longer than 4096 bytes"})
    assert double.scheduler.idp.codes == {}
    if name != "redirect_uri":
        _code(authorize(**{name: "a" * 4096}))  # 4096 bytes pass


# -- the OIDC callback's id_token times (go-oidc's jsonTime) -------------------------------------

VERIFY = ("failed to exchange token with provider: Provider.Exchange: id_token failed verification: "
          "Provider.VerifyIDToken: ")


@pytest.fixture
def oidc_login(okta, monkeypatch):
    """``run(claims_json)``: a whole OIDC login whose ID token payload is ``claims_json`` (iss, aud,
    sub and nonce filled in), signed with the built-in IdP's key."""
    Factories(okta.scheduler, okta.secrets, okta.scheduler_url).scheduler.binding_rule("okta", "policy", "eng")
    idp = okta.scheduler.idp
    body = {}

    def id_token(issuer, client_id, claims, nonce=""):
        head = json.dumps({"iss": issuer, "aud": client_id, "sub": "alice", "nonce": nonce})[:-1]
        return jwt.PyJWS().encode((head + ", " + body["rest"] + "}").encode(), idp.key, algorithm="RS256",
                                  headers={"kid": KID})

    monkeypatch.setattr(idp, "id_token", id_token)

    def run(rest: str) -> requests.Response:
        body["rest"] = rest
        url = _auth_url(okta, CALLBACK).json()["AuthURL"]
        location = requests.get(url, allow_redirects=False, timeout=60).headers["Location"]
        query = dict(p.split("=", 1) for p in location.split("?", 1)[1].split("&"))
        return requests.post(okta.scheduler_url + "/v1/acl/oidc/complete-auth", timeout=60, json={
            "AuthMethodName": "okta", "ClientNonce": "n-" + CALLBACK, "State": query["state"], "Code": query["code"],
            "RedirectURI": CALLBACK})
    return run


@pytest.mark.parametrize("rest, error", [
    ('"exp": 1e999', 'strconv.ParseFloat: parsing "1e999": value out of range'),
    ('"exp": -1e999', 'strconv.ParseFloat: parsing "-1e999": value out of range'),
    ('"exp": NaN', "invalid character 'N' looking for beginning of value"),
    ('"exp": Infinity', "invalid character 'I' looking for beginning of value"),
    ('"exp": "yesterday"', 'json: invalid number literal, trying to unmarshal "\\"yesterday\\"" into Number'),
    ('"exp": true', "json: cannot unmarshal bool into Go value of type json.Number"),
    ('"exp": {"a": 1}', "json: cannot unmarshal object into Go value of type json.Number"),
    ('"exp": null', 'strconv.ParseFloat: parsing "": invalid syntax'),
    ('"exp": {later}, "nbf": 1e999', 'strconv.ParseFloat: parsing "1e999": value out of range'),
    ('"exp": {later}, "iat": [1]', "json: cannot unmarshal array into Go value of type json.Number"),
])
def test_an_id_token_time_go_oidc_cannot_decode_fails_the_exchange(okta, oidc_login, rest, error):
    later = _now(okta) + 300
    r = oidc_login(rest.replace("{later}", str(later)))
    assert _plain(r) == (500, f"{VERIFY}invalid id_token: oidc: failed to unmarshal claims: {error}")


def test_id_token_times_decode_as_go_oidc_json_times(okta, oidc_login):
    later = _now(okta) + 300
    assert oidc_login(f'"exp": "{later}", "iat": {later - 300}').status_code == 200  # a string holding a number
    assert oidc_login(f'"EXP": {later}').status_code == 200  # field names match case-insensitively
    assert oidc_login(f'"exp": {later}, "nbf": null').status_code == 200
    assert _plain(oidc_login(f'"exp": {later}, "other": 1e999')) == (
        500, f"{VERIFY}UnmarshalClaims: unable to marshal jwt JSON: json: cannot unmarshal number 1e999 into Go "
             "value of type float64")
