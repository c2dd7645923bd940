"""``authorization/:id`` and ``challenge/:id/:type`` (``path_acme_authorizations.go``,
``path_acme_challenges.go``, ``acme_authorizations.go``).

An authorization answers ``identifier`` (without a wildcard's ``*.``), ``status``, ``wildcard``,
``expires`` once valid and its ``challenges`` (``type``, ``url``, ``status``, ``token``, ``validated``,
``error``). A payload ``{"status": "deactivated"}`` deactivates a pending or valid one (its challenges
become invalid). A challenge POST with a payload (``{}``) accepts it: the challenge becomes
``processing`` and :mod:`.validation` checks it in the background; POST-as-GET only reads it. The
challenge answer carries ``Link: <authorization>;rel="up"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.router import LogicalRequest

from .accounts import go_type
from .context import AcmeContext
from .jws import JwsContext
from .pipeline import Answer
from .problems import AcmeProblem
from .state import Account, Authorization, Challenge, Identifier, new_token, new_uuid, owned, store, writable
from .validation import accept

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def authorization_url(ctx: AcmeContext, authz_id: str) -> str:
    return ctx.url("authorization", authz_id)


def new_authorization(kid: str, identifier: Identifier) -> Authorization:
    """``generateAuthorization``."""
    types = ["http-01", "dns-01", "tls-alpn-01"]
    if identifier.type == "ip":
        types = ["http-01"]
    elif identifier.wildcard:
        types = ["dns-01"]
    return Authorization(id=new_uuid(), account=kid, identifier=identifier, wildcard=identifier.wildcard,
                         challenges=[Challenge(type=t, token=new_token()) for t in types])


def challenge_data(ctx: AcmeContext, authz: Authorization, challenge: Challenge) -> dict[str, Any]:
    data: dict[str, Any] = {"type": challenge.type, "url": ctx.url("challenge", authz.id, challenge.type),
                            "status": challenge.status, "token": challenge.token}
    if challenge.validated:
        data["validated"] = challenge.validated
    if challenge.error:
        data["error"] = challenge.error
    return data


def authorization_data(ctx: AcmeContext, authz: Authorization) -> dict[str, Any]:
    data: dict[str, Any] = {"identifier": authz.identifier.network(False), "status": authz.status,
                            "wildcard": authz.wildcard}
    if authz.expires:
        data["expires"] = authz.expires
    if authz.challenges:
        data["challenges"] = [challenge_data(ctx, authz, c) for c in authz.challenges]
    return data


def load_authorization(backend: PkiBackend, user: JwsContext, authz_id: str, prefix: str) -> Authorization:
    authz = store(backend).authorizations.get(authz_id)
    if authz is None or authz.account != user.kid:
        raise AcmeProblem.wrap("malformed", f"{prefix}: authorization does not exist")
    return authz


def authorization(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
                  account: Account) -> Answer:
    """``acmeAuthorizationHandler``."""
    authz = load_authorization(backend, user, req.data.get("auth_id"), "failed to load authorization")
    status = ""
    if data and "status" in data:
        if not isinstance(data["status"], str):
            raise AcmeProblem.wrap("malformed", f"bad type ({go_type(data['status'])}) for value 'status'")
        status = data["status"]
    if not data:
        return Answer(data=authorization_data(ctx, authz))
    if status != "deactivated":
        raise AcmeProblem("malformed")
    if authz.status not in ("pending", "valid"):
        raise AcmeProblem.wrap("malformed", f"unable to deactivate authorization in '{authz.status}' status")
    authz = owned(writable(backend), "authorizations", authz.id)
    authz.status = "deactivated"
    for challenge in authz.challenges:
        challenge.status = "invalid"
    return Answer(data=authorization_data(ctx, authz))


def challenge(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
              account: Account) -> Answer:
    """``acmeChallengeHandler``."""
    authz = load_authorization(backend, user, req.data.get("auth_id"), "failed to load authorization")
    kind = req.data.get("challenge_type")
    found = next((c for c in authz.challenges if c.type == kind), None)
    if found is None:
        raise AcmeProblem.wrap("malformed", f"unknown challenge of type '{kind}' in authorization")
    if data:
        raise AcmeProblem.wrap("malformed", "unexpected request parameters")
    if data is not None:
        try:
            authz, found = accept(backend, ctx, user, authz, found)
        except AcmeProblem as exc:
            raise AcmeProblem(exc.name, f"error submitting challenge for validation: {exc.detail}") from None
    return Answer(data=challenge_data(ctx, authz, found),
                  headers={"Link": f'<{authorization_url(ctx, authz.id)}>;rel="up"'})
