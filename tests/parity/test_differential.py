"""Differential fuzzing: Hypothesis-generated PKI request sequences sent to a real ``bao server -dev``
and to the double, set up identically per sequence, every answer compared (see
``tests/parity/differential/``). A difference the allow-list does not name fails with the whole
sequence and both answers printed; Hypothesis shrinks it to a minimal sequence first.

The CI profile is small and derandomized (the same sequences every run, so no flakiness);
``SCHEDPKI_DIFF_SCALE=10`` runs ten times as many random sequences. ``scripts/differential.py``
does long runs by seed and prints ``A/N agree``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import parity_harness as h
import pytest
import requests
from differential import acme_gen, allowlist, compare, ocsp_gen
from differential.acme_runner import AcmeRunner
from differential.requests_gen import Ref, Req, dump_body, sequences
from differential.runner import Runner, reproduction
from hypothesis import HealthCheck, given, settings

SELFCHECK = os.environ.get("SCHEDPKI_PARITY_SELFCHECK", "") not in ("", "0")
SCALE = float(os.environ.get("SCHEDPKI_DIFF_SCALE", "1") or 1)
EXAMPLES = max(1, int(10 * SCALE))
DIVERGENCES = Path(__file__).resolve().parents[2] / "docs" / "divergences.md"


@pytest.fixture(scope="module")
def runner(request, bao_server):
    """Both servers (in self-check mode a second real server stands in for the double)."""
    if SELFCHECK:
        return Runner(bao_server.url, None, request.getfixturevalue("second_bao_server").url)
    return Runner(bao_server.url, request.getfixturevalue("double_server"))


@pytest.fixture(scope="module")
def acme_runner(request, bao_server):
    """The ``acme`` family's runner (it holds 127.0.0.1:80 for http-01 while the module runs, when it can)."""
    if SELFCHECK:
        acme = AcmeRunner(bao_server.url, None, request.getfixturevalue("second_bao_server").url)
    else:
        acme = AcmeRunner(bao_server.url, request.getfixturevalue("double_server"))
    yield acme
    acme.close()


@pytest.mark.parity
def test_random_acme_sequences_get_the_same_answers(acme_runner):
    """The ``acme`` family: RFC 8555 requests, validly and invalidly signed (nonces, accounts, EAB,
    key-change, orders with random identifiers, challenges, finalize with random CSRs, revoke-cert)."""
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=SCALE == 1, print_blob=True,
              suppress_health_check=list(HealthCheck))
    @given(acme_gen.sequences(1, 10))
    def check(seq):
        outcomes = acme_runner.run(seq, stop_at_first=True)
        if outcomes and not outcomes[-1].agree:
            raise AssertionError(reproduction(outcomes))

    check()


@pytest.mark.parity
def test_random_ocsp_sequences_get_the_same_answers(runner):
    """The ``ocsp`` family: OCSP queries (GET/POST, valid and damaged, known and unknown serials and
    issuers) among issue, revoke, ``config/crl`` and issuer usage writes."""
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=SCALE == 1, print_blob=True,
              suppress_health_check=list(HealthCheck))
    @given(ocsp_gen.sequences(1, 8))
    def check(seq):
        outcomes = runner.run(seq, stop_at_first=True)
        if outcomes and not outcomes[-1].agree:
            raise AssertionError(reproduction(outcomes))

    check()


@pytest.mark.parity
def test_random_request_sequences_get_the_same_answers(runner):
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=SCALE == 1, print_blob=True,
              suppress_health_check=list(HealthCheck))
    @given(sequences(1, 6))
    def check(seq):
        outcomes = runner.run(seq, stop_at_first=True)
        if outcomes and not outcomes[-1].agree:
            raise AssertionError(reproduction(outcomes))

    check()


# ------------------------------------------------------------------ the comparison itself (no server)

def _response(status: int, body, content_type: str = "application/json") -> requests.Response:
    resp = requests.Response()
    resp.status_code = status
    resp.headers["Content-Type"] = content_type
    resp._content = (json.dumps(body) + "\n").encode() if not isinstance(body, bytes) else body
    return resp


def test_every_allowed_divergence_points_at_a_row_of_divergences_md():
    rows = {m.group(1).strip() for m in re.finditer(r"^\| ([^|]+) \|", DIVERGENCES.read_text(), re.M)}
    assert allowlist.ENTRIES
    for entry in allowlist.ENTRIES:
        assert entry.row in rows, f"allow-list row {entry.row!r} is not a row of docs/divergences.md"


def test_serials_of_the_double_are_mapped_to_the_real_servers_before_comparing():
    real_vars = {"issued": [("aa:bb:cc:dd:ee", "pem", None)], "root_id": "1" * 8 + "-1111-1111-1111-" + "1" * 12}
    double_vars = {"issued": [("11:22:33:44:55", "pem", None)], "root_id": "2" * 8 + "-2222-2222-2222-" + "2" * 12}
    mapping = compare.id_mapping(real_vars, double_vars)
    real = _response(400, {"errors": ["certificate aa-bb-cc-dd-ee already revoked"]})
    same = _response(400, {"errors": ["certificate 11-22-33-44-55 already revoked"]})
    assert compare.compare(real, same, mapping, 2) == []
    other = _response(400, {"errors": ["certificate 99-22-33-44-55 already revoked"]})
    assert compare.compare(real, other, mapping, 2) != []


def test_lease_duration_is_tolerated_by_the_request_duration_and_nothing_else():
    real = _response(200, {"lease_duration": 3600, "data": {"a": 1}})
    assert compare.compare(real, _response(200, {"lease_duration": 3598, "data": {"a": 1}}), {}, 2) == []
    assert compare.compare(real, _response(200, {"lease_duration": 3590, "data": {"a": 1}}), {}, 2) != []
    assert compare.compare(real, _response(200, {"lease_duration": 3600, "data": {"a": "1"}}), {}, 2) != []


def test_status_error_texts_and_warnings_are_compared_exactly():
    real = _response(400, {"errors": ["unknown role: x"]})
    assert compare.compare(real, _response(400, {"errors": ["unknown role: y"]}), {}, 2) != []
    assert compare.compare(real, _response(500, {"errors": ["unknown role: x"]}), {}, 2) != []
    warn = _response(200, {"data": {}, "warnings": ["a"]})
    assert compare.compare(warn, _response(200, {"data": {}, "warnings": ["b"]}), {}, 2) != []


def test_key_usage_is_compared_as_encoded():
    pem = h.self_signed_ca(h.ec_key(), "ku")
    assert compare.key_usage_bits(pem) == "03020106"  # CertSign + CRLSign


def test_requests_are_shown_with_their_references_and_raw_tokens():
    from differential.requests_gen import Raw, RawNumber

    req = Req("POST", ["/v1/", "{mount}", "/revoke"], {"serial_number": Ref("serial", 2), "n": RawNumber("1e999")})
    assert req.show() == 'POST /v1/{mount}/revoke {"serial_number":"<serial#2>","n":1e999}'
    assert dump_body(Raw(value={"a": 1}, prefix="\ufeff")) == '\ufeff{"a":1}'


def test_token_ids_and_accessors_of_the_double_are_mapped_and_accessor_lists_sorted():
    real_vars = {"tokens": [("s.RealTokenAAAAAAAAAAAAAAAA", "RealAccessorAAAAAAAAAAAA"), ("b.RealBatch", "")],
                 "root_accessor": "RealRootAccessorAAAAAAAA"}
    double_vars = {"tokens": [("s.DoubleTokenBBBBBBBBBBBBBB", "DoubleAccessorBBBBBBBBBB"), ("b.DoubleBatch", "")],
                   "root_accessor": "DoubleRootAccessorBBBBBB"}
    mapping = compare.id_mapping(real_vars, double_vars)
    assert "" not in mapping and mapping["b.DoubleBatch"] == "b.RealBatch"
    real = _response(200, {"data": {"id": "s.RealTokenAAAAAAAAAAAAAAAA", "creation_ttl": 3600, "ttl": 3600}})
    same = _response(200, {"data": {"id": "s.DoubleTokenBBBBBBBBBBBBBB", "creation_ttl": 3600, "ttl": 3599}})
    assert compare.compare(real, same, mapping, 2) == []
    wrong = _response(200, {"data": {"id": "b.DoubleBatch", "creation_ttl": 3600, "ttl": 3600}})
    assert compare.compare(real, wrong, mapping, 2) != []
    listed = _response(200, {"data": {"keys": ["RealAccessorAAAAAAAAAAAA", "RealRootAccessorAAAAAAAA"]}})
    shuffled = _response(200, {"data": {"keys": ["DoubleRootAccessorBBBBBB", "DoubleAccessorBBBBBBBBBB"]}})
    assert compare.compare(listed, shuffled, mapping, 2) == []
    missing = _response(200, {"data": {"keys": ["DoubleRootAccessorBBBBBB"]}})
    assert compare.compare(listed, missing, mapping, 2) != []


def test_token_lookup_ttl_is_tolerated_only_in_token_answers():
    real = _response(200, {"auth": {"lease_duration": 3600}, "data": {"ttl": 3600}})
    assert compare.compare(real, _response(200, {"auth": {"lease_duration": 3599}, "data": {"ttl": 3600}}), {}, 2) == []
    assert compare.compare(real, _response(200, {"auth": {"lease_duration": 3600}, "data": {"ttl": 3599}}), {}, 2) != []
    assert compare.compare(real, _response(200, {"auth": {"lease_duration": 3590}, "data": {"ttl": 3600}}), {}, 2) != []


def test_token_family_never_revokes_the_root_token():
    from differential import token_gen
    from hypothesis import Phase, given, seed

    @seed(1)
    @settings(max_examples=300, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(token_gen.sequences(1, 8))
    def check(seq):
        for req in seq:
            body = json.loads(dump_body(req.body)) if isinstance(req.body, dict) else {}
            if "revoke" in req.template:
                assert body.get("token") != "root" and body.get("accessor") != "<root_accessor>"
            if req.template.endswith("revoke-self"):
                assert isinstance(req.token, Ref)

    check()


def test_capping_warning_remainder_is_tolerated_like_a_ttl():
    capped = 'TTL of "768h" exceeded the effective max_ttl of "{}"; TTL value is capped accordingly'
    real = _response(200, {"auth": {"lease_duration": 3}, "warnings": [capped.format("767h59m57s")]})
    near = _response(200, {"auth": {"lease_duration": 3}, "warnings": [capped.format("767h59m56s")]})
    far = _response(200, {"auth": {"lease_duration": 3}, "warnings": [capped.format("767h59m50s")]})
    assert compare.compare(real, near, {}, 2) == []
    assert compare.compare(real, far, {}, 2) != []
