"""The renewal TTL arithmetic (``CalculateTTL`` in openbao ``sdk/framework/lease.go``): the token's
creation and now are each truncated to the second before the time left is taken, so what is left
of an explicit max depends on the wall-clock seconds, not on the time that passed."""

from __future__ import annotations

import datetime

import pytest

from pytest_schedpki.secrets.system.token_ttl import renewal_ttl

CAPPED = 'TTL of "3h" exceeded the effective max_ttl of "{}"; TTL value is capped accordingly'
_T0 = datetime.datetime(2026, 11, 25, 12, 0, 0, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize(("created", "now", "left", "shown"), [
    (0.9, 1.1, 7199, "1h59m59s"),   # 0.2 s passed, but across a second boundary
    (0.1, 0.9, 7200, "2h"),         # 0.8 s passed within one second
    (0.0, 0.0, 7200, "2h"),
    (0.5, 61.4, 7139, "1h58m59s"),  # 60.9 s passed, 61 whole seconds apart
    (0.999, 3600.0, 3600, "1h"),
    (0.2, 3599.7, 3601, "1h1s"),    # Go's "1h0m1s" without the zero minutes
])
def test_time_left_counts_whole_seconds_between_truncated_instants(created, now, left, shown):
    start = _T0 + datetime.timedelta(seconds=created)
    at = _T0 + datetime.timedelta(seconds=now)
    ttl, warnings = renewal_ttl(3 * 3600, 3600, 0, 7200, start, at)
    assert ttl == left
    assert warnings == [CAPPED.format(shown)]


def test_a_renewal_inside_the_time_left_is_not_capped():
    start = _T0 + datetime.timedelta(seconds=0.9)
    ttl, warnings = renewal_ttl(600, 3600, 0, 7200, start, _T0 + datetime.timedelta(seconds=1.1))
    assert (ttl, warnings) == (600, [])


def test_past_the_explicit_max_grants_nothing():
    start = _T0
    ttl, warnings = renewal_ttl(600, 3600, 0, 60, start, _T0 + datetime.timedelta(seconds=60.2))
    assert (ttl, warnings) == (0, [])
