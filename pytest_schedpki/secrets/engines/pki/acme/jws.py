"""A request's flattened JWS (RFC 8555 section 6.2) checked as OpenBao's ``ParseRequestParams`` and
``acme_jws.go`` check it, verified with PyJWT (``PyJWK`` for the key, ``PyJWS`` on the compact form
``protected.payload.signature`` that upstream builds for go-jose too).

Order and answers (``detail`` texts are upstream's, ``%w`` parts shown as ``<malformed>``):

1. ``protected`` missing: malformed ``missing required field 'protected': <malformed>``; not unpadded
   base64url: ``failed to base64 parse 'protected': illegal base64 data at input byte N: <malformed>``;
2. the header (``failed to json unmarshal 'protected': ...``): not JSON or a field of the wrong type
   (serverInternal, Go's text), ``kid`` and ``jwk`` both / neither (malformed), ``alg`` outside
   ES256/384/512, EdDSA, RS256/384/512, PS256/384/512 (``invalid header: unexpected value for 'algo'``);
   a ``kid`` names an account of this directory (``account not found: <accountDoesNotExist>``,
   ``...: account part of different ACME directory path``); a ``jwk`` must be a key go-jose reads
   (:func:`jwk_error`: go-jose's texts, serverInternal);
3. the nonce is redeemed (badNonce ``invalid or reused nonce: ...``) - also when a later check fails;
4. ``url`` present and equal to ``<cluster path>/<request path>`` (unauthorized ``invalid value for
   'url' in 'protected': got '<u>' expected '<e>': ...``);
5. ``payload``/``signature`` present; the signature verifies (else serverInternal ``failed to verify
   signature: go-jose/go-jose: error in cryptographic primitive``); the payload is empty (POST-as-GET:
   ``None``) or a JSON object.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.exceptions import InvalidKeyError, PyJWKError, PyJWTError

from pytest_schedpki.golang.json import GoJSONError, unmarshal_value

from .problems import AcmeProblem

OUTER_ALGORITHMS = ("ES256", "ES384", "ES512", "EdDSA", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EAB_ALGORITHMS = ("HS256", "HS384", "HS512")
CRYPTO_FAILURE = "go-jose/go-jose: error in cryptographic primitive"
_ALPHABET = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_CLEAN = re.compile(r"[A-Za-z0-9_-]*")


def raw_url_decode(text: str) -> bytes:
    """Go's ``base64.RawURLEncoding.DecodeString``; raises ``ValueError`` with Go's text."""
    if _CLEAN.fullmatch(text) and len(text) % 4 != 1:
        # the usual case, decoded at once: no CR/LF to skip (Go's decoder ignores them) and no
        # illegal byte to locate, so the byte loop below would keep every byte and decode the same
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    data = text.encode("utf-8", "surrogatepass")
    kept, position = bytearray(), []
    for index, byte in enumerate(data):
        if byte in b"\r\n":
            continue
        if byte not in _ALPHABET:
            raise ValueError(f"illegal base64 data at input byte {index}")
        kept.append(byte)
        position.append(index)
    if len(kept) % 4 == 1:
        raise ValueError(f"illegal base64 data at input byte {position[-1]}")
    return base64.urlsafe_b64decode(bytes(kept) + b"=" * (-len(kept) % 4))


class _NotPlain(Exception):
    """A number or constant met by the fast path of :func:`go_unmarshal`."""


def _not_plain(text: str) -> Any:
    raise _NotPlain


# the decoders, made once: ``json.loads`` with any keyword, and a bare ``JSONDecoder()``, build a decoder
# and its scanner on every call
_PLAIN_DECODER = json.JSONDecoder(parse_int=_not_plain, parse_float=_not_plain, parse_constant=_not_plain)
_RAW_DECODER = json.JSONDecoder()


def go_unmarshal(data: bytes, into_map: bool = False) -> Any:
    """:func:`~pytest_schedpki.golang.json.unmarshal_value` of ``data`` (``json.Unmarshal`` into an
    ``interface{}``), same value, same errors. A JWS header or payload is usually plain ASCII JSON
    with no escape and no number: there ``json.loads`` gives the very value of the Go scanner's port
    (a repeated key keeps its first place and last value in both) at a fraction of its cost. Anything
    else (non-ASCII, a backslash, a number, NaN/Infinity, trailing data, deep nesting, a syntax
    error) goes to the port, which also words the errors."""
    if data.isascii() and b"\\" not in data:
        try:
            value = _PLAIN_DECODER.decode(data.decode("ascii"))
        except (_NotPlain, ValueError, RecursionError):
            pass
        else:
            if not into_map or value is None or isinstance(value, dict):
                return value
    return unmarshal_value(data, into_map=into_map)


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of ``jwk``, unpadded base64url (``GetKeyThumbprint``)."""
    members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}[jwk["kty"]]
    if all(isinstance(jwk[k], str) and _CLEAN.fullmatch(jwk[k]) for k in members):
        # what json.dumps writes for members of base64url characters (no escape): built directly
        text = "{" + ",".join(f'"{k}":"{jwk[k]}"' for k in members) + "}"
    else:
        text = json.dumps({k: jwk[k] for k in members}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


def raw_members(text: str) -> dict[str, str]:
    """The raw JSON text of each top-level member of object ``text`` (``json.RawMessage``)."""
    decoder, out, i = _RAW_DECODER, {}, 0
    ws = " \t\r\n"
    while i < len(text) and text[i] in ws:
        i += 1
    if not text.startswith("{", i):
        return out
    i += 1
    while i < len(text):
        while i < len(text) and text[i] in ws + ",":
            i += 1
        if i >= len(text) or text[i] == "}":
            break
        key, i = decoder.raw_decode(text, i)
        while i < len(text) and text[i] in ws + ":":
            i += 1
        _, end = decoder.raw_decode(text, i)
        out[key] = text[i:end]
        i = end
    return out


_CURVES = {"P-256": (ec.SECP256R1, 32), "P-384": (ec.SECP384R1, 48), "P-521": (ec.SECP521R1, 66)}
_GO_KINDS = {bool: "bool", int: "number", float: "number", str: "string", list: "array"}


def _member(jwk: dict[str, Any], name: str) -> bytes | None:
    """A base64url member of a JWK as go-jose's ``byteBuffer`` reads it (absent or empty: None)."""
    value = jwk.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"json: cannot unmarshal {_GO_KINDS.get(type(value), 'object')} into Go value of type string")
    return raw_url_decode(value)


@functools.lru_cache(maxsize=256)
def _ec_key(crv: str, x: bytes, y: bytes) -> ec.EllipticCurvePublicKey:
    """The public key of curve ``crv`` (a JWK name of :data:`_CURVES`) at point (``x``, ``y``), big-endian
    coordinates of the curve's size; ``ValueError`` when the point is not on the curve. The last 256
    are kept: a new account's key is checked (:func:`jwk_error`) and then verifies its request, and
    an account signs every request with the same key (an exception is never cached)."""
    return ec.EllipticCurvePublicKey.from_encoded_point(_CURVES[crv][0](), b"\x04" + x + y)


def jwk_error(jwk: Any) -> str | None:
    """What go-jose's ``JSONWebKey.UnmarshalJSON`` says about the public ``jwk`` (None: it reads it)."""
    if not isinstance(jwk, dict):
        kind = _GO_KINDS.get(type(jwk), "object")
        return f"json: cannot unmarshal {kind} into Go value of type jose.rawJSONWebKey"
    prefix = "go-jose/go-jose: "
    try:
        kty, crv = jwk.get("kty"), jwk.get("crv")
        if kty == "EC":
            if crv not in _CURVES:
                return f"{prefix}unsupported elliptic curve '{crv if isinstance(crv, str) else ''}'"
            x, y = _member(jwk, "x"), _member(jwk, "y")
            if x is None or y is None:
                return f"{prefix}invalid EC key, missing x/y values"
            size = _CURVES[crv][1]
            if len(x) != size:
                return f"{prefix}invalid EC public key, wrong length for x"
            if len(y) != size:
                return f"{prefix}invalid EC public key, wrong length for y"
            try:
                _ec_key(crv, x, y)
            except ValueError:
                return f"{prefix}invalid EC key, X/Y are not on declared curve"
        elif kty == "RSA":
            if _member(jwk, "n") is None or _member(jwk, "e") is None:
                return f"{prefix}invalid RSA key, missing n/e values"
        elif kty == "OKP":
            if crv != "Ed25519":
                return f"{prefix}unsupported key type/format"
            if _member(jwk, "x") is None:  # a short x is read; its signature then fails to verify
                return f"{prefix}invalid Ed key, missing x value"
        else:
            return f"{prefix}unsupported key type/format"
    except ValueError as exc:
        return str(exc)
    return None


@dataclass
class JwsContext:
    """``jwsCtx``: ``alg``, ``kid`` (the account id; a new one for a ``jwk`` request), ``jwk`` (the
    key as a dict) and ``jwk_raw`` (its JSON text as sent), ``existing`` (the request named a ``kid``)."""

    alg: str
    kid: str
    jwk: dict[str, Any]
    jwk_raw: str
    nonce: Any
    url: str
    existing: bool
    header: dict[str, Any] = field(default_factory=dict)

    def thumbprint(self) -> str:
        return thumbprint(self.jwk)

    def public_key(self) -> Any:
        return jwt.PyJWK(self.jwk, self.alg).key


def _type_error(name: str, value: Any) -> str | None:
    kind = {bool: "bool", int: "number", float: "number", list: "array", dict: "object", str: "string"}
    found = kind.get(type(value))
    if value is None or found == "string":
        return None
    return f"json: cannot unmarshal {found} into Go struct field jwsCtx.{name} of type string"


def go_json_text(exc: GoJSONError) -> str:
    """bao 2.7.2's text of a JSON refusal: nesting past 10000 levels is plain ``exceeded max depth``
    (the scanner port prefixes the character, as secrets/json_syntax.py notes for request bodies)."""
    message = str(exc)
    return "exceeded max depth" if message.endswith("exceeded max depth") else message


def parse_header(protected: str) -> dict[str, Any]:
    """The protected header as a dict; raises :class:`AcmeProblem` (steps 1-2 before the key)."""
    try:
        raw = raw_url_decode(protected)
    except ValueError as exc:
        raise AcmeProblem.wrap("malformed", f"failed to base64 parse 'protected': {exc}") from None
    try:
        header = go_unmarshal(raw)
    except GoJSONError as exc:
        raise AcmeProblem("serverInternal", f"failed to json unmarshal 'protected': {go_json_text(exc)}") from None
    if not isinstance(header, dict):
        kind = "array" if isinstance(header, list) else "string" if isinstance(header, str) else "number"
        if header is None:
            header = {}
        else:
            raise AcmeProblem("serverInternal", "failed to json unmarshal 'protected': json: cannot unmarshal "
                                                f"{kind} into Go value of type pki.jwsCtx")
    for name in ("alg", "kid", "nonce", "url"):
        if (why := _type_error(name, header.get(name))) is not None:
            raise AcmeProblem("serverInternal", f"failed to json unmarshal 'protected': {why}")
    header["_raw"] = raw.decode("utf-8", "replace")
    return header


def outer_context(header: dict[str, Any], load_jwk) -> JwsContext:
    """``UnmarshalOuterJwsJson``: ``load_jwk(kid) -> (jwk dict, raw text)`` loads an account's key
    (raising :class:`AcmeProblem`); a new request's key comes from the header."""
    def fail(name: str, text: str) -> AcmeProblem:
        return AcmeProblem(name, f"failed to json unmarshal 'protected': {text}")
    kid, alg = header.get("kid") or "", header.get("alg") or ""
    raw = header["_raw"]
    # a header without a "jwk" member (a kid request) has no raw text to keep: its members are not
    # re-read (~10 us). Only where that reading cannot fail either: json's scanner could run out of
    # recursion on a header nested deeper than its limit that Go's decoder took (depth < 10000),
    # which a header of under 600 characters cannot be.
    raw_jwk = raw_members(raw).get("jwk", "") if "jwk" in header or len(raw) >= 600 else ""
    if kid and raw_jwk:
        raise fail("malformed", "invalid header: got both account 'kid' and 'jwk' in the same message; expected "
                                "only one: the request message was malformed")
    if not kid and not raw_jwk:
        raise fail("malformed", "invalid header: got neither required fields of 'kid' nor 'jwk': the request message "
                                "was malformed")
    if alg not in OUTER_ALGORITHMS:
        raise fail("malformed", "invalid header: unexpected value for 'algo': the request message was malformed")
    existing = bool(kid)
    if existing:
        kid = kid.split("/")[-1]
        try:
            jwk, raw_jwk = load_jwk(kid)
        except AcmeProblem as exc:
            raise AcmeProblem(exc.name, f"failed to json unmarshal 'protected': {exc.detail}") from None
    else:
        jwk = header.get("jwk")
        if (why := jwk_error(jwk)) is not None:
            raise fail("serverInternal", why)
    return JwsContext(alg=alg, kid=kid, jwk=jwk, jwk_raw=raw_jwk, nonce=header.get("nonce"),
                      url=header.get("url") or "", existing=existing, header=header)


_SEGMENT = re.compile(rb"[A-Za-z0-9_-]*")


class _PyJWS(jwt.PyJWS):
    """PyJWT's ``PyJWS``, its segment decoding done at C speed where that gives the same answer.

    ``PyJWS._decode_base64url_segment`` checks every byte of a segment against the
    base64url alphabet in a Python generator (PyJWT 2.15): ~500 steps for a JWS of a new account, more than the
    rest of the decoding. A segment of alphabet bytes only (one regular expression), not of a length
    base64 cannot have (``len % 4 == 1``) and in canonical form (re-encoding it gives it back) is
    exactly what PyJWT accepts there, so it is decoded at once; anything else (padding, an illegal
    byte, non-canonical trailing bits) goes to PyJWT's own method, which accepts or refuses it with
    its own error. Every other step of ``decode_complete`` is PyJWT's."""

    @staticmethod
    def _decode_base64url_segment(segment: bytes, name: str) -> bytes:
        if _SEGMENT.fullmatch(segment) and len(segment) % 4 != 1:
            decoded = base64.urlsafe_b64decode(segment + b"=" * (-len(segment) % 4))
            if base64.urlsafe_b64encode(decoded).rstrip(b"=") == segment:
                return decoded
        return jwt.PyJWS._decode_base64url_segment(segment, name)


#: one instance for every request: ``PyJWS()`` builds PyJWT's whole algorithm table (~6-30 us), and
#: ``decode_complete`` changes nothing in it (a fresh instance decides exactly as this one)
_JWS = _PyJWS()


@functools.lru_cache(maxsize=256)
def _cached_key(alg: str, members: tuple[tuple[str, Any], ...]) -> Any:
    return jwt.PyJWK(dict(members), alg).key


_EC_MEMBERS = frozenset(("kty", "crv", "x", "y"))


def _plain_ec_key(alg: str, jwk: dict[str, Any]) -> Any:
    """The key ``PyJWK(jwk, alg).key`` builds for a plain EC JWK (``kty``/``crv``/``x``/``y``, an
    ``alg`` member aside) of an ``ES*`` algorithm whose coordinates :func:`jwk_error` accepts, from
    :func:`_ec_key` (the point already checked for this request, or for the account's earlier ones);
    ``None`` for any other JWK, which PyJWK builds."""
    if not alg.startswith("ES") or jwk.get("kty") != "EC" or set(jwk).difference(("alg",)) != _EC_MEMBERS:
        return None
    crv, x, y = jwk["crv"], jwk["x"], jwk["y"]
    if crv not in _CURVES or not isinstance(x, str) or not isinstance(y, str):
        return None
    try:
        x_bytes, y_bytes = raw_url_decode(x), raw_url_decode(y)
    except ValueError:
        return None
    size = _CURVES[crv][1]
    if len(x_bytes) != size or len(y_bytes) != size:
        return None
    try:
        return _ec_key(crv, x_bytes, y_bytes)
    except ValueError:
        raise InvalidKeyError("Invalid EC key") from None  # PyJWK's refusal of a point off the curve


def _public_key(alg: str, jwk: dict[str, Any]) -> Any:
    """``PyJWK(jwk without "alg", alg).key``: a plain EC JWK from :func:`_plain_ec_key` (PyJWK's
    ``from_jwk`` makes the same key from the same coordinates, and ``decode_complete`` still checks
    it against the algorithm), any other kept for the last 256 (alg, JWK) pairs: an account signs
    every request with the same key, and building it (the curve point check) costs more than the
    signature check. A refused JWK raises each time (an exception is never cached); a JWK with an
    unhashable member is built uncached."""
    plain = _plain_ec_key(alg, jwk)
    if plain is not None:
        return plain
    members = tuple(sorted((k, v) for k, v in jwk.items() if k != "alg"))
    try:
        return _cached_key(alg, members)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        return jwt.PyJWK(dict(members), alg).key


def verify(ctx: JwsContext, protected: str, payload: str, signature: str) -> dict[str, Any] | None:
    """``VerifyJWS`` of the compact form; the payload as a dict, ``None`` for an empty payload."""
    compact = f"{protected}.{payload}.{signature}"
    if compact.count(".") != 2:
        raise AcmeProblem.wrap("malformed", "failed to verify signature: error parsing signature: "
                                            "go-jose/go-jose: compact JWS format must have three parts")
    for part in (payload, signature):
        try:
            raw_url_decode(part)
        except ValueError as exc:
            raise AcmeProblem.wrap("malformed", f"failed to verify signature: error parsing signature: {exc}") from None
    try:
        key = _public_key(ctx.alg, ctx.jwk)
        verified = _JWS.decode_complete(compact, key=key, algorithms=[ctx.alg])["payload"]
    except (PyJWTError, PyJWKError, ValueError, TypeError):
        raise AcmeProblem("serverInternal", f"failed to verify signature: {CRYPTO_FAILURE}") from None
    if not verified:
        return None
    try:
        data = go_unmarshal(verified, into_map=True)
    except GoJSONError as exc:
        raise AcmeProblem.wrap("malformed", f"failed to verify signature: failed to json unmarshal 'payload': "
                                            f"{go_json_text(exc)}") from None
    return data  # JSON null decodes to a nil map: POST-as-GET too
