"""``/.well-known/jwks.json`` and ``/.well-known/openid-configuration``.

``JWKSRequest`` (``command/agent/keyring_endpoint.go``) -> ``Keyring.ListPublic``
(``nomad/keyring_endpoint.go``): GET only (else ``405 Invalid method``); the query string is
parsed as every read's; auth errors are ignored (any token, or none, gets the keys); a blocking
read of the root-keys table. The body is go-jose's ``JSONWebKeySet``: ``{"keys": [{"use": "sig",
"kty": "RSA", "kid": <KeyID>, "alg": "RS256", "n": ..., "e": "AQAB"}]}``, with ``X-Nomad-Index``,
``X-Nomad-LastContact``, ``X-Nomad-KnownLeader`` and ``Cache-Control: max-age=<s>`` where the age
is ``helper.ExpiryToRenewTime(CreateTime + root_key_rotation_threshold)``: half the time left
plus a random stagger of up to a tenth of it (at least 15 minutes).

``OIDCDiscoveryRequest`` -> ``Keyring.GetConfig``: GET only; without ``oidc_issuer`` (Nomad's
default) ``404 OIDC Discovery endpoint disabled``; with one, ``structs.NewOIDCDiscoveryConfig``:
``issuer``, ``jwks_uri`` (issuer joined with the JWKS path), ``id_token_signing_alg_values_supported``
``["RS256", "EdDSA"]``, ``response_types_supported`` ``["code"]``, ``subject_types_supported``
``["public"]``. No meta headers.
"""

from __future__ import annotations

import random

from werkzeug.wrappers import Request, Response

from ..model import SchedulerError
from ..request import ANSWERS
from .profile import ROTATION_THRESHOLD_NS, profile_of
from .reply import json_answer, query_meta, read_route

JWKS_PATH = "/.well-known/jwks.json"
DISCOVERY_PATH = "/.well-known/openid-configuration"
MIN_MAX_AGE_S = 15 * 60  # jwksMinMaxAge
ROOT_KEYS_INDEX = 1  # the double's root key exists from its first raft index


def _max_age(state, create_time_ns: int) -> int:
    now_ns = int(state.clock.now().timestamp() * 10**9)
    renew_at = (create_time_ns + ROTATION_THRESHOLD_NS - now_ns) / 2 / 10**9
    if renew_at < MIN_MAX_AGE_S:
        return int(MIN_MAX_AGE_S + random.random() * MIN_MAX_AGE_S / 10)  # noqa: S311 - a stagger
    return int(renew_at + random.random() * renew_at / 10)  # noqa: S311


def jwks(state, request: Request) -> Response:
    """``GET /.well-known/jwks.json`` (see the module doc)."""
    routed = read_route(state, request)
    if isinstance(routed, ANSWERS):
        return routed
    region, _stale = routed
    key = profile_of(state).key
    headers = query_meta(state, region, ROOT_KEYS_INDEX)
    headers["Cache-Control"] = f"max-age={_max_age(state, key.create_time)}"
    return json_answer(request, {"keys": [key.jwk()]}, headers)


def discovery(state, request: Request) -> Response:
    """``GET /.well-known/openid-configuration`` (see the module doc)."""
    routed = read_route(state, request)
    if isinstance(routed, ANSWERS):
        return routed
    issuer = profile_of(state).oidc_issuer
    if not issuer:
        raise SchedulerError(404, "OIDC Discovery endpoint disabled")
    return json_answer(request, {
        "issuer": issuer, "jwks_uri": issuer.rstrip("/") + JWKS_PATH,
        "id_token_signing_alg_values_supported": ["RS256", "EdDSA"],
        "response_types_supported": ["code"], "subject_types_supported": ["public"]})
