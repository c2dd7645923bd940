"""``PUT /v1/acl/bootstrap`` and one-time tokens (``nomad/acl_endpoint.go`` ``Bootstrap``,
``fileBootstrapResetIndex``, ``UpsertOneTimeToken``, ``ExchangeOneTimeToken``;
``command/agent/acl_endpoint.go`` ``ACLTokenBootstrap``, ``UpsertOneTimeToken``, ``ExchangeOneTimeToken``)."""

from __future__ import annotations

import datetime
import uuid

import pytest
from freezegun import freeze_time
from sched_helpers import assert_plain


@pytest.fixture
def fresh(make_sched):
    """A scheduler started as a fresh Nomad cluster (``bootstrap=False``)."""
    return make_sched(bootstrap=False)


def test_a_fresh_cluster_has_no_management_token_until_bootstrapped(fresh):
    assert_plain(fresh.get("/v1/acl/tokens"), 403, "Permission denied")
    r = fresh.put("/v1/acl/bootstrap", token=None)
    assert r.status_code == 200
    t = r.json()
    assert (t["Name"], t["Type"], t["Global"], t["Policies"], t["Roles"], t["ExpirationTime"]) == (
        "Bootstrap Token", "management", True, None, None, None)
    uuid.UUID(t["SecretID"]), uuid.UUID(t["AccessorID"])
    assert t["CreateIndex"] == t["ModifyIndex"] == int(r.headers["X-Nomad-Index"]) == fresh.state.bootstrap_reset_index
    assert fresh.get("/v1/acl/tokens", token=t["SecretID"]).status_code == 200
    again = fresh.put("/v1/acl/bootstrap", token=t["SecretID"])
    assert_plain(again, 400, f"ACL bootstrap already done (reset index: {t['CreateIndex']})")


def test_bootstrap_secret_and_its_checks(fresh):
    assert_plain(fresh.put("/v1/acl/bootstrap", json={"BootstrapSecret": "not-a-uuid"}), 400, "invalid acl token")
    assert_plain(fresh.put("/v1/acl/bootstrap", data=b"{"), 400, "failed to decode request body: unexpected EOF")
    assert_plain(fresh.put("/v1/acl/bootstrap", json={"BootstrapSecret": 5}), 400,
                 "failed to decode request body: json: cannot unmarshal number into Go struct field "
                 "ACLTokenBootstrapRequest.BootstrapSecret of type string")
    assert fresh.state.bootstrap_reset_index is None  # refusals changed nothing
    secret = str(uuid.uuid4())
    t = fresh.post("/v1/acl/bootstrap", json={"BootstrapSecret": secret}).json()
    assert t["SecretID"] == secret
    assert_plain(fresh.get("/v1/acl/bootstrap"), 405, "Invalid method")


def test_the_reset_file_allows_one_more_bootstrap(fresh):
    first = fresh.put("/v1/acl/bootstrap").json()
    reset = first["CreateIndex"]
    fresh.state.set_bootstrap_reset_index(reset + 7)
    assert_plain(fresh.put("/v1/acl/bootstrap"), 400,
                 f"Invalid bootstrap reset index (specified {reset + 7}, reset index: {reset})")
    fresh.state.set_bootstrap_reset_index(reset)
    second = fresh.put("/v1/acl/bootstrap").json()
    assert second["AccessorID"] != first["AccessorID"]
    assert fresh.get("/v1/acl/token/self", token=first["SecretID"]).status_code == 200  # the old token stays
    # the file still names the old reset index: refused until it is rewritten
    assert_plain(fresh.put("/v1/acl/bootstrap"), 400,
                 f"Invalid bootstrap reset index (specified {reset}, reset index: {second['CreateIndex']})")


def test_the_default_double_is_already_bootstrapped(sched):
    assert_plain(sched.put("/v1/acl/bootstrap"), 400, "ACL bootstrap already done (reset index: 1)")
    sched.state.unbootstrap()
    assert_plain(sched.get("/v1/acl/tokens"), 403, "Permission denied")  # root is gone
    assert sched.put("/v1/acl/bootstrap").status_code == 200


def test_bootstrap_with_acls_disabled(fresh):
    fresh.state.set_acl_enabled(False)
    assert_plain(fresh.put("/v1/acl/bootstrap"), 400, "ACL support disabled")


def test_one_time_token_round_trip(sched):
    r = sched.put("/v1/acl/token/onetime")
    assert r.status_code == 200
    body = r.json()
    assert list(body) == ["OneTimeToken", "Index"]
    ott = body["OneTimeToken"]
    assert list(ott) == ["OneTimeSecretID", "AccessorID", "ExpiresAt", "CreateIndex", "ModifyIndex"]
    assert ott["AccessorID"] == sched.state.get_token("root").AccessorID
    assert body["Index"] == ott["CreateIndex"] == int(r.headers["X-Nomad-Index"])
    x = sched.post("/v1/acl/token/onetime/exchange", json={"OneTimeSecretID": ott["OneTimeSecretID"]}, token=None)
    assert x.status_code == 200
    assert list(x.json()) == ["Token", "Index"]
    assert x.json()["Token"]["SecretID"] == "root"
    again = sched.post("/v1/acl/token/onetime/exchange", json={"OneTimeSecretID": ott["OneTimeSecretID"]})
    assert_plain(again, 403, "Permission denied")  # used once


def test_one_time_token_expiry_replacement_and_refusals(sched):
    with freeze_time("2026-03-01T00:00:00Z") as frozen:
        first = sched.put("/v1/acl/token/onetime").json()["OneTimeToken"]
        assert first["ExpiresAt"] == "2026-03-01T00:10:00Z"
        second = sched.put("/v1/acl/token/onetime").json()["OneTimeToken"]  # one per accessor: replaces
        assert_plain(sched.post("/v1/acl/token/onetime/exchange", json={"OneTimeSecretID": first["OneTimeSecretID"]}),
                     403, "Permission denied")
        frozen.tick(datetime.timedelta(minutes=10, seconds=1))
        assert_plain(sched.post("/v1/acl/token/onetime/exchange",
                                json={"OneTimeSecretID": second["OneTimeSecretID"]}), 403, "Permission denied")
    assert_plain(sched.put("/v1/acl/token/onetime", token=None), 403, "Permission denied")
    assert_plain(sched.put("/v1/acl/token/onetime", token=str(uuid.uuid4())), 403, "Permission denied")
    assert_plain(sched.get("/v1/acl/token/onetime"), 405, "Invalid method")
    assert_plain(sched.post("/v1/acl/token/onetime/exchange", data=b""), 400, "Request body is empty")


def test_one_time_token_of_a_deleted_token(sched):
    r = sched.put("/v1/acl/policy/eng", json={"Name": "eng", "Rules": 'agent { policy = "read" }'})
    assert r.status_code == 200
    t = sched.put("/v1/acl/token", json={"Type": "client", "Policies": ["eng"]}).json()
    ott = sched.put("/v1/acl/token/onetime", token=t["SecretID"]).json()["OneTimeToken"]
    assert ott["AccessorID"] == t["AccessorID"]
    assert sched.delete(f"/v1/acl/token/{t['AccessorID']}").status_code == 200
    assert_plain(sched.post("/v1/acl/token/onetime/exchange", json={"OneTimeSecretID": ott["OneTimeSecretID"]}),
                 403, "Permission denied")
