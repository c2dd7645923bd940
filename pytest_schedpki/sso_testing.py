"""What tests use to drive and inspect Nomad SSO on the scheduler: mint JWTs, log in (JWT or OIDC
through the built-in identity provider), and assert on the tokens login created.

Reached as ``schedpki.scheduler`` (a :class:`SchedulerHandle`: ``url``, ``token``, ``state`` plus
the methods below). Logins go over HTTP to the double's own listener, as a client would.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

IDP_CLIENT_ID = "nomad"
DEFAULT_REDIRECT = "http://localhost:4649/oidc/callback"


def idp_public_key_pem(state) -> str:
    """The built-in IdP's public key as a PKIX PEM (for ``JWTValidationPubKeys``)."""
    from cryptography.hazmat.primitives import serialization

    return state.idp.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo).decode()


class LoginError(AssertionError):
    """A login the double refused: ``status`` and ``text`` are Nomad's answer."""

    def __init__(self, status: int, text: str):
        super().__init__(f"login refused: {status} {text}")
        self.status, self.text = status, text


@dataclass
class SchedulerHandle:
    """The scheduler as a test sees it: ``url`` (no ``/v1``), ``token`` (management secret), ``state``
    (:class:`~pytest_schedpki.scheduler.state.SchedulerState`) and the SSO helpers. ``ssl_context``
    (an ``ssl.SSLContext`` trusting the double's CA, ``None`` over plain HTTP) is what the helpers'
    own HTTPS requests verify the listener with."""

    url: str
    token: str
    state: Any
    ssl_context: Any = None

    def headers(self) -> dict[str, str]:
        """``{"X-Nomad-Token": token}``."""
        return {"X-Nomad-Token": self.token}

    # -- JWTs -----------------------------------------------------------------------------------------
    def jwt(self, method: str | dict, claims: dict | None = None, key=None, alg: str | None = None,
            headers: dict | None = None, ttl: int = 300) -> str:
        """A compact JWS that auth method ``method`` (name or API dict) accepts, carrying ``claims``.

        Defaults added unless ``claims`` sets them: ``aud`` = the first BoundAudiences, ``iss`` = the
        first BoundIssuer, ``iat``/``nbf`` = now and ``exp`` = now + ``ttl`` seconds **on the double's
        clock**. Signed with ``key`` (a cryptography private key) or, by default, the built-in IdP's
        key - which the method trusts when its JWTValidationPubKeys hold :func:`idp_public_key_pem`,
        or its JWKSURL/OIDCDiscoveryURL point at ``<url>/idp``. ``alg`` defaults to the method's first
        SigningAlgs (else RS256); a ``kid`` header names the IdP key. Raises KeyError for an unknown
        method."""
        import jwt as pyjwt

        name = method["Name"] if isinstance(method, dict) else method
        found = self.state.get_auth_method(name, self.state.authoritative_region)
        if found is None:
            raise KeyError(f"no auth method {name!r}")
        config = found.Config
        now = int(self.state.clock.now().timestamp())
        body: dict[str, Any] = {"iat": now, "nbf": now, "exp": now + ttl}
        if config and config.BoundAudiences:
            body["aud"] = config.BoundAudiences[0]
        if config and config.BoundIssuer:
            body["iss"] = config.BoundIssuer[0]
        body.update(claims or {})
        alg = alg or (config.SigningAlgs[0] if config and config.SigningAlgs else "RS256")
        hdrs = dict(headers or {})
        if key is None:
            key = self.state.idp.key
            hdrs.setdefault("kid", "schedpki-idp")
        return pyjwt.PyJWS().encode(json.dumps(body).encode(), key, algorithm=alg, headers=hdrs)

    # -- logins ---------------------------------------------------------------------------------------
    def _post(self, path: str, body: dict) -> dict:
        __tracebackhide__ = True  # a LoginError shows the test's line
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.ssl_context) as resp:  # noqa: S310
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise LoginError(exc.code, exc.read().decode("utf-8", "replace")) from None

    def login(self, method: str, login_token: str) -> dict:
        """``POST /v1/acl/login``; returns the token JSON (with ``SecretID``). Raises :class:`LoginError`."""
        __tracebackhide__ = True
        return self._post("/v1/acl/login", {"AuthMethodName": method, "LoginToken": login_token})

    def login_jwt(self, method: str, claims: dict | None = None, **jwt_kwargs) -> dict:
        """Mint a JWT for ``method`` with ``claims`` (:meth:`jwt`) and log in with it."""
        __tracebackhide__ = True
        return self.login(method, self.jwt(method, claims, **jwt_kwargs))

    def set_oidc_user(self, name: str, claims: dict, default: bool = True) -> None:
        """Give the built-in IdP's user ``name`` these claims (``default``: the user logged in when
        no ``login_hint`` is sent)."""
        self.state.idp.set_user(name, claims, default)

    def oidc_login(self, method: str, claims: dict | None = None, user: str | None = None,
                   redirect_uri: str = DEFAULT_REDIRECT, client_nonce: str = "schedpki-nonce") -> dict:
        """The whole ``nomad login -method=<oidc method>`` flow against the built-in IdP: auth-url,
        the browser's authorize step (user ``user``, or a user holding ``claims``), complete-auth.
        Returns the token JSON; raises :class:`LoginError` with Nomad's answer."""
        __tracebackhide__ = True
        if claims is not None:
            user = user or "schedpki-user"
            self.set_oidc_user(user, claims, default=False)
        url = self._post("/v1/acl/oidc/auth-url", {"AuthMethodName": method, "RedirectURI": redirect_uri,
                                                    "ClientNonce": client_nonce})["AuthURL"]
        if user:
            url += "&login_hint=" + quote(user)

        class _NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None
        try:
            handlers = [_NoRedirect] + ([urllib.request.HTTPSHandler(context=self.ssl_context)]
                                        if self.ssl_context is not None else [])
            urllib.request.build_opener(*handlers).open(url, timeout=30)  # noqa: S310
            raise LoginError(0, "the identity provider did not redirect")
        except urllib.error.HTTPError as exc:
            if exc.code != 302:
                raise LoginError(exc.code, exc.read().decode("utf-8", "replace")) from None
            query = parse_qs(urlsplit(exc.headers["Location"]).query)
        return self._post("/v1/acl/oidc/complete-auth", {
            "AuthMethodName": method, "ClientNonce": client_nonce, "State": query["state"][0],
            "Code": query["code"][0], "RedirectURI": redirect_uri})

    # -- inspection -----------------------------------------------------------------------------------
    def login_tokens(self) -> list:
        """Every token that login or complete-auth created (ACLToken records, oldest first)."""
        tokens = [t for t in self.state._tokens.values() if t.Policies is not None or t.Roles is not None
                  or t.ExpirationTTL]
        return sorted(tokens, key=lambda t: t.CreateIndex)

    def assert_token(self, token: dict | str, policies: list[str] | None = None, roles: list[str] | None = None,
                     type: str | None = None, global_: bool | None = None) -> None:  # noqa: A002
        """Assert what a token (its JSON or SecretID) grants: ``policies`` (compared as sets, the
        order of bound rules aside), ``roles`` (role **names**), ``type`` and ``global_``. The message
        shows the token's actual grants."""
        __tracebackhide__ = True
        secret = token["SecretID"] if isinstance(token, dict) else token
        record = self.state.get_token(secret)
        assert record is not None, f"no ACL token with SecretID {secret!r}"
        names = self.state.acl.role_names()
        actual = {"policies": sorted(record.Policies or ()), "roles": sorted(names.get(r, r) for r in record.Roles or ()),
                  "type": record.Type, "global": record.Global}
        wanted = {"policies": None if policies is None else sorted(policies),
                  "roles": None if roles is None else sorted(roles), "type": type, "global": global_}
        diff = {k: v for k, v in wanted.items() if v is not None and v != actual[k]}
        assert not diff, f"token {record.AccessorID} grants {actual}, expected {diff}"

    # -- what a token may do ----------------------------------------------------------------------------
    def _acl_for(self, token):
        """The compiled ACL of ``token`` (its JSON, SecretID, or None for anonymous) on the double."""
        from .scheduler.aclstore.resolve import resolve_acl
        from .scheduler.model import SchedulerError

        secret = token["SecretID"] if isinstance(token, dict) else token
        try:
            return resolve_acl(self.state, secret)
        except SchedulerError as exc:
            raise AssertionError(f"the scheduler refuses token {secret!r}: {exc.status} {exc.text}") from None

    def allows(self, token: dict | str | None, check: str) -> bool:
        """Whether ``token`` (its JSON, SecretID, or None: anonymous) may do ``check``, decided as a
        Nomad server decides it from the token's policies and roles. ``check`` is
        ``"namespace:default:submit-job"``, ``"variables:default:app/db:read"``, ``"agent:read"``,
        ``"node_pool:prod:write"``, ``"management"``... (:mod:`~pytest_schedpki.scheduler.acl.checks`;
        ValueError for another form). An unknown or expired token raises AssertionError."""
        from .scheduler.acl.checks import allows

        return allows(self._acl_for(token), check)

    def assert_allowed(self, token: dict | str | None, *checks: str) -> None:
        """Assert ``token`` may do every one of ``checks`` (see :meth:`allows`); the message lists the
        checks it may not do."""
        __tracebackhide__ = True
        denied = [c for c in checks if not self.allows(token, c)]
        assert not denied, f"the token may not do: {', '.join(denied)}"

    def assert_denied(self, token: dict | str | None, *checks: str) -> None:
        """Assert ``token`` may do none of ``checks`` (see :meth:`allows`); the message lists the
        checks it may do."""
        __tracebackhide__ = True
        allowed = [c for c in checks if self.allows(token, c)]
        assert not allowed, f"the token may do: {', '.join(allowed)}"
