"""WSGI application of the secrets service: OpenBao's HTTP layer in front of the mounts.

Request handling follows ``internal/http/logical.go`` and ``request_handling.go``:

* verbs: ``GET`` (``?list=<bool>`` turns it into a list), ``LIST``, ``POST``/``PUT`` (update),
  ``PATCH`` (needs ``application/merge-patch+json``, else 415), ``DELETE``; ``HEAD`` answers 405 with
  no body (200 on ``sys/health``); ``OPTIONS`` 400; any other verb 405 ``{"errors":[]}``;
* bodies: JSON whatever the Content-Type, form-encoded when declared so and not JSON-looking, empty
  body = ``{}``; query strings become the data of reads, lists and deletes; a ``POST``/``PUT`` whose
  Content-Type is ``application/ocsp-request`` (Go's ``mime.ParseMediaType``, parameters allowed) is
  not decoded, on any path: the handler gets no data and the raw body (``isOcspRequest``);
* tokens: ``X-Vault-Token`` wins when non-empty, then ``X-Secrets-Token`` (the API document's name;
  a real server ignores it), then ``Authorization: Bearer <t>`` (capital B, as OpenBao);
* order: mount lookup -> the wrapping token of ``sys/wrapping/{lookup,rewrap,unwrap}`` -> unauthenticated
  paths skip the token check -> expiries due -> token (403 ``permission denied``; one use taken) ->
  policy (403 multierror) -> unknown mount 404 -> the engine's router (-> a last use revokes the token).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from werkzeug.exceptions import ClientDisconnected
from werkzeug.wrappers import Request, Response
from werkzeug.wsgi import get_content_length

from ..golang.mime import MediaTypeError, parse_media_type
from ..golang.url import go_parse_query
from .acl import check_capability
from .framework.engine import MountWrite
from .framework.fields import ConversionError, JsonNumber, duration_seconds
from .framework.logical import (
    JSON_HEADERS,
    LogicalError,
    LogicalResponse,
    internal_error,
    json_response,
    multierror_inner,
    permission_denied,
    user_error,
)
from .framework.router import LogicalRequest, Router
from .http_headers import (
    EdgeRequest,
    RequestHeaders,
    allowed_headers,
    request_operation,
    request_query,
    unprintable_path,
)
from .jsonbody import parse_json_body
from .leases import expire_due, record_lease, revoke_token_leases
from .service import SecretsService
from .system.health import health_response
from .system.mounts.auth import SYS_AUTH_ROUTER
from .system.namespaces import check_namespace, check_restricted, echo_namespace
from .system.path_help import help_requested, help_response
from .system.routes import SYS_ROUTER, TOKEN_ROUTER
from .system.seal import SERVED_WHILE_SEALED
from .system.wrapping import WRAPPING_TOKEN_PATHS, check_wrapping_token

# the built-in token method, by mount name under ``auth/``; the other methods are mounts enabled
# through ``sys/auth`` (service.auth_mounts). The token method's paths are still defined in sys.py.
AUTH_METHODS: dict[str, Router] = {"token": TOKEN_ROUTER}

MERGE_PATCH = "application/merge-patch+json"
OCSP_REQUEST = "application/ocsp-request"
MAX_REQUEST_SIZE = 32 * 1024 * 1024  # OpenBao's default max_request_size (bytes)


def error_response(exc: BaseException) -> Response:
    """The answer for an exception that escaped a handler: 500 with a multierror text."""
    return internal_error(f"internal error in the double: {type(exc).__name__}: {exc}").to_response()


def make_app(service: SecretsService):
    """The WSGI callable serving ``/v1/...`` for ``service``."""

    def app(environ: dict, start_response):
        request = EdgeRequest(environ, MAX_REQUEST_SIZE + 1)  # one byte more tells a chunked body too large
        if (refused := unprintable_path(request.path)) is not None:  # go-cleanhttp's, around OpenBao's handler
            return refused(environ, start_response)
        try:
            response = handle(service, request)
        except LogicalError as exc:
            response = exc.to_response()
        return response(environ, echo_namespace(environ, start_response))

    return app


def _is_form(head: bytes, content_type: str) -> bool:
    if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        return False
    stripped = head.lstrip(b" \t\r\n")
    return stripped[:1] not in (b"{", b"[")


def _request_data(request: Request) -> bytes:
    """``request.get_data(cache=True)`` under ``max_content_length``: read straight from the journal's
    body wrapper (:mod:`pytest_schedpki.wire.middleware`) when it is ``wsgi.input``, without
    werkzeug's ``LimitedStream`` and its 64 KiB buffer per read (~15 us per request)."""
    cached = request.environ.get("schedpki.body")
    if cached is not None:
        return cached
    read_upto = getattr(request.environ.get("wsgi.input"), "read_upto", None)
    if read_upto is None or not request.environ.get("wsgi.input_terminated"):
        return request.get_data(cache=True)
    data = request.environ["schedpki.body"] = read_upto(request.max_content_length)
    return data


def _data_or_empty(request: Request) -> bytes:
    """The body read so far; a broken one reads as empty here (the body parser reports it)."""
    try:
        return _request_data(request)
    except ClientDisconnected:
        return b""


def _body(request: Request, operation: str) -> dict[str, Any]:
    try:
        body = _request_data(request)
    except ClientDisconnected:  # shorter than its Content-Length: Go's body read fails first
        raise user_error("failed to decode JSON input: unexpected EOF") from None
    if operation == "update" and _is_form(body[:512], request.environ.get("CONTENT_TYPE", "")):
        data: dict[str, Any] = {}
        for key, values in go_parse_query(body.decode("latin-1")).items():  # r.ParseForm
            data[key] = values[0] if len(values) == 1 else values
        return data
    return parse_json_body(body)


def _is_ocsp_request(request: Request) -> bool:
    """``isOcspRequest``: the Content-Type parses and its media type is ``application/ocsp-request``."""
    content_type = request.environ.get("CONTENT_TYPE", "")
    if "ocsp" not in content_type.lower():  # no parse can give that media type (most writes: JSON)
        return False
    try:
        return parse_media_type(content_type)[0] == OCSP_REQUEST
    except MediaTypeError:
        return False


def _wrap_ttl(request: Request) -> int:
    """``X-Vault-Wrap-TTL`` in seconds (0: no wrapping), read as OpenBao's ``requestWrapInfo`` does:
    after the body and before the token check or any handler, so a bad value refuses the request
    (400 ``error parsing X-Vault-Wrap-TTL header: <why>``) without side effects."""
    header = request.environ.get("HTTP_X_VAULT_WRAP_TTL", "")
    if not header:
        return 0
    try:
        ttl = duration_seconds(header, signed=True)
    except ConversionError as exc:
        raise user_error(f"error parsing X-Vault-Wrap-TTL header: {exc}") from None
    if ttl < 0:
        raise user_error("error parsing X-Vault-Wrap-TTL header: requested wrap ttl cannot be negative")
    return ttl


def request_token(request: Request) -> str | None:
    """The token a request carries: X-Vault-Token, else X-Secrets-Token, else ``Bearer`` auth."""
    environ = request.environ  # read as werkzeug's EnvironHeaders.get does, without building it
    for key in ("HTTP_X_VAULT_TOKEN", "HTTP_X_SECRETS_TOKEN"):
        value = environ.get(key, "")
        if value:
            return value
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if auth.startswith("Bearer "):
        return auth[len("Bearer "):].strip()
    return None


def _route(service: SecretsService, rel: str) -> tuple[Router | None, str, Any]:
    if rel == "sys/auth" or rel.startswith("sys/auth/"):
        return SYS_AUTH_ROUTER, rel[4:], None
    if rel == "sys" or rel.startswith("sys/"):
        return SYS_ROUTER, rel[4:], None
    if rel.startswith("auth/"):
        method, slash, inner = rel[len("auth/"):].partition("/")
        router = AUTH_METHODS.get(method)
        if router is not None and slash:
            return router, inner, None
        found_auth = service.find_auth_mount(rel[len("auth/"):])
        if found_auth is not None:
            return found_auth[0].backend.router, found_auth[1], found_auth[0]
        return None, rel, None
    found = service.find_mount(rel)
    if found is None:
        return None, rel, None
    mount, inner = found
    return mount.backend.router, inner, mount


def _dot_segments(path: str) -> bool:
    return any(segment in (".", "..") for segment in path.split("/"))


def _clean_path(request: Request) -> str:
    """The request path with ``//`` collapsed when written as such (``%2F%2F`` stays) and dot segments
    written as such resolved (Go's mux redirects to the cleaned path; see docs/divergences.md); dot
    segments that only appear after percent-decoding (``one%2F..%2Ftwo``) are refused as OpenBao does:
    400 ``relative paths not supported``."""
    path = request.path
    if "//" not in path and "." not in path:  # nothing to collapse or resolve
        return path
    raw = (request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or "").split("?", 1)[0]
    if "//" in path and (not raw or "//" in raw):  # %2F%2F is no empty segment to Go's mux: kept
        path = re.sub("/{2,}", "/", path)
    if not _dot_segments(path):
        return path
    if raw and _dot_segments(raw):
        return posixpath.normpath(path) + ("/" if path.endswith("/") else "")
    raise user_error("relative paths not supported")


def _serves_head(service: SecretsService, rel: str) -> bool:
    """Whether the path ``rel`` has a ``HEAD`` handler (OpenBao's ``logical.HeaderOperation``: the PKI
    engine's ``acme/new-nonce``); every other ``HEAD`` is 405 with no body."""
    router, inner, _ = _route(service, rel)
    found = router.match(inner) if router is not None else None
    return bool(found and "head" in found[0].operations)


def handle(service: SecretsService, request: Request) -> Response:
    """Answer one request (raises LogicalError for error answers)."""
    check_restricted(request.environ, request.path)  # before the path is cleaned, as OpenBao's handler
    path = _clean_path(request)
    if not path.startswith("/v1/"):
        return json_response({"errors": []}, 404)
    rel = path[len("/v1/"):]
    environ = request.environ  # headers read as werkzeug's EnvironHeaders.get does, without building it
    if rel == "sys/health":  # answered by OpenBao's HTTP layer itself, after the namespace header only
        check_namespace(environ.get("HTTP_X_VAULT_NAMESPACE"), rel)
        return health_response(service, environ)
    query = request_query(request)
    operation, rel = request_operation(request, rel, query)
    check_namespace(environ.get("HTTP_X_VAULT_NAMESPACE"), rel)
    if operation == "head" and not _serves_head(service, rel):
        raise LogicalError(405, [], body=b"", headers={"Content-Type": "application/json", **JSON_HEADERS})
    if operation == "patch":
        try:  # OpenBao: mime.ParseMediaType first (400 with Go's text), then the comparison (415)
            content_type = parse_media_type(environ.get("CONTENT_TYPE", ""))[0]
        except MediaTypeError as exc:
            raise LogicalError(400, [str(exc)]) from None
        if content_type != MERGE_PATCH:
            raise LogicalError(415, [f"PATCH requires Content-Type of {MERGE_PATCH}, provided {content_type}"])
    content_length = get_content_length(environ) if "CONTENT_LENGTH" in environ else None  # werkzeug's, once
    if content_length is not None and content_length > MAX_REQUEST_SIZE:
        raise LogicalError(413, ["http: request body too large"])
    if (content_length is None and "HTTP_TRANSFER_ENCODING" in environ
            and len(_data_or_empty(request)) > MAX_REQUEST_SIZE):  # without either header the body is empty
        raise LogicalError(413, ["http: request body too large"])  # chunked: Go's MaxBytesReader
    http_body = None
    if operation == "update" and _is_ocsp_request(request):
        try:  # handed to the handler as is (OpenBao's passHTTPReq); a body cut short reads as empty
            http_body = _request_data(request)
        except ClientDisconnected:
            http_body = b""
        raw: dict[str, Any] = {}
    else:
        raw = _body(request, operation) if operation in ("update", "patch") else query
    wrap_ttl = (0 if "HTTP_X_VAULT_WRAP_TTL" not in environ or rel.strip("/") in ("sys/health", "sys/seal-status")
                else _wrap_ttl(request))  # those two: own handlers

    result = dispatch(service, operation, rel, raw, request_token(request),
                      RequestHeaders(environ), remote_addr=request.remote_addr or "",
                      help=bool(environ.get("QUERY_STRING")) and help_requested(request.query_string), http_body=http_body)
    if wrap_ttl > 0 and result.status == 200 and result.raw is None and not result.bare:
        wrap_info = service.wrap(result, wrap_ttl, rel.rstrip("/"))
        if result.auth:
            wrap_info["wrapped_accessor"] = result.auth.get("accessor", "")
        return json_response({"request_id": "", "lease_id": "", "renewable": False, "lease_duration": 0,
                              "data": None, "wrap_info": wrap_info, "warnings": None, "auth": None})
    return result.to_response()


# the paths whose ``token`` parameter OpenBao reads before anything else (a value that is not a string:
# 403 ``invalid token``, whatever the request's own token)
BODY_TOKEN_PATHS = frozenset({"auth/token/lookup", "auth/token/renew", "auth/token/revoke",
                              "auth/token/revoke-orphan"})


def dispatch(service: SecretsService, operation: str, rel: str, raw: dict[str, Any], token_id: str | None,
             headers: dict[str, str] | None = None, remote_addr: str = "", help: bool = False,
             http_body: bytes | None = None) -> LogicalResponse:
    """The logical pipeline behind the HTTP layer, also used by seeds and fixtures (no HTTP).

    ``operation`` is read/list/update/delete/patch; ``rel`` the path after ``/v1/`` (list paths
    get their trailing ``/`` here if missing); ``raw`` the request data; ``help``: answer the
    route's help (:mod:`.path_help`) after the token checks instead of running it. Returns the handler's
    LogicalResponse; raises LogicalError for every error answer (auth, routing, validation).
    ``remote_addr`` is the client's IP address (AppRole's CIDR rules read it); ``http_body`` the
    undecoded body of an ``application/ocsp-request`` write (``LogicalRequest.http_body``).

    Token lifetimes (``request_handling.go``): expiries due by now are applied first
    (:func:`~.leases.expire_due`); a request that needs a token takes one of its uses, atomically with
    the lookup and whatever the answer (``UseToken``), and the request that takes the last one is
    followed by the token's revocation (:func:`_last_use`).
    """
    if operation == "list" and not rel.endswith("/"):
        rel += "/"
    router, inner, mount = _route(service, rel)
    if service.sealed and rel.rstrip("/") not in SERVED_WHILE_SEALED:
        raise LogicalError(503, ["Vault is sealed"])
    if operation in ("update", "patch") and rel.endswith("/") and not help:  # handleCancelableRequest, first
        raise user_error("cannot write to a path ending in '/'")
    if rel in BODY_TOKEN_PATHS and "token" in raw and (not isinstance(raw["token"], str)
                                                       or isinstance(raw["token"], JsonNumber)):
        raise LogicalError(403, ["invalid token"])  # request_handling.go: before the token is checked
    if rel in WRAPPING_TOKEN_PATHS:
        check_wrapping_token(service, raw, token_id)
    found = router.match(inner) if router is not None else None  # once: every check below reads it
    unauthenticated = router is not None and router.is_unauthenticated(inner, found)
    token = None
    if not unauthenticated:
        with service.lock:
            now = expire_due(service)
            token = service.tokens.lookup(token_id, now)
            if token is not None:  # request_handling.go: the use is taken even if the request then fails
                token = service.tokens.use(token, now)
        if token is None:
            raise permission_denied()
        if token.num_uses < 0:
            return _last_use(service, token, lambda: _checked(service, operation, rel, raw, token, headers,
                                                              remote_addr, help, router, inner, mount, found,
                                                              unauthenticated, http_body))
    else:
        with service.lock:
            expire_due(service)
    return _checked(service, operation, rel, raw, token, headers, remote_addr, help, router, inner, mount, found,
                    unauthenticated, http_body)


LAST_USE_LEASED = ("Secret cannot be returned; token had one use left, so leased credentials were immediately "
                   "revoked.")


def _last_use(service: SecretsService, token, answer) -> LogicalResponse:
    """The request that took a token's last use (``num_uses`` now ``-1``): answered, then the token is
    revoked with its tree and leases (``handleRequest``'s deferred ``LazyRevoke``); an answer that
    carries a lease is replaced by 400 ``Secret cannot be returned; token had one use left, so leased
    credentials were immediately revoked.``"""
    try:
        result = answer()
    finally:
        with service.lock:
            removed = service.tokens.revoke(token.id)
            revoke_token_leases(service, {t.id for t in removed})
    if result is not None and result.lease_id:
        raise user_error(LAST_USE_LEASED)
    return result


def _checked(service: SecretsService, operation: str, rel: str, raw: dict[str, Any], token, headers, remote_addr: str,
             help: bool, router, inner: str, mount, found, unauthenticated: bool,
             http_body: bytes | None = None) -> LogicalResponse:
    """The policy check and the handler, for a request whose token was found (or that needs none);
    ``http_body`` as :func:`dispatch` takes it."""
    if not unauthenticated:
        sudo = router is not None and router.is_sudo(inner, found)
        capability = operation
        if router is not None and operation == "update":  # only an update's capability depends on state
            with service.lock:
                capability = router.capability_for(operation, inner, mount.backend if mount else None, found)
        if help:
            pass  # policy/acl.go AllowOperation: help is always allowed, sudo paths included
        elif router is not None and router.is_any_token(inner, found):
            pass  # the handler checks the token's access itself
        elif not check_capability(service.policies, token, rel.rstrip("/") if operation != "list" else rel, capability, sudo,
                                  raw if isinstance(raw, dict) else None):
            raise permission_denied(multierror=True)
    if router is None:
        raise LogicalError(404, [f'no handler for route "{rel}". route entry not found.'])
    if help:  # ?help=<anything>: the route's help, whatever the method (path_help.py)
        return help_response(router, inner)

    def make_request(**kwargs) -> LogicalRequest:
        return LogicalRequest(mount=mount, service=service, token=token,
                              headers=headers if isinstance(headers, RequestHeaders) else dict(headers or {}),
                              remote_addr=remote_addr, http_body=http_body, **kwargs)

    with service.lock:
        try:
            if mount is None or operation not in ("update", "patch", "delete"):
                result = router.handle(operation, inner, raw, make_request, found)
            else:  # OpenBao runs a mount's write in a storage transaction: a refused one leaves no trace
                write = MountWrite(mount.backend)
                rollback = False
                try:
                    result = router.handle(operation, inner, raw, make_request, found)
                except LogicalError as exc:
                    rollback = not exc.keep_state  # a handler may say its writes stand
                    raise
                finally:
                    write.end(rollback)
        except LogicalError as exc:
            if unauthenticated and mount is not None:  # a login path upstream: errors come back unwrapped
                exc.errors = [multierror_inner(e) for e in exc.errors]
            raise
        if result is not None and result.lease_id and mount is not None and token is not None:
            serial = (result.data or {}).get("serial_number", "")
            record_lease(service, result.lease_id, mount.path, serial, token.id, result.lease_duration)
    if result is None:
        raise LogicalError(404, [])
    if result.headers:
        result.headers = allowed_headers(mount, result.headers)
    return result
