"""The name ``default`` means the packaged seed (what ``schedpki serve`` starts with), in the ini
option, the marker and ``schedpki.seed``."""

from pytest_schedpki import Double

USES_THE_DEFAULT_SEED = """
import pytest
import requests


def check(schedpki):
    r = requests.post(f"{schedpki.secrets.url}/v1/pki/issue/example-dot-com", headers=schedpki.secrets.headers(),
                      json={"common_name": "www.example.com", "ttl": "1h"})
    assert r.status_code == 200, r.text
    methods = requests.get(f"{schedpki.scheduler.url}/v1/acl/auth-methods").json()
    assert [m["Name"] for m in methods] == ["example-oidc"]


{tests}
"""


def test_ini_default_names_the_packaged_seed(pytester):
    pytester.makeini("[pytest]\nschedpki_seed = default\n")
    pytester.makepyfile(USES_THE_DEFAULT_SEED.replace("{tests}", "def test_it(schedpki):\n    check(schedpki)\n"))
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_marker_and_handle_default_name_the_packaged_seed(pytester):
    tests = ('@pytest.mark.schedpki(seed="default")\ndef test_marker(schedpki):\n    check(schedpki)\n\n\n'
             'def test_handle(schedpki):\n    schedpki.seed("default")\n    check(schedpki)\n\n\n'
             'def test_unseeded(schedpki):\n'
             '    assert requests.get(f"{schedpki.secrets.url}/v1/sys/mounts", headers=schedpki.secrets.headers())'
             '.json()["data"] == {}\n')
    pytester.makepyfile(USES_THE_DEFAULT_SEED.replace("{tests}", tests))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=3)


def test_double_seed_default():
    double = Double()
    double.seed("default")
    assert list(double.secrets.mounts) == ["secret/", "pki/"]  # the packaged seed: secret/ as bao server -dev mounts it, then pki/
    assert list(double.scheduler.authoritative_view().methods) == ["example-oidc"]
