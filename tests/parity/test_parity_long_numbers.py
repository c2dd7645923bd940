"""Parity: numbers longer than Python's ``int()`` accepts (4300 digits), numbers past int64 or float64
and digit strings Go reads differently from Python (leading zeros, ``010``, spaces, Unicode digits)
in role fields, token TTLs, ``config/crl``, ``tidy`` and policy numbers. The double answered 500 to
several of them (a ``ValueError`` from ``int()``); each is compared with bao in the same run."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.parity

BIG = "1" * 5000
JSON = {"Content-Type": "application/json"}


def _b(template: str, value: str) -> bytes:
    return template.replace("@", value).encode()


@pytest.mark.parametrize("body", [
    _b('{"ttl":"@"}', BIG), _b('{"ttl":"-@"}', BIG), _b('{"ttl":"@d"}', BIG), _b('{"ttl":"@s"}', BIG),
    _b('{"ttl":"@"}', "0" * 5000 + "5"), _b('{"ttl":"@"}', "9223372036854775807"), _b('{"ttl":"@"}', "1111111111111111111"),
    _b('{"ttl":"@"}', "99999999999999999999x"), _b('{"ttl":"@"}', "\u0661\u0662"), _b('{"ttl":"@"}', "\u0661\u0662d"),
    _b('{"ttl":"@"}', " 12"), _b('{"ttl":"@"}', "1_0"), _b('{"ttl":"@"}', "+5"), _b('{"ttl":@}', "1e5000"),
    _b('{"key_bits":"@"}', BIG), _b('{"key_bits":"@"}', "-" + BIG), _b('{"key_bits":"@"}', "010"),
    _b('{"key_bits":"@"}', " 12"), _b('{"key_bits":"@"}', "99999999999999999999x"), _b('{"key_bits":"@"}', "0b_1"),
    _b('{"key_bits":"@"}', "0" * 5000), _b('{"key_bits":"@"}', "+2048"),
    _b('{"ext_key_usage_oids":"1.2.@"}', BIG), _b('{"ext_key_usage_oids":"1.2.@"}', "99999999999999999999"),
    _b('{"policy_identifiers":"1.2.@"}', BIG), _b('{"policy_identifiers":"1.2.@"}', "99999999999999999999"),
], ids=lambda b: b.decode()[:40])
def test_role_numbers(pki, body):
    pki.send("POST", "/v1/{mount}/roles/long", data=body, headers=JSON).same()


@pytest.mark.parametrize("ttl", [BIG, "-" + BIG, BIG + "d", "9223372036854775807", "-111111111111111111"])
def test_token_create_ttl(pair, ttl):
    pair.send("POST", "/v1/auth/token/create", json={"ttl": ttl}).same(volatile=("request_id",))


@pytest.mark.parametrize("field, value", [("expiry", BIG), ("expiry", "-" + BIG), ("ocsp_expiry", BIG),
                                          ("expiry", "9223372036854775807"), ("expiry", "9223372036854775807d"),
                                          ("delta_rebuild_interval", BIG + "d")])
def test_crl_config_durations(pki, field, value):
    pki.send("POST", "/v1/{mount}/config/crl", json={field: value}).same()


def test_tidy_pause_duration(pki):
    pki.send("POST", "/v1/{mount}/tidy", json={"pause_duration": BIG}).same()
    pki.send("POST", "/v1/{mount}/tidy", json={"pause_duration": "9223372036854775807"}).same()


@pytest.mark.parametrize("rule", [
    f"min_wrapping_ttl = {BIG}", f"min_wrapping_ttl = -{BIG}", f'max_wrapping_ttl = "{BIG}"',
    "min_wrapping_ttl = 99999999999999999999", "min_wrapping_ttl = 09", "min_wrapping_ttl = 9999999999999999999.5",
    "min_wrapping_ttl = 1e400", "min_wrapping_ttl = true", "min_wrapping_ttl = [1]", 'min_wrapping_ttl = "1_0"',
    'min_wrapping_ttl = "0x10"', 'max_wrapping_ttl = "99999999999999999999"', f"allowed_parameters = {{ x = [{BIG}] }}",
    "allowed_parameters = { x = [09] }",
], ids=lambda r: r[:40])
def test_policy_numbers(pair, rule):
    policy = 'path "a" { capabilities = ["read"] ' + rule + " }"
    pair.send("POST", "/v1/sys/policies/acl/longnum", data=json.dumps({"policy": policy}).encode(), headers=JSON).same()


@pytest.mark.parametrize("name", ["1.5", "1e3", "true"])
def test_policy_name_of_another_type(pair, name):
    pair.send("POST", "/v1/sys/policies/acl/longname", data=json.dumps({"policy": f"name = {name}"}).encode(),
              headers=JSON).same()


@pytest.mark.parametrize("code", [BIG, "-" + BIG, "0" * 5000 + "1"])
def test_health_status_code_parameters(pair, code):
    pair.send("GET", f"/v1/sys/health?standbycode={code}", token=None).same(types_only=True)
    if not code.startswith("0"):
        pair.send("GET", f"/v1/sys/health?activecode={code}", token=None).same()
