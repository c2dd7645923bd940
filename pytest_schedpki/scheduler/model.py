"""Nomad's ACL auth method as immutable records, and the rules Nomad's server applies to them.

Field names are Nomad's (``structs.ACLAuthMethod`` and friends) so a reader who knows Nomad finds
them where expected. Units: ``MaxTokenTTL`` and the three Config leeways are **nanoseconds** (Go
``time.Duration``); ``CreateTime``/``ModifyTime`` are :class:`~pytest_schedpki.golang.time.GoTime`; lists are tuples
(``None`` = Go nil, ``()`` = an empty non-nil slice); maps are read-only mappings (``None`` = nil).

The rules, in the order ``ACL.UpsertAuthMethods`` applies them:

1. :func:`merge` - fill zero fields of the request from the stored method of the same Name
   (Type, TokenLocality, TokenNameFormat, MaxTokenTTL, Config as a whole); ``Default`` is NOT merged.
2. :func:`canonicalize` - CreateTime if zero, ModifyTime always, default TokenNameFormat, client
   assertion defaults.
3. :func:`validate` - go-multierror text, upstream order; HTTP turns it into
   ``400 auth method 0 invalid: <text>``.
4. :func:`compute_hash` - BLAKE2b-256 over the fields (map keys sorted: see the divergence note).

:func:`sanitize` redacts secrets for responses; :func:`stub` is the list entry.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from ..golang.duration import format_duration
from ..golang.time import ZERO_TIME, GoTime

DEFAULT_TOKEN_NAME_FORMAT = "${auth_method_type}-${auth_method_name}"
TYPE_OIDC, TYPE_JWT = "OIDC", "JWT"
LOCALITY_LOCAL, LOCALITY_GLOBAL = "local", "global"
REDACTED = "redacted"
VALID_NAME = re.compile(r"[a-zA-Z0-9-]{1,128}")


class SchedulerError(Exception):
    """A request the scheduler refuses, as Nomad would answer it over HTTP.

    ``status`` is the HTTP status (400, 403, 404, 500) and ``text`` the exact plain-text body, e.g.
    ``SchedulerError(400, "default method already exists: okta")``.
    """

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status
        self.text = text

    def __repr__(self) -> str:
        return f"SchedulerError({self.status}, {self.text!r})"


@dataclass(frozen=True)
class PrivateKey:
    """``OIDCClientAssertion.PrivateKey`` (Nomad's ``OIDCClientAssertionKey``); all strings."""

    PemKey: str = ""
    PemKeyFile: str = ""
    KeyIDHeader: str = ""
    PemCert: str = ""
    PemCertFile: str = ""
    KeyID: str = ""


@dataclass(frozen=True)
class OIDCClientAssertion:
    """Client assertion ("private key JWT") config. ``ClientSecret`` is copied from
    ``OIDCClientSecret`` by :func:`canonicalize` and redacted in responses."""

    KeySource: str = ""
    Audience: tuple[str, ...] | None = None
    PrivateKey: PrivateKey | None = None
    ExtraHeaders: Mapping[str, str] | None = None
    KeyAlgorithm: str = ""
    ClientSecret: str = ""


@dataclass(frozen=True)
class AuthMethodConfig:
    """``ACLAuthMethod.Config`` in Nomad's declared field order; leeways in nanoseconds."""

    JWTValidationPubKeys: tuple[str, ...] | None = None
    JWKSURL: str = ""
    OIDCDiscoveryURL: str = ""
    OIDCClientID: str = ""
    OIDCClientSecret: str = ""
    OIDCClientAssertion: OIDCClientAssertion | None = None
    OIDCEnablePKCE: bool = False
    OIDCDisableUserInfo: bool = False
    OIDCScopes: tuple[str, ...] | None = None
    BoundAudiences: tuple[str, ...] | None = None
    BoundIssuer: tuple[str, ...] | None = None
    AllowedRedirectURIs: tuple[str, ...] | None = None
    DiscoveryCaPem: tuple[str, ...] | None = None
    JWKSCACert: str = ""
    SigningAlgs: tuple[str, ...] | None = None
    ExpirationLeeway: int = 0
    NotBeforeLeeway: int = 0
    ClockSkewLeeway: int = 0
    ClaimMappings: Mapping[str, str] | None = None
    ListClaimMappings: Mapping[str, str] | None = None
    VerboseLogging: bool = False


@dataclass(frozen=True)
class AuthMethod:
    """An ACL auth method (Nomad's ``structs.ACLAuthMethod``).

    ``MaxTokenTTL`` is nanoseconds; ``Hash`` the 32-byte BLAKE2b-256 digest (None until computed);
    ``CreateIndex``/``ModifyIndex`` raft indexes of the region that stores the record.
    """

    Name: str = ""
    Type: str = ""
    TokenLocality: str = ""
    TokenNameFormat: str = ""
    MaxTokenTTL: int = 0
    Default: bool = False
    Config: AuthMethodConfig | None = None
    Hash: bytes | None = None
    CreateTime: GoTime = ZERO_TIME
    ModifyTime: GoTime = ZERO_TIME
    CreateIndex: int = 0
    ModifyIndex: int = 0


@dataclass(frozen=True)
class AuthMethodStub:
    """A list entry (``ACLAuthMethodStub``): Name, Type, Default, Hash, CreateIndex, ModifyIndex."""

    Name: str
    Type: str
    Default: bool
    Hash: bytes | None
    CreateIndex: int
    ModifyIndex: int


def frozen_map(value: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """A read-only copy of a string map (None stays None)."""
    return None if value is None else MappingProxyType(dict(value))


# -- merge and canonicalize ----------------------------------------------------------------------

def merge(request: AuthMethod, existing: AuthMethod | None) -> AuthMethod:
    """Nomad's ``ACLAuthMethod.Merge``: zero fields of ``request`` take ``existing``'s values.

    Merged: Type, TokenLocality, TokenNameFormat, MaxTokenTTL (0 inherits) and Config (replaced or
    inherited as a whole, never deep-merged). Not merged: Name (the key) and **Default** (an update
    that omits it clears the default flag).
    """
    if existing is None:
        return request
    return replace(
        request,
        Type=request.Type or existing.Type,
        TokenLocality=request.TokenLocality or existing.TokenLocality,
        TokenNameFormat=request.TokenNameFormat or existing.TokenNameFormat,
        MaxTokenTTL=request.MaxTokenTTL or existing.MaxTokenTTL,
        Config=request.Config if request.Config is not None else existing.Config,
    )


def _canonical_assertion(config: AuthMethodConfig) -> OIDCClientAssertion | None:
    ca = config.OIDCClientAssertion
    if ca is None:
        return None
    algorithm = ca.KeyAlgorithm
    if not algorithm:
        algorithm = {"client_secret": "HS256", "nomad": "RS256", "private_key": "RS256"}.get(ca.KeySource, "")
    key = ca.PrivateKey
    if key is not None and not key.KeyIDHeader:
        header = ""
        if key.KeyID:
            header = "kid"
        if key.PemCert or key.PemCertFile:
            header = "x5t#S256"
        key = replace(key, KeyIDHeader=header)
    return replace(
        ca,
        Audience=ca.Audience if ca.Audience else (config.OIDCDiscoveryURL,),
        ClientSecret=config.OIDCClientSecret,
        KeyAlgorithm=algorithm,
        PrivateKey=key,
    )


def canonicalize(method: AuthMethod, now: GoTime) -> AuthMethod:
    """Nomad's ``ACLAuthMethod.Canonicalize`` at time ``now`` (UTC).

    CreateTime is set only when zero (so a client-supplied CreateTime survives on create),
    ModifyTime always; an empty TokenNameFormat becomes ``${auth_method_type}-${auth_method_name}``;
    a client assertion gets its Audience (``[OIDCDiscoveryURL]`` when empty), ``ClientSecret``
    (= OIDCClientSecret), KeyAlgorithm (HS256 for client_secret, RS256 for nomad/private_key) and
    PrivateKey.KeyIDHeader (``kid`` with KeyID, ``x5t#S256`` with a certificate) defaults.
    """
    config = method.Config
    if config is not None and config.OIDCClientAssertion is not None:
        config = replace(config, OIDCClientAssertion=_canonical_assertion(config))
    return replace(
        method,
        CreateTime=now if method.CreateTime.is_zero() else method.CreateTime,
        ModifyTime=now,
        TokenNameFormat=method.TokenNameFormat or DEFAULT_TOKEN_NAME_FORMAT,
        Config=config,
    )


# -- validation ------------------------------------------------------------------------------------

def multierror_text(errors: list[str]) -> str:
    """go-multierror's ``ListFormatFunc``: ``"1 error occurred:\\n\\t* e\\n\\n"`` or ``"N errors occurred:..."``."""
    if len(errors) == 1:
        return f"1 error occurred:\n\t* {errors[0]}\n\n"
    points = "\n\t".join(f"* {e}" for e in errors)
    return f"{len(errors)} errors occurred:\n\t{points}\n\n"


def _validate_private_key(k: PrivateKey) -> str | None:
    if not k.PemKey and not k.PemKeyFile:
        return "missing PemKey or PemKeyFile"
    if k.PemKey and k.PemKeyFile:
        return "require only one of PemKey or PemKeyFile"
    if k.PemKeyFile and not posixpath.isabs(k.PemKeyFile):
        return f"invalid PemKeyFile: must be absolute; got: {k.PemKeyFile}"
    sources = [bool(k.PemCert), bool(k.PemCertFile), bool(k.KeyID)]
    if not any(sources):
        return "missing PemCert, PemCertFile, or KeyID"
    if sum(sources) > 1:
        return "require only one of PemCert, PemCertFile, or KeyID"
    if k.PemCertFile and not posixpath.isabs(k.PemCertFile):
        return f"invalid PemCertFile: must be absolute; got: {k.PemCertFile}"
    if k.KeyID and k.KeyIDHeader != "kid":
        return 'invalid KeyIDHeader; key header for key ID must be "kid"'
    if (k.PemCert or k.PemCertFile) and k.KeyIDHeader not in ("x5t", "x5t#S256"):
        return 'invalid KeyIDHeader; certificate-derived key header must be one of: "x5t#S256", "x5t"'
    return None


def validate_client_assertion(ca: OIDCClientAssertion | None) -> str | None:
    """``OIDCClientAssertion.Validate``: the first problem's text, or None."""
    if ca is None:
        return None
    if not ca.Audience or ca.Audience[0] == "":
        return "missing Audience"
    if ca.KeySource == "nomad":
        return None
    if ca.KeySource == "private_key":
        if ca.PrivateKey is None:
            return "PrivateKey is required for `private_key` KeySource"
        problem = _validate_private_key(ca.PrivateKey)
        return None if problem is None else f"invalid PrivateKey: {problem}"
    if ca.KeySource == "client_secret":
        return None if ca.ClientSecret else "OIDCClientSecret is required for `client_secret` KeySource"
    return "invalid KeySource " + _go_q(ca.KeySource)


def _go_q(text: str) -> str:
    """Go's ``%q`` (strconv.Quote) for the rare non-printable KeySource."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                        "\v": "\\v"}.get(ch, f"\\x{ord(ch):02x}"))
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def validate_config(config: AuthMethodConfig | None, method_type: str) -> str | None:
    """``ACLAuthMethodConfig.Validate``: None, one error as-is, or a nested multierror text."""
    if config is None:
        return "missing auth method Config"
    errors: list[str] = []
    if method_type == TYPE_OIDC:
        if not config.OIDCDiscoveryURL:
            errors.append("missing OIDCDiscoveryURL")
        if not config.OIDCClientID:
            errors.append("missing OIDCClientID")
        problem = validate_client_assertion(config.OIDCClientAssertion)
        if problem:
            errors.append(f"invalid client assertion config: {problem}")
    elif method_type == TYPE_JWT:
        if not config.OIDCDiscoveryURL and not config.JWKSURL and not config.JWTValidationPubKeys:
            errors.append("JWT auth method requires either OIDCDiscoveryURL, or JWKS URL, or JWTValidationPubKeys set")
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else multierror_text(errors)


def validate(method: AuthMethod, min_ttl: int, max_ttl: int) -> str | None:
    """``ACLAuthMethod.Validate(minTTL, maxTTL)`` (nanoseconds, both bounds inclusive).

    Returns None or the go-multierror text gathering, in order: ``invalid name '<n>'``,
    ``invalid token locality '<l>'``, ``invalid token type '<t>'``, ``invalid config: <e>``,
    ``invalid MaxTokenTTL value '<ttl>' (should be between <min> and <max>)``.
    """
    errors: list[str] = []
    if not VALID_NAME.fullmatch(method.Name):
        errors.append(f"invalid name '{method.Name}'")
    if method.TokenLocality not in (LOCALITY_LOCAL, LOCALITY_GLOBAL):
        errors.append(f"invalid token locality '{method.TokenLocality}'")
    if method.Type not in (TYPE_OIDC, TYPE_JWT):
        errors.append(f"invalid token type '{method.Type}'")
    problem = validate_config(method.Config, method.Type)
    if problem:
        errors.append(f"invalid config: {problem}")
    if min_ttl > method.MaxTokenTTL or method.MaxTokenTTL > max_ttl:
        errors.append(
            f"invalid MaxTokenTTL value '{format_duration(method.MaxTokenTTL)}' "
            f"(should be between {format_duration(min_ttl)} and {format_duration(max_ttl)})"
        )
    return multierror_text(errors) if errors else None


# -- hash, sanitize, stub -----------------------------------------------------------------------------

def compute_hash(method: AuthMethod) -> bytes:
    """``ACLAuthMethod.SetHash``: BLAKE2b-256 over the fields, concatenated with no separators.

    Order: Name, Type, TokenLocality, TokenNameFormat, MaxTokenTTL (Go duration text), Default;
    then, with a Config: JWKSURL, JWKSCACert, OIDCDiscoveryURL, OIDCClientID, OIDCClientSecret (the
    real secret), OIDCEnablePKCE, OIDCDisableUserInfo, VerboseLogging, the three leeways, every
    element of BoundAudiences, BoundIssuer, AllowedRedirectURIs, DiscoveryCaPem, OIDCScopes,
    SigningAlgs, JWTValidationPubKeys, the claim maps' keys and values, then the client assertion.
    Divergence: Go walks maps in random order; the double sorts keys so equal content always
    hashes equal (upstream may see a 2+-entry map as changed on a no-op re-upsert).
    """
    h = hashlib.blake2b(digest_size=32)

    def put(*parts: str) -> None:
        for part in parts:
            h.update(part.encode("utf-8"))

    def flag(value: bool) -> str:
        return "true" if value else "false"

    put(method.Name, method.Type, method.TokenLocality, method.TokenNameFormat,
        format_duration(method.MaxTokenTTL), flag(method.Default))
    c = method.Config
    if c is not None:
        put(c.JWKSURL, c.JWKSCACert, c.OIDCDiscoveryURL, c.OIDCClientID, c.OIDCClientSecret,
            flag(c.OIDCEnablePKCE), flag(c.OIDCDisableUserInfo), flag(c.VerboseLogging),
            format_duration(c.ExpirationLeeway), format_duration(c.NotBeforeLeeway),
            format_duration(c.ClockSkewLeeway))
        for items in (c.BoundAudiences, c.BoundIssuer, c.AllowedRedirectURIs, c.DiscoveryCaPem,
                      c.OIDCScopes, c.SigningAlgs, c.JWTValidationPubKeys):
            put(*(items or ()))
        for mapping in (c.ClaimMappings, c.ListClaimMappings):
            for key in sorted(mapping or {}):
                put(key, mapping[key])
        ca = c.OIDCClientAssertion
        if ca is not None:
            put(ca.KeySource, ca.KeyAlgorithm, *(ca.Audience or ()))
            for key in sorted(ca.ExtraHeaders or {}):
                put(key, ca.ExtraHeaders[key])
            k = ca.PrivateKey
            if k is not None:
                put(k.KeyIDHeader, k.KeyID, k.PemKey, k.PemKeyFile, k.PemCert, k.PemCertFile)
    return h.digest()


def with_hash(method: AuthMethod) -> AuthMethod:
    """``method`` with its Hash (re)computed."""
    return replace(method, Hash=compute_hash(method))


def sanitize(method: AuthMethod) -> AuthMethod:
    """Nomad's ``Sanitize``: non-empty OIDCClientSecret, assertion ClientSecret and PrivateKey.PemKey
    become ``"redacted"`` (empty ones stay empty). The stored record and its Hash keep the secrets."""
    c = method.Config
    if c is None:
        return method
    ca = c.OIDCClientAssertion
    if ca is not None:
        key = ca.PrivateKey
        if key is not None and key.PemKey:
            key = replace(key, PemKey=REDACTED)
        ca = replace(ca, ClientSecret=REDACTED if ca.ClientSecret else "", PrivateKey=key)
    c = replace(c, OIDCClientSecret=REDACTED if c.OIDCClientSecret else "", OIDCClientAssertion=ca)
    return replace(method, Config=c)


def stub(method: AuthMethod) -> AuthMethodStub:
    """The list entry of ``method`` (``ACLAuthMethod.Stub``)."""
    return AuthMethodStub(method.Name, method.Type, method.Default, method.Hash,
                          method.CreateIndex, method.ModifyIndex)
