"""Parity of the privilege rules of auth/token/create (who may choose ids, policies, orphans, periods) against OpenBao 2.7.2.

A token whose policy allows only ``auth/token/create`` (no ``sudo``) must not pick its token id
(least of all ``root``), make orphans or periodic tokens, or give its child policies it does not
hold; nobody may reuse a taken id. Each row is sent to bao and the double by the same tokens.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

SUDO_ID = "root or sudo privileges required to specify token id"
DUPLICATE = "cannot create a token with a duplicate ID"
SUBSET = "child policies must be subset of parent"
CUSTOM_ID_WARNING = ("Supplying a custom ID for the token uses the weaker SHA1 hashing instead of the more secure "
                     "SHA2-256 HMAC for token obfuscation. SHA1 hashed tokens on the wire leads to less secure lookups.")


def _tokens(pair) -> dict[str, str]:
    """Policies ``<m>-creator`` (create, update on auth/token/create), ``<m>-sudoer`` (the same plus
    sudo) and ``<m>-other``; tokens holding them, captured per side as ``creator``, ``sudoer``,
    ``bare`` (creator without the default policy). Returns the policy names."""
    m = pair.mount
    names = {"creator": f"{m}-creator", "sudoer": f"{m}-sudoer", "other": f"{m}-other"}
    rules = {"creator": '["create", "update"]', "sudoer": '["create", "update", "sudo"]'}
    for kind, name in names.items():
        body = (f'path "auth/token/create" {{ capabilities = {rules[kind]} }}' if kind in rules
                else 'path "secret/*" { capabilities = ["read"] }')
        pair.send("POST", f"/v1/sys/policies/acl/{name}", json={"policy": body}).same().expect(204)
    for var, body in (("creator", {"policies": [names["creator"]]}), ("sudoer", {"policies": [names["sudoer"]]}),
                      ("bare", {"policies": [names["creator"]], "no_default_policy": True})):
        ex = pair.send("POST", "/v1/auth/token/create", json={**body, "ttl": "1h"}).same(volatile=("client_token", "accessor"))
        ex.expect(200).capture(var, lambda j: j["auth"]["client_token"])
    return names


def _as(var: str):
    return lambda side: side.vars[var]


def _auth(expected: dict):
    def check(side, resp):
        auth = resp.json()["auth"]
        assert {k: auth[k] for k in expected} == expected, (side.name, auth)

    return check


def test_non_sudo_token_cannot_choose_its_id_not_even_root(pair):
    names = _tokens(pair)
    m = pair.mount
    for token_id in ("root", f"{m}-custom", "s.abc", "a.b"):
        pair.send("POST", "/v1/auth/token/create", token=_as("creator"),
                  json={"id": token_id, "policies": [names["creator"]]}).same().expect(400, errors=[SUDO_ID])
    # the root token still works
    pair.send("GET", "/v1/sys/mounts").expect(200)
    pair.send("GET", "/v1/auth/token/lookup-self").same().expect(200, data={"id": "root", "policies": ["root"]})


def test_duplicate_id_is_refused_for_root_and_sudo(pair):
    _tokens(pair)
    m = pair.mount
    pair.send("POST", "/v1/auth/token/create", json={"id": f"{m}-dup"}).same(volatile=("accessor",)).expect(
        200, warnings=[CUSTOM_ID_WARNING])
    pair.send("POST", "/v1/auth/token/create", json={"id": f"{m}-dup"}).same().expect(400, errors=[DUPLICATE])
    pair.send("POST", "/v1/auth/token/create", json={"id": "root"}).same().expect(400, errors=[DUPLICATE])
    pair.send("POST", "/v1/auth/token/create", token=_as("sudoer"), json={"id": "root"}).same().expect(
        400, errors=[DUPLICATE])
    pair.send("GET", "/v1/auth/token/lookup-self").same().expect(200, data={"id": "root", "policies": ["root"]})


@pytest.mark.parametrize("body, error", [
    ({"policies": ["{other}"]}, SUBSET),
    ({"policies": ["{other}", "{creator}"]}, SUBSET),
    ({"policies": ["root"]}, SUBSET),
    ({"policies": ["response-wrapping"]}, SUBSET),
    ({"no_parent": True}, "root or sudo privileges required to create orphan token"),
    ({"period": "1h"}, "root or sudo privileges required to create periodic token"),
    ({"period": "1h", "no_parent": True}, "root or sudo privileges required to create orphan token"),
    ({"id": "x", "no_parent": True}, SUDO_ID),
    ({"policies": ["{other}"], "no_parent": True}, SUBSET),
    ({"num_uses": -1, "id": "x"}, "number of uses cannot be negative"),
    ({"type": "bogus"}, "invalid 'token_type' value"),
    ({"type": "default"}, "invalid 'token_type' value"),
    ({"entity_alias": "a"}, "'entity_alias' is only allowed in combination with token role"),
    ({"period": "soon"}, 'time: invalid duration "soon"'),
], ids=lambda v: str(v) if isinstance(v, str) else None)
def test_non_sudo_token_refusals(pair, body, error):
    names = _tokens(pair)
    body = {k: [p.format(**names) for p in v] if k == "policies" else v for k, v in body.items()}
    pair.send("POST", "/v1/auth/token/create", token=_as("creator"), json=body).same().expect(400, errors=[error])


def test_default_policy_only_when_the_parent_holds_it(pair):
    names = _tokens(pair)
    creator = names["creator"]
    pair.send("POST", "/v1/auth/token/create", token=_as("bare"), json={"policies": ["default", creator]}).same().expect(
        400, errors=[SUBSET])
    volatile = ("client_token", "accessor")
    pair.send("POST", "/v1/auth/token/create", token=_as("bare"), json={"policies": [creator]}).same(
        volatile=volatile).expect(200).check(_auth({"policies": [creator], "orphan": False}))
    pair.send("POST", "/v1/auth/token/create", token=_as("creator"), json={"policies": [creator]}).same(
        volatile=volatile).expect(200).check(_auth({"policies": sorted([creator, "default"])}))
    pair.send("POST", "/v1/auth/token/create", token=_as("creator"), json={"no_default_policy": True}).same(
        volatile=volatile).expect(200).check(_auth({"policies": [creator]}))


def test_what_sudo_allows_and_what_it_does_not(pair):
    names = _tokens(pair)
    m, sudoer = pair.mount, names["sudoer"]
    volatile = ("client_token", "accessor")
    pair.send("POST", "/v1/auth/token/create", token=_as("sudoer"), json={"id": f"{m}-mine", "no_parent": True}).same(
        volatile=("accessor",)).expect(200, warnings=[CUSTOM_ID_WARNING]).check(
        _auth({"client_token": f"{m}-mine", "orphan": True, "policies": ["default", sudoer]}))
    pair.send("POST", "/v1/auth/token/create", token=_as("sudoer"), json={"policies": [names["other"]], "period": "1h"}).same(
        volatile=volatile).expect(200).check(_auth({"policies": ["default", names["other"]], "lease_duration": 3600}))
    for body, error in (({"policies": ["root"]}, "root tokens may not be created without parent token being root"),
                        ({"policies": ["response-wrapping"]}, 'cannot assign policy "response-wrapping"'),
                        ({"id": "s.abc"}, "custom token ID cannot have the 's.' prefix"),
                        ({"id": "hvs.abc"}, "custom token ID cannot have the 'hvs.' prefix"),
                        ({"id": "b.abc"}, "custom token ID cannot have a '.' in the value")):
        pair.send("POST", "/v1/auth/token/create", token=_as("sudoer"), json=body).same().expect(400, errors=[error])
    pair.send("POST", "/v1/auth/token/create", json={"policies": ["root"], "type": "batch"}).same().expect(
        400, errors=["batch tokens cannot be root tokens"])


def test_explicit_max_ttl_caps_the_ttl_with_a_warning(pair):
    names = _tokens(pair)
    volatile = ("client_token", "accessor")
    pair.send("POST", "/v1/auth/token/create", token=_as("creator"), json={"explicit_max_ttl": "1h"}).same(
        volatile=volatile).expect(200, warnings=['TTL of "768h" exceeded the effective max_ttl of "1h"; TTL value is '
                                                 'capped accordingly']).check(_auth({"lease_duration": 3600}))
    pair.send("POST", "/v1/auth/token/create", json={"policies": [names["other"]], "ttl": "2h", "explicit_max_ttl": "90m"}).same(
        volatile=volatile).expect(200, warnings=['TTL of "2h" exceeded the effective max_ttl of "1h30m"; TTL value is '
                                                 'capped accordingly']).check(_auth({"lease_duration": 5400}))
    pair.send("POST", "/v1/auth/token/create", json={"explicit_max_ttl": "1h"}).same(volatile=volatile).expect(
        200, warnings=None).check(_auth({"policies": ["root"], "lease_duration": 3600, "renewable": True}))
