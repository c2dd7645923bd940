"""HTTP skin of the scheduler: Nomad's ``/v1/acl/auth-method(s)`` routes over a :class:`SchedulerState`.

Routes (Nomad's mux patterns): ``/v1/acl/auth-methods`` (GET: list), ``/v1/acl/auth-method``
(PUT/POST: create) and ``/v1/acl/auth-method/<name>`` (GET read, PUT/POST update, DELETE). The
checks run in upstream order:

1. empty name on the named path: ``400 missing ACL auth-method name`` (before the method check);
2. any other HTTP method: ``405 Invalid method``;
3. writes: ``413 http: request body too large`` over :data:`.request.MAX_BODY_SIZE` (a divergence: Nomad has
   no limit), ``400 Request body is empty`` / a Go JSON decode error (whatever the Content-Type), then
   ``400 ACL auth-method name does not match request path``, then the token (``403 Permission
   denied``), then validation; ``?region=`` is ignored - writes go to the authoritative region;
4. reads: query parameters (``stale``, ``per_page``, ``wait`` -> ``Invalid wait time``, ``index`` ->
   ``Invalid index``), ``?region=`` (unknown: ``500 No path to region``), the leader (without one
   and without ``?stale``: ``500 No cluster leader``), then the token (read only), then the
   blocking query.

Tokens come from ``X-Nomad-Token``, then ``X-Scheduler-Token`` (the API document's header), then
``Authorization: Bearer <t>``. Errors are plain text (``text/plain; charset=utf-8``); successes carry
``X-Nomad-Index`` (reads also ``X-Nomad-LastContact: 0`` and ``X-Nomad-KnownLeader: true``, which the
read 404 keeps). Paths are cleaned (``//`` collapsed, ``.``/``..`` resolved) and served directly.
The agent surface (JWKS, status, agent self, metrics, client-introduction tokens) is
:func:`.agent.routes.dispatch`; policies, roles, tokens, bootstrap and one-time tokens go to
:func:`.aclhttp.dispatch`; binding rules, login, OIDC and the built-in IdP to
:func:`.sso.http.dispatch`; what nobody routes is a bare 404.
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from .decode import DecodeError, decode_method
from .encode import method_json, sanitized_json, stubs_json
from .model import SchedulerError, sanitize, stub
from .request import (
    ANSWERS,
    PLAIN,
    LazyRequest,
    Reply,
    clean_path,
    decode_with,
    error_response,
    meta,
    parse_query,
    pretty,
    reply,
    request_token,
)
from .request import error as _error
from .state import SchedulerState

__all__ = ["PLAIN", "error_response", "make_app", "request_token"]

LIST_PATH = "/v1/acl/auth-methods"
CREATE_PATH = "/v1/acl/auth-method"
NAMED_PREFIX = "/v1/acl/auth-method/"
JSON = "application/json"


def _upsert(state: SchedulerState, request: Request, name: str) -> Reply | Response:
    method = decode_with(request, decode_method, DecodeError)
    if isinstance(method, ANSWERS):
        return method
    if name and name != method.Name:
        return _error(400, "ACL auth-method name does not match request path")
    result = state.apply_upsert(method, request_token(request), check_token=True)
    text = method_json(sanitize(result.method)) + ("\n" if pretty(request) else "")
    return reply(text, 200, JSON, {"X-Nomad-Index": str(result.index)})


def _delete(state: SchedulerState, request: Request, name: str) -> Reply | Response:
    index = state.delete_auth_method(name, request_token(request), check_token=True)
    return reply(b"", 200, None, {"X-Nomad-Index": str(index)})


def _read(state: SchedulerState, request: Request, name: str) -> Reply | Response:
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    region, index, wait_ns, stale = parsed
    result = state.query_get(name, region, request_token(request), index, wait_ns, stale)
    if result.value is None:
        return _error(404, "ACL auth-method not found", meta(result))
    text = sanitized_json(result.value) + ("\n" if pretty(request) else "")
    return reply(text, 200, JSON, meta(result))


def _list(state: SchedulerState, request: Request) -> Reply | Response:
    parsed = parse_query(request)
    if isinstance(parsed, ANSWERS):
        return parsed
    region, index, wait_ns, stale = parsed
    result = state.query_list(region, index, wait_ns, stale)
    text = stubs_json([stub(m) for m in result.value], pretty=pretty(request))
    return reply(text, 200, JSON, meta(result))


_ROUTES: tuple = ()  # the dispatchers below the auth-method routes, in order, once _load_routes ran


def _load_routes() -> tuple:
    """Import the agent, ACL-object and SSO routes (on the first request that gets past the auth-method
    paths, not at start-up: with their stores' parsers they are a third of the scheduler's imports) and
    keep their dispatchers in :data:`_ROUTES`. Threads that race here import under importlib's module
    locks and store the same tuple."""
    global _ROUTES
    from .aclhttp import dispatch as acl_dispatch
    from .agent.routes import dispatch as agent_dispatch
    from .sso.http import dispatch as sso_dispatch

    _ROUTES = (agent_dispatch, acl_dispatch, sso_dispatch)
    return _ROUTES


def _dispatch(state: SchedulerState, request: Request) -> Reply | Response:
    path = clean_path(request.path)
    verb = request.environ.get("REQUEST_METHOD", "")  # as sent: Go's method match is case-sensitive
    if path == LIST_PATH:
        return _list(state, request) if verb == "GET" else _error(405, "Invalid method")
    if path == CREATE_PATH:
        return _upsert(state, request, "") if verb in ("PUT", "POST") else _error(405, "Invalid method")
    if path.startswith(NAMED_PREFIX):
        name = path[len(NAMED_PREFIX):]
        if not name:
            return _error(400, "missing ACL auth-method name")
        if verb == "GET":
            return _read(state, request, name)
        if verb == "DELETE":
            return _delete(state, request, name)
        if verb in ("PUT", "POST"):
            return _upsert(state, request, name)
        return _error(405, "Invalid method")
    for dispatch in _ROUTES or _load_routes():
        answer = dispatch(state, request, path, verb)
        if answer is not None:
            return answer
    return reply(b"", 404, None)  # a bare 404: no Content-Type


def make_app(state: SchedulerState):
    """The scheduler's WSGI application over ``state``.

    :class:`~.model.SchedulerError` raised by the state becomes its plain-text status and body;
    any other exception escapes to the server guard (recorded, answered with :func:`error_response`).
    """
    def app(environ, start_response):
        request = LazyRequest(environ)
        try:
            response = _dispatch(state, request)
        except SchedulerError as exc:
            response = _error(exc.status, exc.text)
        return response(environ, start_response)

    return app
