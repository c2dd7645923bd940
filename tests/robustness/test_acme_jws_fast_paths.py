"""The fast paths of the JWS parser give what the slow paths give: ``go_unmarshal`` against
``golang.json.unmarshal_value`` (value or error text, with and without ``into_map``) and
``raw_url_decode`` against its byte-by-byte reading of Go's ``RawURLEncoding`` (bytes or error text),
on generated JSON texts, JSON-like noise and base64url-like noise."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_schedpki.golang.json import GoJSONError, unmarshal_value
from pytest_schedpki.secrets.engines.pki.acme import jws

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12)
_noise = st.text(alphabet='{}[]":,. \t\r\n\x00\\/abtrunlfe0123456789-+E\u00e9\ud800', max_size=40)


def _outcome(fn, data: bytes, into_map: bool):
    try:
        return "ok", fn(data, into_map=into_map)
    except GoJSONError as exc:
        return "error", str(exc)


def _same_json(data: bytes) -> None:
    for into_map in (False, True):
        expected = _outcome(unmarshal_value, data, into_map)
        got = _outcome(jws.go_unmarshal, data, into_map)
        assert got == expected, data
        if expected[0] == "ok":  # same key order too
            assert json.dumps(got[1]) == json.dumps(expected[1]), data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=_json, spaced=st.booleans())
def test_go_unmarshal_of_generated_json(value, spaced):
    _same_json(json.dumps(value, indent=1 if spaced else None, ensure_ascii=False).encode("utf-8", "surrogatepass"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=_noise)
@example('{"a":1,"a":true,"b":{"a":null,"a":"x"}}')
@example('{"alg":"ES256","nonce":"n","url":"u","kid":"k"} x')
@example('[[[[[[[[]]]]]]]]')
@example('"\\ud800"')
@example('{"a":NaN}')
@example('')
@example('null')
def test_go_unmarshal_of_noise(text):
    _same_json(text.encode("utf-8", "surrogatepass"))


def _slow_decode(text: str) -> bytes:
    kept, position = bytearray(), []
    for index, byte in enumerate(text.encode("utf-8", "surrogatepass")):
        if byte in b"\r\n":
            continue
        if byte not in jws._ALPHABET:
            raise ValueError(f"illegal base64 data at input byte {index}")
        kept.append(byte)
        position.append(index)
    if len(kept) % 4 == 1:
        raise ValueError(f"illegal base64 data at input byte {position[-1]}")
    return base64.urlsafe_b64decode(bytes(kept) + b"=" * (-len(kept) % 4))


def _decoded(fn, text: str):
    try:
        return "ok", fn(text)
    except ValueError as exc:
        return "error", str(exc)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=st.text(alphabet="AQgw_-z09\r\n=+/.\u00e9", max_size=24) | st.binary(max_size=30).map(
    lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()))
@example("A")
@example("AAAAA")
@example("QQ\n")
@example("QQ==")
def test_raw_url_decode_fast_path(text):
    assert _decoded(jws.raw_url_decode, text) == _decoded(_slow_decode, text)


def test_the_account_key_is_built_once_and_a_refused_jwk_refused_each_time():
    import jwt
    import pytest
    from cryptography.hazmat.primitives.asymmetric import ec

    from pytest_schedpki.acme import jwk_of

    jwk = jwk_of(ec.generate_private_key(ec.SECP256R1()))
    first = jws._public_key("ES256", {**jwk, "alg": "ES256"})
    assert jws._public_key("ES256", dict(reversed(list(jwk.items())))) is first
    assert first.public_numbers() == jwt.PyJWK(jwk, "ES256").key.public_numbers()
    bad = {**jwk, "y": jwk["x"]}  # not a point of the curve
    for _ in range(2):
        with pytest.raises((jwt.exceptions.PyJWKError, jwt.exceptions.PyJWTError)):
            jws._public_key("ES256", bad)
    with pytest.raises((jwt.exceptions.PyJWKError, jwt.exceptions.PyJWTError)):  # an unhashable member: built uncached, refused alike
        jws._public_key("ES256", {**jwk, "x": ["a"]})


def _segment(fn, segment: bytes):
    import jwt

    try:
        return "ok", fn(segment, "payload")
    except jwt.exceptions.DecodeError as exc:
        return "error", str(exc)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(segment=st.binary(max_size=24).map(lambda b: base64.urlsafe_b64encode(b).rstrip(b"="))
       | st.text(alphabet="AQgw_-z09\r\n=+/.\u00e9", max_size=24).map(lambda t: t.encode("utf-8"))
       | st.binary(max_size=24).map(base64.urlsafe_b64encode))
@example(b"QR")  # non-canonical trailing bits: refused by PyJWT
@example(b"QQ")
@example(b"QQ==")
@example(b"QQ=")
@example(b"A")
@example(b"")
@example(b"QQ\n")
def test_pyjws_segment_fast_path(segment):
    """The JWS verifier's segment decoder decides as PyJWT's own: same bytes or same refusal."""
    import jwt

    assert _segment(jws._PyJWS._decode_base64url_segment, segment) == _segment(
        jwt.PyJWS._decode_base64url_segment, segment)


def test_pyjws_fast_path_is_the_one_pyjwt_calls():
    """PyJWT's decoding calls the overridden segment decoder (a PyJWT that stops calling it would
    silently lose the fast path, not change an answer) and a non-canonical signature is still refused."""
    from unittest import mock

    import jwt
    import pytest
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    token = jwt.PyJWS().encode(b'{"a":"b"}', key, algorithm="ES256")
    with mock.patch.object(jws._PyJWS, "_decode_base64url_segment", wraps=jws._PyJWS._decode_base64url_segment) as seen:
        assert jws._JWS.decode_complete(token, key=key.public_key(), algorithms=["ES256"])["payload"] == b'{"a":"b"}'
    assert seen.call_count == 3
    head, payload, signature = token.split(".")
    last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(signature[-1])
    tweaked = signature[:-1] + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last ^ 1]
    for forged in (f"{head}.{payload}.{tweaked}", f"{head}.{payload}.{signature}=", f"{head}.{payload}x.{signature}"):
        with pytest.raises(jwt.exceptions.PyJWTError):
            jws._JWS.decode_complete(forged, key=key.public_key(), algorithms=["ES256"])


@settings(max_examples=1500, deadline=None)
@given(value=st.text(alphabet="0123456789.:abcdefABCDEFxyz%-_ \u0663\uff11", max_size=20) | st.ip_addresses().map(str))
@example("fe80::1%eth0")
@example("1.2.3.4")
@example("\u0661.\u0662.\u0663.\u0664")
def test_a_dns_identifier_skips_the_ip_parse_only_where_it_cannot_parse(value):
    """new-order refuses a DNS identifier that parses as an IP address; the parse is skipped for
    names that cannot be one, never for a name that is."""
    import ipaddress

    from pytest_schedpki.secrets.engines.pki.acme.orders import _may_be_ip

    try:
        ipaddress.ip_address(value)
    except ValueError:
        return
    assert _may_be_ip(value)


@pytest.mark.parametrize("text, refused", [
    ('{"alg":"ES256","kid":"k","url":"u","nonce":"n"}', False),
    ('{"alg":"ES256","kid":"k","jwk":null}', True),  # a jwk member, even null: both kid and jwk
    ('{"alg":"ES256","kid":"k","\\u006awk":{}}', True),  # the member's name written with an escape
    ('{"alg":"ES256","kid":"k","jwk":1,"jwk":2}', True),
    ('{"alg":"ES256","kid":"k","JWK":{}}', False),  # names are exact here, as raw_members reads them
    ('{"alg":"ES256","kid":"k","x":"' + "a" * 700 + '"}', False),  # long: members read as before
    ('{"alg":"ES256","kid":"k","x":' + "[" * 250 + "]" * 250 + "}", False),
])
def test_a_kid_header_is_refused_for_a_jwk_member_exactly_when_its_members_name_one(text, refused):
    """A kid request's members are only re-read when the header has a "jwk" member or is long; the
    answer (both kid and jwk: malformed) is the one the re-reading gives."""
    from pytest_schedpki.secrets.engines.pki.acme.problems import AcmeProblem

    protected = base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()
    header = jws.parse_header(protected)
    assert ("jwk" in jws.raw_members(header["_raw"])) is refused

    def load(kid):
        return {"kty": "EC"}, "{}"

    if refused:
        with pytest.raises(AcmeProblem, match="got both account 'kid' and 'jwk'"):
            jws.outer_context(header, load)
    else:
        assert jws.outer_context(header, load).jwk_raw == "{}"


def _pyjwk_outcome(alg: str, jwk: dict, compact: str):
    """What the JWS verifier decided before the plain-EC shortcut: PyJWK builds the key."""
    import jwt

    try:
        key = jwt.PyJWK({k: v for k, v in jwk.items() if k != "alg"}, alg).key
        return "ok", jws._JWS.decode_complete(compact, key=key, algorithms=[alg])["payload"]
    except (jwt.exceptions.PyJWTError, jwt.exceptions.PyJWKError, ValueError, TypeError):
        return "refused", None


@pytest.mark.parametrize("curve", ["P-256", "P-384", "P-521"])
@pytest.mark.parametrize("alg", ["ES256", "ES384", "ES512", "RS256", "EdDSA"])
@pytest.mark.parametrize("variant", ["plain", "with alg", "x of y", "short x", "extra member"])
def test_plain_ec_keys_decide_as_pyjwk(curve, alg, variant):
    """A plain EC JWK (kty, crv, x, y) gets its key from the shortcut, every other JWK from PyJWK; the
    signature check decides the same either way: the key signs with its own curve's hash, so an
    algorithm of another curve (or family) is refused, as is a point off the curve, while a member
    beyond the four takes PyJWK's path."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    from pytest_schedpki.acme import jwk_of

    own = {"P-256": (ec.SECP256R1(), hashes.SHA256()), "P-384": (ec.SECP384R1(), hashes.SHA384()),
           "P-521": (ec.SECP521R1(), hashes.SHA512())}[curve]
    key = ec.generate_private_key(own[0])
    jwk = jwk_of(key)
    if variant == "with alg":
        jwk["alg"] = alg
    elif variant == "x of y":
        jwk["y"] = jwk["x"]
    elif variant == "short x":
        jwk["x"] = jwk["x"][4:]
    elif variant == "extra member":
        jwk["use"] = "sig"
    protected = base64.urlsafe_b64encode(json.dumps({"alg": alg}).encode()).rstrip(b"=").decode()
    payload = base64.urlsafe_b64encode(b'{"a":"b"}').rstrip(b"=").decode()
    r, s = decode_dss_signature(key.sign(f"{protected}.{payload}".encode(), ec.ECDSA(own[1])))
    size = (key.curve.key_size + 7) // 8
    signature = base64.urlsafe_b64encode(r.to_bytes(size, "big") + s.to_bytes(size, "big")).rstrip(b"=").decode()
    ctx = jws.JwsContext(alg=alg, kid="", jwk=jwk, jwk_raw="", nonce="n", url="u", existing=False)
    try:
        got = "ok", json.dumps(jws.verify(ctx, protected, payload, signature)).encode().replace(b" ", b"")
    except jws.AcmeProblem as problem:
        assert problem.detail.startswith("failed to verify signature"), problem.detail
        got = "refused", None
    assert got == _pyjwk_outcome(alg, jwk, f"{protected}.{payload}.{signature}")
    assert (got[0] == "ok") == (variant in ("plain", "with alg", "extra member") and alg == f"ES{own[1].digest_size * 8}")
