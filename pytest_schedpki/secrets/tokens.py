"""Tokens of the secrets service (OpenBao's token store, reduced to what clients read).

A token carries its policies; the dev server's root token (``root`` by default) has the ``root``
policy. ``auth/token/create`` makes child tokens (``s.`` + 24 characters, like OpenBao's service
tokens); ``auth/token/lookup-self`` returns the fields hvac, terraform and vault-agent read.
"""

from __future__ import annotations

import datetime
import secrets
import string
from dataclasses import dataclass, field, replace

_ALPHABET = string.ascii_letters + string.digits


def random_id(length: int = 24) -> str:
    """A random alphanumeric string, as OpenBao's token ids and accessors are."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def rfc3339_nano(when: datetime.datetime) -> str:
    """Go's RFC3339Nano in UTC: ``2026-11-21T05:09:03.866850616Z`` (trailing zeros trimmed)."""
    when = when.astimezone(datetime.timezone.utc)
    base = when.strftime("%Y-%m-%dT%H:%M:%S")
    frac = f"{when.microsecond:06d}".rstrip("0")
    return f"{base}.{frac}Z" if frac else f"{base}Z"


@dataclass(frozen=True)
class Token:
    """A token record. ``ttl`` and ``explicit_max_ttl`` are seconds (0 = no expiry);
    ``creation_time`` is an aware UTC datetime; ``policies`` keeps upstream order
    (``default`` first for child tokens)."""

    id: str
    accessor: str
    policies: tuple[str, ...]
    creation_time: datetime.datetime
    ttl: int = 0
    display_name: str = "token"
    meta: dict | None = None
    num_uses: int = 0
    renewable: bool = False
    orphan: bool = False
    explicit_max_ttl: int = 0
    path: str = "auth/token/create"
    issue_time: datetime.datetime | None = None
    extra: dict = field(default_factory=dict)
    period: int = 0
    parent: str = ""
    last_renewal: datetime.datetime | None = None
    expires: datetime.datetime | None = None
    role: str = ""  # the token role it was created through (its period/max apply at each renewal)

    @property
    def is_root(self) -> bool:
        return "root" in self.policies

    def expires_at(self) -> datetime.datetime | None:
        """When the token stops working (``expires`` once renewed, else creation + ``ttl``), or
        ``None`` for a token without TTL."""
        if self.expires is not None:
            return self.expires
        if not self.ttl:
            return None
        return self.creation_time + datetime.timedelta(seconds=self.ttl)

    def lookup_data(self, now: datetime.datetime) -> dict:
        """``data`` of ``auth/token/lookup-self``: remaining ``ttl`` (seconds), ``expire_time``
        (RFC 3339 or null), ``creation_time`` (unix seconds) and the rest as OpenBao sends them."""
        expires = self.expires_at()
        remaining = max(0, int((expires - now).total_seconds())) if expires else 0
        extra: dict = {}
        if self.period:
            extra["period"] = self.period
        if self.role:
            extra["role"] = self.role
        if self.last_renewal is not None:
            extra["last_renewal"] = rfc3339_nano(self.last_renewal)
            extra["last_renewal_time"] = int(self.last_renewal.timestamp())
        return {**extra,
            "accessor": self.accessor,
            "creation_time": int(self.creation_time.timestamp()),
            "creation_ttl": self.ttl,
            "display_name": self.display_name,
            "entity_id": "",
            "expire_time": rfc3339_nano(expires) if expires else None,
            "explicit_max_ttl": self.explicit_max_ttl,
            "id": self.id,
            "issue_time": rfc3339_nano(self.issue_time or self.creation_time),
            "meta": self.meta,
            "num_uses": self.num_uses,
            "orphan": self.orphan,
            "path": self.path,
            "policies": list(self.policies),
            "renewable": self.renewable,
            "ttl": remaining,
            "type": "service",
        }

    def auth_block(self, lease_duration: int | None = None) -> dict:
        """The envelope's ``auth`` block as ``auth/token/create`` returns it (``lease_duration``:
        seconds, default the token's ``ttl``; renewals pass the renewed TTL)."""
        return {
            "client_token": self.id,
            "accessor": self.accessor,
            "policies": list(self.policies),
            "token_policies": list(self.policies),
            "metadata": self.meta,
            "lease_duration": self.ttl if lease_duration is None else lease_duration,
            "renewable": self.renewable,
            "entity_id": "",
            "token_type": "service",
            "orphan": self.orphan,
            "mfa_requirement": None,
            "num_uses": self.num_uses,
        }


class TokenStore:
    """Tokens by id, token roles (``roles``: name -> :class:`~.token_roles.TokenRole`) and the
    leases handed out with secrets (``leases``: lease id -> :class:`~.leases.Lease`), as OpenBao's
    token store and expiration manager keep them. Not thread-safe on its own: the service's lock
    guards it."""

    def __init__(self, root_token: str, now: datetime.datetime):
        self.tokens: dict[str, Token] = {}
        self.roles: dict = {}
        self.leases: dict = {}
        self.root = Token(id=root_token, accessor=random_id(), policies=("root",), creation_time=now,
                          orphan=True, display_name="token")
        self.tokens[root_token] = self.root

    def lookup(self, token_id: str | None, now: datetime.datetime) -> Token | None:
        """The live token with this id, or ``None`` (unknown, empty, expired or used up)."""
        if not token_id:
            return None
        token = self.tokens.get(token_id)
        if token is None:
            return None
        expires = token.expires_at()
        if expires is not None and now >= expires:
            return None
        return token

    def create(self, now: datetime.datetime, policies: list[str] | None = None, ttl: int = 0,
               display_name: str = "", meta: dict | None = None, num_uses: int = 0,
               renewable: bool = True, token_id: str | None = None, no_default_policy: bool = False,
               parent: Token | None = None, explicit_max_ttl: int = 0, period: int = 0,
               path: str = "auth/token/create", ttl_decided: bool = False, role: str = "") -> Token:
        """Create a token. ``policies`` default to the parent's; ``default`` is added first unless the
        token is root or ``no_default_policy``; ``ttl`` in seconds (0 = the mount default, 768h on a
        dev server, for non-root tokens). ``ttl_decided``: ``ttl`` is final (computed by
        :func:`~.token_ttl.creation_ttl`); a root token then keeps its TTL, and is renewable only
        with one."""
        if policies is None or len(policies) == 0:
            chosen = list(parent.policies) if parent else ["default"]
        else:
            chosen = sorted(dict.fromkeys(p.strip() for p in policies if p.strip()))
        if "root" not in chosen and not no_default_policy and "default" not in chosen:
            chosen = ["default", *chosen]
        elif "default" in chosen and "root" not in chosen:
            chosen = ["default", *[p for p in chosen if p != "default"]]
        is_root = "root" in chosen
        if is_root:  # a root token carries the root policy alone
            chosen = ["root"]
        if not ttl_decided:
            if not is_root and ttl == 0:
                ttl = 768 * 3600
            ttl, renewable = (0, False) if is_root else (ttl, renewable)
        elif ttl == 0:
            renewable = False
        name = "token" if not display_name else "token-" + display_name
        token = Token(
            id=token_id or "s." + random_id(), accessor=random_id(), policies=tuple(chosen),
            creation_time=now, issue_time=now, ttl=ttl, display_name=name, meta=meta,
            num_uses=num_uses, renewable=renewable, orphan=parent is None,
            explicit_max_ttl=explicit_max_ttl, period=period, parent=parent.id if parent else "", path=path,
            role=role,
        )
        self.tokens[token.id] = token
        return token

    def copy(self) -> TokenStore:
        """A cheap copy (tokens are immutable)."""
        clone = TokenStore.__new__(TokenStore)
        clone.tokens = dict(self.tokens)
        clone.roles = dict(self.roles)
        clone.leases = dict(self.leases)
        clone.root = self.root
        return clone

    def by_accessor(self, accessor: str, now: datetime.datetime) -> Token | None:
        """The live token with this accessor, or ``None``."""
        for token in self.tokens.values():
            if accessor and token.accessor == accessor:
                return self.lookup(token.id, now)
        return None

    def revoke(self, token_id: str, orphan_children: bool = False) -> list[Token]:
        """Remove a token and (unless ``orphan_children``, which makes its children orphans instead)
        all its descendants; returns the removed tokens (their leases are the caller's to revoke)."""
        token = self.tokens.pop(token_id, None)
        if token is None:
            return []
        removed = [token]
        for child in [t for t in self.tokens.values() if t.parent == token_id]:
            if orphan_children:
                self.tokens[child.id] = replace(child, parent="", orphan=True)
            else:
                removed += self.revoke(child.id)
        return removed

    def renewed(self, token: Token, ttl: int, now: datetime.datetime) -> Token:
        """Record a renewal: the token now expires ``ttl`` seconds after ``now``."""
        token = replace(token, last_renewal=now, expires=now + datetime.timedelta(seconds=ttl))
        self.tokens[token.id] = token
        return token

    def with_root(self, root_token: str) -> None:
        """Rename the root token (used when the service is configured)."""
        self.tokens.pop(self.root.id, None)
        self.root = replace(self.root, id=root_token)
        self.tokens[root_token] = self.root
