"""``lease_duration`` of a leased certificate (``generate_lease`` roles): the seconds left until
NotAfter when the answer is built; a NotAfter already passed gives OpenBao's core default lease TTL
(the mount's default, 768h unless tuned), capped by the mount's max lease TTL."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

from pytest_schedpki.secrets.engines.pki.issuance.issue import _lease_duration

NOW = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


def _backend(default_ttl: int = 768 * 3600, max_ttl: int = 87600 * 3600):
    mount = SimpleNamespace(effective_default_ttl=lambda: default_ttl, effective_max_ttl=lambda: max_ttl)
    return SimpleNamespace(now=lambda: NOW, mount=mount)


def test_seconds_left_until_not_after():
    assert _lease_duration(_backend(), NOW + datetime.timedelta(seconds=3599, microseconds=900_000)) == 3599


def test_not_after_reached_this_second_is_zero():
    assert _lease_duration(_backend(), NOW + datetime.timedelta(microseconds=500_000)) == 0


def test_a_passed_not_after_gives_the_default_lease_ttl():
    assert _lease_duration(_backend(), NOW - datetime.timedelta(seconds=1)) == 2764800
    assert _lease_duration(_backend(default_ttl=600), NOW - datetime.timedelta(microseconds=1)) == 600


def test_the_mount_max_lease_ttl_caps_it():
    assert _lease_duration(_backend(max_ttl=60), NOW + datetime.timedelta(hours=2)) == 60
