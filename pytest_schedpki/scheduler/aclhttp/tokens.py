"""HTTP routes for ACL tokens, bootstrap and one-time tokens (``command/agent/acl_endpoint.go``:
``ACLTokensRequest``, ``ACLTokenBootstrap``, ``ACLTokenSpecificRequest``, ``aclTokenCrud``,
``aclTokenQuery``, ``aclTokenSelf``, ``aclTokenUpdate``, ``aclTokenDelete``, ``UpsertOneTimeToken``,
``ExchangeOneTimeToken``; the mux in ``command/agent/http.go``).

* ``/v1/acl/bootstrap`` (PUT/POST): an empty body or ``{"BootstrapSecret": "<uuid>"}``; a body
  that does not decode is ``400 failed to decode request body: <Go text>``;
* ``/v1/acl/tokens`` (GET): the list (``prefix``, ``filter``, ``per_page``, ``next_token``, ``reverse``);
* ``/v1/acl/token`` (PUT/POST): create; ``/v1/acl/token/self`` (GET);
* ``/v1/acl/token/<accessor>``: GET read, PUT/POST update (body AccessorID must equal the path:
  ``400 ACL token accessor does not match request path``), DELETE; an empty accessor is
  ``400 Missing Token Accessor``;
* ``/v1/acl/token/onetime`` (PUT/POST, no body) and ``/v1/acl/token/onetime/exchange`` (PUT/POST,
  ``{"OneTimeSecretID": ...}``);
* any other method: ``405 Invalid method``. Writes answer the token (or ``{"OneTimeToken": ...}``,
  ``{"Token": ...}``) with ``X-Nomad-Index``; the delete an empty 200.
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from ...golang.strconv import parse_int
from ...golang.time import GoTime
from ..aclstore import bootstrap as boot
from ..aclstore import one_time, tokens
from ..aclstore.objects import encoding_json, token_to_dict
from ..aclstore.token_list import query_tokens
from ..request import (
    ANSWERS,
    decode_with,
    error,
    meta,
    parse_query,
    pretty,
    query_arg,
    read_body,
    request_token,
)
from ..sso.body import BodyError, decode_body, decode_struct, empty_response, json_response
from ..views import Remembered
from .token_body import decode_token

ANONYMOUS_TOKEN = {"ExpirationTTL": "", "AccessorID": "anonymous", "SecretID": "", "Name": "Anonymous Token",
                   "Type": "client", "Policies": ["anonymous"], "Roles": None, "Global": False, "Hash": None,
                   "CreateTime": "0001-01-01T00:00:00Z", "ExpirationTime": None, "CreateIndex": 0, "ModifyIndex": 0}
_READ_META = {"X-Nomad-KnownLeader": "true", "X-Nomad-LastContact": "0"}
_WRITE_VERBS = ("PUT", "POST")


def _token_text(token, names: tuple[str, ...]) -> str:
    return encoding_json(token_to_dict(token, dict(zip(token.Roles or (), names, strict=True))))


# a stored token's JSON per token object and the current names of its roles (tokens are frozen and
# replaced on write; a role's rename changes ``names``); list entries per token object
_TOKEN_TEXT = Remembered(_token_text)
_STUB_TEXT = Remembered(lambda token: encoding_json(token_to_dict(token, {}, stub=True)))
_ANONYMOUS_TEXT = encoding_json(ANONYMOUS_TOKEN)


def token_json(state, token, request: Request) -> str:
    """The full token (with its SecretID) as Nomad writes it, a newline after it with ``?pretty``."""
    roles = state.acl.roles
    names = tuple(roles[i].Name if i in roles else "" for i in token.Roles or ())
    return _TOKEN_TEXT(token, names) + ("\n" if pretty(request) else "")


def _time(value) -> str:
    return GoTime.from_datetime(value).rfc3339nano()


def _bootstrap(state, request: Request) -> Response:
    body = read_body(request)
    if isinstance(body, ANSWERS):
        return body
    secret = ""
    if body is not None:  # Nomad decodes only when Content-Length != 0
        try:
            secret = decode_struct(body, "ACLTokenBootstrapRequest", {"BootstrapSecret": "string",
                                                                      "ResetIndex": "uint64"}).get("BootstrapSecret", "")
        except BodyError as exc:
            return error(400, f"failed to decode request body: {exc}")
    index, token = boot.bootstrap(state, secret)
    return json_response(token_json(state, token, request), index)


def _list(state, request: Request) -> Response:
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    _, index, wait_ns, _ = parsed
    per_page = parse_int(query_arg(request, "per_page") or "0", 10, 32)  # parse_query checked it
    result = query_tokens(state, request_token(request), query_arg(request, "prefix"), query_arg(request, "filter"),
                          max(per_page, 0), query_arg(request, "next_token"), query_arg(request, "reverse") == "true",
                          index, wait_ns)
    page = result.value
    body = "[" + ",".join(_STUB_TEXT(t) for t in page.stubs) + "]"  # = encoding_json of the list
    headers = meta(result)
    if page.next_token:
        headers["X-Nomad-NextToken"] = page.next_token
    return json_response(body, None, headers)


def _read(state, request: Request, accessor: str) -> Response:
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    _, index, wait_ns, _ = parsed
    result = tokens.query_token(state, accessor, request_token(request), index, wait_ns)
    if result.value is None:
        return error(404, "ACL token not found", meta(result))
    return json_response(token_json(state, result.value, request), None, meta(result))


def _self(state, request: Request) -> Response:
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    token = tokens.whoami(state, request_token(request))
    if token is None:
        return json_response(_ANONYMOUS_TEXT, 0, _READ_META)
    return json_response(token_json(state, token, request), token.ModifyIndex, _READ_META)


def _write(state, request: Request, accessor: str) -> Response:
    values = decode_with(request, decode_token, BodyError)
    if isinstance(values, ANSWERS):
        return values
    if accessor and values.AccessorID != accessor:
        return error(400, "ACL token accessor does not match request path")
    index, token = tokens.upsert_token(state, values, request_token(request))
    return json_response(token_json(state, token, request), index)


def _one_time(state, request: Request, exchange: bool) -> Response:
    if not exchange:
        index, ott = one_time.upsert_one_time_token(state, request_token(request))
        body = {"OneTimeToken": {"OneTimeSecretID": ott.OneTimeSecretID, "AccessorID": ott.AccessorID,
                                 "ExpiresAt": _time(ott.ExpiresAt), "CreateIndex": ott.CreateIndex,
                                 "ModifyIndex": ott.ModifyIndex},
                "Index": index}
        return json_response(encoding_json(body) + ("\n" if pretty(request) else ""), index)
    values = decode_body(request, "OneTimeTokenExchangeRequest", {"OneTimeSecretID": "string"})
    if isinstance(values, ANSWERS):
        return values
    index, token = one_time.exchange_one_time_token(state, values.get("OneTimeSecretID", ""))
    body = '{"Token":' + token_json(state, token, request).rstrip("\n") + f',"Index":{index}}}'
    return json_response(body + ("\n" if pretty(request) else ""), index)


def dispatch(state, request: Request, path: str, verb: str) -> Response | None:
    """Answer a token, bootstrap or one-time token route, else None."""
    if path == "/v1/acl/bootstrap":
        return _bootstrap(state, request) if verb in _WRITE_VERBS else error(405, "Invalid method")
    if path in ("/v1/acl/token/onetime", "/v1/acl/token/onetime/exchange"):
        if verb not in _WRITE_VERBS:
            return error(405, "Invalid method")
        return _one_time(state, request, path.endswith("/exchange"))
    if path == "/v1/acl/tokens":
        return _list(state, request) if verb == "GET" else error(405, "Invalid method")
    if path == "/v1/acl/token":
        return _write(state, request, "") if verb in _WRITE_VERBS else error(405, "Invalid method")
    if path == "/v1/acl/token/self":
        return _self(state, request) if verb == "GET" else error(405, "Invalid method")
    if not path.startswith("/v1/acl/token/"):
        return None
    accessor = path[len("/v1/acl/token/"):]
    if not accessor:
        return error(400, "Missing Token Accessor")
    if verb == "GET":
        return _read(state, request, accessor)
    if verb in _WRITE_VERBS:
        return _write(state, request, accessor)
    if verb == "DELETE":
        return empty_response(tokens.delete_token(state, accessor, request_token(request)))
    return error(405, "Invalid method")
