"""Token roles: ``auth/token/roles`` (LIST), ``auth/token/roles/:name`` (read, write, delete) and
token creation through a role, ``auth/token/create/:role_name`` (OpenBao ``vault/token_store.go``).

A role fixes what tokens created through it get: ``allowed_policies`` (used when the request names
none), ``orphan``, ``renewable``, ``token_period`` (alias ``period``), ``token_explicit_max_ttl``
(alias ``explicit_max_ttl``), ``token_no_default_policy`` and a ``path_suffix`` appended to the
token's ``path`` (``auth/token/create/<role>/<suffix>``). Durations are seconds on output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..framework.fields import ANY, BOOL, COMMA_STRING_SLICE, DURATION, INT, STRING, Field
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path


@dataclass(frozen=True)
class TokenRole:
    """One token role as stored (durations in seconds)."""

    name: str
    allowed_policies: tuple[str, ...] = ()
    disallowed_policies: tuple[str, ...] = ()
    allowed_policies_glob: tuple[str, ...] = ()
    disallowed_policies_glob: tuple[str, ...] = ()
    orphan: bool = False
    renewable: bool = True
    path_suffix: str = ""
    period: int = 0
    explicit_max_ttl: int = 0
    no_default_policy: bool = False
    token_type: str = "default-service"
    allowed_entity_aliases: tuple[str, ...] | None = None
    extra: dict = field(default_factory=dict)

    def describe(self) -> dict:
        """``data`` of ``GET auth/token/roles/:name`` (both the legacy and the ``token_`` names)."""
        return {
            "allowed_entity_aliases": list(self.allowed_entity_aliases) if self.allowed_entity_aliases else None,
            "allowed_policies": list(self.allowed_policies), "allowed_policies_glob": list(self.allowed_policies_glob),
            "disallowed_policies": list(self.disallowed_policies),
            "disallowed_policies_glob": list(self.disallowed_policies_glob),
            "explicit_max_ttl": self.explicit_max_ttl, "name": self.name, "orphan": self.orphan,
            "path_suffix": self.path_suffix, "period": self.period, "renewable": self.renewable,
            "token_explicit_max_ttl": self.explicit_max_ttl, "token_no_default_policy": self.no_default_policy,
            "token_period": self.period, "token_type": self.token_type,
        }


def _pick(req: LogicalRequest, names: tuple[str, ...], current):
    for name in names:
        if req.data.sent(name):
            return req.data.get(name)
    return current


def _write_role(req: LogicalRequest) -> LogicalResponse:
    name = req.data.get("role_name")  # role names are case-sensitive
    old = req.service.tokens.roles.get(name) or TokenRole(name=name)
    slices = {}
    for key in ("allowed_policies", "disallowed_policies", "allowed_policies_glob", "disallowed_policies_glob"):
        value = _pick(req, (key,), None)
        slices[key] = tuple(sorted(dict.fromkeys(p.lower() for p in value))) if value is not None else getattr(old, key)
    role = TokenRole(
        name=name, **slices,
        orphan=_pick(req, ("orphan",), old.orphan), renewable=_pick(req, ("renewable",), old.renewable),
        path_suffix=_pick(req, ("path_suffix",), old.path_suffix),
        period=_pick(req, ("token_period", "period"), old.period),
        explicit_max_ttl=_pick(req, ("token_explicit_max_ttl", "explicit_max_ttl"), old.explicit_max_ttl),
        no_default_policy=_pick(req, ("token_no_default_policy",), old.no_default_policy),
        token_type=_pick(req, ("token_type",), old.token_type) or "default-service",
    )
    req.service.tokens.roles[name] = role
    return LogicalResponse(status=204)


def _read_role(req: LogicalRequest) -> LogicalResponse:
    role = req.service.tokens.roles.get(req.data.get("role_name"))
    if role is None:
        raise LogicalError(404, [])
    return LogicalResponse(data=role.describe())


def _delete_role(req: LogicalRequest) -> LogicalResponse:
    req.service.tokens.roles.pop(req.data.get("role_name"), None)
    return LogicalResponse(status=204)


def _list_roles(req: LogicalRequest) -> LogicalResponse:
    if not req.service.tokens.roles:
        raise LogicalError(404, [])
    return LogicalResponse(data={"keys": sorted(req.service.tokens.roles)})


ROLE_FIELDS = {
    "role_name": Field(STRING), "allowed_policies": Field(COMMA_STRING_SLICE),
    "disallowed_policies": Field(COMMA_STRING_SLICE), "allowed_policies_glob": Field(COMMA_STRING_SLICE),
    "disallowed_policies_glob": Field(COMMA_STRING_SLICE), "orphan": Field(BOOL), "renewable": Field(BOOL, True),
    "path_suffix": Field(STRING), "period": Field(DURATION), "token_period": Field(DURATION),
    "explicit_max_ttl": Field(DURATION), "token_explicit_max_ttl": Field(DURATION),
    "token_no_default_policy": Field(BOOL), "token_type": Field(STRING), "allowed_entity_aliases": Field(ANY),
    "token_bound_cidrs": Field(ANY), "token_num_uses": Field(INT),
}


def role_paths() -> list[Path]:
    """The role routes (``roles/``, ``roles/:role_name``; creation through a role is in
    :mod:`.token_create`)."""
    return [
        Path("roles/?", {}, {"list": _list_roles}),
        Path("roles/(?P<role_name>[^/]+)", ROLE_FIELDS, {"read": _read_role, "update": _write_role,
                                                         "delete": _delete_role}),
    ]


def role_policies(role: TokenRole, requested: list[str] | None) -> list[str] | None:
    """The policies a token created through ``role`` asks for: the request's, else the role's
    ``allowed_policies`` (``None``: the parent's, as without a role). Raises LogicalError 400
    ``token policies (...) must be subset of the role's allowed policies (...)``."""
    if not requested:
        return list(role.allowed_policies) or None
    if role.allowed_policies:
        extra = [p for p in requested if p not in role.allowed_policies and p != "default"]
        if extra:
            asked = sorted({*requested, "default"})
            allowed = sorted({*role.allowed_policies, "default"})
            raise user_error(f"token policies ({_go_list(asked)}) must be subset of the role's allowed policies "
                             f"({_go_list(allowed)}) or glob policies ({_go_list(list(role.allowed_policies_glob))})")
    return requested


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(f'"{i}"' for i in items) + "]"


def role_limits(role: TokenRole | None, period: int, explicit_max_ttl: int) -> tuple[int, int]:
    """The ``(period, explicit_max_ttl)`` (seconds) that govern a token's TTL at creation and at each
    renewal: the role's period wins over the token's; the smaller explicit max applies. A token
    keeps its own values for lookups (OpenBao shows the role's only through the TTL)."""
    if role is None:
        return period, explicit_max_ttl
    if role.explicit_max_ttl and (not explicit_max_ttl or role.explicit_max_ttl < explicit_max_ttl):
        explicit_max_ttl = role.explicit_max_ttl
    return role.period or period, explicit_max_ttl
