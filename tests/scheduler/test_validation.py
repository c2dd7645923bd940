"""Validation, canonicalization, sanitization, merge and hash rules (``nomad/structs/acl_test.go``) via HTTP."""

import pytest
from sched_helpers import assert_plain, mock_oidc

PREFIX = "auth method 0 invalid: "


def valid(**overrides):
    body = {"Name": "good-name", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "3600s",
            "Config": {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "mock", "BoundAudiences": ["a"]}}
    body.update(overrides)
    return body


def one_error(text):
    return f"{PREFIX}1 error occurred:\n\t* {text}\n\n"


def test_the_valid_method_is_accepted(sched):
    assert sched.put("/v1/acl/auth-method", json=valid()).status_code == 200


@pytest.mark.parametrize("overrides, text", [
    ({"Name": "is this name invalid?"}, "invalid name 'is this name invalid?'"),
    ({"Name": "bad_name"}, "invalid name 'bad_name'"),
    ({"Name": "a" * 129}, "invalid name '" + "a" * 129 + "'"),
    ({"Name": "a/b"}, "invalid name 'a/b'"),
    ({"TokenLocality": "regional"}, "invalid token locality 'regional'"),
    ({"Type": "groovy"}, "invalid token type 'groovy'"),
    ({"Type": "oidc"}, "invalid token type 'oidc'"),
    ({"MaxTokenTTL": "59s"}, "invalid MaxTokenTTL value '59s' (should be between 1m0s and 24h0m0s)"),
    ({"MaxTokenTTL": "25h"}, "invalid MaxTokenTTL value '25h0m0s' (should be between 1m0s and 24h0m0s)"),
    ({"MaxTokenTTL": "-1h"}, "invalid MaxTokenTTL value '-1h0m0s' (should be between 1m0s and 24h0m0s)"),
])
def test_single_validation_errors(sched, overrides, text):
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(**overrides)), 400, one_error(text))


@pytest.mark.parametrize("name", ["-leading-dash", "12345", "a" * 128, "MiXeD-123"])
def test_names_upstream_accepts(sched, name):
    assert sched.put("/v1/acl/auth-method", json=valid(Name=name)).status_code == 200


@pytest.mark.parametrize("ttl", ["1m", "24h", "60s", "86400000000000"])
def test_ttl_bounds_are_inclusive(sched, ttl):
    value = int(ttl) if ttl.isdigit() else ttl
    assert sched.put("/v1/acl/auth-method", json=valid(MaxTokenTTL=value)).status_code == 200


def test_ttl_above_a_raised_max_is_rejected(make_sched):
    s = make_sched(token_max_ttl="10h")
    r = s.put("/v1/acl/auth-method", json=valid(MaxTokenTTL="3600h"))
    assert_plain(r, 400, one_error("invalid MaxTokenTTL value '3600h0m0s' (should be between 1m0s and 10h0m0s)"))


def test_example_a_nothing_but_a_name(sched):
    assert_plain(sched.put("/v1/acl/auth-method", json={"Name": "foo"}), 400,
                 "auth method 0 invalid: 4 errors occurred:\n\t* invalid token locality ''\n\t* invalid token type ''"
                 "\n\t* invalid config: missing auth method Config\n\t* invalid MaxTokenTTL value '0s' "
                 "(should be between 1m0s and 24h0m0s)\n\n")


def test_example_c_empty_oidc_config_nests_a_multierror(sched):
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(Config={})), 400,
                 "auth method 0 invalid: 1 error occurred:\n\t* invalid config: 2 errors occurred:\n"
                 "\t* missing OIDCDiscoveryURL\n\t* missing OIDCClientID\n\n\n\n")


def test_example_d_jwt_without_key_source(sched):
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(Type="JWT", Config={})), 400, one_error(
        "invalid config: JWT auth method requires either OIDCDiscoveryURL, or JWKS URL, or JWTValidationPubKeys set"))


def test_empty_name_and_all_errors_in_order(sched):
    body = {"Name": "", "Type": "x", "TokenLocality": "y", "MaxTokenTTL": "1s"}
    assert_plain(sched.put("/v1/acl/auth-method", json=body), 400,
                 f"{PREFIX}5 errors occurred:\n\t* invalid name ''\n\t* invalid token locality 'y'\n"
                 "\t* invalid token type 'x'\n\t* invalid config: missing auth method Config\n"
                 "\t* invalid MaxTokenTTL value '1s' (should be between 1m0s and 24h0m0s)\n\n")


def test_jwt_with_only_jwks_url_is_valid(sched):
    assert sched.put("/v1/acl/auth-method", json=valid(Type="JWT", Config={"JWKSURL": "https://x/jwks"})).status_code == 200


def test_other_types_skip_config_checks_but_not_the_type_check(sched):
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(Type="LDAP", Config={})), 400,
                 one_error("invalid token type 'LDAP'"))


@pytest.mark.parametrize("assertion, text", [
    ({"KeySource": "nomad", "Audience": [""]}, "missing Audience"),
    ({"KeySource": "bogus"}, 'invalid KeySource "bogus"'),
    ({"KeySource": "private_key"}, "PrivateKey is required for `private_key` KeySource"),
    ({"KeySource": "private_key", "PrivateKey": {"PemKey": "k", "PemKeyFile": "/k", "KeyID": "x"}},
     "invalid PrivateKey: require only one of PemKey or PemKeyFile"),
    ({"KeySource": "private_key", "PrivateKey": {}}, "invalid PrivateKey: missing PemKey or PemKeyFile"),
    ({"KeySource": "private_key", "PrivateKey": {"PemKeyFile": "rel/key"}},
     "invalid PrivateKey: invalid PemKeyFile: must be absolute; got: rel/key"),
    ({"KeySource": "private_key", "PrivateKey": {"PemKey": "k"}},
     "invalid PrivateKey: missing PemCert, PemCertFile, or KeyID"),
    ({"KeySource": "private_key", "PrivateKey": {"PemKey": "k", "KeyID": "a", "PemCert": "c"}},
     "invalid PrivateKey: require only one of PemCert, PemCertFile, or KeyID"),
    ({"KeySource": "private_key", "PrivateKey": {"PemKey": "k", "PemCertFile": "cert.pem"}},
     "invalid PrivateKey: invalid PemCertFile: must be absolute; got: cert.pem"),
    ({"KeySource": "private_key", "PrivateKey": {"PemKey": "k", "KeyID": "a", "KeyIDHeader": "x5t"}},
     'invalid PrivateKey: invalid KeyIDHeader; key header for key ID must be "kid"'),
    ({"KeySource": "private_key", "PrivateKey": {"PemKey": "k", "PemCert": "c", "KeyIDHeader": "kid"}},
     'invalid PrivateKey: invalid KeyIDHeader; certificate-derived key header must be one of: "x5t#S256", "x5t"'),
    ({"KeySource": "client_secret"}, "OIDCClientSecret is required for `client_secret` KeySource"),
])
def test_client_assertion_validation(sched, assertion, text):
    config = {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "mock", "OIDCClientAssertion": assertion}
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(Config=config)), 400,
                 one_error(f"invalid config: invalid client assertion config: {text}"))


def test_client_assertion_with_audience_and_nomad_key_source_is_valid(sched):
    config = {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "mock",
              "OIDCClientAssertion": {"Audience": ["foo"], "KeySource": "nomad"}}
    out = sched.put("/v1/acl/auth-method", json=valid(Config=config)).json()["Config"]["OIDCClientAssertion"]
    assert (out["Audience"], out["KeyAlgorithm"], out["ClientSecret"]) == (["foo"], "RS256", "")


def test_client_assertion_nomad_key_source_is_valid_and_canonicalized(sched):
    config = {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "mock", "OIDCClientSecret": "s",
              "OIDCClientAssertion": {"KeySource": "nomad"}}
    out = sched.put("/v1/acl/auth-method", json=valid(Config=config)).json()["Config"]["OIDCClientAssertion"]
    assert out == {"KeySource": "nomad", "Audience": ["http://example.com"], "PrivateKey": None,
                   "ExtraHeaders": None, "KeyAlgorithm": "RS256", "ClientSecret": "redacted"}


def test_client_secret_assertion_needs_a_long_enough_secret(sched):
    config = {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "mock", "OIDCClientSecret": "short",
              "OIDCClientAssertion": {"KeySource": "client_secret", "Audience": ["aud"]}}
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(Config=config)), 400,
                 "invalid OIDCClientAssertion: failed to build client_assertion jwt: clientassertion.NewJWTWithHMAC: "
                 'HSAlgorithm.Validate: invalid secret length for algorithm: "HS256" must be at least 32 bytes long')
    config["OIDCClientSecret"] = "x" * 32
    out = sched.put("/v1/acl/auth-method", json=valid(Config=config)).json()["Config"]["OIDCClientAssertion"]
    assert (out["KeyAlgorithm"], out["ClientSecret"], out["Audience"]) == ("HS256", "redacted", ["aud"])


def test_private_key_assertion_with_a_non_pem_key(sched):
    config = {"OIDCDiscoveryURL": "http://example.com", "OIDCClientID": "mock",
              "OIDCClientAssertion": {"KeySource": "private_key", "PrivateKey": {"PemKey": "nope", "KeyID": "k1"}}}
    assert_plain(sched.put("/v1/acl/auth-method", json=valid(Config=config)), 400,
                 "invalid OIDCClientAssertion: failed to build client_assertion jwt: error parsing PemKey: "
                 "invalid key: Key must be a PEM encoded PKCS1 or PKCS8 key")


def test_canonicalize_defaults_token_name_format_and_keeps_an_explicit_one(sched):
    assert sched.create(valid()).json()["TokenNameFormat"] == "${auth_method_type}-${auth_method_name}"
    custom = sched.create(valid(Name="custom", TokenNameFormat="${auth_method_type}-${value.user}"))
    assert custom.json()["TokenNameFormat"] == "${auth_method_type}-${value.user}"


def test_sanitize_redacts_a_secret_and_keeps_an_empty_one_empty(sched):
    secret = sched.create(mock_oidc("with-secret")).json()["Config"]["OIDCClientSecret"]
    empty = sched.create(valid(Name="without-secret")).json()["Config"]["OIDCClientSecret"]
    assert (secret, empty) == ("redacted", "")
    assert sched.state.get_auth_method("with-secret").Config.OIDCClientSecret == "very secret secret"


def test_sending_back_redacted_stores_the_literal_redacted(sched):
    first = sched.create(mock_oidc("rmw")).json()
    sched.put("/v1/acl/auth-method/rmw", json=first)
    assert sched.state.get_auth_method("rmw").Config.OIDCClientSecret == "redacted"


def test_merge_keeps_new_values_and_inherits_the_rest(sched):
    sched.create(mock_oidc("merged"))
    out = sched.put("/v1/acl/auth-method/merged",
                    json={"Name": "merged", "TokenLocality": "global", "TokenNameFormat": "custom"}).json()
    assert (out["TokenLocality"], out["TokenNameFormat"], out["Type"], out["MaxTokenTTL"]) == \
        ("global", "custom", "OIDC", "1h0m0s")
    assert out["Config"]["BoundAudiences"] == ["sales", "engineering"]


def test_config_is_replaced_whole_not_deep_merged(sched):
    sched.create(mock_oidc("whole"))
    out = sched.put("/v1/acl/auth-method/whole", json={"Name": "whole", "Config": {
        "OIDCDiscoveryURL": "https://new", "OIDCClientID": "new"}}).json()["Config"]
    assert (out["OIDCDiscoveryURL"], out["BoundAudiences"], out["OIDCClientSecret"], out["ClaimMappings"]) == \
        ("https://new", None, "", None)


@pytest.mark.parametrize("change", [
    {"Type": "JWT"},
    {"Config": {"OIDCScopes": ["other"]}},
    {"Config": {"JWKSURL": "https://jwks"}},
    {"Config": {"JWKSCACert": "pem"}},
    {"Config": {"ExpirationLeeway": "1s"}},
    {"Config": {"NotBeforeLeeway": "1s"}},
    {"Config": {"ClockSkewLeeway": "1s"}},
    {"Config": {"BoundIssuer": ["iss"]}},
    {"Config": {"JWTValidationPubKeys": ["key"]}},
])
def test_hash_changes_with_each_hashed_field(sched, change):
    base = mock_oidc("hashed")
    before = sched.create(base).json()["Hash"]
    body = {**base, **{k: v for k, v in change.items() if k != "Config"}}
    body["Config"] = {**base["Config"], **change.get("Config", {})}
    after = sched.create(body).json()
    assert after["Hash"] != before
    assert sched.create(base).json()["Hash"] == before  # identical content, identical hash


def test_stub_carries_exactly_the_upstream_keys(sched):
    sched.create(mock_oidc("stubbed"))
    assert list(sched.get("/v1/acl/auth-methods").json()[0]) == \
        ["Name", "Type", "Default", "Hash", "CreateIndex", "ModifyIndex"]
