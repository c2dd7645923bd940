"""JWT validation for ``POST /v1/acl/login``: hashicorp/cap ``jwt.Validator.Validate`` (v0.13.0) plus
Nomad's issuer check (``lib/auth/jwt/validator.go``), ``reference §5.1``, in this order:

1. key source: ``JWTValidationPubKeys`` if any, else ``JWKSURL`` (TLS roots ``JWKSCACert``), else
   ``OIDCDiscoveryURL`` (its ``/.well-known/openid-configuration``, TLS roots ``DiscoveryCaPem[0]``);
2. signature (PyJWT with ``cryptography``: the header's alg, every configured key tried), and the
   payload decoded as Go's ``json.Unmarshal`` into a map (NaN, Infinity and 1e999 are refused:
   static keys then say ``no known key successfully validated the token signature``, a JWKS or
   discovery key set gives Go's JSON error);
3. ``alg`` in ``SigningAlgs`` (empty = RS256 only); then the registered claims decoded as
   go-jose's ``jwt.Claims`` (:func:`registered_claims`: a string ``exp`` is refused);
4. ``aud`` against ``BoundAudiences``; 5. ``nbf``/``exp``/``iat`` (whole seconds, int64 as Go) with
   the leeways on the double's clock; 6. ``iss`` against ``BoundIssuer``.

:func:`validate` returns the claims (the payload as a dict) or raises :class:`JWTError` whose
``str()`` is the text after ``unable to validate provided token: ``. PyJWT and cryptography are
imported on first use (they cost ~0.2 s of ``schedpki serve`` start-up otherwise). Texts quoted from go-jose and
go-oidc are kept as those libraries write them where the double can know them.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

from ...golang.json import GoJSONError, unmarshal_value
from ...process.library_warnings import quiet

SIG = "unable to verify signature of JWT token: "
DEFAULT_LEEWAY_S = 150
DEFAULT_SKEW_S = 60
SUPPORTED_ALGS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA")
NS = 1_000_000_000


class JWTError(Exception):
    """A token that fails validation; ``str()`` follows ``unable to validate provided token: ``."""


def _pem_blocks(text: str) -> bytes | None:
    """The DER bytes of the first PEM block (label ignored, as Go's ``pem.Decode``), or None."""
    import base64
    import re

    m = re.search(r"-----BEGIN ([^-\r\n]*)-----\r?\n(.*?)-----END \1-----", text, re.S)
    if not m:
        return None
    body = "".join(line for line in m.group(2).splitlines() if ":" not in line)
    try:
        return base64.b64decode(body, validate=False)
    except ValueError:
        return None


def parse_public_key(text: str):
    """cap ``ParsePublicKeyPEM``: PKIX SubjectPublicKeyInfo or an X.509 certificate holding an RSA
    or ECDSA key. Raises JWTError with Nomad's login text."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.hazmat.primitives.serialization import load_der_public_key

    prefix = "unable to parse public key for JWT auth: "
    der = _pem_blocks(text)
    if der is not None:
        try:
            key = load_der_public_key(der)
        except (ValueError, TypeError):
            try:
                with quiet():  # a serial that is not positive warns
                    key = x509.load_der_x509_certificate(der).public_key()
            except ValueError:
                raise JWTError(prefix + "x509: failed to parse public key") from None
        if isinstance(key, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey)):
            return key
    raise JWTError(prefix + "data does not contain any valid RSA or ECDSA public keys")


def _ssl_context(ca_pem: str) -> ssl.SSLContext | None:
    if not ca_pem:
        return None
    try:
        return ssl.create_default_context(cadata=ca_pem)
    except (ssl.SSLError, ValueError):
        raise JWTError("could not parse CA PEM value successfully") from None


def _get(url: str, context: ssl.SSLContext | None) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, context=context, timeout=10) as resp:  # noqa: S310 - configured URLs
            return resp.status, resp.reason, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.reason, exc.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise JWTError(f'Get "{url}": {getattr(exc, "reason", exc)}') from None


def _jwks_keys(url: str, context: ssl.SSLContext | None, kid: str | None) -> list:
    import jwt

    try:
        status, reason, body = _get(url, context)
    except JWTError as exc:
        raise JWTError(f"{SIG}error verifying token signature: fetching keys oidc: get keys failed: {exc}") from None
    if status != 200:
        raise JWTError(f"{SIG}error verifying token signature: fetching keys oidc: get keys failed: "
                       f"{status} {reason} {body.decode('utf-8', 'replace')}")
    try:
        keyset = jwt.PyJWKSet.from_dict(json.loads(body))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError, jwt.PyJWTError) as exc:
        raise JWTError(f"{SIG}error verifying token signature: fetching keys oidc: failed to decode keys: {exc}") from None
    return [k.key for k in keyset.keys if kid is None or k.key_id == kid]


def _discovery(issuer: str, context: ssl.SSLContext | None) -> str:
    """cap ``NewOIDCDiscoveryKeySet``: the ``jwks_uri`` of ``issuer``'s discovery document."""
    url = issuer.removesuffix("/") + "/.well-known/openid-configuration"
    status, reason, body = _get(url, context)
    if status != 200:
        raise JWTError(f"{status} {reason}: {body.decode('utf-8', 'replace')}")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise JWTError(f"failed to decode OIDC discovery document: {exc}") from None
    if not isinstance(doc, dict):
        raise JWTError("failed to decode OIDC discovery document: json: cannot unmarshal into a struct")
    if doc.get("issuer") != issuer:
        raise JWTError(f"issuer did not match the returned issuer, expected {json.dumps(issuer)} "
                       f"got {json.dumps(doc.get('issuer', ''))}")
    return doc.get("jwks_uri", "")


def _verify(token: str, keys: list, alg: str, remote: bool) -> bytes:
    import jwt

    for key in keys:
        try:
            return jwt.PyJWS().decode_complete(token, key=key, algorithms=[alg])["payload"]
        except (jwt.PyJWTError, TypeError, ValueError):  # TypeError: a key of another type than the alg
            continue
    if remote:
        raise JWTError(f"{SIG}error verifying token signature: failed to verify id token signature")
    raise JWTError(f"{SIG}error verifying token signature: no known key successfully validated the token signature")


AUDIENCE_ERROR = "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience"
NUMERIC_DATE_ERROR = "go-jose/go-jose/jwt: expected number value to unmarshal NumericDate"
_REGISTERED = {"iss": "string", "sub": "string", "aud": "audience", "exp": "date", "nbf": "date", "iat": "date",
               "jti": "string"}
_FOLDED = {name.upper(): name for name in _REGISTERED}
_I64 = 1 << 63
_UNIX_TO_INTERNAL = 62135596800  # Go's time: seconds from year 1 to 1970


def _int64(value: float) -> int:
    """Go's ``int64(f)`` as amd64 computes it (CVTTSD2SQ): truncation toward zero; a value outside
    the int64 range becomes math.MinInt64."""
    return int(value) if -_I64 <= value < _I64 else -_I64


def _wrap(value: int) -> int:
    """int64 arithmetic: wrap around on overflow, as Go does."""
    return (value + _I64) % (1 << 64) - _I64


def _fold(key: str) -> str:
    """encoding/json's case-insensitive field-name key (ASCII upper-cased; U+017F and U+212A fold to S and K)."""
    return "".join(c.upper() if c.isascii() else {"\u017f": "S", "\u212a": "K"}.get(c, c) for c in key)


def _kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "null")


def registered_claims(claims: dict) -> dict:
    """cap re-encodes the claims and decodes them into go-jose's ``jwt.Claims``
    (``iss``/``sub``/``jti`` strings, ``aud`` an Audience, ``exp``/``nbf``/``iat`` ``*NumericDate``):
    keys in Go's sorted order, matched to a field exactly or case-insensitively (``EXP`` sets exp),
    the last one winning. Returns ``{"iss", "sub", "jti": str, "aud": [str], "exp", "nbf", "iat":
    int | None}`` (a NumericDate is ``int64(float)``: 3.9 -> 3, 1e300 -> MinInt64 as on amd64).
    Raises JWTError (after ``unable to verify signature of JWT token: ``): a date that is not a
    number or null (a string, bool, object or array) ``go-jose/go-jose/jwt: expected number value
    to unmarshal NumericDate``; an aud that is not a string or a list of strings (null included)
    ``go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience`` (both stop the
    decoding); else the first string field of another type, ``json: cannot unmarshal number into Go
    struct field Claims.iss of type string``."""
    out: dict = {"iss": "", "sub": "", "aud": [], "exp": None, "nbf": None, "iat": None, "jti": ""}
    type_error = None
    for key in sorted(claims, key=lambda k: k.encode("utf-8", "surrogatepass")):
        field = key if key in _REGISTERED else _FOLDED.get(_fold(key))
        if field is None:
            continue
        value, kind = claims[key], _REGISTERED[field]
        if kind == "audience":
            if isinstance(value, str):
                out["aud"] = [value]
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                out["aud"] = list(value)
            else:
                raise JWTError(SIG + AUDIENCE_ERROR)
        elif kind == "date":
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise JWTError(SIG + NUMERIC_DATE_ERROR)
            out[field] = None if value is None else _int64(float(value))
        elif isinstance(value, str):
            out[field] = value
        elif value is not None and type_error is None:
            type_error = f"json: cannot unmarshal {_kind(value)} into Go struct field Claims.{field} of type string"
    if type_error:
        raise JWTError(SIG + type_error)
    return out


def _leeway_s(ns: int) -> int:
    """``int64(Duration.Seconds())`` of a leeway, 0 meaning 150 s and a negative one 0."""
    return DEFAULT_LEEWAY_S if ns == 0 else 0 if ns < 0 else _int64(ns / NS)


def _instant_ns(seconds: int) -> int:
    """``time.Unix(seconds, 0)`` as Go compares it (its seconds since year 1 are an int64)."""
    return _wrap(seconds + _UNIX_TO_INTERNAL) * NS


def _check_times(dates: dict, config, now: float) -> None:
    """cap ``validateAll``'s time rules over the decoded NumericDates (0 or absent = not set)."""
    iat, nbf, exp = (dates[n] or 0 for n in ("iat", "nbf", "exp"))
    if iat == 0 and nbf == 0 and exp == 0:
        raise JWTError(SIG + "no issued at (iat), not before (nbf), or expiration time (exp) claims in token")
    if exp == 0:
        exp = _wrap(max(iat, nbf) + _leeway_s(config.ExpirationLeeway))
    if nbf == 0:
        nbf = iat if iat != 0 else _wrap(exp - _leeway_s(config.NotBeforeLeeway))
    skew = 0 if config.ClockSkewLeeway < 0 else DEFAULT_SKEW_S * NS if config.ClockSkewLeeway == 0 \
        else config.ClockSkewLeeway
    now_ns = int(now * NS) + _UNIX_TO_INTERNAL * NS
    if now_ns + skew < _instant_ns(nbf):
        raise JWTError(SIG + "invalid not before (nbf) claim: token not yet valid")
    if now_ns - skew > _instant_ns(exp):
        raise JWTError(SIG + "invalid expiration time (exp) claim: token is expired")
    if now_ns + skew < _instant_ns(iat):
        raise JWTError(SIG + "invalid issued at (iat) claim: token issued in the future")


def validate(token: str, config, now: float) -> dict:
    """Validate ``token`` (compact JWS) against an auth method's ``config`` at ``now`` (Unix seconds,
    the double's clock). Returns the claims; raises :class:`JWTError` (see the module doc)."""
    import jwt  # PyJWT and cryptography load on first login, not when the scheduler starts

    static = [parse_public_key(k) for k in config.JWTValidationPubKeys or ()]
    jwks_url, context = "", None
    if not static:
        if config.JWKSURL:
            try:
                context = _ssl_context(config.JWKSCACert)
            except JWTError as exc:
                raise JWTError(f"unable to get validation keys from JWKS: {exc}") from None
            jwks_url = config.JWKSURL
        else:
            try:
                context = _ssl_context((config.DiscoveryCaPem or ("",))[0])
                jwks_url = _discovery(config.OIDCDiscoveryURL, context)
            except JWTError as exc:
                raise JWTError(f"unable to get validation keys from OIDC provider: {exc}") from None
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise JWTError(f"{SIG}error verifying token signature: go-jose/go-jose: compact JWS format must have "
                       "three parts") from None
    alg = header.get("alg", "")
    if alg not in SUPPORTED_ALGS:
        raise JWTError(f"{SIG}error verifying token signature: go-jose/go-jose: unexpected signature algorithm "
                       f"{json.dumps(alg)}; expected one of {list(SUPPORTED_ALGS)}")
    keys = static or _jwks_keys(jwks_url, context, header.get("kid"))
    payload = _verify(token, keys, alg, not static)
    try:  # the key set decodes the payload into a map[string]interface{} (Go's JSON rules)
        claims = unmarshal_value(payload, into_map=True) or {}
    except GoJSONError as exc:
        if static:  # go-jose's Claims fails, so no key "validated" the token
            raise JWTError(f"{SIG}error verifying token signature: no known key successfully validated the token "
                           "signature") from None
        raise JWTError(f"{SIG}error verifying token signature: {exc}") from None
    for name in config.SigningAlgs or ():
        if name not in SUPPORTED_ALGS:
            raise JWTError(f"{SIG}invalid algorithm (alg) header parameter: unsupported signing algorithm "
                           f"{json.dumps(name)}")
    if alg not in (config.SigningAlgs or ("RS256",)):
        raise JWTError(f"{SIG}invalid algorithm (alg) header parameter: token signed with unexpected algorithm")
    registered = registered_claims(claims)
    if config.BoundAudiences and not set(config.BoundAudiences) & set(registered["aud"]):
        raise JWTError(SIG + "invalid audience (aud) claim: audience claim does not match any expected audience")
    _check_times(registered, config, now)
    if config.BoundIssuer:
        if "iss" not in claims:
            raise JWTError("auth method specifies BoundIssuers but the provided token does not contain issuer "
                           "information")
        if not isinstance(claims["iss"], str):
            raise JWTError("unable to read iss property of provided token")
        if claims["iss"] not in config.BoundIssuer:
            raise JWTError(f"invalid JWT issuer: {claims['iss']}")
    return claims
