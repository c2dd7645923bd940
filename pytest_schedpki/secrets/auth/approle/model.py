"""State of one AppRole mount and how the method reads its inputs (upstream
``builtin/credential/approle``: ``path_role.go``, ``validation.go``).

Times are aware UTC datetimes from the double's clock; TTLs are seconds (0: none).
"""

from __future__ import annotations

import copy
import datetime
import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

from pytest_schedpki.secrets.framework.fields import comma_string_slice
from pytest_schedpki.secrets.framework.logical import internal_error, user_error

ZERO_TIME = "0001-01-01T00:00:00Z"  # Go's zero time.Time, printed for "no expiry"


@dataclass
class Role:
    """One role: the fields of ``role/:name`` (``token_*`` as tokenutil keeps them) plus its
    ``role_id`` and whether the deprecated ``policies``/``period`` names were used (they are then
    echoed on read)."""

    name: str
    role_id: str
    bind_secret_id: bool = True
    secret_id_bound_cidrs: list[str] | None = None
    secret_id_num_uses: int = 0
    secret_id_ttl: int = 0
    local_secret_ids: bool = False
    token_bound_cidrs: list[str] = field(default_factory=list)
    token_explicit_max_ttl: int = 0
    token_max_ttl: int = 0
    token_no_default_policy: bool = False
    token_num_uses: int = 0
    token_period: int = 0
    token_policies: list[str] = field(default_factory=list)
    token_strictly_bind_ip: bool = False
    token_ttl: int = 0
    token_type: str = "default"
    legacy_policies: bool = False
    legacy_period: bool = False

    def describe(self) -> dict[str, Any]:
        """``data`` of ``GET role/:name``."""
        out: dict[str, Any] = {
            "bind_secret_id": self.bind_secret_id, "local_secret_ids": self.local_secret_ids,
            "secret_id_bound_cidrs": list(self.secret_id_bound_cidrs) if self.secret_id_bound_cidrs else None,
            "secret_id_num_uses": self.secret_id_num_uses, "secret_id_ttl": self.secret_id_ttl,
            "token_bound_cidrs": [display_cidr(c) for c in self.token_bound_cidrs],
            "token_explicit_max_ttl": self.token_explicit_max_ttl, "token_max_ttl": self.token_max_ttl,
            "token_no_default_policy": self.token_no_default_policy, "token_num_uses": self.token_num_uses,
            "token_period": self.token_period, "token_policies": list(self.token_policies),
            "token_strictly_bind_ip": self.token_strictly_bind_ip, "token_ttl": self.token_ttl,
            "token_type": self.token_type,
        }
        if self.legacy_policies:
            out["policies"] = list(self.token_policies)
        if self.legacy_period:
            out["period"] = self.token_period
        return out


@dataclass
class SecretId:
    """One secret ID of a role: the secret itself, its accessor, uses left (0: unlimited), bound
    CIDRs, metadata, and times (``expires`` ``None``: never)."""

    secret_id: str
    accessor: str
    created: datetime.datetime
    updated: datetime.datetime
    expires: datetime.datetime | None = None
    ttl: int = 0
    num_uses: int = 0
    cidr_list: list[str] = field(default_factory=list)
    token_bound_cidrs: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    def expired(self, now: datetime.datetime) -> bool:
        return self.expires is not None and now >= self.expires

    def describe(self, stamp) -> dict[str, Any]:
        """``data`` of the lookups; ``stamp(datetime) -> str`` prints times (RFC 3339, nanoseconds)."""
        return {
            "cidr_list": list(self.cidr_list), "creation_time": stamp(self.created),
            "expiration_time": stamp(self.expires) if self.expires else ZERO_TIME,
            "last_updated_time": stamp(self.updated), "metadata": dict(self.metadata),
            "secret_id_accessor": self.accessor, "secret_id_num_uses": self.num_uses, "secret_id_ttl": self.ttl,
            "token_bound_cidrs": list(self.token_bound_cidrs),
        }


@dataclass
class ApproleState:
    """Roles by name and secret IDs by role name then accessor."""

    roles: dict[str, Role] = field(default_factory=dict)
    secret_ids: dict[str, dict[str, SecretId]] = field(default_factory=dict)

    def copy(self) -> ApproleState:
        return copy.deepcopy(self)

    def role_by_id(self, role_id: str) -> Role | None:
        return next((r for r in self.roles.values() if r.role_id == role_id), None)

    def find_secret(self, role: str, secret_id: str) -> SecretId | None:
        return next((s for s in self.secret_ids.get(role, {}).values() if s.secret_id == secret_id), None)

    def secret_in_use(self, secret_id: str) -> bool:
        return any(s.secret_id == secret_id for ids in self.secret_ids.values() for s in ids.values())


def display_cidr(text: str) -> str:
    """A token-bound CIDR as read back: a single-host block shows as the bare address."""
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        return text
    return str(net.network_address) if net.num_addresses == 1 else str(net)


def parse_cidrs(value: Any) -> list[str]:
    """A comma-separated or list CIDR parameter (OpenBao's ``ValidateCIDRs``): 500 multierror
    ``failed to validate CIDR blocks: invalid CIDR address: <x>`` for a block that does not parse."""
    blocks = comma_string_slice(value) if value not in (None, "") else []
    for block in blocks:
        try:
            ipaddress.ip_network(block, strict=False)
        except ValueError:
            raise internal_error(f"failed to validate CIDR blocks: invalid CIDR address: {block}") from None
    return blocks


def parse_token_cidrs(value: Any, on_secret_id: bool = False) -> list[str]:
    """``token_bound_cidrs``: addresses or blocks. A bad one on a role is 400 ``error parsing address
    "<x>": Unable to convert "<x>" to an IPv4 or IPv6 address, or a UNIX Socket`` (tokenutil's
    sockaddr text); on a secret ID, 500 multierror ``failed to validate token CIDR blocks: invalid
    CIDR address: <x>``."""
    blocks = comma_string_slice(value) if value not in (None, "") else []
    for block in blocks:
        try:
            ipaddress.ip_network(block, strict=False)
        except ValueError:
            if on_secret_id:
                raise internal_error(f"failed to validate token CIDR blocks: invalid CIDR address: {block}") from None
            raise user_error(f'error parsing address "{block}": Unable to convert "{block}" to an IPv4 or IPv6 '
                             "address, or a UNIX Socket") from None
    return blocks


def address_in(address: str, blocks: list[str]) -> bool:
    """Whether ``address`` lies in any of ``blocks`` (an unparsable address is in none)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(b, strict=False) for b in blocks)


def subset(inner: list[str], outer: list[str]) -> bool:
    """Whether every block of ``inner`` lies inside one of ``outer``."""
    nets = [ipaddress.ip_network(b, strict=False) for b in outer]
    for block in inner:
        net = ipaddress.ip_network(block, strict=False)
        if not any(net.version == o.version and net.subnet_of(o) for o in nets):
            return False
    return True


def parse_metadata(text: str) -> dict[str, str]:
    """``metadata`` of a secret ID: a JSON object of strings, or ``k=v,k2=v2`` (go-secure-stdlib
    ``ParseArbitraryKeyValues``). 400 ``failed to parse metadata: failed to parse the input: invalid
    <key,value> format`` otherwise."""
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()}
    out: dict[str, str] = {}
    for item in text.split(","):
        key, eq, value = item.strip().partition("=")
        if not eq or not key.strip():
            raise user_error("failed to parse metadata: failed to parse the input: invalid <key,value> format")
        out[key.strip()] = value.strip()
    return out
