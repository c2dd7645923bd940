"""Time travel works whatever runs first: the first certificate of a fresh process may be made under
``freeze_time`` (cryptography binds the ``datetime`` class at its first time conversion)."""

FIRST_UNDER_FREEZE = """
import datetime

import requests
from freezegun import freeze_time


def issue_everything(schedpki):
    url, headers = schedpki.secrets.url, schedpki.secrets.headers()
    assert requests.post(f"{url}/v1/sys/mounts/pki", headers=headers, json={"type": "pki"}).status_code == 204
    tune = requests.post(f"{url}/v1/sys/mounts/pki/tune", headers=headers, json={"max_lease_ttl": "87600h"})
    assert tune.status_code == 204, tune.text
    root = requests.post(f"{url}/v1/pki/root/generate/internal", headers=headers,
                         json={"common_name": "Frozen Root", "ttl": "8760h", "key_type": "ec"})
    assert root.status_code == 200, root.text
    role = requests.post(f"{url}/v1/pki/roles/any", headers=headers, json={"allow_any_name": True, "ttl": "1h"})
    assert role.status_code in (200, 204), role.text
    leaf = requests.post(f"{url}/v1/pki/issue/any", headers=headers, json={"common_name": "a.example.com"})
    assert leaf.status_code == 200, leaf.text
    return schedpki.certs.assert_issued(common_name="a.example.com")


def test_first_certificate_of_the_process_under_freeze_time(schedpki):
    with freeze_time("2031-05-01T12:00:00Z"):
        record = issue_everything(schedpki)
    assert record.certificate.not_valid_after_utc == datetime.datetime(2031, 5, 1, 13, tzinfo=datetime.timezone.utc)


def test_later_certificates_with_the_real_clock(schedpki):
    record = issue_everything(schedpki)
    assert record.certificate.not_valid_before_utc.year >= 2024


def test_frozen_again(schedpki):
    with freeze_time("2040-01-01"):
        record = issue_everything(schedpki)
    assert record.certificate.not_valid_before_utc.year == 2039
"""


def test_first_certificate_under_freeze_time_in_a_fresh_process(pytester):
    pytester.makepyfile(test_frozen_first=FIRST_UNDER_FREEZE)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_first_certificate_under_freeze_time_in_every_xdist_worker(pytester):
    # each test in its own file, so that with --dist loadfile each worker's first certificate is frozen
    pytester.makepyfile(test_frozen_a=FIRST_UNDER_FREEZE, test_frozen_b=FIRST_UNDER_FREEZE)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadfile", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)


DOUBLE_BUILT_UNDER_FREEZE = """
import datetime

import requests
from freezegun import freeze_time

from pytest_schedpki import Double


def test_double_created_and_used_under_freeze_time_first():
    with freeze_time("2031-05-01"):
        double = Double().start()
        double.seed({"secrets": {"mounts": [{"path": "pki", "issuers": [{"common_name": "R", "ttl": "8760h"}]}]}})
    try:
        answer = requests.post(f"{double.secrets_url}/v1/pki/root/generate/internal", headers={"X-Vault-Token": "root"},
                               json={"common_name": "Later Root", "ttl": "1h", "issuer_name": "later"})
        assert answer.status_code == 200, answer.text
    finally:
        double.stop()
    assert double.pop_handler_errors() == []
"""


def test_double_used_directly_under_freeze_time_first(pytester):
    # without the plugin (no configure-time warm-up): the Double warms up itself, even while frozen
    pytester.makepyfile(test_direct=DOUBLE_BUILT_UNDER_FREEZE)
    result = pytester.runpytest_subprocess("-p", "no:schedpki", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
