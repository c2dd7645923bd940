"""``config/auto-tidy`` over HTTP: defaults, merge-on-write, the refusal texts (and that a refused
write changes nothing), and ``run_auto_tidy`` - the double has no periodic job, so an enabled auto-tidy
only runs when a test calls it."""

from __future__ import annotations

import datetime

import pytest
from tidy_helpers import HOUR, MULTI, OPERATIONS, not_after

from pytest_schedpki.secrets.engines.pki.revocation.tidy import run_auto_tidy

DEFAULTS = {
    "acme_account_safety_buffer": 2592000, "enabled": False, "interval_duration": 43200,
    "issuer_safety_buffer": 31536000, "maintain_stored_certificate_counts": False, "page_size": 1000,
    "pause_duration": "0s", "publish_stored_certificate_count_metrics": False, "revoked_safety_buffer": 259200,
    "safety_buffer": 259200, "tidy_acme": False, "tidy_cert_store": False, "tidy_expired_issuers": False,
    "tidy_invalid_certs": False, "tidy_move_legacy_ca_bundle": False, "tidy_revoked_cert_issuer_associations": False,
    "tidy_revoked_certs": False,
}


def test_defaults(empty):
    answer = empty.ok("GET", "config/auto-tidy")
    assert answer["data"] == DEFAULTS and answer["warnings"] is None


def test_write_merges_and_answers_the_configuration(empty):
    written = empty.ok("POST", "config/auto-tidy", {
        "enabled": True, "tidy_cert_store": True, "interval_duration": "1h", "safety_buffer": "10m",
        "pause_duration": "2", "page_size": 5, "issuer_safety_buffer": "48h", "bogus": 1})
    expected = {**DEFAULTS, "enabled": True, "tidy_cert_store": True, "interval_duration": 3600,
                "safety_buffer": 600, "revoked_safety_buffer": 600, "pause_duration": "2s", "page_size": 5,
                "issuer_safety_buffer": 172800}
    assert written["data"] == expected
    assert written["warnings"] == ["Endpoint ignored these unrecognized parameters: [bogus]"]
    assert empty.ok("GET", "config/auto-tidy")["data"] == expected
    # revoked_safety_buffer follows safety_buffer until it is set itself
    merged = empty.ok("PUT", "config/auto-tidy", {"revoked_safety_buffer": "1h", "tidy_revoked_certs": True,
                                                  "maintain_stored_certificate_counts": True,
                                                  "publish_stored_certificate_count_metrics": True,
                                                  "tidy_acme": True, "acme_account_safety_buffer": "1d",
                                                  "pause_duration": "1500ms", "tidy_revocation_list": False})["data"]
    assert merged == {**expected, "revoked_safety_buffer": 3600, "tidy_revoked_certs": True,
                      "maintain_stored_certificate_counts": True, "publish_stored_certificate_count_metrics": True,
                      "tidy_acme": True, "acme_account_safety_buffer": 86400, "pause_duration": "1.5s"}
    assert empty.ok("POST", "config/auto-tidy", {"safety_buffer": "2h"})["data"]["revoked_safety_buffer"] == 3600
    # counting is only switched on when a mount is initialised with it: the status keeps null counts
    data = empty.status()
    assert (data["current_cert_store_count"], data["current_revoked_cert_count"]) == (None, None)


@pytest.mark.parametrize(("body", "error"), [
    ({"enabled": True, "tidy_cert_store": False},
     f"Auto-tidy enabled but no tidy operations were requested. Enable at least one tidy operation to be run "
     f"({OPERATIONS})."),
    ({"interval_duration": "-5"}, "Field validation failed: error converting input for field \"interval_duration\": "
                                  "cannot provide negative value '-5'"),
    ({"safety_buffer": 0}, "given safety_buffer must be at least one second; got: 0"),
    ({"revoked_safety_buffer": "0s"}, "revoked_safety_buffer must be at least one second; got: 0"),
    ({"issuer_safety_buffer": 0}, "given safety_buffer must be at least one second; got: 0"),
    ({"acme_account_safety_buffer": 0}, "given acme_account_safety_buffer must be at least one second; got: 0"),
    ({"pause_duration": "x"}, "unable to parse given pause_duration: time: invalid duration \"x\""),
    ({"pause_duration": "-1s"}, "received invalid, negative pause_duration"),
    ({"page_size": 4}, "page_size must be at least 5"),
    ({"page_size": 0}, "page_size must be at least 5"),
    ({"publish_stored_certificate_count_metrics": True},
     "Can not publish a running storage metrics count to metrics without first maintaining that count.  Enable "
     "`maintain_stored_certificate_counts` to enable `publish_stored_certificate_count_metrics`."),
])
def test_refused_writes_change_nothing(empty, body, error):
    assert empty.fails("POST", "config/auto-tidy", {"tidy_cert_store": True, **body}, 400) == [error]
    assert empty.ok("GET", "config/auto-tidy")["data"] == DEFAULTS


def test_disabling_every_operation_of_an_enabled_config_is_refused(empty):
    empty.ok("POST", "config/auto-tidy", {"enabled": True, "tidy_cert_store": True})
    assert empty.fails("POST", "config/auto-tidy", {"tidy_cert_store": False}, 400)[0].startswith(
        "Auto-tidy enabled but no tidy operations were requested.")
    assert empty.ok("POST", "config/auto-tidy", {"enabled": False, "tidy_cert_store": False})["data"] == DEFAULTS


def test_wrong_operations(empty):
    assert empty.fails("DELETE", "config/auto-tidy", None, 405) == [MULTI.format("unsupported operation")]
    assert empty.fails("LIST", "config/auto-tidy", None, 404) == [MULTI.format("unsupported path")]


def test_auto_tidy_never_runs_by_itself(pki, clock):
    leaf = pki.issue(ttl="10m")
    pki.ok("POST", "config/auto-tidy", {"enabled": True, "tidy_cert_store": True, "interval_duration": 1,
                                        "safety_buffer": 1})
    clock.advance(datetime.timedelta(days=30))
    pki.ok("GET", "config/auto-tidy")
    assert pki.status()["state"] == "Inactive"
    assert leaf["serial_number"] in pki.listed("certs")


def test_run_auto_tidy_uses_the_stored_configuration(pki, clock):
    leaf = pki.issue(ttl="10m")
    backend = pki.backend
    assert run_auto_tidy(backend) is False  # disabled
    pki.ok("POST", "config/auto-tidy", {"enabled": True, "tidy_cert_store": True, "interval_duration": 0,
                                        "safety_buffer": "1m", "pause_duration": "1s"})
    assert run_auto_tidy(backend) is False  # interval 0: the periodic function never starts one
    pki.ok("POST", "config/auto-tidy", {"interval_duration": "12h"})
    clock.set(not_after(leaf["certificate"]) + datetime.timedelta(minutes=2))
    assert run_auto_tidy(backend) is True
    data = pki.status()
    assert (data["state"], data["tidy_cert_store"], data["safety_buffer"], data["pause_duration"]) == (
        "Finished", True, 60, "1s")
    assert (data["cert_store_deleted_count"], data["issuer_safety_buffer"]) == (1, 365 * 24 * HOUR)
    assert leaf["serial_number"] not in pki.listed("certs")
