"""A built-in OpenID Connect identity provider served by the scheduler listener under ``/idp``, so
OIDC auth methods log in offline (``OIDCDiscoveryURL: <scheduler url>/idp``).

Endpoints (issuer = ``<scheme>://<host>/idp`` from the request's Host):

* ``GET /idp/.well-known/openid-configuration`` - discovery (issuer, authorization, token,
  userinfo and JWKS endpoints; RS256);
* ``GET /idp/jwks`` - the signing key as a JWK set (``kid`` ``schedpki-idp``);
* ``GET /idp/authorize?client_id&redirect_uri&state&nonce[&code_challenge][&login_hint]`` - the
  "browser" step: ``302`` to ``redirect_uri?code=<code>&state=<state>`` for the user ``login_hint``
  (default: the default user); ``400 unknown user`` / ``400 missing redirect_uri``; a parameter
  over 4096 bytes is ``400 {"error": "invalid_request", "error_description": "parameter <name> is
  longer than 4096 bytes"}``; with 1000 codes outstanding (unused and unexpired) the answer is
  ``503 {"error": "temporarily_unavailable", ...}``;
* ``POST /idp/token`` (form ``grant_type=authorization_code``, ``code``, ``redirect_uri``,
  ``code_verifier``; client credentials by Basic auth or form) - ``{"access_token", "id_token",
  "token_type", "expires_in"}``; an unknown, reused or expired code (a code lives 60 s on the
  double's clock), another redirect URI or a wrong PKCE verifier is ``400 {"error":
  "invalid_grant"}``;
* ``GET /idp/userinfo`` with ``Authorization: Bearer <access_token>`` - the user's claims (an access
  token lives ``expires_in`` = 300 s; at most 1000 are kept, the oldest dropped first).

The test chooses each user's claims (:meth:`IdentityProvider.set_user`, a seed's ``oidc_users``,
``POST /_schedpki/oidc/users``). ID tokens carry ``iss``, ``sub`` (the claims' ``sub`` or the user
name), ``aud`` (= client_id), ``nonce``, ``iat`` and ``exp`` (5 minutes) on the double's clock, plus
every chosen claim. Codes are single-use; everything resets with the scheduler state. Memory stays
bounded: expired codes and access tokens are dropped as requests come in.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import secrets
import threading
from urllib.parse import urlencode

from werkzeug.wrappers import Request, Response

PREFIX = "/idp"
KID = "schedpki-idp"
DEFAULT_USER = "alice"
ID_TOKEN_TTL_S = 300
CODE_TTL = datetime.timedelta(seconds=60)
ACCESS_TOKEN_TTL = datetime.timedelta(seconds=ID_TOKEN_TTL_S)
MAX_CODES = 1000
MAX_ACCESS_TOKENS = 1000
MAX_PARAMETER_BYTES = 4096


class IdentityProvider:
    """The IdP's users (name -> claims), the default user, and pending codes/access tokens."""

    def __init__(self, clock):
        self.clock = clock
        self._key = None
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget users (the default user ``alice`` with ``{"sub": "alice"}`` remains), codes and tokens."""
        self.users: dict[str, dict] = {DEFAULT_USER: {"sub": DEFAULT_USER}}
        self.default_user = DEFAULT_USER
        self.codes: dict[str, dict] = {}
        self.access_tokens: dict[str, dict] = {}

    def dump(self) -> tuple:
        return ({k: dict(v) for k, v in self.users.items()}, self.default_user, dict(self.codes),
                dict(self.access_tokens))

    def load(self, values: tuple) -> None:
        users, self.default_user, codes, tokens = values
        self.users, self.codes, self.access_tokens = {k: dict(v) for k, v in users.items()}, dict(codes), dict(tokens)

    def purge(self) -> None:
        """Drop expired codes and access tokens (call with ``_lock`` held)."""
        now = self.clock.now()
        self.codes = {k: v for k, v in self.codes.items() if v["expires"] > now}
        self.access_tokens = {k: v for k, v in self.access_tokens.items() if v["expires"] > now}

    def set_user(self, name: str, claims: dict, default: bool = True) -> None:
        """Give user ``name`` these claims (a JSON-able dict; ``sub`` defaults to ``name``); with
        ``default`` the authorize endpoint logs this user in when no ``login_hint`` is sent."""
        self.users[name] = {"sub": name, **claims}
        if default:
            self.default_user = name

    @property
    def key(self):
        """The RSA signing key (generated on first use, kept across resets)."""
        if self._key is None:
            from cryptography.hazmat.primitives.asymmetric import rsa

            self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return self._key

    def jwks(self) -> dict:
        import jwt

        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": KID, "alg": "RS256", "use": "sig"}]}

    def id_token(self, issuer: str, client_id: str, claims: dict, nonce: str = "") -> str:
        """An ID token for ``claims`` signed with the IdP key (also usable as a JWT-login token)."""
        import jwt

        now = int(self.clock.now().timestamp())
        body = {**claims, "iss": issuer, "aud": client_id, "iat": now, "exp": now + ID_TOKEN_TTL_S}
        if nonce:
            body["nonce"] = nonce
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": KID})


def _json(value, status: int = 200) -> Response:
    return Response(json.dumps(value), status=status, content_type="application/json")


def _issuer(request: Request) -> str:
    return request.host_url.rstrip("/") + PREFIX


def _authorize(idp: IdentityProvider, request: Request) -> Response:
    args = request.args
    for name, value in args.items(multi=True):
        if len(value.encode("utf-8", "surrogatepass")) > MAX_PARAMETER_BYTES:
            shown = name if len(name) <= 64 else name[:64] + "..."
            return _json({"error": "invalid_request", "error_description": f"parameter {shown} is longer than "
                                                                           f"{MAX_PARAMETER_BYTES} bytes"}, 400)
    redirect = args.get("redirect_uri", "")
    if not redirect:
        return _json({"error": "invalid_request", "error_description": "missing redirect_uri"}, 400)
    user = args.get("login_hint") or idp.default_user
    if user not in idp.users:
        return _json({"error": "invalid_request", "error_description": f"unknown user {user}"}, 400)
    code = "code_" + secrets.token_urlsafe(16)
    with idp._lock:
        idp.purge()
        if len(idp.codes) >= MAX_CODES:
            return _json({"error": "temporarily_unavailable", "error_description": f"{MAX_CODES} authorization "
                          "codes are outstanding; exchange or let them expire (60 s)"}, 503)
        idp.codes[code] = {"user": user, "client_id": args.get("client_id", ""), "redirect_uri": redirect,
                           "nonce": args.get("nonce", ""), "challenge": args.get("code_challenge", ""),
                           "expires": idp.clock.now() + CODE_TTL}
    sep = "&" if "?" in redirect else "?"
    location = redirect + sep + urlencode({"code": code, "state": args.get("state", "")})
    return Response("", status=302, headers={"Location": location})


def _token(idp: IdentityProvider, request: Request) -> Response:
    form = request.form
    with idp._lock:
        idp.purge()  # an expired code is unknown
        grant = idp.codes.pop(form.get("code", ""), None)
    bad = _json({"error": "invalid_grant"}, 400)
    if form.get("grant_type") != "authorization_code" or grant is None:
        return bad
    if form.get("redirect_uri", "") != grant["redirect_uri"]:
        return bad
    if grant["challenge"]:
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["challenge"]:
            return bad
    claims = idp.users.get(grant["user"], {})
    access = "at_" + secrets.token_urlsafe(16)
    with idp._lock:
        idp.purge()
        while len(idp.access_tokens) >= MAX_ACCESS_TOKENS:  # the oldest first (dicts keep insertion order)
            del idp.access_tokens[next(iter(idp.access_tokens))]
        idp.access_tokens[access] = {"user": grant["user"], "expires": idp.clock.now() + ACCESS_TOKEN_TTL}
    return _json({"access_token": access, "token_type": "Bearer", "expires_in": ID_TOKEN_TTL_S,
                  "id_token": idp.id_token(_issuer(request), grant["client_id"], claims, grant["nonce"])})


def _userinfo(idp: IdentityProvider, request: Request) -> Response:
    auth = request.headers.get("Authorization", "")
    with idp._lock:
        idp.purge()
        grant = idp.access_tokens.get(auth.removeprefix("Bearer ").strip()) if auth.startswith("Bearer ") else None
    if grant is None:
        return _json({"error": "invalid_token"}, 401)
    return _json(idp.users.get(grant["user"], {}))


def dispatch(idp: IdentityProvider, request: Request, path: str, verb: str) -> Response | None:
    """Answer an ``/idp/...`` path, else None."""
    if path == PREFIX + "/.well-known/openid-configuration":
        issuer = _issuer(request)
        return _json({"issuer": issuer, "authorization_endpoint": issuer + "/authorize",
                      "token_endpoint": issuer + "/token", "userinfo_endpoint": issuer + "/userinfo",
                      "jwks_uri": issuer + "/jwks", "response_types_supported": ["code"],
                      "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                      "code_challenge_methods_supported": ["S256"]})
    if path == PREFIX + "/jwks":
        return _json(idp.jwks())
    if path == PREFIX + "/authorize" and verb == "GET":
        return _authorize(idp, request)
    if path == PREFIX + "/token" and verb == "POST":
        return _token(idp, request)
    if path == PREFIX + "/userinfo" and verb in ("GET", "POST"):
        return _userinfo(idp, request)
    return None
