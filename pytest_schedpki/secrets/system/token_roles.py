"""Token roles: ``auth/token/roles`` (LIST), ``auth/token/roles/:name`` (read, write, delete) and
token creation through a role, ``auth/token/create/:role_name`` (OpenBao ``vault/token_store.go``).

A role fixes what tokens created through it get: ``allowed_policies`` (used when the request names
none), ``orphan``, ``renewable``, ``token_period`` (alias ``period``), ``token_explicit_max_ttl``
(alias ``explicit_max_ttl``), ``token_no_default_policy`` and a ``path_suffix`` appended to the
token's ``path`` (``auth/token/create/<role>/<suffix>``). Durations are seconds on output.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field, replace

from ...golang.duration import go_quote
from ..framework.fields import BOOL, COMMA_STRING_SLICE, DURATION, INT, STRING, Field
from ..framework.logical import LogicalError, LogicalResponse, user_error
from ..framework.router import LogicalRequest, Path
from ..service import SYSTEM_MAX_LEASE_TTL

# framework.GenericNameRegex("role_name"): another name is an unsupported path (404)
NAME_PATTERN = r"(?P<role_name>\w(([\w.-]+)?\w)?)"


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
    legacy_period: int = 0  # ``period``/``explicit_max_ttl`` as set through the deprecated names (0 otherwise)
    legacy_explicit_max_ttl: int = 0
    num_uses: int = 0
    bound_cidrs: tuple[str, ...] = ()
    legacy_bound_cidrs: tuple[str, ...] = ()

    def describe(self) -> dict:
        """``data`` of ``GET auth/token/roles/:name`` (both the legacy and the ``token_`` names)."""
        data = {
            "allowed_entity_aliases": list(self.allowed_entity_aliases) if self.allowed_entity_aliases is not None else None,
            "allowed_policies": list(self.allowed_policies), "allowed_policies_glob": list(self.allowed_policies_glob),
            "disallowed_policies": list(self.disallowed_policies),
            "disallowed_policies_glob": list(self.disallowed_policies_glob),
            "explicit_max_ttl": self.legacy_explicit_max_ttl, "name": self.name, "orphan": self.orphan,
            "path_suffix": self.path_suffix, "period": self.legacy_period, "renewable": self.renewable,
            "token_explicit_max_ttl": self.explicit_max_ttl, "token_no_default_policy": self.no_default_policy,
            "token_period": self.period, "token_type": self.token_type,
        }
        if self.bound_cidrs:
            data["token_bound_cidrs"] = list(self.bound_cidrs)
        if self.legacy_bound_cidrs:
            data["bound_cidrs"] = list(self.legacy_bound_cidrs)
        if self.num_uses > 0:
            data["token_num_uses"] = self.num_uses
        return data


_PATH_SUFFIX = re.compile(r"\w[\w\-.]+\w")
_ROLE_TOKEN_TYPES = {"service": "service", "batch": "batch", "default-service": "default-service",
                     "default-batch": "default-batch"}
_BATCH_REFUSED = (
    (lambda r: not r.orphan, "'token_type' cannot be 'batch' when role is set to generate non-orphan tokens"),
    (lambda r: r.period or r.legacy_period, "'token_type' cannot be 'batch' when role is set to generate periodic tokens"),
    (lambda r: r.renewable, "'token_type' cannot be 'batch' when role is set to generate renewable tokens"),
    (lambda r: r.explicit_max_ttl or r.legacy_explicit_max_ttl,
     "'token_type' cannot be 'batch' when role is set to generate tokens with an explicit max TTL"),
)


def _addresses(values: list[str]) -> tuple[str, ...]:
    """``parseutil.ParseAddrs``: each an IP address or CIDR (kept as written); else
    ``error parsing address "x": Unable to convert "x" to an IPv4 or IPv6 address, or a UNIX Socket``."""
    for value in values:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"error parsing address {go_quote(value)}: Unable to convert {go_quote(value)} to an "
                             "IPv4 or IPv6 address, or a UNIX Socket") from None
    return tuple(values)


def _write_role(req: LogicalRequest) -> LogicalResponse:
    """``tokenStoreRoleCreateUpdate``: every field read in upstream's order, its errors as upstream
    words them (400, nothing stored): the path suffix's characters and ``..``, a ``null``
    ``token_type``, ``error parsing role fields: ...`` (bound CIDRs, negative use count, batch with a
    period or a use count, an unknown type), the deprecated ``period``/``explicit_max_ttl``/
    ``bound_cidrs`` (ignored with a warning when the ``token_`` name is also given), and a batch role
    that is not an orphan or is periodic, renewable or has an explicit max TTL. An explicit max TTL
    above the system's 768h is stored with a warning."""
    name = req.data.get("role_name")  # role names are case-sensitive
    data = req.data
    old = req.service.tokens.roles.get(name) or TokenRole(name=name)
    changes: dict = {}
    for key in ("orphan", "renewable"):
        if data.sent(key):
            changes[key] = data.get(key)
    if data.sent("path_suffix"):
        suffix = data.get("path_suffix")
        if suffix and not _PATH_SUFFIX.search(suffix):
            raise user_error("given role path suffix contains invalid characters; must match \\w[\\w-.]+\\w")
        changes["path_suffix"] = suffix
    if ".." in changes.get("path_suffix", old.path_suffix):
        raise user_error("error registering path suffix: path cannot contain parent references")
    for key in ("allowed_policies", "allowed_policies_glob"):  # SanitizePolicies: trimmed, lower-cased, sorted
        if data.sent(key):
            changes[key] = tuple(sorted({p.strip().lower() for p in data.get(key) if p.strip()}))
    for key in ("disallowed_policies", "disallowed_policies_glob"):  # RemoveDuplicates(lowercase)
        if data.sent(key):
            changes[key] = tuple(sorted({p.strip().lower() for p in data.get(key) if p.strip()}))
    token_type = None
    if "token_type" in req.raw:
        if req.raw["token_type"] is None:
            raise user_error("Invalid 'token_type' value: null")
        token_type = data.get("token_type")
    try:  # tokenutil ParseTokenFields
        if data.sent("token_bound_cidrs"):
            changes["bound_cidrs"] = _addresses(data.get("token_bound_cidrs"))
        if data.sent("token_explicit_max_ttl"):
            changes["explicit_max_ttl"] = data.get("token_explicit_max_ttl")
        if data.sent("token_no_default_policy"):
            changes["no_default_policy"] = data.get("token_no_default_policy")
        if data.sent("token_period"):
            changes["period"] = data.get("token_period")
        if data.sent("token_num_uses"):
            changes["num_uses"] = data.get("token_num_uses")
            if changes["num_uses"] < 0:
                raise ValueError("'token_num_uses' cannot be negative")
    except ValueError as exc:
        raise user_error(f"error parsing role fields: {exc}") from None
    if token_type is not None:
        if token_type not in _ROLE_TOKEN_TYPES:
            raise user_error(f'invalid \'token_type\' value "{token_type}"')
        changes["token_type"] = _ROLE_TOKEN_TYPES[token_type]
    warnings: list[str] = []
    _deprecated(req, changes, warnings, "token_period", "period", "period", "legacy_period")
    if data.sent("token_bound_cidrs"):
        changes["legacy_bound_cidrs"] = ()
        if data.sent("bound_cidrs"):
            warnings.append("Both 'token_bound_cidrs' and deprecated 'bound_cidrs' value supplied, ignoring the "
                            "deprecated value")
    elif data.sent("bound_cidrs"):
        try:
            changes["legacy_bound_cidrs"] = changes["bound_cidrs"] = _addresses(data.get("bound_cidrs"))
        except ValueError as exc:
            raise user_error(f"error parsing bound_cidrs: {exc}") from None
    _deprecated(req, changes, warnings, "token_explicit_max_ttl", "explicit_max_ttl", "explicit_max_ttl",
                "legacy_explicit_max_ttl")
    role = replace(old, **changes)
    if role.explicit_max_ttl > SYSTEM_MAX_LEASE_TTL:
        warnings.append(f"Given explicit max TTL of {role.explicit_max_ttl} is greater than system/mount allowed value "
                        f"of {SYSTEM_MAX_LEASE_TTL} seconds; until this is fixed attempting to create tokens against "
                        "this role will result in an error")
    if role.token_type == "batch":
        for refused, text in _BATCH_REFUSED:
            if refused(role):
                raise user_error(text)
    if data.sent("allowed_entity_aliases"):
        role = replace(role, allowed_entity_aliases=tuple(sorted({a.lower() for a in data.get("allowed_entity_aliases")})))
    req.service.tokens.roles[name] = role
    if warnings:
        return LogicalResponse(data=None, warnings=warnings)
    return LogicalResponse(status=204)


def _deprecated(req: LogicalRequest, changes: dict, warnings: list[str], new_name: str, old_name: str,
                attribute: str, legacy: str) -> None:
    """A ``token_`` field and its deprecated name: the new one wins (the legacy value is cleared, with
    a warning when both came); the deprecated one alone sets both."""
    if req.data.sent(new_name):
        changes[legacy] = 0
        if req.data.sent(old_name):
            warnings.append(f"Both '{new_name}' and deprecated '{old_name}' value supplied, ignoring the deprecated value")
    elif req.data.sent(old_name):
        changes[attribute] = changes[legacy] = req.data.get(old_name)


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
    "token_no_default_policy": Field(BOOL), "token_type": Field(STRING),
    "allowed_entity_aliases": Field(COMMA_STRING_SLICE), "token_bound_cidrs": Field(COMMA_STRING_SLICE),
    "bound_cidrs": Field(COMMA_STRING_SLICE), "token_num_uses": Field(INT),
}


def role_paths() -> list[Path]:
    """The role routes (``roles/``, ``roles/:role_name``; creation through a role is in
    :mod:`.token_create`)."""
    return [
        Path("roles/?", {}, {"list": _list_roles}),
        Path(f"roles/{NAME_PATTERN}", ROLE_FIELDS, {"read": _read_role, "update": _write_role,
                                                     "delete": _delete_role}, field_prefix=False),
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
