"""One plain test per defect a hostile pass found in the scheduler's SSO login (Nomad's
``ACL.Login`` / ``OIDCAuthURL`` / ``OIDCCompleteAuth`` over hashicorp/cap v0.13.0, go-jose v3.0.5,
go-bexpr v0.1.16 and Go's ``net/url``), and in the double's built-in identity provider."""

from __future__ import annotations

import json

import jwt
import pytest
import requests

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


def test_a_catastrophic_regex_is_linear_and_the_login_answers(selector_login):
    # ^(a+)+$ backtracks 2**n steps in a backtracking engine (29 characters held the lock ~6.5 s,
    # 41 would take hours); RE2 answers at once. _login's timeout bounds a hang: nothing is timed.
    assert _plain(selector_login('value.sub matches "^(a+)+$"', "a" * 40 + "!")) == NO_BINDING


def test_selectors_are_evaluated_outside_the_scheduler_lock(sso, selector_login, monkeypatch):
    from pytest_schedpki.scheduler.sso import bexpr

    real, held = bexpr.matches, []

    def spy(selector, datum):
        held.append(sso.scheduler._lock._is_owned())
        return real(selector, datum)

    monkeypatch.setattr(bexpr, "matches", spy)
    assert selector_login('value.sub matches "^al"', "alice").status_code == 200
    assert held == [False]
