"""``PUT|POST /v1/acl/identity/client-introduction-token``: a signed JWT a new client node presents
to join (``command/agent/acl_endpoint.go`` ``ACLCreateClientIntroductionTokenRequest``,
``nomad/acl_endpoint.go`` ``ACL.CreateClientIntroductionToken``).

In upstream order:

1. another method: ``405 Invalid method``;
2. the body, decoded by ``ACLCreateClientIntroductionTokenRequest.UnmarshalJSON``
   (``nomad/structs/acl.go``): no body is ``400 Request body is empty``; a JSON syntax error is Go's
   text; ``TTL`` may be a Go duration string (``"10m"``; a bad one is ``400 time: invalid duration
   "x"``), a number of nanoseconds (a float, truncated), ``null``; anything else is
   ``400 unexpected TTL type: <%v>``; a non-string ``NodeName``/``NodePool`` is ``400 json: cannot
   unmarshal <kind> into Go struct field .NodeName of type string``; a body that is not an object
   is ``400 json: cannot unmarshal <kind> into Go value of type struct { TTL interface {};
   *structs.Alias }``. ``Region`` and ``AuthToken`` in the body replace the query's and header's
   (the embedded ``WriteRequest`` is decoded after ``parseWriteRequest``);
3. forwarding: an unknown region ``500 No path to region``; the local region without a leader
   ``500 No cluster leader``;
4. the token (unknown or expired: ``403 Permission denied``), then ``AllowNodeWrite`` (node
   ``write`` or management; not management-only), else ``403 Permission denied``;
5. ``Canonicalize``: ``NodePool`` defaults to ``default``; ``IdentityTTL``: 0 -> the server's
   ``default_identity_ttl`` (5m), above ``max_identity_ttl`` (30m) -> the maximum (no error), else
   the request's; a negative TTL is kept and, as ``setExpiry`` only sets ``exp`` for a positive
   TTL, gives a token without ``exp``;
6. ``GenerateNodeIntroductionIdentityClaims`` signed by the keyring (``Encrypter.SignClaims``):
   claims ``nomad_node_pool``, ``nomad_node_name`` (``""`` when not given), ``sub``
   ``node-introduction:<region>:<pool>:<name>:default``, ``aud`` ``nomadproject.io``, ``exp``,
   ``nbf``, ``iat`` (seconds on the double's clock), ``jti`` (a UUID); header ``alg`` RS256,
   ``kid`` the key of ``/.well-known/jwks.json``, ``typ`` JWT.

The answer is ``{"JWT": "<token>"}`` with no ``X-Nomad-Index`` (the handler sets none).
"""

from __future__ import annotations

import datetime
import math
import uuid

from werkzeug.wrappers import Request, Response

from ...golang.duration import GoDurationError, parse_duration
from ...golang.json import GoJSONError, JNum, JObj, JStr, decode_first_value, go_format_value, kind_name
from ..aclstore.resolve import resolve_acl
from ..model import SchedulerError
from ..request import ANSWERS, decode_with, query_arg, request_token
from .profile import profile_of
from .reply import NO_LEADER, json_answer, target_region

AUDIENCE = "nomadproject.io"
ALIAS = "struct { TTL interface {}; *structs.Alias }"
_INT64 = 1 << 63


def _fold(key: str) -> str:
    return "".join("K" if c == "\u212a" else "S" if c == "\u017f" else c.upper() if c.isascii() else c
                   for c in key)


def _ttl(node: object) -> int:
    if isinstance(node, JStr):
        return parse_duration(node.value) if node.value else 0
    if isinstance(node, JNum):
        value = float(node.raw)
        if math.isinf(value):  # encoding/json's ParseFloat into the interface{} field fails
            raise ValueError(f"json: cannot unmarshal number {node.raw} into Go struct field .TTL of type float64")
        return int(value) if -_INT64 <= value < _INT64 else -_INT64  # amd64's float->int64 overflow
    raise ValueError(f"unexpected TTL type: {go_format_value(node)}")


def decode_request(data: bytes) -> dict:
    """The request's fields (``TTL`` in ns, ``NodeName``, ``NodePool``, and ``Region``/``AuthToken``
    when the body sets them), or ValueError with the upstream 400 text."""
    try:
        node = decode_first_value(data)
    except GoJSONError as exc:
        raise ValueError(str(exc)) from None
    out: dict = {"TTL": 0, "NodeName": "", "NodePool": ""}
    if node is None:
        return out
    if not isinstance(node, JObj):
        raise ValueError(f"json: cannot unmarshal {kind_name(node)} into Go value of type {ALIAS}")
    fields = {"TTL": "TTL", "NODENAME": "NodeName", "NODEPOOL": "NodePool", "REGION": "Region",
              "AUTHTOKEN": "AuthToken", "NAMESPACE": "Namespace", "IDEMPOTENCYTOKEN": "IdempotencyToken"}
    ttl_node = None
    first_error = None
    for key, value in node.pairs:
        name = fields.get(_fold(key))
        if name is None:
            continue
        if name == "TTL":
            ttl_node = value
        elif value is None:
            continue
        elif isinstance(value, JStr):
            out[name] = value.value
        elif first_error is None:
            first_error = f"json: cannot unmarshal {kind_name(value)} into Go struct field .{name} of type string"
    if first_error:
        raise ValueError(first_error)
    if ttl_node is not None:
        try:
            out["TTL"] = _ttl(ttl_node)
        except GoDurationError as exc:
            raise ValueError(str(exc)) from None
    return out


def identity_ttl(requested: int, default: int, maximum: int) -> int:
    """``ACLCreateClientIntroductionTokenRequest.IdentityTTL`` (nanoseconds)."""
    if requested == 0:
        return default
    return maximum if requested > maximum else requested


def claims(now: datetime.datetime, name: str, pool: str, region: str, ttl_ns: int) -> dict:
    """``GenerateNodeIntroductionIdentityClaims`` as the JWT payload (go-jose's field order)."""
    seconds = int(now.timestamp())
    out = {"nomad_node_pool": pool, "nomad_node_name": name,
           "sub": ":".join(("node-introduction", region, pool, name, "default")), "aud": AUDIENCE}
    if ttl_ns > 0:
        out["exp"] = int((now + datetime.timedelta(microseconds=ttl_ns // 1000)).timestamp())
    out.update({"nbf": seconds, "iat": seconds, "jti": str(uuid.uuid4())})
    return out


def create(state, request: Request) -> Response:
    """The endpoint (see the module doc)."""
    args = decode_with(request, decode_request, ValueError)
    if isinstance(args, ANSWERS):
        return args
    region = target_region(state, args.get("Region") or query_arg(request, "region"))
    if region == state.region and not state.leader:
        raise SchedulerError(500, NO_LEADER)
    secret = args["AuthToken"] if "AuthToken" in args else request_token(request)
    if not resolve_acl(state, secret).allow_node_write():
        raise SchedulerError(403, "Permission denied")
    profile = profile_of(state)
    ttl = identity_ttl(args["TTL"], profile.intro_default_ttl_ns, profile.intro_max_ttl_ns)
    payload = claims(state.clock.now(), args["NodeName"], args["NodePool"] or "default", region, ttl)
    return json_answer(request, {"JWT": profile.key.sign(payload)})
