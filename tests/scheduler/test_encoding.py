"""Response encoding byte for byte: key order, durations, times, Hash, escaping, pretty (reference §8)."""

import datetime
import json

from sched_helpers import mock_oidc, raw_request

from pytest_schedpki.clock import ManualClock

T0 = datetime.datetime(2026, 8, 21, 10, 0, 0, 123456, tzinfo=datetime.timezone.utc)
EXAMPLE = {
    "Name": "example-oidc", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
    "Config": {"OIDCDiscoveryURL": "https://idp.example.com/", "OIDCClientID": "my-client-id",
               "OIDCClientSecret": "my-secret", "OIDCScopes": ["groups"], "BoundAudiences": ["my-client-id"],
               "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"],
               "ClaimMappings": {"email": "email"}, "ListClaimMappings": {"groups": "groups"}},
}
EXPECTED = (
    '{"MaxTokenTTL":"1h0m0s","Name":"example-oidc","Type":"OIDC","TokenLocality":"local",'
    '"TokenNameFormat":"${auth_method_type}-${auth_method_name}","Default":false,'
    '"Config":{"ExpirationLeeway":"","NotBeforeLeeway":"","ClockSkewLeeway":"",'
    '"JWTValidationPubKeys":null,"JWKSURL":"","OIDCDiscoveryURL":"https://idp.example.com/",'
    '"OIDCClientID":"my-client-id","OIDCClientSecret":"redacted","OIDCClientAssertion":null,'
    '"OIDCEnablePKCE":false,"OIDCDisableUserInfo":false,"OIDCScopes":["groups"],'
    '"BoundAudiences":["my-client-id"],"BoundIssuer":null,'
    '"AllowedRedirectURIs":["http://localhost:4649/oidc/callback"],"DiscoveryCaPem":null,'
    '"JWKSCACert":"","SigningAlgs":null,"ClaimMappings":{"email":"email"},'
    '"ListClaimMappings":{"groups":"groups"},"VerboseLogging":false},'
    '"Hash":"CdBH+1v7FLZMonltYmmnEAngyQmvhzrpPOOA+V0xP9k=",'
    '"CreateTime":"2026-08-21T10:00:00.123456Z","ModifyTime":"2026-08-21T10:00:00.123456Z",'
    '"CreateIndex":2,"ModifyIndex":2}'
)


def test_worked_example_create_and_read_are_byte_exact(make_sched):
    s = make_sched(clock=ManualClock(T0))
    created = s.put("/v1/acl/auth-method", json=EXAMPLE)
    assert (created.status_code, created.text) == (200, EXPECTED)
    assert created.headers["Content-Type"] == "application/json"
    assert created.headers["X-Nomad-Index"] == "2"
    assert "X-Nomad-KnownLeader" not in created.headers  # writes carry only the index
    read = s.get("/v1/acl/auth-method/example-oidc")
    assert read.text == EXPECTED
    assert read.headers["X-Nomad-Index"] == "2"
    listed = s.get("/v1/acl/auth-methods")
    assert listed.text == ('[{"Name":"example-oidc","Type":"OIDC","Default":false,'
                           '"Hash":"CdBH+1v7FLZMonltYmmnEAngyQmvhzrpPOOA+V0xP9k=","CreateIndex":2,"ModifyIndex":2}]')


def test_worked_hash_does_not_depend_on_the_secret_being_redacted(make_sched):
    s = make_sched(clock=ManualClock(T0))
    s.create(EXAMPLE)
    other = s.create({**EXAMPLE, "Config": {**EXAMPLE["Config"], "OIDCClientSecret": "other"}}).json()
    assert other["Hash"] != "CdBH+1v7FLZMonltYmmnEAngyQmvhzrpPOOA+V0xP9k="  # the real secret is hashed
    assert other["Config"]["OIDCClientSecret"] == "redacted"


def test_html_characters_are_escaped_in_the_full_method_only(sched):
    body = mock_oidc("html", TokenNameFormat="<a>&b", Config={**mock_oidc()["Config"],
                                                               "OIDCDiscoveryURL": "https://x/?a=1&b=2"})
    created = sched.create(body)
    assert '"TokenNameFormat":"\\u003ca\\u003e\\u0026b"' in created.text
    assert '"OIDCDiscoveryURL":"https://x/?a=1\\u0026b=2"' in created.text
    assert created.json()["TokenNameFormat"] == "<a>&b"


def test_non_ascii_is_raw_utf8_and_line_separators_are_escaped(sched):
    body = mock_oidc("utf", TokenNameFormat="caf\u00e9 \u2028 \n\t")
    created = sched.create(body)
    assert '"TokenNameFormat":"caf\u00e9 \\u2028 \\n\\t"' in created.content.decode("utf-8")


def test_durations_and_empty_values(sched):
    body = mock_oidc("durations", MaxTokenTTL="90m", Config={
        "OIDCDiscoveryURL": "u", "OIDCClientID": "c", "ExpirationLeeway": "1.5s", "NotBeforeLeeway": "100ms",
        "ClockSkewLeeway": 1000, "OIDCScopes": [], "ClaimMappings": {}})
    out = sched.create(body).json()
    assert out["MaxTokenTTL"] == "1h30m0s"
    c = out["Config"]
    assert (c["ExpirationLeeway"], c["NotBeforeLeeway"], c["ClockSkewLeeway"]) == ("1.5s", "100ms", "1\u00b5s")
    assert (c["OIDCScopes"], c["ClaimMappings"], c["SigningAlgs"], c["DiscoveryCaPem"]) == ([], {}, None, None)


def test_config_key_order_and_map_key_sorting(sched):
    body = mock_oidc("ordered", Config={**mock_oidc()["Config"], "ClaimMappings": {"z": "1", "a": "2", "M": "3"}})
    text = sched.create(body).text
    config = json.loads(text, object_pairs_hook=list)[6][1]
    assert [k for k, _ in config] == [
        "ExpirationLeeway", "NotBeforeLeeway", "ClockSkewLeeway", "JWTValidationPubKeys", "JWKSURL",
        "OIDCDiscoveryURL", "OIDCClientID", "OIDCClientSecret", "OIDCClientAssertion", "OIDCEnablePKCE",
        "OIDCDisableUserInfo", "OIDCScopes", "BoundAudiences", "BoundIssuer", "AllowedRedirectURIs",
        "DiscoveryCaPem", "JWKSCACert", "SigningAlgs", "ClaimMappings", "ListClaimMappings", "VerboseLogging"]
    assert '"ClaimMappings":{"M":"3","a":"2","z":"1"}' in text


def test_client_assertion_key_order(sched):
    config = {"OIDCDiscoveryURL": "http://e", "OIDCClientID": "c", "OIDCClientSecret": "x" * 40,
              "OIDCClientAssertion": {"KeySource": "client_secret", "ExtraHeaders": {"b": "2", "a": "1"}}}
    text = sched.create(mock_oidc("assert", Config=config)).text
    assert ('"OIDCClientAssertion":{"KeySource":"client_secret","Audience":["http://e"],"PrivateKey":null,'
            '"ExtraHeaders":{"a":"1","b":"2"},"KeyAlgorithm":"HS256","ClientSecret":"redacted"}') in text


def test_times_trim_nanoseconds_and_keep_offsets(make_sched):
    s = make_sched(clock=ManualClock(datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)))
    out = s.create({**EXAMPLE, "CreateTime": "2020-05-06T07:08:09.120000000-05:30"}).json()
    assert (out["CreateTime"], out["ModifyTime"]) == ("2020-05-06T07:08:09.12-05:30", "2030-01-01T00:00:00Z")


def test_pretty_keeps_the_method_compact_and_indents_the_list(make_sched):
    s = make_sched(clock=ManualClock(T0))
    created = s.put("/v1/acl/auth-method?pretty", json=EXAMPLE)
    assert created.text == EXPECTED + "\n"
    assert s.get("/v1/acl/auth-method/example-oidc?pretty=1").text == EXPECTED + "\n"
    assert s.get("/v1/acl/auth-method/example-oidc?pretty=0").text == EXPECTED
    listed = s.get("/v1/acl/auth-methods?pretty").text
    assert listed == ('[\n    {\n        "Name": "example-oidc",\n        "Type": "OIDC",\n        "Default": false,\n'
                      '        "Hash": "CdBH+1v7FLZMonltYmmnEAngyQmvhzrpPOOA+V0xP9k=",\n        "CreateIndex": 2,\n'
                      '        "ModifyIndex": 2\n    }\n]\n')


def test_unknown_paths_are_bare_404s(sched):
    for path in ("/v1/acl/auth-methods/", "/v1/jobs", "/"):
        r = sched.get(path)
        assert (r.status_code, r.content) == (404, b"")
        assert "Content-Type" not in r.headers


def test_double_slashes_and_dot_segments_are_served_clean(sched):
    sched.create(mock_oidc("clean"))
    token = {"X-Nomad-Token": "root"}
    status, _, body = raw_request(sched.url, "GET", "/v1//acl///auth-methods", headers=token)
    assert (status, json.loads(body)[0]["Name"]) == (200, "clean")
    status, _, body = raw_request(sched.url, "GET", "/v1/acl/./x/../auth-method//clean", headers=token)
    assert (status, json.loads(body)["Name"]) == (200, "clean")
    status, _, body = raw_request(sched.url, "GET", "/v1/acl/auth-method/a%2Fb", headers=token)
    assert (status, body) == (404, b"ACL auth-method not found")  # the name is the decoded "a/b"
