"""Parity: sys/leases/* on certificates issued by a ``generate_lease`` role - lookup, list, renew
(refused), revoke, revoke-prefix, revoke-force - and revocation of the certificate with its lease
or with the token that asked for it."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.parity

_LEASE_VOLATILE = ("ttl", "expire_time", "issue_time", "id")


@pytest.fixture
def leased(pki):
    pki.create_role("leased", {"allow_any_name": True, "generate_lease": True, "ttl": "24h", "key_type": "ec",
                               "key_bits": 256})
    return pki


def _issue(pair, name="lease", token="root"):
    ex = pair.send("POST", "/v1/{mount}/issue/leased", json={"common_name": "a.example.com"}, token=token)
    ex.same(cert_keys=("certificate",), volatile=("lease_duration",)).expect(200)
    ex.capture(name, lambda j: j["lease_id"])
    ex.capture(name + "_serial", lambda j: j["data"]["serial_number"])
    return ex


def _until_revoked_on_bao(pair, name, seconds=15.0):
    """OpenBao revokes a revoked token's leases in the background (its expiration manager): wait,
    bounded, until bao's certificate shows the revocation, so the comparison does not race it."""
    real = pair.real
    path = "/v1/{mount}/cert/{serial}".format(mount=real.vars["mount"], serial=real.vars[name + "_serial"])
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if real.request("GET", path).json()["data"]["revocation_time"] != 0:
            return
        time.sleep(0.05)
    raise AssertionError(f"bao did not revoke {name} within {seconds:g} s after its token was revoked")


def _revoked(name, expect=True):
    def check(side, resp):
        assert (resp.json()["data"]["revocation_time"] != 0) is expect

    return check


def test_lookup_list_renew_revoke(leased):
    pair = leased
    _issue(pair)
    pair.send("PUT", "/v1/sys/leases/lookup", json=lambda s: {"lease_id": s.vars["lease"]}).same(
        volatile=_LEASE_VOLATILE).expect(200, data={"path": f"{pair.mount}/issue/leased", "renewable": False,
                                                    "last_renewal": None})
    pair.send("PUT", "/v1/sys/leases/lookup", json={"lease_id": "nope"}).same().expect(400, errors=["invalid lease"])
    pair.send("PUT", "/v1/sys/leases/lookup", json={}).same().expect(400, errors=["lease_id must be specified"])
    pair.send("LIST", "/v1/sys/leases/lookup/{mount}/").same().expect(200, data={"keys": ["issue/"]})
    pair.send("LIST", "/v1/sys/leases/lookup/{mount}/issue").same().expect(200, data={"keys": ["leased/"]})
    pair.send("LIST", "/v1/sys/leases/lookup/{mount}_none/").same().expect(404, errors=[])

    def lists_the_mount(side, resp):  # the root lists every prefix holding a lease (bao adds "auth/" for
        assert f"{pair.mount}/" in resp.json()["data"]["keys"]  # its tokens' leases: docs/divergences.md)

    for path in ("/v1/sys/leases/lookup/", "/v1/sys/leases/lookup"):
        pair.send("LIST", path).expect(200).check(lists_the_mount)
    pair.send("PUT", "/v1/sys/leases/renew", json=lambda s: {"lease_id": s.vars["lease"], "increment": "1h"}).same(
        ).expect(400, errors=["lease is not renewable"])
    pair.send("PUT", "/v1/sys/leases/renew", json={"lease_id": "nope"}).same().expect(400, errors=["lease not found"])
    pair.send("PUT", "/v1/sys/leases/revoke", json=lambda s: {"lease_id": s.vars["lease"]}).same().expect(204)
    pair.send("GET", "/v1/{mount}/cert/{lease_serial}").same(volatile=("revocation_time", "revocation_time_rfc3339")
                                                             ).expect(200).check(_revoked("lease"))
    pair.send("PUT", "/v1/sys/leases/lookup", json=lambda s: {"lease_id": s.vars["lease"]}).same().expect(
        400, errors=["invalid lease"])
    pair.send("PUT", "/v1/sys/leases/revoke", json={"lease_id": "nope"}).same().expect(204)
    pair.send("PUT", "/v1/sys/leases/revoke", json={}).same().expect(400, errors=["lease_id must be specified"])


def test_revoke_prefix_and_force(leased):
    pair = leased
    _issue(pair, "one")
    pair.send("PUT", "/v1/sys/leases/revoke-prefix/{mount}/issue").same().expect(204)
    pair.send("GET", "/v1/{mount}/cert/{one_serial}").same(volatile=("revocation_time", "revocation_time_rfc3339")
                                                           ).expect(200).check(_revoked("one"))
    _issue(pair, "two")
    pair.send("PUT", "/v1/sys/leases/revoke-force/{mount}").same().expect(204)
    pair.send("LIST", "/v1/sys/leases/lookup/{mount}/").same().expect(404, errors=[])
    pair.send("PUT", "/v1/sys/leases/revoke-prefix/{mount}/").same().expect(
        400, errors=["cannot write to a path ending in '/'"])


def test_revoking_the_token_revokes_its_certificates(leased):
    pair = leased
    pair.send("POST", "/v1/auth/token/create", json={"ttl": "1h"}).same().capture(
        "t", lambda j: j["auth"]["client_token"])
    _issue(pair, "mine", token=lambda s: s.vars["t"])
    pair.send("POST", "/v1/auth/token/revoke", json=lambda s: {"token": s.vars["t"]}).same().expect(204)
    _until_revoked_on_bao(pair, "mine")
    pair.send("GET", "/v1/{mount}/cert/{mine_serial}").same(volatile=("revocation_time", "revocation_time_rfc3339")
                                                            ).expect(200).check(_revoked("mine"))
