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

    @property
    def is_root(self) -> bool:
        return "root" in self.policies

    def expires_at(self) -> datetime.datetime | None:
        """When the token stops working, or ``None`` for a token without TTL."""
        if not self.ttl:
            return None
        return self.creation_time + datetime.timedelta(seconds=self.ttl)

    def lookup_data(self, now: datetime.datetime) -> dict:
        """``data`` of ``auth/token/lookup-self``: remaining ``ttl`` (seconds), ``expire_time``
        (RFC 3339 or null), ``creation_time`` (unix seconds) and the rest as OpenBao sends them."""
        expires = self.expires_at()
        remaining = max(0, int((expires - now).total_seconds())) if expires else 0
        return {
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

    def auth_block(self) -> dict:
        """The envelope's ``auth`` block as ``auth/token/create`` returns it."""
        return {
            "client_token": self.id,
            "accessor": self.accessor,
            "policies": list(self.policies),
            "token_policies": list(self.policies),
            "metadata": self.meta,
            "lease_duration": self.ttl,
            "renewable": self.renewable,
            "entity_id": "",
            "token_type": "service",
            "orphan": self.orphan,
            "mfa_requirement": None,
            "num_uses": self.num_uses,
        }


class TokenStore:
    """Tokens by id. Not thread-safe on its own: the service's lock guards it."""

    def __init__(self, root_token: str, now: datetime.datetime):
        self.tokens: dict[str, Token] = {}
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
               parent: Token | None = None, explicit_max_ttl: int = 0) -> Token:
        """Create a token. ``policies`` default to the parent's; ``default`` is added first unless the
        token is root or ``no_default_policy``; ``ttl`` in seconds (0 = the mount default, 768h on a
        dev server, for non-root tokens)."""
        if policies is None or len(policies) == 0:
            chosen = list(parent.policies) if parent else ["default"]
        else:
            chosen = sorted(dict.fromkeys(p.strip() for p in policies if p.strip()))
        if "root" not in chosen and not no_default_policy and "default" not in chosen:
            chosen = ["default", *chosen]
        elif "default" in chosen and "root" not in chosen:
            chosen = ["default", *[p for p in chosen if p != "default"]]
        is_root = "root" in chosen
        if not is_root and ttl == 0:
            ttl = 768 * 3600
        name = "token" if not display_name else "token-" + display_name
        token = Token(
            id=token_id or "s." + random_id(), accessor=random_id(), policies=tuple(chosen),
            creation_time=now, issue_time=now, ttl=0 if is_root else ttl, display_name=name, meta=meta,
            num_uses=num_uses, renewable=False if is_root else renewable, orphan=parent is None,
            explicit_max_ttl=explicit_max_ttl,
        )
        self.tokens[token.id] = token
        return token

    def copy(self) -> TokenStore:
        """A cheap copy (tokens are immutable)."""
        clone = TokenStore.__new__(TokenStore)
        clone.tokens = dict(self.tokens)
        clone.root = self.root
        return clone

    def with_root(self, root_token: str) -> None:
        """Rename the root token (used when the service is configured)."""
        self.tokens.pop(self.root.id, None)
        self.root = replace(self.root, id=root_token)
        self.tokens[root_token] = self.root
