"""Robustness suites: Hypothesis profiles, one double per module, and the helpers' import path.

Profiles (select with ``SCHEDPKI_HYPOTHESIS_PROFILE``; per-test example counts are multiplied by
``SCHEDPKI_ROBUSTNESS_SCALE``, default 1):

* ``schedpki-ci`` (default): bounded examples, no deadline, no example database (nothing is written
  into the checkout), failing examples printed for reproduction;
* ``schedpki-deep``: the same with the example database on, for long local runs, e.g.
  ``SCHEDPKI_HYPOTHESIS_PROFILE=schedpki-deep SCHEDPKI_ROBUSTNESS_SCALE=20 pytest tests/robustness``.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
               HealthCheck.function_scoped_fixture, HealthCheck.large_base_example]
settings.register_profile("schedpki-ci", deadline=None, database=None, print_blob=True,
                          suppress_health_check=_SUPPRESSED)
settings.register_profile("schedpki-deep", deadline=None, print_blob=True, suppress_health_check=_SUPPRESSED)

from robust_helpers import start_double  # noqa: E402


@pytest.fixture(scope="module")
def double():
    """A double of this module alone (port 0), stopped at the end; handler errors fail the test
    that caused them."""
    d = start_double()
    yield d
    d.faults.clear()
    d.stop()


@pytest.fixture(autouse=True)
def _no_handler_errors(request):
    yield
    if "double" in request.fixturenames:
        errors = request.getfixturevalue("double").pop_handler_errors()
        if errors:
            pytest.fail("exception(s) inside the double's handlers:\n" + "\n".join(map(str, errors)), pytrace=False)
