"""Tokens of the secrets service (OpenBao's token store, reduced to what clients read).

A token carries its policies; the dev server's root token (``root`` by default) has the ``root``
policy. ``auth/token/create`` makes child tokens (``s.`` + 24 characters, like OpenBao's service
tokens); ``auth/token/lookup-self`` returns the fields hvac, terraform and vault-agent read.
:func:`plan_child` holds the rules of ``auth/token/create`` that need root or ``sudo`` on the
create path, or the parent's policies (OpenBao's ``vault/token_store.go``, ``handleCreateCommon``).
"""

from __future__ import annotations

import datetime
import re
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass, field, replace

_ALPHABET = string.ascii_letters + string.digits
DEFAULT_TOKEN_TTL = 768 * 3600  # seconds: the dev server's system default and max lease TTL
NON_ASSIGNABLE_POLICIES = ("response-wrapping", "control-group")
CUSTOM_ID_WARNING = ("Supplying a custom ID for the token uses the weaker SHA1 hashing instead of the more secure "
                     "SHA2-256 HMAC for token obfuscation. SHA1 hashed tokens on the wire leads to less secure lookups.")
_DISPLAY_NAME_INVALID = re.compile(r"[^a-zA-Z0-9-]")


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
    entity_id: str = ""  # the identity entity of a login token (AppRole); "" for tokens made by the token store
    period: int = 0
    parent: str = ""
    last_renewal: datetime.datetime | None = None
    expires: datetime.datetime | None = None
    role: str = ""  # the token role it was created through (its period/max apply at each renewal)
    lease_ttl: int = 0  # the TTL its lease was last given (creation or renewal; 0: ``ttl``), seconds
    granted_uses: int = 0  # num_uses at creation: the lease's auth block keeps it (renewals answer it)

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
        """``data`` of ``auth/token/lookup-self``: remaining ``ttl`` (seconds, :func:`remaining_ttl`),
        ``expire_time`` (RFC 3339 or null), ``creation_time`` (unix seconds), ``num_uses`` (the uses
        left; ``-1`` while the request that took the last one runs) and the rest as OpenBao sends them."""
        expires = self.expires_at()
        remaining = remaining_ttl(expires, now) if expires else 0
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
            "entity_id": self.entity_id,
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
        seconds, default the token's ``ttl``; renewals pass the renewed TTL). ``num_uses`` is the
        limit the token was created with, as the lease's stored ``Auth`` keeps it (a renewal answers
        it however many uses are left; lookups show what is left)."""
        return {
            "client_token": self.id,
            "accessor": self.accessor,
            "policies": list(self.policies),
            "token_policies": list(self.policies),
            "metadata": self.meta,
            "lease_duration": self.ttl if lease_duration is None else lease_duration,
            "renewable": self.renewable,
            "entity_id": self.entity_id,
            "token_type": "service",
            "orphan": self.orphan,
            "mfa_requirement": None,
            "num_uses": self.granted_uses,
        }


def remaining_ttl(expires: datetime.datetime, now: datetime.datetime) -> int:
    """Whole seconds until ``expires`` as OpenBao's ``leaseEntry.ttl()`` counts them: ``now`` rounded
    to the nearest second first, the difference truncated (a token created with ``ttl=1h`` reads
    3600 in the first half second, as on OpenBao); never below 0."""
    rounded = now.replace(microsecond=0) + datetime.timedelta(seconds=1 if now.microsecond >= 500_000 else 0)
    return max(0, int((expires - rounded).total_seconds()))


REVOCATION_PENDING = -1  # OpenBao's tokenRevocationPending: the last use is being made


class TokenStore:
    """Tokens by id, token roles (``roles``: name -> :class:`~.token_roles.TokenRole`) and the
    leases handed out with secrets (``leases``: lease id -> :class:`~.leases.Lease`), as OpenBao's
    token store and expiration manager keep them. ``due``: no token or lease expires before it (a
    lower bound; ``None``: nothing expires), so the expiry sweep (:meth:`expire`) runs only when
    something may have expired. Not thread-safe on its own: the service's lock guards it."""

    def __init__(self, root_token: str, now: datetime.datetime):
        self.tokens: dict[str, Token] = {}
        self.roles: dict = {}
        self.leases: dict = {}
        self.due: datetime.datetime | None = None
        self.root = Token(id=root_token, accessor=random_id(), policies=("root",), creation_time=now,
                          orphan=True, display_name="token")
        self.tokens[root_token] = self.root

    def expect(self, when: datetime.datetime | None) -> None:
        """Note that something (a token or a lease) expires at ``when``: :attr:`due` moves earlier."""
        if when is not None and (self.due is None or when < self.due):
            self.due = when

    def alive(self, token: Token, now: datetime.datetime, tainted: bool = False) -> bool:
        """Whether ``token`` still works at ``now``: neither it nor any of its parents has expired
        (OpenBao revokes a token's whole tree when its lease expires, ``revokeTree``) or been
        removed, and it is not waiting for revocation after its last use (``tainted``: it may be,
        as ``lookupInternal(tainted=true)`` allows for ``lookup`` and ``lookup-accessor``)."""
        seen = 0
        while True:
            if token.num_uses < 0 and not (tainted and seen == 0):
                return False
            expires = token.expires_at()
            if expires is not None and now >= expires:
                return False
            if not token.parent:
                return True
            parent = self.tokens.get(token.parent)
            seen += 1
            if parent is None or seen > len(self.tokens):
                return False
            token = parent

    def lookup(self, token_id: str | None, now: datetime.datetime, tainted: bool = False) -> Token | None:
        """The live token with this id, or ``None`` (unknown, empty, expired, under an expired
        parent, or used up; ``tainted``: see :meth:`alive`)."""
        if not token_id:
            return None
        token = self.tokens.get(token_id)
        if token is None or not self.alive(token, now, tainted):
            return None
        return token

    def lookup_now(self, token_id: str | None, clock: Callable[[], datetime.datetime]) -> Token | None:
        """:meth:`lookup` at ``clock()`` (e.g. ``Clock.now``), reading the clock only when the answer
        depends on it: a token with no TTL, no parent and uses left (the root token) is alive at any
        instant, so :meth:`alive` would answer ``True`` whatever the time (the journal classifies the
        token of every request; the clock read is most of that cost)."""
        token = self.tokens.get(token_id) if token_id else None
        if token is None:
            return None
        if token.num_uses >= 0 and not token.parent and token.expires is None and not token.ttl:
            return token
        return self.lookup(token_id, clock())

    def use(self, token: Token, now: datetime.datetime) -> Token | None:
        """OpenBao's ``UseToken``: take one use of a token with a use limit (``num_uses`` > 0) and
        return the token as it now is (its last use leaves ``num_uses`` at ``-1``, revocation pending:
        the caller revokes it once the request is answered); ``None`` when it was used up or revoked
        in the meantime. A token without a limit is returned unchanged. Atomic under the service lock."""
        if token.num_uses == 0:
            return token
        current = self.tokens.get(token.id)
        if current is None or not self.alive(current, now):
            return None
        current = replace(current, num_uses=REVOCATION_PENDING if current.num_uses == 1 else current.num_uses - 1)
        self.tokens[current.id] = current
        return current

    def expire(self, now: datetime.datetime) -> list[tuple[datetime.datetime, list[Token]]]:
        """Revoke, as the expiration manager does, every token whose lease expired by ``now``, each
        with its whole tree (earliest expiry first); returns ``(expiry, removed tokens)`` per expired
        token (their leases are the caller's to revoke). :attr:`due` is recomputed for the tokens;
        the caller adds its leases (:meth:`expect`)."""
        expired = sorted((when, token.id) for token in self.tokens.values()
                         if (when := token.expires_at()) is not None and when <= now)
        out = []
        for when, token_id in expired:
            removed = self.revoke(token_id)
            if removed:
                out.append((when, removed))
        self.due = None
        for token in self.tokens.values():
            self.expect(token.expires_at())
        return out

    def create(self, now: datetime.datetime, policies: list[str] | None = None, ttl: int = 0,
               display_name: str = "", meta: dict | None = None, num_uses: int = 0,
               renewable: bool = True, token_id: str | None = None, no_default_policy: bool = False,
               parent: Token | None = None, explicit_max_ttl: int = 0, exact_policies: bool = False,
               period: int = 0, path: str = "auth/token/create", ttl_decided: bool = False,
               role: str = "", full_display_name: str = "") -> Token:
        """Create a token. ``policies`` default to the parent's; ``default`` is added unless the token
        is root or ``no_default_policy``; policies are kept sorted, as OpenBao keeps them
        (``exact_policies``: take ``policies`` as they are, already decided by :func:`plan_child`); a
        root token carries the root policy alone. ``ttl`` in seconds (0 = the mount default, 768h on a
        dev server, for non-root tokens; no expiry for root tokens). ``ttl_decided``: ``ttl`` is final
        (decided by :func:`plan_child` and :func:`~.ttl.creation_ttl`), so a root token keeps a TTL it
        was given. A token without expiry is never renewable. ``period`` (seconds), ``path`` (where it
        was created) and ``role`` (the token role it was created through) are kept for renewals.
        ``display_name`` gets the ``token-`` prefix; ``full_display_name`` (from :func:`display_name`)
        is stored as it is.

        Raises :class:`TokenRuleError` (``cannot create a token with a duplicate ID``) when
        ``token_id`` is taken: an existing token, the root token included, is never replaced.
        """
        if token_id and token_id in self.tokens:
            raise TokenRuleError("cannot create a token with a duplicate ID")
        if exact_policies:
            chosen = list(policies or ())
        elif policies is None or len(policies) == 0:
            chosen = list(parent.policies) if parent else ["default"]
            chosen = sanitize_policies(chosen, add_default=not no_default_policy)
        else:
            chosen = sanitize_policies(policies, add_default=not no_default_policy)
        is_root = "root" in chosen
        if is_root:  # a root token carries the root policy alone
            chosen = ["root"]
        if not ttl_decided and not is_root and ttl == 0:
            ttl = DEFAULT_TOKEN_TTL
        name = full_display_name or ("token" if not display_name else "token-" + display_name)
        token = Token(
            id=token_id or "s." + random_id(), accessor=random_id(), policies=tuple(chosen),
            creation_time=now, issue_time=now, ttl=ttl, display_name=name, meta=meta,
            num_uses=num_uses, granted_uses=num_uses, renewable=renewable and ttl > 0, orphan=parent is None,
            explicit_max_ttl=explicit_max_ttl, period=period, parent=parent.id if parent else "", path=path,
            role=role,
        )
        self.tokens[token.id] = token
        self.expect(token.expires_at())
        return token

    def copy(self) -> TokenStore:
        """A cheap copy (tokens are immutable)."""
        clone = TokenStore.__new__(TokenStore)
        clone.tokens = dict(self.tokens)
        clone.roles = dict(self.roles)
        clone.leases = dict(self.leases)
        clone.due = self.due
        clone.root = self.root
        return clone

    def by_accessor(self, accessor: str, now: datetime.datetime, tainted: bool = False) -> Token | None:
        """The live token with this accessor, or ``None`` (``tainted``: see :meth:`alive`)."""
        for token in self.tokens.values():
            if accessor and token.accessor == accessor:
                return self.lookup(token.id, now, tainted)
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
        """Record a renewal: the token now expires ``ttl`` seconds after ``now``, and its lease's TTL
        (the base of the next renewal without ``increment``, ``CalculateTTL``'s backend TTL) is ``ttl``."""
        token = replace(self.tokens.get(token.id, token), last_renewal=now,
                        expires=now + datetime.timedelta(seconds=ttl), lease_ttl=ttl)
        self.tokens[token.id] = token
        self.expect(token.expires)
        return token

    def with_root(self, root_token: str) -> None:
        """Rename the root token (used when the service is configured)."""
        self.tokens.pop(self.root.id, None)
        self.root = replace(self.root, id=root_token)
        self.tokens[root_token] = self.root


class TokenRuleError(Exception):
    """A refused ``auth/token/create``: ``message`` is OpenBao's text, answered as a 400."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def sanitize_policies(names, add_default: bool) -> list[str]:
    """OpenBao's ``policyutil.SanitizePolicies``: trimmed, lower-cased, de-duplicated and sorted;
    ``["root"]`` alone when ``root`` is among them; ``default`` added when ``add_default``."""
    out = {n.strip().lower() for n in names if n and n.strip()}
    if "root" in out:
        return ["root"]
    if add_default:
        out.add("default")
    return sorted(out)


@dataclass(frozen=True)
class ChildPlan:
    """What :func:`plan_child` decided: the final ``policies`` (sorted) and ``orphan``."""

    policies: tuple[str, ...]
    orphan: bool


def plan_child(parent: Token, sudo: bool, *, token_id: str = "", policies: list[str] | None = None,
               no_parent: bool = False, orphan_path: bool = False, no_default_policy: bool = False,
               num_uses: int = 0, token_type: str = "", entity_alias: str = "") -> ChildPlan:
    """The checks of a plain ``auth/token/create`` before its TTLs are read, in OpenBao 2.7's order
    (``handleCreateCommon``): the type, ``num_uses``, the entity alias, the custom id's privilege, the
    policies, root, and the orphan flag. ``sudo``: the caller is root or holds ``sudo`` on the create
    path; ``orphan_path``: the request came to ``create-orphan``.

    Raises :class:`TokenRuleError` (a 400) with OpenBao's text: ``invalid 'token_type' value`` (not
    ``service``/``batch``); ``number of uses cannot be negative``; ``'entity_alias' is only allowed in
    combination with token role``; ``root or sudo privileges required to specify token id``; policies
    the parent does not hold, without sudo, ``child policies must be subset of parent`` (``default`` is
    only added when the parent has it); ``cannot assign policy "response-wrapping"``; ``root tokens
    may not be created without parent token being root``; ``batch tokens cannot be root tokens``;
    ``no_parent`` without root/sudo ``root or sudo privileges required to create orphan token``. The
    TTLs, the custom id's form (:func:`check_custom_id`) and a taken id come later.
    """
    if token_type not in ("", "service", "batch"):
        raise TokenRuleError("invalid 'token_type' value")
    if num_uses < 0:
        raise TokenRuleError("number of uses cannot be negative")
    if entity_alias:
        raise TokenRuleError("'entity_alias' is only allowed in combination with token role")
    if token_id and not sudo:
        raise TokenRuleError("root or sudo privileges required to specify token id")
    if policies:
        chosen = sanitize_policies(policies, add_default=not no_default_policy and (sudo or "default" in parent.policies))
    else:
        chosen = list(parent.policies)
    if no_default_policy:
        chosen = [p for p in chosen if p != "default"]
    if not sudo and not set(chosen) <= set(parent.policies):
        raise TokenRuleError("child policies must be subset of parent")
    for name in chosen:
        if name in NON_ASSIGNABLE_POLICIES:
            raise TokenRuleError(f'cannot assign policy "{name}"')
    is_root = "root" in chosen
    if is_root and not parent.is_root:
        raise TokenRuleError("root tokens may not be created without parent token being root")
    if is_root and token_type == "batch":
        raise TokenRuleError("batch tokens cannot be root tokens")
    if no_parent and not sudo and not orphan_path:
        raise TokenRuleError("root or sudo privileges required to create orphan token")
    return ChildPlan(tuple(chosen), no_parent or orphan_path)


def check_custom_id(token_id: str) -> list[str]:
    """The token store's checks of a custom token id when it stores the token (after the TTLs):
    ``custom token ID cannot have the 's.' prefix`` (also ``'hvs.'``), ``custom token ID cannot have a
    '.' in the value`` (:class:`TokenRuleError`); returns the warning a custom id earns."""
    for prefix in ("s.", "hvs."):
        if token_id.startswith(prefix):
            raise TokenRuleError(f"custom token ID cannot have the '{prefix}' prefix")
    if "." in token_id:
        raise TokenRuleError("custom token ID cannot have a '.' in the value")
    return [CUSTOM_ID_WARNING]


def display_name(text: str) -> str:
    """The display name OpenBao stores for a requested one: ``token`` when none is given, else
    ``token-<text>`` with every character other than ASCII letters, digits and ``-`` made ``-``, then
    one trailing ``-`` cut (``"My App!!"`` -> ``"token-My-App-"``, ``"!"`` -> ``"token-"``)."""
    if not text:
        return "token"
    full = _DISPLAY_NAME_INVALID.sub("-", "token-" + text)
    return full[:-1] if full.endswith("-") else full
