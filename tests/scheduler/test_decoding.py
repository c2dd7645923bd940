"""Request decoding as Nomad's handler does it: Go's encoding/json rules and error texts (reference §2)."""

import json
import socket
from urllib.parse import urlsplit

import pytest
from sched_helpers import assert_plain, mock_oidc

GOOD = mock_oidc("decoded")


def put_raw(sched, data: bytes, path="/v1/acl/auth-method", headers=None, token="root"):
    return sched.put(path, data=data, headers=headers or {}, token=token)


def test_empty_body_is_request_body_is_empty(sched):
    assert_plain(put_raw(sched, b""), 400, "Request body is empty")


@pytest.mark.parametrize("data", [b" ", b"\n\t  \r\n"])
def test_whitespace_body_is_eof(sched, data):
    assert_plain(put_raw(sched, data), 400, "EOF")


def test_chunked_empty_body_is_eof_not_empty(sched):
    host, port = urlsplit(sched.url).hostname, urlsplit(sched.url).port
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(b"PUT /v1/acl/auth-method HTTP/1.1\r\nHost: x\r\nX-Nomad-Token: root\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n")
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 400") and reply.endswith(b"\r\n\r\nEOF")


def test_chunked_body_is_decoded(sched):
    body = json.dumps(GOOD).encode()
    r = sched.put("/v1/acl/auth-method", data=iter([body[:10], body[10:]]))  # requests sends it chunked
    assert r.status_code == 200 and r.json()["Name"] == "decoded"


@pytest.mark.parametrize("data, text", [
    (b"{", "unexpected EOF"),
    (b'{"Name": "x"', "unexpected EOF"),
    (b"tru", "unexpected EOF"),
    (b"{b}", "invalid character 'b' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b"{'Name': 'x'}", "invalid character '\\'' looking for beginning of object key string"),
    (b"\xef\xbb\xbf{}", "invalid character '\u00ef' looking for beginning of value"),
    (b'{"Name":"a\x01"}', "invalid character '\\x01' in string literal"),
    (b'{"Name":"\\q"}', "invalid character 'q' in string escape code"),
    (b'{"Name":nul}', "invalid character '}' in literal null (expecting 'l')"),
    (b'{"Default":01}', "invalid character '1' after object key:value pair"),
    (b'{"MaxTokenTTL":1.}', "invalid character '}' after decimal point in numeric literal"),
])
def test_syntax_errors_use_go_texts(sched, data, text):
    assert_plain(put_raw(sched, data), 400, text)


def test_trailing_garbage_after_the_first_value_is_ignored(sched):
    r = put_raw(sched, json.dumps(GOOD).encode() + b" trailing {garbage")
    assert r.status_code == 200 and r.json()["Name"] == "decoded"


def test_null_body_is_an_all_zero_method(sched):
    r = put_raw(sched, b"null")
    assert r.status_code == 400 and r.text.startswith("auth method 0 invalid: 5 errors occurred:\n\t* invalid name ''")
    assert_plain(put_raw(sched, b"null", "/v1/acl/auth-method/x"), 400, "ACL auth-method name does not match request path")


@pytest.mark.parametrize("data, kind", [(b"[1]", "array"), (b'"x"', "string"), (b"42", "number"), (b"true", "bool")])
def test_non_object_bodies(sched, data, kind):
    assert_plain(put_raw(sched, data), 400,
                 f"json: cannot unmarshal {kind} into Go value of type struct {{ MaxTokenTTL interface {{}}; *structs.Alias }}")


@pytest.mark.parametrize("body, field", [
    ({"Name": 5}, ".Alias.Name"),
    ({"Default": "true"}, ".Alias.Default"),
    ({"CreateIndex": -1}, ".Alias.CreateIndex"),
    ({"Config": {"OIDCScopes": "groups"}}, ".Alias.Config.Alias.OIDCScopes"),
    ({"Config": {"ClaimMappings": {"a": 1}}}, ".Alias.Config.Alias.ClaimMappings"),
    ({"Config": "x"}, ".Alias.Config"),
    ({"Config": {"OIDCClientAssertion": {"Audience": "a"}}}, ".Alias.Config.Alias.OIDCClientAssertion.Audience"),
])
def test_wrong_json_types(sched, body, field):
    r = sched.put("/v1/acl/auth-method", json=body, token=None)  # decoding comes before the token check
    assert r.status_code == 400 and r.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert r.text.startswith("json: cannot unmarshal ")
    assert f" into Go struct field {field} of type " in r.text


def test_first_type_error_wins_and_decoding_errors_come_before_auth(sched):
    r = sched.put("/v1/acl/auth-method", json={"Name": 1, "Type": 2}, token="garbage")
    assert_plain(r, 400, "json: cannot unmarshal number into Go struct field .Alias.Name of type string")


@pytest.mark.parametrize("ttl, text", [
    ("", 'time: invalid duration ""'),
    ("abc", 'time: invalid duration "abc"'),
    ("5", 'time: missing unit in duration "5"'),
    ("5x", 'time: unknown unit "x" in duration "5x"'),
])
def test_max_token_ttl_string_errors(sched, ttl, text):
    assert_plain(sched.put("/v1/acl/auth-method", json={**GOOD, "MaxTokenTTL": ttl}), 400, text)


@pytest.mark.parametrize("ttl, shown", [
    ("1h", "1h0m0s"), ("3600s", "1h0m0s"), ("1.5h", "1h30m0s"), ("90m", "1h30m0s"), (3600000000000, "1h0m0s"),
    (3600000000000.9, "1h0m0s"),
])
def test_max_token_ttl_accepted_forms(sched, ttl, shown):
    assert sched.put("/v1/acl/auth-method", json={**GOOD, "MaxTokenTTL": ttl}).json()["MaxTokenTTL"] == shown


@pytest.mark.parametrize("ignored", [None, True, {"h": 1}, ["1h"]])
def test_max_token_ttl_other_types_are_ignored(sched, ignored):
    sched.create(GOOD)
    r = sched.put("/v1/acl/auth-method/decoded", json={**GOOD, "MaxTokenTTL": ignored, "TokenLocality": "global"})
    assert r.status_code == 200 and r.json()["MaxTokenTTL"] == "1h0m0s"  # 0 inherits the stored TTL
    on_create = sched.put("/v1/acl/auth-method", json={**mock_oidc("fresh"), "MaxTokenTTL": ignored})
    assert on_create.status_code == 400 and "invalid MaxTokenTTL value '0s'" in on_create.text


@pytest.mark.parametrize("leeway, shown", [("", ""), ("1s", "1s"), (1500000000, "1.5s"), (None, "")])
def test_leeway_accepted_forms(sched, leeway, shown):
    body = {**GOOD, "Config": {**GOOD["Config"], "ExpirationLeeway": leeway}}
    assert sched.put("/v1/acl/auth-method", json=body).json()["Config"]["ExpirationLeeway"] == shown


@pytest.mark.parametrize("name, value, text", [
    ("ExpirationLeeway", True, "unexpected ExpirationLeeway type: true"),
    ("NotBeforeLeeway", ["1s", 2], "unexpected NotBeforeLeeway type: [1s 2]"),
    ("ClockSkewLeeway", {"b": 1000000, "a": False}, "unexpected ClockSkewLeeway type: map[a:false b:1e+06]"),
    ("ExpirationLeeway", "soon", 'time: invalid duration "soon"'),
])
def test_leeway_errors(sched, name, value, text):
    body = {**GOOD, "Config": {**GOOD["Config"], name: value}}
    assert_plain(sched.put("/v1/acl/auth-method", json=body), 400, text)


def test_create_time_is_honoured_on_create_only(sched):
    created = sched.put("/v1/acl/auth-method", json={**GOOD, "CreateTime": "2020-01-02T03:04:05.5+02:00"}).json()
    assert created["CreateTime"] == "2020-01-02T03:04:05.5+02:00"
    assert created["ModifyTime"] != created["CreateTime"]
    updated = sched.put("/v1/acl/auth-method", json={**GOOD, "TokenLocality": "global",
                                                     "CreateTime": "2030-01-01T00:00:00Z"}).json()
    assert updated["CreateTime"] == "2020-01-02T03:04:05.5+02:00"


@pytest.mark.parametrize("value, text", [
    ("garbage", 'parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"'),
    ("2021-02-29T00:00:00Z", 'parsing time "2021-02-29T00:00:00Z": day out of range'),
    (5, "Time.UnmarshalJSON: input is not a JSON string"),
])
def test_bad_times(sched, value, text):
    assert_plain(sched.put("/v1/acl/auth-method", json={**GOOD, "ModifyTime": value}), 400, text)


def test_server_computed_fields_are_overwritten(sched):
    r = sched.put("/v1/acl/auth-method", json={**GOOD, "Hash": "AAAA", "CreateIndex": 99, "ModifyIndex": 99,
                                               "ModifyTime": "2001-01-01T00:00:00Z"}).json()
    assert (r["CreateIndex"], r["ModifyIndex"]) == (2, 2) and r["Hash"] != "AAAA"
    assert not r["ModifyTime"].startswith("2001")
    assert_plain(sched.put("/v1/acl/auth-method", json={**GOOD, "Hash": "abc"}), 400,
                 "illegal base64 data at input byte 0")


def test_key_case_is_ignored_and_the_last_duplicate_wins(sched):
    raw = ('{"name":"decoded","TYPE":"OIDC","Tokenlocality":"local","Maxtokenttl":"2h",'
           '"tokenlocality":"global","config":{"oidcdiscoveryurl":"http://e","OIDCClientID":"id"}}')
    out = put_raw(sched, raw.encode()).json()
    assert (out["Name"], out["Type"], out["TokenLocality"], out["MaxTokenTTL"]) == ("decoded", "OIDC", "global", "2h0m0s")
    assert out["Config"]["OIDCDiscoveryURL"] == "http://e"


def test_repeated_config_objects_merge(sched):
    raw = ('{"Name":"decoded","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h",'
           '"Config":{"OIDCDiscoveryURL":"http://e","ClaimMappings":{"a":"1"}},'
           '"Config":{"OIDCClientID":"id","ClaimMappings":{"b":"2"}}}')
    out = put_raw(sched, raw.encode()).json()["Config"]
    assert (out["OIDCDiscoveryURL"], out["OIDCClientID"], out["ClaimMappings"]) == ("http://e", "id", {"a": "1", "b": "2"})


def test_unknown_keys_are_ignored(sched):
    assert sched.put("/v1/acl/auth-method", json={**GOOD, "Colour": "red", "Namespace": 7}).status_code == 200


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", None, "application/json"])
def test_content_type_is_ignored(sched, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    r = put_raw(sched, json.dumps(GOOD).encode(), headers=headers)
    assert r.status_code == 200 and r.json()["Name"] == "decoded"


def test_name_mismatch_on_the_named_path_comes_before_auth(sched):
    for body in (GOOD, {**GOOD, "Name": "DECODED"}, {k: v for k, v in GOOD.items() if k != "Name"}):
        r = sched.put("/v1/acl/auth-method/decoded-other", json=body, token=None)
        assert_plain(r, 400, "ACL auth-method name does not match request path")


def test_delete_never_reads_a_body(sched):
    sched.create(GOOD)
    assert sched.request("DELETE", "/v1/acl/auth-method/decoded", data=b"{not json").status_code == 200


def test_invalid_utf8_and_lone_surrogates_become_replacement_characters(sched):
    raw = b'{"Name":"x","TokenNameFormat":"a\xff\\ud800b"}'
    r = put_raw(sched, raw)
    assert r.status_code == 400 and r.text.startswith("auth method 0 invalid")
    body = dict(GOOD, TokenNameFormat="a\udc00b")
    out = sched.put("/v1/acl/auth-method", data=json.dumps(body).encode()).json()
    assert out["TokenNameFormat"] == "a\ufffdb"
