"""Request sequences of the token family: the token store and the sys paths clients use.

Same building blocks as the PKI family (:mod:`.requests_gen`): a :class:`Req` is written once and
sent to both servers; :class:`Ref` values are filled in per side - ``Ref("token", k)`` /
``Ref("accessor", k)`` are the id / accessor of the k-th token *that side* created in this sequence
(modulo the count; the set-up creates token #0, see :mod:`.token_runner`), ``Ref("root_accessor")``
the root token's accessor; ``{mount}`` in a path is the sequence's own KV mount. A request may be sent
with such a token in ``X-Vault-Token`` instead of the root token.

Lifetimes: some creations make short-lived tokens (:data:`SHORT_TTLS`, often parents of later
creations made with them) or use-limited ones (``num_uses`` 1-3, then used as the request's token);
now and then a request waits :data:`PAUSE` real seconds first, so short-lived parents expire (with
their trees) on both sides before it is sent.

Paths: ``auth/token/create`` (plain, ``create-orphan``, ``create/<role>``), lookup / lookup-self /
lookup-accessor, renew / renew-self / renew-accessor, revoke / revoke-self / revoke-accessor /
revoke-orphan, token roles (write, read, LIST, delete), LIST accessors; ``sys/policy``,
``sys/policies/acl/<name>`` (good and broken HCL/JSON), the capabilities paths, ``sys/mounts`` (read,
tune read/write of the sequence's mount), ``sys/auth``, ``sys/health`` (with its status-code query
parameters), ``sys/seal-status``, ``sys/leader``, ``sys/internal/ui/mounts``, ``sys/host-info``. One request
in fifteen names a namespace (``X-Vault-Namespace``: the root one by one of its names, or one that does not
exist).

Never drawn (they would change the shared real server for later sequences): revoking the root token
(``revoke-self`` with it, ``"root"`` in a revoke body), writing the ``default`` policy, tuning mounts
other than the sequence's own.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .requests_gen import ODD, RawNumber, Ref, Req, drawn_fields, shaped

TOKEN_DURATIONS = ["1h", "30m", "90s", "0", "0s", "", "bad", "1d", "-1h", "2h", "768h", "800h", "1.5h", "87600h",
                   "99999999999999999999s", " 1h", "10s", "system"]
durations = st.sampled_from(TOKEN_DURATIONS) | st.sampled_from([3600, 0, -5, 60, 1.5, 2 ** 64, RawNumber("1e999"),
                                                                 "3600"])
odd_values = st.sampled_from(ODD)
POLICY_NAMES = ["dev", "p1", "p2", "Dev", "default", "root", "bad name", "p1 ", "", "\u00fcml", "a" * 130]
ROLE_NAMES = ["ops", "r1", "r2", "nope", "R1", "a.b", "bad name"]


def _comma_or_list(pool: list[str]) -> st.SearchStrategy:
    items = st.lists(st.sampled_from(pool), min_size=1, max_size=3)
    return st.sampled_from(pool) | items | items.map(",".join)


def token_values(allow_root: bool = True) -> st.SearchStrategy:
    """A token id for a body: one created here (mostly), or hostile values (``root`` only where
    harmless)."""
    fixed = ["", "nope", "s.nope", "b.nope", "hvs.AAAAAAAAAAAAAAAAAAAAAAAA", " ", "\u00e9", None, 5, [], {}]
    if allow_root:
        fixed.append("root")
    return st.builds(Ref, st.just("token"), st.integers(0, 4)) | st.sampled_from(fixed)


def accessor_values(allow_root: bool = True) -> st.SearchStrategy:
    fixed: list[Any] = ["", "nope", "AAAAAAAAAAAAAAAAAAAAAAAA", None, 7]
    if allow_root:
        fixed.append(Ref("root_accessor"))
    return st.builds(Ref, st.just("accessor"), st.integers(0, 4)) | st.sampled_from(fixed)


GOOD_HCL = [
    'path "secret/*" {\n  capabilities = ["read", "list"]\n}\n',
    'path "auth/token/lookup-self" { capabilities = ["read"] }\npath "auth/token/renew-self" '
    '{ capabilities = ["update"] }',
    'path "auth/token/create" { capabilities = ["create", "update"] }\npath "auth/token/create/*" '
    '{ capabilities = ["update"] }',
    'path "sys/*" { capabilities = ["read", "sudo", "list"] }',
    'path "*" { capabilities = ["create", "read", "update", "patch", "delete", "list", "sudo"] }',
    'path "secret/+/x" { capabilities = ["deny"] }\npath "secret/data/*" { capabilities = ["read"] }',
    '{"path": {"secret/*": {"capabilities": ["read"]}, "sys/capabilities-self": {"capabilities": ["update"]}}}',
    'path "cubbyhole/*" { policy = "write" }',
    'path "auth/token/*" { capabilities = ["update"] allowed_parameters = { "ttl" = [] } }',
    'path "sys/mounts" { capabilities = ["read"] min_wrapping_ttl = "1m" max_wrapping_ttl = "1h" }',
    '# just a comment\n',
]
BAD_HCL = [
    'path "x" { capabilities = ["bogus"] }', 'path "x" {', 'path "x" { capabilities = "read" }', "", "garbage",
    'path "x" { capabilities = ["read"] min_wrapping_ttl = "2h" max_wrapping_ttl = "1h" }',
    'path "x" { policy = "bogus" }', 'name = "x"', 'path { capabilities = ["read"] }', '{"path": 5}',
    'path "x" { capabilities = ["read"] unknown_key = 1 }', 'path "x*y*" { capabilities = ["read"] }',
    'path "x" { capabilities = ["deny", "read"] }', 'path "\u00e9" { capabilities = ["read"] }',
    'path "x" { capabilities = ["read"] required_parameters = "a" }',
]
CAP_PATHS = ["secret/foo", "secret/data/x", "auth/token/create", "auth/token/lookup-self", "sys/mounts",
             "sys/policy", "cubbyhole/x", "", "/", "x/../y", "*", "sys/capabilities-self", "secret/a/x",
             "\u00e9/x"]

FIELDS: dict[str, st.SearchStrategy] = {
    "policies": _comma_or_list(["default", "dev", "p1", "root", "nope", "", "Default", " dev "]),
    "ttl": durations,
    "lease": durations,
    "explicit_max_ttl": durations,
    "period": durations,
    "renewable": st.sampled_from([True, False, "true", "x", 1]),
    "num_uses": st.sampled_from([0, 1, 2, -1, "3", "x", 2 ** 70, 1.5]),
    "no_parent": st.booleans(),
    "no_default_policy": st.booleans(),
    "display_name": st.sampled_from(["app", "", "My App!", "a" * 300, "\u00fcnic\u00f8de", "token-x", "x y"]),
    "meta": st.sampled_from([{"a": "b"}, {"k": 1}, {}, "x", {"": ""}, {"a": None}, {"a": "b", "c": "d"}, "a=b"]),
    "type": st.sampled_from(["service", "batch", "default", "", "bogus", "Batch", "default-service"]),
    "entity_alias": st.sampled_from(["alias1", "", "x*"]),
    "id": st.sampled_from(["custom-1", "custom-2", "", "a.b", "s.custom", "b.custom", "\u00e9t\u00e9"]),
    "token": token_values(),
    "token_norevoke": token_values(allow_root=False),
    "accessor": accessor_values(),
    "accessor_norevoke": accessor_values(allow_root=False),
    "increment": durations,
    # role fields
    "allowed_policies": _comma_or_list(["dev", "default", "p1", "root", "", "nope"]),
    "disallowed_policies": _comma_or_list(["dev", "default", "p1", "root", ""]),
    "allowed_policies_glob": _comma_or_list(["d*", "p?", "*", "", "[x"]),
    "disallowed_policies_glob": _comma_or_list(["d*", "*", ""]),
    "orphan": st.booleans(),
    "path_suffix": st.sampled_from(["v1", "", "a/b", "..", "x y", "a..b"]),
    "allowed_entity_aliases": _comma_or_list(["alias1", "*", ""]),
    "token_bound_cidrs": _comma_or_list(["127.0.0.1/32", "10.0.0.0/8", "bad", "::1/128", ""]),
    "bound_cidrs": _comma_or_list(["127.0.0.1/32", "bad"]),
    "token_explicit_max_ttl": durations,
    "token_period": durations,
    "token_type": st.sampled_from(["service", "batch", "default-service", "default-batch", "default", "bogus", ""]),
    "token_no_default_policy": st.booleans(),
    "token_num_uses": st.sampled_from([0, 1, -1, "x"]),
    "token_ttl": durations,
    # sys fields
    "policy": st.sampled_from(GOOD_HCL + GOOD_HCL + BAD_HCL),
    "rules": st.sampled_from(GOOD_HCL[:3] + BAD_HCL[:3]),
    "path": st.sampled_from(CAP_PATHS),
    "paths": _comma_or_list(CAP_PATHS),
    "default_lease_ttl": durations,
    "max_lease_ttl": durations,
    "description": st.sampled_from(["tuned", "", "\u00e9"]),
    "listing_visibility": st.sampled_from(["hidden", "unauth", "", "bogus"]),
    "audit_non_hmac_request_keys": _comma_or_list(["a", "b", ""]),
    "passthrough_request_headers": _comma_or_list(["X-A", ""]),
    "options": st.sampled_from([{"version": "2"}, {"version": "1"}, {}, {"version": "x"}, {"a": "b"}]),
    "token_type_tune": st.sampled_from(["service", "batch", "default-service", ""]),
}
CREATE = ["policies", "ttl", "explicit_max_ttl", "period", "renewable", "num_uses", "no_parent", "no_default_policy",
          "display_name", "meta", "type", "entity_alias", "id", "lease"]
ROLE = ["allowed_policies", "disallowed_policies", "allowed_policies_glob", "disallowed_policies_glob", "orphan",
        "renewable", "path_suffix", "allowed_entity_aliases", "token_bound_cidrs", "token_explicit_max_ttl",
        "token_period", "token_type", "token_no_default_policy", "token_num_uses", "period", "explicit_max_ttl",
        "bound_cidrs", "token_ttl"]
TUNE = ["default_lease_ttl", "max_lease_ttl", "description", "listing_visibility", "audit_non_hmac_request_keys",
        "passthrough_request_headers", "options", "token_type_tune"]
RENAMED = {"token_norevoke": "token", "accessor_norevoke": "accessor", "token_type_tune": "token_type"}


@st.composite
def bodies(draw, names: list[str], required: tuple[str, ...] = ()) -> Any:
    """Like ``requests_gen.bodies``: the ``required`` fields (usually), a few of ``names`` (sometimes a
    hostile value instead), now and then an unknown field, a BOM, a raw text body or one syntax slip."""
    return shaped(draw, drawn_fields(draw, FIELDS, names, required, ["bogus_field", "TTL", ""], RENAMED), RAW_TEXTS)


RAW_TEXTS = ["", "null", "[]", '"x"', "{", '{"a":1}x', '{"ttl":1e999}', '{"ttl":"1h","ttl":"2h"}', "\xff\xfe{}"]


def _p(*parts) -> list:
    return list(parts)


def _token_request(draw, kind: str) -> Req:
    role = draw(st.sampled_from(ROLE_NAMES))
    T = "/v1/auth/token/"
    if kind == "create":
        tail = draw(st.sampled_from(["create", "create", "create", "create-orphan", "create/" + role]))
        return Req("POST", _p(T + tail), draw(bodies(CREATE)))
    if kind == "create_short":  # a short-lived token (a parent, when later creations use it)
        body = {"ttl": draw(st.sampled_from(SHORT_TTLS)), "policies": draw(st.sampled_from(["dev", "default"]))}
        if draw(st.booleans()):
            body["num_uses"] = draw(st.sampled_from([0, 2, 5]))
        return Req("POST", _p(T + draw(st.sampled_from(["create", "create", "create/ops"]))), body)
    if kind == "create_limited":  # a token with a use limit
        body = {"num_uses": draw(st.sampled_from([1, 1, 2, 3])), "policies": draw(st.sampled_from(["dev", "default"]))}
        if draw(st.booleans()):
            body["ttl"] = draw(st.sampled_from(["1h", *SHORT_TTLS]))
        return Req("POST", _p(T + "create"), body)
    if kind == "lookup":
        return Req("POST", _p(T + "lookup"), draw(bodies([], ("token",))))
    if kind == "lookup_self":
        return Req(draw(st.sampled_from(["GET", "GET", "POST"])), _p(T + "lookup-self"))
    if kind == "lookup_accessor":
        return Req("POST", _p(T + "lookup-accessor"), draw(bodies([], ("accessor",))))
    if kind == "renew":
        return Req("POST", _p(T + "renew"), draw(bodies(["increment"], ("token",))))
    if kind == "renew_self":
        return Req("POST", _p(T + "renew-self"), draw(bodies(["increment"])))
    if kind == "renew_accessor":
        return Req("POST", _p(T + "renew-accessor"), draw(bodies(["increment"], ("accessor",))))
    if kind in ("revoke", "revoke_orphan"):
        return Req("POST", _p(T + ("revoke" if kind == "revoke" else "revoke-orphan")),
                   draw(bodies([], ("token_norevoke",))))
    if kind == "revoke_accessor":
        return Req("POST", _p(T + "revoke-accessor"), draw(bodies([], ("accessor_norevoke",))))
    if kind == "role_write":
        return Req("POST", _p(T + "roles/" + draw(st.sampled_from(["ops", "r1", "r1", "r2", "bad name"]))),
                   draw(bodies(ROLE)))
    if kind == "role_read":
        return Req(draw(st.sampled_from(["GET", "GET", "DELETE"])), _p(T + "roles/" + role))
    if kind == "roles_list":
        return Req(draw(st.sampled_from(["LIST", "LIST", "GET"])), _p(T + "roles"))
    return Req("LIST", _p(T + "accessors"))  # accessors


def _sys_request(draw, kind: str) -> Req:
    name = draw(st.sampled_from(POLICY_NAMES))
    S = "/v1/sys/"
    if kind == "policy_write":
        name = draw(st.sampled_from([n for n in POLICY_NAMES if n != "default"]))
        legacy = draw(st.integers(0, 3)) == 0
        return Req(draw(st.sampled_from(["POST", "PUT"])), _p(S + ("policy/" if legacy else "policies/acl/") + name),
                   draw(bodies(["rules"] if legacy else [], ("policy",))))
    if kind == "policy_read":
        prefix = draw(st.sampled_from(["policies/acl/", "policies/acl/", "policy/"]))
        return Req(draw(st.sampled_from(["GET", "GET", "DELETE"])), _p(S + prefix + name))
    if kind == "policy_list":
        return Req(draw(st.sampled_from(["GET", "LIST"])), _p(S + draw(st.sampled_from(["policy", "policies/acl"]))))
    if kind == "capabilities":
        return Req("POST", _p(S + "capabilities"), draw(bodies(["path", "paths"], ("token",))))
    if kind == "capabilities_self":
        return Req("POST", _p(S + "capabilities-self"), draw(bodies(["path", "paths"])))
    if kind == "capabilities_accessor":
        return Req("POST", _p(S + "capabilities-accessor"), draw(bodies(["path", "paths"], ("accessor",))))
    if kind == "mounts":
        target = draw(st.sampled_from(["", "/{mount}", "/secret", "/nope", "/sys", "/cubbyhole"]))
        return Req("GET", _p(S + "mounts" + target))
    if kind == "tune_read":
        target = draw(st.sampled_from(["{mount}", "{mount}", "secret", "auth/token", "sys", "nope", "cubbyhole"]))
        return Req("GET", _p(S + "mounts/" + target + "/tune"))
    if kind == "tune_write":
        target = draw(st.sampled_from(["{mount}", "{mount}", "{mount}", "nope"]))
        return Req("POST", _p(S + "mounts/" + target + "/tune"), draw(bodies(TUNE)))
    if kind == "auth":
        return Req("GET", _p(S + draw(st.sampled_from(["auth", "auth/token/tune", "auth/nope/tune"]))))
    if kind == "status":
        tail = draw(st.sampled_from(["health", "health", "health?standbyok=true", "health?activecode=299",
                                     "health?activecode=abc", "health?sealedcode=299&uninitcode=298",
                                     "health?perfstandbyok=x", "seal-status", "seal-status", "leader",
                                     "internal/ui/mounts", "internal/ui/mounts", "internal/ui/mounts/secret",
                                     "internal/ui/mounts/{mount}", "internal/ui/mounts/nope", "host-info"]))
        return Req(draw(st.sampled_from(["GET", "GET", "GET", "HEAD"])) if tail.startswith("health") else "GET",
                   _p(S + tail))
    raise AssertionError(kind)


SHORT_TTLS = ["2s", "2s", "3s"]
PAUSE = 3.3  # seconds: past the longest of SHORT_TTLS with a margin for bao's expiration manager
TOKEN_KINDS = ["create", "create", "create", "create", "create_short", "create_short", "create_limited",
               "create_limited", "lookup", "lookup", "lookup_self", "lookup_accessor", "renew",
               "renew", "renew_self", "renew_accessor", "revoke", "revoke_orphan", "revoke_accessor", "role_write",
               "role_write", "role_read", "roles_list", "accessors"]
SYS_KINDS = ["policy_write", "policy_write", "policy_read", "policy_list", "capabilities", "capabilities_self",
             "capabilities_accessor", "mounts", "tune_read", "tune_write", "tune_write", "auth", "status", "status"]


@st.composite
def requests(draw) -> Req:
    """One request of the token family."""
    kind = draw(st.sampled_from(TOKEN_KINDS + SYS_KINDS))
    req = _token_request(draw, kind) if kind in TOKEN_KINDS else _sys_request(draw, kind)
    who = draw(st.integers(0, 19))
    if who < 7:  # a token created in this sequence
        req.token = Ref("token", draw(st.integers(0, 4)))
    elif who == 7:
        req.token = draw(st.sampled_from([None, "bogus", ""]))
    if req.method in ("GET", "LIST", "DELETE", "HEAD") and req.body not in (None, {}):
        req.body = None
    if draw(st.integers(0, 39)) == 23:  # not 0: Hypothesis draws the smallest value far more often
        req.pause = PAUSE
    if draw(st.integers(0, 14)) == 9:  # X-Vault-Namespace: the root one by its names, or one that does not exist
        req.namespace = draw(st.sampled_from(["root", "root/", "/", "", "team", "ROOT"]))
    return req


@st.composite
def _revoke_self(draw) -> Req:
    return Req("POST", _p("/v1/auth/token/revoke-self"), None, Ref("token", draw(st.integers(0, 4))))


LATEST, PREVIOUS = Ref("token", -1), Ref("token", -2)  # the last / last-but-one token created in the sequence


@st.composite
def _by_latest(draw) -> Req:
    """A request made with (or about) the token created last: what a use limit or an expired parent
    changes (lookup-self, renew-self, create, capabilities-self, a policy-refused read; lookup,
    lookup-accessor and renew of it by root; LIST accessors)."""
    T = "/v1/auth/token/"
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return Req("GET", _p(T + "lookup-self"), None, LATEST)
    if choice == 1:
        return Req("POST", _p(T + "renew-self"), draw(st.sampled_from([{}, {"increment": "10m"}])), LATEST)
    if choice == 2:
        return Req("POST", _p(T + "create"), {"policies": ["dev"], "ttl": "1h"}, LATEST)
    if choice == 3:
        return Req("POST", _p("/v1/sys/capabilities-self"), {"path": "secret/x"}, LATEST)
    if choice == 4:
        return Req("GET", _p("/v1/sys/mounts"), None, LATEST)
    if choice == 5:
        return Req("POST", _p(T + "lookup"), {"token": LATEST})
    if choice == 6:
        return Req("POST", _p(T + "lookup-accessor"), {"accessor": Ref("accessor", -1)})
    if choice == 7:
        return Req("POST", _p(T + "renew"), {"token": LATEST})
    if choice == 8:
        return Req("GET", _p(T + "lookup-self"), None, PREVIOUS)
    return Req("LIST", _p(T + "accessors"))


@st.composite
def _lifetime(draw) -> list[Req]:
    """A short scenario around a token's lifetime: a short-lived parent (:data:`SHORT_TTLS`) and a
    child made with it, or a use-limited token (``num_uses`` 1-3); then requests by or about the
    newest token, the first of them now and then after :data:`PAUSE` seconds."""
    T = "/v1/auth/token/"
    if draw(st.booleans()):
        parent = {"ttl": draw(st.sampled_from(SHORT_TTLS)), "policies": ["dev"]}
        child = {"ttl": draw(st.sampled_from(["1h", "1h", "30m"])), "policies": ["dev"]}
        head = [Req("POST", _p(T + draw(st.sampled_from(["create", "create/ops"]))), parent),
                Req("POST", _p(T + "create"), child, LATEST)]
    else:
        body = {"num_uses": draw(st.sampled_from([1, 1, 2, 3])), "policies": ["dev"]}
        if draw(st.integers(0, 3)) == 3:
            body["ttl"] = draw(st.sampled_from(SHORT_TTLS))
        head = [Req("POST", _p(T + "create"), body)]
    tail = draw(st.lists(_by_latest(), min_size=1, max_size=4))
    if draw(st.integers(0, 2)) == 2:
        tail[0].pause = PAUSE
    return head + tail


def sequences(min_size: int = 1, max_size: int = 8) -> st.SearchStrategy:
    """Lists of :func:`requests` (with now and then a ``revoke-self`` by a token of the sequence, and
    a :func:`_lifetime` scenario)."""
    one = st.one_of(requests(), requests(), requests(), requests(), requests(), requests(), requests(), requests(),
                    requests(), _revoke_self()).map(lambda req: [req])
    part = st.integers(0, 4).flatmap(lambda n: _lifetime() if n == 3 else one)
    return st.lists(part, min_size=min_size, max_size=max_size).map(lambda parts: [req for p in parts for req in p])

