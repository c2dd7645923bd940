"""The three ACME wrappers of ``acme_wrappers.go`` around a handler, and the answer they write.

* :func:`plain` (``acmeWrapper``): the context (:mod:`.context`), then the handler;
* :func:`parsed` (``acmeParsedWrapper``): also the JWS (:mod:`.jws`); a successful answer gets a fresh
  ``Replay-Nonce`` and the directory ``Link`` (``<...>;rel="index"``) and its data as a JSON body
  (keys sorted, Go's map order; status 200 unless the handler says 201);
* :func:`account_required` (``acmeAccountRequiredWrapper``): also a ``kid`` request (malformed
  ``cannot process request without a 'kid': ...``) of a valid account (``EnforceForExistingAccount``,
  unauthorized ``...: account in status: <s>``).

An error is the problem document with no extra header (upstream's ``TranslateError``: no nonce).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.logical import LogicalResponse, dumps
from pytest_schedpki.secrets.framework.router import LogicalRequest

from .context import AcmeContext, acme_context, join_url
from .jws import JwsContext, outer_context, parse_header, verify
from .problems import AcmeDisabled, AcmeProblem, disabled_response
from .state import Account, knobs, runtime, store

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


@dataclass
class Answer:
    """What an ACME handler returns: ``data`` (the JSON body) or ``raw`` (``(bytes, content type)``),
    ``status`` and ``headers``."""

    data: dict[str, Any] | None = None
    status: int = 200
    headers: dict[str, Any] = field(default_factory=dict)  # a list value: one header line per item
    raw: tuple[bytes, str] | None = None


def new_nonce(backend: PkiBackend) -> str:
    return runtime(backend).nonces.get(time.monotonic())


def _load_jwk(backend: PkiBackend, ctx: AcmeContext):
    def load(kid: str) -> tuple[dict[str, Any], str]:
        account = store(backend).accounts.get(kid)
        if account is None:
            raise AcmeProblem.wrap("accountDoesNotExist", "account not found")
        if account.directory != ctx.directory:
            raise AcmeProblem.lead("malformed", "account part of different ACME directory path")
        return account.jwk, account.jwk_raw
    return load


def parse_request(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext) -> tuple[JwsContext, Any]:
    """``ParseRequestParams`` (see :mod:`.jws`): the JWS context and the payload."""
    data = req.data
    if not data.sent("protected"):
        raise AcmeProblem.wrap("malformed", "missing required field 'protected'")
    protected = data.get("protected")
    header = parse_header(protected)
    user = outer_context(header, _load_jwk(backend, ctx))
    if not runtime(backend).nonces.redeem(user.nonce, time.monotonic()) or knobs(backend).refuse_nonce():
        raise AcmeProblem.wrap("badNonce", "invalid or reused nonce")
    expected = join_url(ctx.cluster_url, req.path)
    if not user.url:
        raise AcmeProblem.wrap("malformed", "missing required parameter 'url' in 'protected'")
    if user.url != expected:
        raise AcmeProblem.wrap("unauthorized", f"invalid value for 'url' in 'protected': got '{user.url}' expected "
                                               f"'{expected}'")
    if not data.sent("payload"):
        raise AcmeProblem.wrap("malformed", "missing required field 'payload'")
    if not data.sent("signature"):
        raise AcmeProblem.wrap("malformed", "missing required field 'signature'")
    payload = verify(user, protected, data.get("payload"), data.get("signature"))
    if not user.existing:
        user.kid = ""
    return user, payload


def require_account(backend: PkiBackend, ctx: AcmeContext, user: JwsContext) -> Account:
    """``requireValidAcmeAccount``."""
    account = store(backend).accounts.get(user.kid)
    if account is None:
        raise AcmeProblem("accountDoesNotExist", "error loading account: account not found: "
                                                 "the request specified an account that does not exist")
    if ctx.eab_policy == "always-required" and not account.eab:
        raise AcmeProblem("externalAccountRequired")
    if account.status != "valid":
        raise AcmeProblem.lead("unauthorized", f"account in status: {account.status}")
    return account


def _sorted(value: Any) -> Any:
    """Go's map order at every level (``json.Marshal`` of ``map[string]any``)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _to_response(answer: Answer) -> LogicalResponse:
    if answer.raw is not None:
        return LogicalResponse(raw=answer.raw, status=answer.status, headers=answer.headers or None)
    body = dumps(_sorted(answer.data or {})).encode()
    return LogicalResponse(raw=(body, "application/json"), status=answer.status, headers=answer.headers or None)


def _guarded(backend: PkiBackend, run: Callable[[], LogicalResponse]) -> LogicalResponse:
    try:
        return run()
    except AcmeDisabled:
        return disabled_response()
    except AcmeProblem as problem:
        return problem.response()


def plain(backend: PkiBackend, op: Callable[[LogicalRequest, AcmeContext], Answer]):
    """``acmeWrapper`` around ``op(req, ctx)``."""
    def handler(req: LogicalRequest) -> LogicalResponse:
        return _guarded(backend, lambda: _to_response(op(req, acme_context(backend, req))))
    return handler


def parsed(backend: PkiBackend, op: Callable[..., Answer], with_account: bool = False):
    """``acmeParsedWrapper`` (``with_account``: ``acmeAccountRequiredWrapper``) around
    ``op(req, ctx, user, payload[, account])``."""
    def run(req: LogicalRequest) -> LogicalResponse:
        ctx = acme_context(backend, req)
        user, payload = parse_request(backend, req, ctx)
        if with_account:
            if not user.existing:
                raise AcmeProblem.wrap("malformed", "cannot process request without a 'kid'")
            answer = op(req, ctx, user, payload, require_account(backend, ctx, user))
        else:
            answer = op(req, ctx, user, payload)
        answer.headers.setdefault("Replay-Nonce", new_nonce(backend))
        link = ctx.link_index()  # a second Link header after the handler's own (rel="up")
        answer.headers["Link"] = link if "Link" not in answer.headers else [answer.headers["Link"], link]
        return _to_response(answer)

    def handler(req: LogicalRequest) -> LogicalResponse:
        return _guarded(backend, lambda: run(req))
    return handler
