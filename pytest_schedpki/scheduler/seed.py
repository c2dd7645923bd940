"""The ``scheduler:`` section of a seed file -> calls on :class:`~.state.SchedulerState`.

Schema::

    scheduler:
      bootstrap: false              # optional: a fresh cluster (the ready management token removed)
      tokens:                       # optional list
        - secret_id: "s3cr3t"       # optional; a random UUID when absent
          type: management          # required: management | client
          name: "ci"                # optional
          accessor_id: "..."        # optional; a random UUID when absent
          global: true              # optional (default true); false = valid in the local region only
          expiration_time: 2030-01-01T00:00:00Z   # optional RFC 3339 time
          policies: [eng]           # optional (client tokens): policy names
          roles: [devs]             # optional (client tokens): role names or IDs, after the roles below
      auth_methods:                 # optional list, applied in order like HTTP upserts
        - Name: okta                # Nomad's field names, exactly as in the HTTP body
          Type: OIDC
          TokenLocality: local
          MaxTokenTTL: 1h           # Go duration string (or nanoseconds)
          Config: {OIDCDiscoveryURL: "https://idp.example.com", OIDCClientID: id, OIDCClientSecret: s}
      policies:                     # optional list (applied before roles and auth methods)
        - Name: eng
          Description: "engineers"  # optional
          Rules: 'namespace "default" { policy = "write" }'   # optional; validated as Nomad does (acl.Parse)
      roles:                        # optional list
        - Name: devs
          Policies: [eng]           # policy names (or [{Name: eng}])
      binding_rules:                # optional list, after the auth methods
        - AuthMethod: okta
          Selector: '"engineering" in list.groups'
          BindType: policy          # role | policy | management
          BindName: eng
      oidc_users:                   # optional: the built-in identity provider's users and claims
        alice: {email: alice@example.com, groups: [engineering]}   # the first is the default user

Every problem raises :class:`~pytest_schedpki.errors.SeedError` naming the entry, e.g.
``scheduler.auth_methods[1]`` with the upstream text as the problem
(``auth method 0 invalid: 1 error occurred:\\n\\t* invalid name 'bad_name'\\n\\n``).
"""

from __future__ import annotations

import datetime

from ..errors import SeedError
from ..golang.time import GoTimeError, parse_rfc3339
from .aclstore.objects import Policy, Role
from .model import SchedulerError
from .sso.rules import BindingRule

_TOKEN_KEYS = {"secret_id", "type", "name", "accessor_id", "global", "expiration_time", "policies", "roles"}
_SECTION_KEYS = ("bootstrap", "tokens", "policies", "roles", "auth_methods", "binding_rules", "oidc_users")


def _list(section: dict, key: str, source: str) -> list:
    value = section.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SeedError(source, f"scheduler.{key}", f"expected a list, got {type(value).__name__}")
    return value


def _expiration(value, source: str, entry: str) -> datetime.datetime | None:
    if value is None or isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            parsed = parse_rfc3339(value.encode("utf-8")).to_datetime()
        except GoTimeError as exc:
            raise SeedError(source, f"{entry}.expiration_time", str(exc)) from None
        if parsed is not None:
            return parsed
    raise SeedError(source, f"{entry}.expiration_time", f"expected an RFC 3339 time, got {value!r}")


def _apply_token(state, item, source: str, entry: str) -> None:
    if not isinstance(item, dict):
        raise SeedError(source, entry, f"expected a mapping, got {type(item).__name__}")
    unknown = sorted(str(k) for k in item if k not in _TOKEN_KEYS)
    if unknown:
        raise SeedError(source, entry, f"unknown key(s) {', '.join(unknown)}; expected: {', '.join(sorted(_TOKEN_KEYS))}")
    if "type" not in item:
        raise SeedError(source, f"{entry}.type", "missing; expected 'management' or 'client'")
    for key in ("secret_id", "name", "accessor_id", "type"):
        if key in item and item[key] is not None and not isinstance(item[key], str):
            raise SeedError(source, f"{entry}.{key}", f"expected a string, got {type(item[key]).__name__}")
    for key in ("policies", "roles"):
        value = item.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise SeedError(source, f"{entry}.{key}", "expected a list of names")
    if not isinstance(item.get("global", True), bool):
        raise SeedError(source, f"{entry}.global", "expected true or false")
    expires = _expiration(item.get("expiration_time"), source, entry)
    try:
        state.add_token(
            secret_id=item.get("secret_id"), type=item["type"], name=item.get("name") or "",
            expiration_time=expires, global_=item.get("global", True), accessor_id=item.get("accessor_id"),
            policies=item.get("policies"), roles=item.get("roles"),
        )
    except ValueError as exc:
        raise SeedError(source, entry, str(exc)) from None


def apply_scheduler_seed(state, section, source: str) -> None:
    """Apply a parsed ``scheduler:`` mapping to ``state``: ``bootstrap: false``, policies, roles, tokens,
    auth methods, binding rules, then the IdP's users.

    Raises SeedError(source, entry, problem) for a malformed section, an unknown key, a bad token
    entry, or an auth method the server would refuse (problem = the upstream error text).
    """
    if not isinstance(section, dict):
        raise SeedError(source, "scheduler", f"expected a mapping, got {type(section).__name__}")
    unknown = sorted(str(k) for k in section if k not in _SECTION_KEYS)
    if unknown:
        raise SeedError(source, f"scheduler.{unknown[0]}", f"unknown key; expected one of: {', '.join(_SECTION_KEYS)}")
    bootstrap = section.get("bootstrap", True)
    if not isinstance(bootstrap, bool):
        raise SeedError(source, "scheduler.bootstrap", "expected true or false")
    if not bootstrap:
        state.unbootstrap()
    _entries(state, section, source, "policies", _apply_policy)
    _entries(state, section, source, "roles", _apply_role)
    for i, item in enumerate(_list(section, "tokens", source)):
        _apply_token(state, item, source, f"scheduler.tokens[{i}]")
    _entries(state, section, source, "auth_methods", lambda st, item: st.upsert_auth_method(item))
    _entries(state, section, source, "binding_rules", _apply_rule)
    users = section.get("oidc_users") or {}
    if not isinstance(users, dict) or not all(isinstance(c, dict) for c in users.values()):
        raise SeedError(source, "scheduler.oidc_users", "expected a mapping of user name -> claims mapping")
    for i, (name, claims) in enumerate(users.items()):
        state.idp.set_user(str(name), claims, default=i == 0)


def _entries(state, section: dict, source: str, key: str, apply) -> None:
    for i, item in enumerate(_list(section, key, source)):
        entry = f"scheduler.{key}[{i}]"
        if not isinstance(item, dict):
            raise SeedError(source, entry, f"expected a mapping, got {type(item).__name__}")
        try:
            apply(state, item)
        except SchedulerError as exc:
            raise SeedError(source, entry, exc.text) from None
        except (TypeError, ValueError) as exc:
            raise SeedError(source, entry, str(exc)) from None


def _strings(item: dict, keys: tuple[str, ...]) -> dict:
    unknown = sorted(str(k) for k in item if k not in keys)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; expected: {', '.join(keys)}")
    for key in keys:
        if key in item and key != "Policies" and not isinstance(item[key], str):
            raise ValueError(f"{key}: expected a string, got {type(item[key]).__name__}")
    return item


def _apply_policy(state, item: dict) -> None:
    item = _strings(item, ("Name", "Description", "Rules"))
    state.acl.upsert_policy(Policy(item.get("Name", ""), item.get("Description", ""), item.get("Rules", "")))


def _apply_role(state, item: dict) -> None:
    item = _strings(item, ("Name", "Description", "Policies"))
    links = item.get("Policies") or []
    if not isinstance(links, list):
        raise ValueError("Policies: expected a list of policy names")
    names = tuple(p["Name"] if isinstance(p, dict) and "Name" in p else p for p in links)
    if not all(isinstance(n, str) for n in names):
        raise ValueError("Policies: expected a list of policy names")
    state.acl.upsert_role(Role("", item.get("Name", ""), item.get("Description", ""), names))


def _apply_rule(state, item: dict) -> None:
    item = _strings(item, ("Description", "AuthMethod", "Selector", "BindType", "BindName"))
    state.binding_rules.upsert(BindingRule(**item))
