"""``/v1/acl/oidc/auth-url`` and ``/v1/acl/oidc/complete-auth``: Nomad's ``ACL.OIDCAuthURL`` and
``ACL.OIDCCompleteAuth`` (nomad/acl_endpoint.go) over hashicorp/cap ``oidc.Provider``
(``reference §10``). Any OIDC provider works (the built-in one: :mod:`.idp`).

The request cache is keyed by ClientNonce (6-minute entries, at most 1000; a request lives 60 s);
it is stored before the provider step and consumed by complete-auth, whatever happens next. The
discovery document is fetched on every call (Nomad caches the provider per method for 6 h).
All times are the double's clock. Every failure raises SchedulerError with Nomad's status and text.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import re
import ssl
import urllib.error
import urllib.request
from urllib.parse import urlencode

from ...golang.duration import go_quote
from ...golang.json import GoJSONError, JNum, JObj, JStr, kind_name, unmarshal_nodes, unmarshal_value
from ...golang.strconv import decimal_in_range
from ...golang.url import go_url_hostname, go_url_parse_error, go_url_string_without_port
from ..model import SchedulerError, multierror_text
from ..tokens import ACLToken
from .jwt_validate import _UNIX_TO_INTERNAL, NS, JWTError, _instant_ns
from .jwt_validate import _int64 as go_int64
from .jwt_validate import _ssl_context as ssl_context
from .login import check_ready, issue_token, method_for

REQUEST_TTL = datetime.timedelta(seconds=60)
AUTH_URL_FIELDS = {"AuthMethodName": "string", "RedirectURI": "string", "ClientNonce": "string"}
COMPLETE_FIELDS = {"AuthMethodName": "string", "ClientNonce": "string", "State": "string", "Code": "string",
                   "Iss": "string", "RedirectURI": "string"}
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def _fetch(url: str, context: ssl.SSLContext | None, data: bytes | None = None,
           headers: dict | None = None) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, context=context, timeout=10) as resp:  # noqa: S310 - configured URLs
            return resp.status, resp.reason, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.reason, exc.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise JWTError(f'Get "{url}": {getattr(exc, "reason", exc)}') from None


def _provider(config) -> tuple[dict, ssl.SSLContext | None]:
    """cap ``NewConfig`` + ``NewProvider``: the discovery document, or 500 ``failed to generate OIDC
    provider: <err>``."""
    prefix = "failed to generate OIDC provider: NewConfig: invalid provider config: Config.Validate: "
    if not config.OIDCClientID:
        raise SchedulerError(500, prefix + "client ID is empty: invalid parameter")
    if not config.OIDCDiscoveryURL:
        raise SchedulerError(500, prefix + "discovery URL is empty: invalid parameter")
    try:
        context = ssl_context("".join(config.DiscoveryCaPem or ()))
    except JWTError:
        raise SchedulerError(500, prefix + "invalid CA certificate") from None
    issuer = config.OIDCDiscoveryURL
    fail = "failed to generate OIDC provider: NewProvider: unable to create provider: "
    try:
        status, reason, body = _fetch(issuer.rstrip("/") + "/.well-known/openid-configuration", context)
    except JWTError as exc:
        raise SchedulerError(500, fail + str(exc)) from None
    if status != 200:
        raise SchedulerError(500, f"{fail}{status} {reason}: {body.decode('utf-8', 'replace')}")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise SchedulerError(500, f"{fail}oidc: failed to decode provider discovery object: {exc}") from None
    if not isinstance(doc, dict):
        raise SchedulerError(500, f"{fail}oidc: failed to decode provider discovery object: not an object")
    if doc.get("issuer") != issuer:
        raise SchedulerError(500, f"{fail}oidc: issuer did not match the issuer returned by provider, expected "
                                  f"{json.dumps(issuer)} got {json.dumps(doc.get('issuer', ''))}")
    return doc, context


def redirect_error(uri: str, allowed) -> str | None:
    """cap ``Provider.validRedirect`` (v0.13.0): None when ``uri`` may be used, else the error text
    (``Provider.validRedirect: ...``). An empty list allows anything. ``uri`` must parse as Go's
    ``url.Parse`` does (``redirect URI <uri> is an invalid URI parse "<uri>": <reason>: invalid
    parameter``, e.g. a backslash in the userinfo). A redirect whose ``Hostname()`` is not exactly
    ``localhost``, ``127.0.0.1`` or ``::1`` (case kept: ``LOCALHOST`` is not) must be in the list
    as written; then, and for loopback hosts, the port-less ``String()`` (userinfo kept) must equal
    an entry's, every entry being parsed in turn (one that does not parse: ``allowed redirect URI
    <nil> is an invalid URI <err>: invalid parameter``)."""
    op = "Provider.validRedirect"
    if not allowed:
        return None
    problem = go_url_parse_error(uri)
    if problem:
        return f"{op}: redirect URI {uri} is an invalid URI {problem}: invalid parameter"
    if go_url_hostname(uri) not in _LOOPBACK and uri not in allowed:
        return f"{op}: redirect URI {uri}: unauthorized redirect_uri"
    portless = go_url_string_without_port(uri)
    for entry in allowed:
        problem = go_url_parse_error(entry)
        if problem:
            return f"{op}: allowed redirect URI <nil> is an invalid URI {problem}: invalid parameter"
        if go_url_string_without_port(entry) == portless:
            return None
    return f"{op}: redirect URI {uri}: unauthorized redirect_uri"


def auth_url(state, method_name: str, redirect_uri: str, client_nonce: str) -> str:
    """``ACL.OIDCAuthURL``: the provider's authorization URL for this login (see the module doc)."""
    check_ready(state)
    errors = [t for missing, t in ((not method_name, "missing auth method name"), (not client_nonce,
              "missing client nonce"), (not redirect_uri, "missing redirect URI")) if missing]
    if errors:
        raise SchedulerError(400, "invalid OIDC auth-url request: " + multierror_text(errors))
    method = method_for(state, method_name)
    with state._lock:
        request = state.oidc.get_or_create(client_nonce, method, redirect_uri)
    config = method.Config
    doc, _ = _provider(config)
    problem = redirect_error(redirect_uri, config.AllowedRedirectURIs)
    if problem:
        raise SchedulerError(500, f"failed to generate auth URL: Provider.AuthURL: {problem}")
    scopes = list(config.OIDCScopes or ())
    if "openid" not in scopes:
        scopes.insert(0, "openid")
    query = {"client_id": config.OIDCClientID, "nonce": client_nonce, "redirect_uri": redirect_uri,
             "response_type": "code", "scope": " ".join(scopes), "state": request["state"]}
    if request["verifier"]:
        digest = hashlib.sha256(request["verifier"].encode()).digest()
        query["code_challenge"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        query["code_challenge_method"] = "S256"
    endpoint = doc.get("authorization_endpoint", "")
    return endpoint + ("&" if "?" in endpoint else "?") + urlencode(sorted(query.items()))


def _exchange_error(text: str) -> SchedulerError:
    return SchedulerError(500, "failed to exchange token with provider: Provider.Exchange: " + text)


_GO_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_TIME_FIELDS = {"exp": "exp", "iat": "iat", "nbf": "nbf"}


def _unix_seconds(number: str) -> int:
    """go-oidc ``jsonTime``: ``json.Number.Int64()``, else ``int64(Float64())`` (amd64 conversion)."""
    if re.fullmatch(r"-?[0-9]+", number):
        exact = decimal_in_range(number, -(1 << 63), (1 << 63) - 1)  # any length: Int64's range error
        if exact is not None:
            return exact
    value = float(number) if _GO_NUMBER.fullmatch(number) else None
    if value is None:
        raise JWTError(f"strconv.ParseFloat: parsing {go_quote(number)}: invalid syntax")
    if value in (float("inf"), float("-inf")):
        raise JWTError(f"strconv.ParseFloat: parsing {go_quote(number)}: value out of range")
    return go_int64(value)


def id_token_times(payload: bytes) -> dict:
    """go-oidc ``Verify``'s ``json.Unmarshal`` of the ID token into ``idToken``, for its times
    (``jsonTime``: a JSON number, or a string holding one, as int64 Unix seconds; keys matched
    exactly or case-insensitively, in payload order). Returns ``{"exp", "iat", "nbf": int | None}``
    (None: absent, Go's zero time for exp and iat). Raises JWTError with the text after ``oidc:
    failed to unmarshal claims: ``: a syntax error (NaN, Infinity), ``strconv.ParseFloat: parsing
    "1e999": value out of range``, ``json: invalid number literal, trying to unmarshal
    "\\"yesterday\\"" into Number``, ``json: cannot unmarshal bool into Go value of type
    json.Number``; a null exp or iat is ``strconv.ParseFloat: parsing "": invalid syntax``."""
    try:
        root = unmarshal_nodes(payload)
    except GoJSONError as exc:
        raise JWTError(str(exc)) from None
    times: dict = {"exp": None, "iat": None, "nbf": None}
    if root is not None and not isinstance(root, JObj):
        raise JWTError(f"json: cannot unmarshal {kind_name(root)} into Go value of type oidc.idToken")
    for key, node in root.pairs if root is not None else ():
        field = _TIME_FIELDS.get(key) or _TIME_FIELDS.get(key.lower() if key.isascii() else key)
        if field is None:
            continue
        if node is None and field == "nbf":  # *jsonTime: null leaves it nil
            times["nbf"] = None
            continue
        if node is None:
            number = ""
        elif isinstance(node, JNum):
            number = node.raw
        elif isinstance(node, JStr):
            if not _GO_NUMBER.fullmatch(node.value):
                literal = '"' + node.raw.decode("utf-8", "replace") + '"'
                raise JWTError(f"json: invalid number literal, trying to unmarshal {go_quote(literal)} into Number")
            number = node.value
        else:
            raise JWTError(f"json: cannot unmarshal {kind_name(node)} into Go value of type json.Number")
        times[field] = _unix_seconds(number)
    return times


def _verify_id_token(id_token: str, doc: dict, context, config, nonce: str, now: float) -> dict:
    """go-oidc ``IDTokenVerifier.Verify`` (claims decoded, iss, exp, nbf within 5 min, then the
    signature) and cap ``Provider.VerifyIDToken`` (nonce, iat within 1 min, sub, aud, azp, the claims
    as a map). Times compare as Go's ``time.Unix`` values on the double's clock."""
    import jwt

    verify = "id_token failed verification: Provider.VerifyIDToken: "
    parts = id_token.split(".")
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)) if len(parts) == 3 else None
    except ValueError:
        payload = None
    if payload is None:
        raise _exchange_error(verify + "invalid id_token: oidc: malformed jwt: invalid jwks")
    try:
        times = id_token_times(payload)
    except JWTError as exc:
        raise _exchange_error(f"{verify}invalid id_token: oidc: failed to unmarshal claims: {exc}") from None
    try:
        claims = unmarshal_value(payload, into_map=True) or {}
    except GoJSONError:  # go-oidc reads only its fields; cap's own map decoding fails further on
        try:
            claims = json.loads(payload)
        except (ValueError, RecursionError):
            claims = None
        claims = claims if isinstance(claims, dict) else {}
    if claims.get("iss") != doc.get("issuer"):
        raise _exchange_error(verify + f"invalid id_token: oidc: id token issued by a different provider, expected "
                                       f"{json.dumps(doc.get('issuer'))} got {json.dumps(claims.get('iss'))}: "
                                       "invalid issuer")
    now_ns = int(now * NS) + _UNIX_TO_INTERNAL * NS
    if times["exp"] is None or _instant_ns(times["exp"]) < now_ns:
        raise _exchange_error(verify + "invalid id_token: oidc: token is expired: token is expired")
    if times["nbf"] is not None and now_ns + 300 * NS < _instant_ns(times["nbf"]):
        raise _exchange_error(verify + "invalid id_token: oidc: current time before the nbf (not before) time: "
                                       "invalid not before")
    try:
        status, _, body = _fetch(doc.get("jwks_uri", ""), context)
        keys = jwt.PyJWKSet.from_dict(json.loads(body)).keys if status == 200 else []
        header = jwt.get_unverified_header(id_token)
    except (JWTError, ValueError, TypeError, KeyError, AttributeError, RecursionError, jwt.PyJWTError):
        raise _exchange_error(verify + "invalid id_token: oidc: malformed jwt: invalid jwks") from None
    algs = list(config.SigningAlgs or ("RS256",))
    verified = False
    for key in keys:
        if header.get("kid") and key.key_id and key.key_id != header.get("kid"):
            continue
        try:
            jwt.PyJWS().decode_complete(id_token, key=key.key, algorithms=algs)
            verified = True
            break
        except (jwt.PyJWTError, TypeError, ValueError):
            continue
    if not verified:
        raise _exchange_error(verify + "invalid id_token: failed to verify signature: invalid signature")
    if claims.get("nonce") != nonce:
        raise _exchange_error(verify + "invalid id_token nonce: invalid nonce")
    if times["iat"] is not None and now_ns + 60 * NS < _instant_ns(times["iat"]):
        raise _exchange_error(verify + "invalid id_token: iat: invalid issued at (iat)")
    if not claims.get("sub"):
        raise _exchange_error(verify + "invalid id_token: sub: missing required claim")
    aud = claims.get("aud")
    auds = [aud] if isinstance(aud, str) else list(aud or [])
    if not auds:
        raise _exchange_error(verify + "invalid id_token: aud: missing required claim")
    if config.BoundAudiences and not set(auds) & set(config.BoundAudiences):
        raise _exchange_error(verify + "invalid id_token audiences: verifyAudiences: invalid id_token audiences: "
                                       "invalid audience")
    client = config.OIDCClientID
    if len(auds) > 1 and client not in auds:
        raise _exchange_error(verify + f"invalid id_token: multiple audiences ({auds}) and one of them is not equal "
                                       f"client_id ({client}): invalid audience")
    try:
        unmarshal_value(payload, into_map=True)
    except GoJSONError as exc:
        raise _exchange_error(f"{verify}UnmarshalClaims: unable to marshal jwt JSON: {exc}") from None
    azp = claims.get("azp")
    if azp and azp != client:
        raise _exchange_error(verify + f"invalid id_token: authorized party ({azp}) is not equal client_id "
                                       f"({client}): invalid authorized party (azp)")
    return claims


def complete_auth(state, values: dict) -> tuple[int, ACLToken]:
    """``ACL.OIDCCompleteAuth``: exchange the code, verify the ID token, merge userinfo, bind and
    create the token (``auth_method_type`` = ``OIDC``). Returns (raft index, token)."""
    check_ready(state)
    get = values.get
    errors = [t for missing, t in ((not get("AuthMethodName"), "missing auth method name"),
                                   (not get("ClientNonce"), "missing client nonce"), (not get("State"), "missing state"),
                                   (not get("Code"), "missing code"), (not get("RedirectURI"), "missing redirect URI"))
              if missing]
    if errors:
        raise SchedulerError(400, "invalid OIDC complete-auth request: " + multierror_text(errors))
    method = method_for(state, get("AuthMethodName"))
    config = method.Config
    doc, context = _provider(config)
    if doc.get("authorization_response_iss_parameter_supported") is True and get("Iss") != config.OIDCDiscoveryURL:
        raise SchedulerError(500, "invalid or missing issuer parameter in callback")
    with state._lock:
        request = state.oidc.entries.pop(get("ClientNonce"), None)
    if request is None:
        raise SchedulerError(500, "no OIDC request found for client nonce")
    if get("State") != request["state"]:
        raise _exchange_error("authentication request state and authorization state are not equal: invalid parameter")
    problem = redirect_error(request["redirect"], config.AllowedRedirectURIs)
    if problem:
        raise _exchange_error(problem)
    now = state.clock.now()
    if now > request["created"] + REQUEST_TTL:
        raise _exchange_error("authentication request is expired: invalid parameter")
    form = {"grant_type": "authorization_code", "code": get("Code"), "redirect_uri": request["redirect"]}
    if request["verifier"]:
        form["code_verifier"] = request["verifier"]
    basic = base64.b64encode(f"{config.OIDCClientID}:{config.OIDCClientSecret}".encode()).decode()
    try:
        status, _, body = _fetch(doc.get("token_endpoint", ""), context, urlencode(form).encode(),
                                 {"Authorization": "Basic " + basic,
                                  "Content-Type": "application/x-www-form-urlencoded"})
    except JWTError as exc:
        raise _exchange_error(f"unable to exchange auth code with provider: {exc}") from None
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    if status != 200:
        raise _exchange_error(f"unable to exchange auth code with provider: oauth2: {json.dumps(answer.get('error', ''))}")
    if not answer.get("id_token"):
        raise _exchange_error("id_token is missing from auth code exchange: id_token is missing")
    claims = _verify_id_token(answer["id_token"], doc, context, config, get("ClientNonce"), now.timestamp())
    access = answer.get("access_token", "")
    if not access:
        raise SchedulerError(500, "exchanged token is not valid; potentially expired or empty")
    if not config.OIDCDisableUserInfo and doc.get("userinfo_endpoint"):
        try:
            code, _, info_body = _fetch(doc["userinfo_endpoint"], context, headers={"Authorization": "Bearer " + access})
            info = json.loads(info_body) if code == 200 else None
        except (JWTError, ValueError, RecursionError):
            code, info = 0, None
        if not isinstance(info, dict):
            raise SchedulerError(500, "failed to retrieve the user info claims: Provider.UserInfo: provider UserInfo "
                                      f"request failed: {code}")
        if info.get("sub") != claims["sub"]:
            raise SchedulerError(500, "failed to retrieve the user info claims: Provider.UserInfo: invalid subject")
        if "iss" in info and info["iss"] != doc.get("issuer"):
            raise SchedulerError(500, "failed to retrieve the user info claims: Provider.UserInfo: invalid issuer")
        claims = {**claims, **{k: v for k, v in info.items() if k not in ("iss", "sub")}}
    return issue_token(state, method, "OIDC", claims)
