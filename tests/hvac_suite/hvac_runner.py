"""Run chosen files of hvac's integration tests against one target and read back each test's outcome.

:func:`run_hvac_tests` starts ``python -m pytest`` in a subprocess inside the unpacked sdist, with
:mod:`hvac_target_plugin` loaded and ``SCHEDPKI_HVAC_TARGET`` set, writes a JUnit XML report and
returns an :class:`Outcomes`: ``{test id: "passed" | "failed" | "skipped"}`` plus the run's output
tail (shown when a comparison fails).
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARITY_DIR = HERE.parent / "parity"
RUN_TIMEOUT = 900  # seconds for one pytest run of hvac's tests
INTEGRATION_DIR = "tests/integration_tests/api"
_MODULE_ROOT = "tests.integration_tests."


@dataclass
class Outcomes:
    """Per-test outcome of one run. Test ids are ``<file>::<Class>::<test>`` relative to hvac's
    ``tests/integration_tests/api`` (a file outside it reads ``../v1/test_approle.py``)."""

    target: str
    results: dict[str, str] = field(default_factory=dict)
    output: str = ""
    returncode: int = 0

    def with_outcome(self, outcome: str) -> set[str]:
        return {test for test, result in self.results.items() if result == outcome}

    @property
    def passed(self) -> set[str]:
        return self.with_outcome("passed")


def _test_id(case: ET.Element) -> str:
    # classname: tests.integration_tests.api.auth_methods.test_token.TestToken, or outside api/:
    # tests.integration_tests.v1.test_approle.TestApproleRoutes (id ../v1/test_approle.py::...)
    module, _, cls = case.get("classname", "").rpartition(".")
    if module.startswith(_MODULE_ROOT):
        rel = module[len(_MODULE_ROOT):].replace(".", "/")
        rel = rel[len("api/"):] if rel.startswith("api/") else f"../{rel}"
    else:
        rel = module.replace(".", "/")
    return f"{rel}.py::{cls}::{case.get('name')}"


def sdist_path(test: str) -> str:
    """``test`` (a file or ``file::Class::test`` relative to ``tests/integration_tests/api``, ``../``
    allowed) as a path relative to the sdist root: ``../v1/x.py`` -> ``tests/integration_tests/v1/x.py``."""
    return posixpath.normpath(f"{INTEGRATION_DIR}/{test}")


def parse_junit(path: Path, target: str) -> Outcomes:
    """The outcomes in a JUnit XML report (a test with a failure or error anywhere, setup and
    teardown included, is ``failed``)."""
    outcomes = Outcomes(target)
    for case in ET.parse(path).getroot().iter("testcase"):
        test = _test_id(case)
        if case.find("failure") is not None or case.find("error") is not None:
            result = "failed"
        elif case.find("skipped") is not None:
            result = "skipped"
        else:
            result = "passed"
        if outcomes.results.get(test) != "failed":  # a teardown error after a pass stays a failure
            outcomes.results[test] = result
    return outcomes


def run_hvac_tests(sdist: Path, files: list[str], target: str, report_dir: Path,
                   deselect: list[str] = ()) -> Outcomes:
    """Run ``files`` (relative to ``tests/integration_tests/api``; ``../v1/test_approle.py`` names a
    file outside it) against ``target`` (``"double"`` or ``"bao"``); ``deselect`` holds ids relative to
    the same folder (``file::Class::test``)."""
    report = report_dir / f"hvac-{target}.xml"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "hvac_target_plugin", "-c", str(HERE / "hvac_pytest.ini"),
            "--rootdir", str(sdist), f"--junitxml={report}", "-o", "junit_family=xunit2"]
    args += [sdist_path(f) for f in files]
    for test in deselect:
        args += ["--deselect", sdist_path(test)]
    env = dict(os.environ)
    env["SCHEDPKI_HVAC_TARGET"] = target
    env["PYTHONPATH"] = os.pathsep.join([str(sdist), str(HERE), str(PARITY_DIR)])
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(args, cwd=sdist, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    output = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
    if not report.is_file():
        raise RuntimeError(f"hvac's tests did not run against {target} (exit {proc.returncode}):\n{output}")
    outcomes = parse_junit(report, target)
    outcomes.output, outcomes.returncode = output, proc.returncode
    return outcomes
