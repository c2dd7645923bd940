"""Numbers longer than Python's ``int()`` accepts (4300 digits, ``sys.get_int_max_str_digits()``) and
numbers beyond float64: every place a request's text becomes a number answers the upstream's error
(or its value), never 500, and changes nothing.

Upstream texts: the secrets ones asked of OpenBao 2.7.2 (``bao server -dev``; the ``parity`` cases
at the end compare with it in the same run); the scheduler ones from Nomad's source
(``nomad/structs/acl.go`` ``ACLToken.UnmarshalJSON``, ``command/agent/http.go`` ``parse``) and Go's
``encoding/json`` (``literalStore``: ``number <text>`` for a number a uint64 cannot hold;
``convertNumber``: ``... of type float64`` for one beyond float64 in an ``interface{}``).
"""

from __future__ import annotations

import json

import pytest
import requests
from robust_helpers import scheduler_fingerprint, secrets_fingerprint

from pytest_schedpki.factories import Factories
from pytest_schedpki.golang.strconv import NumError, decimal_in_range, parse_int, parse_uint

BIG = "1" * 5000  # > 4300 digits: int(BIG) raises ValueError
ZEROS = "0" * 5000  # leading zeros: Go reads "000...02" as 2
V = {"X-Vault-Token": "root"}


@pytest.fixture(scope="module")
def seeded(double):
    f = Factories(double.scheduler, double.secrets)
    f.secrets.root_issuer("pki", issuer_name="root")
    f.secrets.role("web")
    return double


def _b(template: str, value: str) -> str:
    """``template`` with ``@`` replaced by ``value`` (JSON bodies keep their braces readable)."""
    return template.replace("@", value)


def _policy(rule: str, value: str) -> str:
    """A ``sys/policies/acl`` body: path ``a`` (read) with ``rule`` (``@`` replaced by ``value``)."""
    return json.dumps({"policy": 'path "a" { capabilities = ["read"] ' + _b(rule, value) + " }"})


def _secrets(double, method: str, path: str, body: str = "", headers: dict | None = None) -> requests.Response:
    return requests.request(method, double.secrets_url + path, data=body, headers={**V, **(headers or {})}, timeout=30)


def _scheduler(double, method: str, path: str, body: str | None = None) -> requests.Response:
    return requests.request(method, double.scheduler_url + path, data=body,
                            headers={"X-Nomad-Token": double.management_token}, timeout=30)


def _field_failed(field: str, why: str) -> str:
    return json.dumps({"errors": [f'Field validation failed: error converting input for field "{field}": {why}']})


# (method, path, body, status, exact answer body or None for "any 2xx")
SECRETS_CASES = [
    ("POST", "/v1/pki/roles/x", _b('{"ttl":"@"}', BIG), 400, _field_failed("ttl", f'time: invalid duration "{BIG}"')),
    ("POST", "/v1/pki/roles/x", _b('{"ttl":"-@"}', BIG), 400, _field_failed("ttl", f'time: invalid duration "-{BIG}"')),
    ("POST", "/v1/pki/roles/x", _b('{"ttl":"@d"}', BIG), 400,
     _field_failed("ttl", f'strconv.ParseInt: parsing "{BIG}": value out of range')),
    ("POST", "/v1/pki/roles/x", '{"ttl":"9223372036854775807"}', 400,
     _field_failed("ttl", "multiplication of durations resulted in overflow, one operand may be too large")),
    ("POST", "/v1/pki/roles/x", _b('{"ttl":"@5"}', ZEROS), 200, None),
    ("POST", "/v1/pki/roles/x", '{"ttl":"\u0661\u0662"}', 400,  # Go quotes the UTF-8 bytes
     _field_failed("ttl", 'time: invalid duration "\\xd9\\xa1\\xd9\\xa2"')),
    ("POST", "/v1/auth/token/create", _b('{"ttl":"@"}', BIG), 400, json.dumps({"errors": [f'time: invalid duration "{BIG}"']})),
    ("POST", "/v1/pki/root/generate/internal", _b('{"common_name":"x","ttl":"@"}', BIG), 400,
     _field_failed("ttl", f'time: invalid duration "{BIG}"')),
    ("POST", "/v1/pki/issue/web", _b('{"common_name":"a.example.com","ttl":"@"}', BIG), 400,
     _field_failed("ttl", f'time: invalid duration "{BIG}"')),
    ("POST", "/v1/pki/roles/y", _b('{"key_bits":"@"}', BIG), 400,
     _field_failed("key_bits", "'' cannot parse value as 'int': strconv.ParseInt: value out of range")),
    ("POST", "/v1/pki/roles/y", '{"key_bits":"99999999999999999999x"}', 400,
     _field_failed("key_bits", "'' cannot parse value as 'int': strconv.ParseInt: value out of range")),
    ("POST", "/v1/pki/roles/y", '{"key_bits":" 12"}', 400,
     _field_failed("key_bits", "'' cannot parse value as 'int': strconv.ParseInt: invalid syntax")),
    ("POST", "/v1/pki/roles/y", '{"key_bits":"010"}', 400,
     json.dumps({"errors": ["RSA keys < 2048 bits are unsafe and not supported: got 8"]})),
    ("POST", "/v1/pki/config/crl", _b('{"expiry":"@"}', BIG), 400,
     json.dumps({"errors": [f'given expiry could not be decoded: time: invalid duration "{BIG}"']})),
    ("POST", "/v1/pki/tidy", _b('{"pause_duration":"@"}', BIG), 400,
     json.dumps({"errors": [f'Error parsing pause_duration: time: invalid duration "{BIG}"']})),
    ("POST", "/v1/pki/roles/z", _b('{"ext_key_usage_oids":"1.2.@"}', BIG), 400,
     json.dumps({"errors": [f'"1.2.{BIG}" could not be parsed as a valid oid for an extended key usage']})),
    ("POST", "/v1/pki/roles/z", _b('{"policy_identifiers":"1.2.@"}', BIG), 500,
     json.dumps({"errors": [f'1 error occurred:\n\t* policy identifier "1.2.{BIG}" is neither a valid OID: '
                            f'strconv.Atoi: parsing "{BIG}": value out of range, Nor JSON Policy Identifier: '
                            "invalid character '.' after top-level value\n\n"]})),
    ("POST", "/v1/sys/policies/acl/p", _policy("min_wrapping_ttl = @", BIG), 400,
     json.dumps({"errors": [f'failed to parse policy: path "a": path "a": strconv.ParseInt: parsing "{BIG}": '
                            "value out of range"]})),
    ("POST", "/v1/sys/policies/acl/p", _policy('max_wrapping_ttl = "@"', BIG), 400,
     json.dumps({"errors": [f'failed to parse policy: path "a": error parsing max_wrapping_ttl: time: invalid '
                            f'duration "{BIG}"']})),
    ("POST", "/v1/sys/policies/acl/p", _policy("allowed_parameters = { x = [@] }", BIG), 400,
     json.dumps({"errors": [f'failed to parse policy: path "a": path "a": strconv.ParseInt: parsing "{BIG}": '
                            "value out of range"]})),
    ("POST", "/v1/sys/policies/acl/p", _policy("min_wrapping_ttl = @", "1e400"), 400,
     json.dumps({"errors": ['failed to parse policy: path "a": path "a": strconv.ParseFloat: parsing "1e400": '
                            "value out of range"]})),
    ("POST", "/v1/sys/policies/acl/p", _policy("min_wrapping_ttl = @", "9999999999999999999.5"), 400,
     json.dumps({"errors": ['failed to parse policy: path "a": error parsing min_wrapping_ttl: multiplication of '
                            "durations resulted in overflow, one operand may be too large"]})),
    ("GET", _b("/v1/sys/health?activecode=@", BIG), "", 400, '{"errors":[]}'),
    ("GET", _b("/v1/sys/health?standbycode=@1", ZEROS), "", 200, None),
    ("POST", "/v1/sys/wrapping/wrap", '{"a":"b"}', 400, None),  # with X-Vault-Wrap-TTL below
]


def _same_json(got: str, want: str) -> None:
    assert json.loads(got) == json.loads(want)


@pytest.mark.parametrize("method, path, body, status, answer", SECRETS_CASES,
                         ids=[f"{c[0]} {c[1][:40]} {c[2][:24]}" for c in SECRETS_CASES])
def test_secrets_long_numbers_answer_as_openbao(seeded, method, path, body, status, answer):
    headers = {"X-Vault-Wrap-TTL": BIG} if path == "/v1/sys/wrapping/wrap" else None
    before = secrets_fingerprint(seeded.secrets) if status >= 400 else None
    reply = _secrets(seeded, method, path, body, headers)
    assert reply.status_code == status, reply.text[:300]
    if answer is not None:
        _same_json(reply.text, answer)
    if headers:
        assert reply.json() == {"errors": [f'error parsing X-Vault-Wrap-TTL header: time: invalid duration "{BIG}"']}
    if before is not None:
        assert secrets_fingerprint(seeded.secrets) == before
    assert seeded.pop_handler_errors() == []


def _type_error(struct_field: str, gotype: str, number: str = BIG) -> str:
    return f"json: cannot unmarshal number {number} into Go struct field {struct_field} of type {gotype}"


SCHEDULER_CASES = [
    ("POST", "/v1/acl/policy/p", _b('{"ModifyIndex":@}', BIG), 400, _type_error("ACLPolicy.ModifyIndex", "uint64")),
    ("POST", "/v1/acl/policy/p", '{"ModifyIndex":-1}', 400, _type_error("ACLPolicy.ModifyIndex", "uint64", "-1")),
    ("POST", "/v1/acl/role", _b('{"ModifyIndex":@}', BIG), 400, _type_error("ACLRole.ModifyIndex", "uint64")),
    ("POST", "/v1/acl/binding-rule", _b('{"ModifyIndex":-@}', BIG), 400,
     _type_error("ACLBindingRule.ModifyIndex", "uint64", "-" + BIG)),
    ("POST", "/v1/acl/auth-method", _b('{"ModifyIndex":@}', BIG), 400, _type_error(".Alias.ModifyIndex", "uint64")),
    ("POST", "/v1/acl/auth-method", _b('{"Hash":[1,@]}', BIG), 400, _type_error(".Alias.Hash", "uint8")),
    ("POST", "/v1/acl/auth-method", _b('{"MaxTokenTTL":@}', BIG), 400, _type_error(".MaxTokenTTL", "float64")),
    ("POST", "/v1/acl/auth-method", '{"Config":{"ClockSkewLeeway":1e5000}}', 400,
     _type_error(".Alias.Config.ClockSkewLeeway", "float64", "1e5000")),
    ("POST", "/v1/acl/token", _b('{"ModifyIndex":@}', BIG), 400, _type_error(".ModifyIndex", "uint64")),
    ("POST", "/v1/acl/token", _b('{"ExpirationTTL":@}', BIG), 400, _type_error(".ExpirationTTL", "float64")),
    ("POST", "/v1/acl/token", '{"ExpirationTTL":-1e5000}', 400, _type_error(".ExpirationTTL", "float64", "-1e5000")),
    ("POST", "/v1/acl/token", _b('{"ExpirationTTL":[1,@]}', BIG), 400, _type_error(".ExpirationTTL", "float64")),
    # the first type error in document order wins; Time.UnmarshalJSON's error aborts and wins over both
    ("POST", "/v1/acl/token", _b('{"Name":5,"ExpirationTTL":@}', BIG), 400,
     "json: cannot unmarshal number into Go struct field .Name of type string"),
    ("POST", "/v1/acl/token", _b('{"ExpirationTTL":@,"Name":5}', BIG), 400, _type_error(".ExpirationTTL", "float64")),
    ("POST", "/v1/acl/token", _b('{"ExpirationTTL":@,"CreateTime":5}', BIG), 400,
     "Time.UnmarshalJSON: input is not a JSON string"),
    ("GET", _b("/v1/acl/tokens?per_page=@", BIG), None, 400, "Expect a number for `per_page` query string parameter"),
    ("GET", _b("/v1/acl/tokens?per_page=+@", BIG), None, 400, "Expect a number for `per_page` query string parameter"),
    ("GET", _b("/v1/acl/tokens?per_page=@1", ZEROS), None, 200, None),
    ("GET", _b("/v1/acl/tokens?index=@&wait=1ms", BIG), None, 400, "Invalid index"),
    ("GET", _b("/v1/acl/tokens?index=@", ZEROS), None, 200, None),
    ("GET", _b("/v1/acl/auth-methods?index=-@", BIG), None, 400, "Invalid index"),
    ("GET", _b("/v1/acl/tokens?filter=CreateIndex+%3D%3D+@", BIG), None, 400,
     f'failed to read result page: error coercing value "{BIG}": strconv.ParseUint: parsing "{BIG}": '
     "value out of range"),
    ("GET", "/v1/acl/tokens?filter=CreateIndex+%3D%3D+-1", None, 400,
     'failed to read result page: error coercing value "-1": strconv.ParseUint: parsing "-1": invalid syntax'),
]


@pytest.mark.parametrize("method, path, body, status, answer", SCHEDULER_CASES,
                         ids=[f"{c[0]} {c[1][:40]} {(c[2] or '')[:24]}" for c in SCHEDULER_CASES])
def test_scheduler_long_numbers_answer_as_nomad(seeded, method, path, body, status, answer):
    before = scheduler_fingerprint(seeded.scheduler)
    reply = _scheduler(seeded, method, path, body)
    assert (reply.status_code, reply.text if answer is not None else None) == (status, answer)
    assert scheduler_fingerprint(seeded.scheduler) == before
    assert seeded.pop_handler_errors() == []


@pytest.mark.parametrize("length, status", [(BIG, 400), ("-" + BIG, 400), (ZEROS + "2", None)])
def test_content_length_of_thousands_of_digits(seeded, length, status):
    """Go's ParseUint(cl, 10, 63): out of range is ``400 Bad Request``; leading zeros spell the number."""
    import socket

    for url in (seeded.scheduler_url, seeded.secrets_url):
        host, port = url.split("//")[1].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(f"POST /v1/acl/token HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n{{}}".encode())
            head = sock.recv(200)
        assert head.startswith(b"HTTP/1.1 ")
        if status == 400:
            assert head.startswith(b"HTTP/1.1 400 Bad Request\r\n") and head.endswith(b"\r\n\r\n400 Bad Request")
        else:
            assert not head.startswith(b"HTTP/1.1 5")
    assert seeded.pop_handler_errors() == []


@pytest.mark.parametrize("path, body", [("lag", '{"seconds": 1e5000}'), ("lag", '{"seconds": -1e999}'),
                                        ("clock", '{"advance": 1e300}'), ("clock", '{"advance": "1e5000"}')])
def test_control_api_refuses_infinite_seconds(seeded, path, body):
    reply = requests.post(f"{seeded.scheduler_url}/_schedpki/{path}", data=body, timeout=10)
    name = "seconds" if path == "lag" else "advance"
    assert reply.status_code == 400
    assert reply.json() == {"error": f"{name} must be a finite number of seconds between -10000000000 and 10000000000"}
    assert seeded.pop_handler_errors() == []


# -- golang.strconv against Go's strconv (atoi.go; the cases of atoi_test.go) -------------------------

@pytest.mark.parametrize("text, base, bits, want", [
    ("0", 10, 64, 0), ("-0", 10, 64, 0), ("+5", 10, 64, 5), ("9223372036854775807", 10, 64, 2 ** 63 - 1),
    ("-9223372036854775808", 10, 64, -(2 ** 63)), ("9223372036854775808", 10, 64, "value out of range"),
    ("-9223372036854775809", 10, 64, "value out of range"), ("12345x", 10, 64, "invalid syntax"),
    ("99999999999999999999x", 10, 64, "value out of range"), ("", 10, 64, "invalid syntax"),
    ("+", 10, 64, "invalid syntax"), ("1_000", 10, 64, "invalid syntax"), ("1_000", 0, 64, 1000),
    ("0x_1", 0, 64, 1), ("_1", 0, 64, "invalid syntax"), ("1__0", 0, 64, "invalid syntax"),
    ("1_", 0, 64, "invalid syntax"), ("010", 0, 64, 8), ("09", 0, 64, "invalid syntax"), ("0b101", 0, 64, 5),
    ("0o17", 0, 64, 15), ("-0x8000000000000000", 0, 64, -(2 ** 63)), ("0x", 0, 64, "invalid syntax"),
    ("2147483648", 10, 32, "value out of range"), ("-2147483648", 10, 32, -(2 ** 31)), (" 1", 10, 64, "invalid syntax"),
    ("\u0661", 10, 64, "invalid syntax"), (BIG, 10, 64, "value out of range"), ("-" + BIG, 10, 64, "value out of range"),
    (ZEROS + "7", 10, 64, 7), (ZEROS + "7", 0, 64, 7), ("999999999999999999", 10, 60, "value out of range"),
    ("576460752303423487", 10, 60, 2 ** 59 - 1),
])
def test_parse_int_is_go_strconv(text, base, bits, want):
    if isinstance(want, int):
        assert parse_int(text, base, bits) == want
    else:
        with pytest.raises(NumError) as caught:
            parse_int(text, base, bits)
        assert caught.value.reason == want
        assert str(caught.value).startswith('strconv.ParseInt: parsing "') and str(caught.value).endswith(": " + want)


def test_parse_uint_texts():
    assert parse_uint("18446744073709551615") == 2 ** 64 - 1
    with pytest.raises(NumError, match=r'^strconv.ParseUint: parsing "18446744073709551616": value out of range$'):
        parse_uint("18446744073709551616")
    with pytest.raises(NumError, match=r'^strconv.ParseUint: parsing "-1": invalid syntax$'):
        parse_uint("-1")


def test_decimal_in_range_never_calls_int_on_thousands_of_digits():
    assert decimal_in_range(BIG, 0, 2 ** 64) is None
    assert decimal_in_range("-" + BIG, -(2 ** 63), 0) is None
    assert decimal_in_range(ZEROS + "42", 0, 100) == 42
    assert decimal_in_range("-" + ZEROS, -1, 1) == 0


def test_kv2_versions_out_of_int64(seeded):
    """``versions`` items through ``strconv.ParseInt``: mapstructure's ``value out of range`` (bao)."""
    assert _secrets(seeded, "POST", "/v1/sys/mounts/kvlong", '{"type":"kv","options":{"version":"2"}}').status_code == 204
    try:
        assert _secrets(seeded, "POST", "/v1/kvlong/data/a", '{"data":{"x":1}}').status_code == 200
        for versions in (_b('["@"]', BIG), _b('"@"', "-" + BIG), '["9223372036854775808"]'):
            reply = _secrets(seeded, "POST", "/v1/kvlong/delete/a", _b('{"versions":@}', versions))
            assert reply.status_code == 400
            _same_json(reply.text, _field_failed(
                "versions", "decoding failed due to the following error(s):\n\n'[0]' cannot parse value as 'int': "
                            "strconv.ParseInt: value out of range"))
        assert _secrets(seeded, "GET", "/v1/kvlong/data/a").json()["data"]["metadata"]["deletion_time"] == ""
    finally:
        _secrets(seeded, "DELETE", "/v1/sys/mounts/kvlong")
    assert seeded.pop_handler_errors() == []
