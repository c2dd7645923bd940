"""JWT validation for ``POST /v1/acl/login``: hashicorp/cap ``jwt.Validator.Validate`` (v0.13.0) plus
Nomad's issuer check (``lib/auth/jwt/validator.go``), ``reference §5.1``, in this order:

1. key source: ``JWTValidationPubKeys`` if any, else ``JWKSURL`` (TLS roots ``JWKSCACert``), else
   ``OIDCDiscoveryURL`` (its ``/.well-known/openid-configuration``, TLS roots ``DiscoveryCaPem[0]``);
2. signature (PyJWT with ``cryptography``: the header's alg, every configured key tried);
3. ``alg`` in ``SigningAlgs`` (empty = RS256 only); 4. ``aud`` against ``BoundAudiences``;
5. ``nbf``/``exp``/``iat`` with the leeways on the double's clock; 6. ``iss`` against ``BoundIssuer``.

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


def _leeway(ns: int, default: int) -> float:
    return default if ns == 0 else 0 if ns < 0 else ns / NS


def _seconds(claims: dict, name: str) -> int | None:
    value = claims.get(name)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _check_times(claims: dict, config, now: float) -> None:
    iat, nbf, exp = (_seconds(claims, n) for n in ("iat", "nbf", "exp"))
    if iat is None and nbf is None and exp is None:
        raise JWTError(SIG + "no issued at (iat), not before (nbf), or expiration time (exp) claims in token")
    if exp is None:
        exp = max(iat or 0, nbf or 0) + _leeway(config.ExpirationLeeway, DEFAULT_LEEWAY_S)
    if nbf is None:
        nbf = iat if iat is not None else exp - _leeway(config.NotBeforeLeeway, DEFAULT_LEEWAY_S)
    skew = 0 if config.ClockSkewLeeway < 0 else _leeway(config.ClockSkewLeeway, DEFAULT_SKEW_S)
    if now + skew < nbf:
        raise JWTError(SIG + "invalid not before (nbf) claim: token not yet valid")
    if now - skew > exp:
        raise JWTError(SIG + "invalid expiration time (exp) claim: token is expired")
    if iat is not None and now + skew < iat:
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
    for name in config.SigningAlgs or ():
        if name not in SUPPORTED_ALGS:
            raise JWTError(f"{SIG}invalid algorithm (alg) header parameter: unsupported signing algorithm "
                           f"{json.dumps(name)}")
    if alg not in (config.SigningAlgs or ("RS256",)):
        raise JWTError(f"{SIG}invalid algorithm (alg) header parameter: token signed with unexpected algorithm")
    try:
        claims = json.loads(payload)
    except (ValueError, RecursionError):
        raise JWTError(f"{SIG}error verifying token signature: invalid character in payload") from None
    if not isinstance(claims, dict):
        raise JWTError(f"{SIG}error verifying token signature: payload is not a JSON object")
    if config.BoundAudiences:
        aud = claims.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not set(config.BoundAudiences) & set(a for a in auds if isinstance(a, str)):
            raise JWTError(SIG + "invalid audience (aud) claim: audience claim does not match any expected audience")
    _check_times(claims, config, now)
    if config.BoundIssuer:
        if "iss" not in claims:
            raise JWTError("auth method specifies BoundIssuers but the provided token does not contain issuer "
                           "information")
        if not isinstance(claims["iss"], str):
            raise JWTError("unable to read iss property of provided token")
        if claims["iss"] not in config.BoundIssuer:
            raise JWTError(f"invalid JWT issuer: {claims['iss']}")
    return claims
