"""The ACME path table under the four directory prefixes (``buildAcmeFrameworkPaths``), with the two
handlers that need no JWS: ``directory`` (GET) and ``new-nonce`` (HEAD: 200, GET: 204; no body, no
Content-Type; ``Replay-Nonce``, ``Link``, ``Cache-Control: no-store``).

Every ACME path is unauthenticated (``PathsSpecial.Unauthenticated`` of ``backend.go``); ``new-eab``,
``eab/`` and ``eab/:key_id`` need a token. A disabled ACME answers an empty 404.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.fields import INT, STRING, Field
from pytest_schedpki.secrets.framework.router import Handler, LogicalRequest, Path

from ..issuance.roles import NAME_RE

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend
    from .context import AcmeContext
    from .pipeline import Answer

PREFIXES = ("acme", rf"roles/(?P<role>{NAME_RE})/acme", rf"issuer/(?P<issuer_ref>{NAME_RE})/acme",
            rf"issuer/(?P<issuer_ref>{NAME_RE})/roles/(?P<role>{NAME_RE})/acme")
UUID = r"[0-9A-Za-z]{8}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{12}"
JWS_FIELDS = {"protected": Field(STRING), "payload": Field(STRING), "signature": Field(STRING)}


def unauthenticated_patterns() -> list[str]:
    """The ``PathsSpecial.Unauthenticated`` entries of the ACME paths."""
    names = ("directory", "new-nonce", "new-account", "new-order", "revoke-cert", "key-change", "account/+",
             "authorization/+", "challenge/+/+", "orders", "order/+", "order/+/finalize", "order/+/cert")
    return [f"{prefix}acme/{name}" for prefix in ("", "issuer/+/", "roles/+/", "issuer/+/roles/+/") for name in names]


def _directory(req: LogicalRequest, ctx: AcmeContext) -> Answer:
    from .pipeline import Answer

    return Answer(data={
        "newNonce": ctx.url("new-nonce"), "newAccount": ctx.url("new-account"), "newOrder": ctx.url("new-order"),
        "revokeCert": ctx.url("revoke-cert"), "keyChange": ctx.url("key-change"),
        "meta": {"externalAccountRequired": ctx.eab_policy in ("always-required", "new-account-required")}})


def _nonce(backend: PkiBackend):
    from .pipeline import Answer, new_nonce

    def handler(req: LogicalRequest, ctx: AcmeContext) -> Answer:
        headers = {"Cache-Control": "no-store", "Replay-Nonce": new_nonce(backend), "Link": ctx.link_index()}
        return Answer(raw=(b"", ""), status=200 if req.operation == "head" else 204, headers=headers)
    return handler


def _fields(prefix: str, extra: dict[str, Field] | None = None) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    if "(?P<role>" in prefix:
        fields["role"] = Field(STRING)
    if "(?P<issuer_ref>" in prefix:
        fields["issuer_ref"] = Field(STRING)
    return {**fields, **(extra or {})}


def _handlers(backend: PkiBackend) -> dict[str, Handler]:
    """The handlers of the ACME and EAB paths, by name (imports the JWS pipeline: PyJWT)."""
    from . import accounts, authorizations, eab, orders, revoke
    from .pipeline import parsed, plain

    def required(op):
        return parsed(backend, lambda req, ctx, user, data, acct: op(backend, req, ctx, user, data, acct), True)

    return {
        "list-eab": lambda req: eab.list_eab(backend, req), "delete-eab": lambda req: eab.delete_eab(backend, req),
        "new-eab": lambda req: eab.new_eab(backend, req),
        "directory": plain(backend, _directory), "new-nonce": plain(backend, _nonce(backend)),
        "account": parsed(backend, lambda req, ctx, user, data: accounts.handle_account(backend, req, ctx, user, data)),
        "new-order": required(orders.new_order), "orders": required(orders.list_orders),
        "order": required(orders.get_order), "finalize": required(orders.finalize),
        "cert": required(orders.certificate), "authorization": required(authorizations.authorization),
        "challenge": required(authorizations.challenge),
        "revoke-cert": parsed(backend, lambda req, ctx, user, data: revoke.revoke_cert(backend, req, ctx, user, data)),
    }


def paths(backend: PkiBackend) -> list[Path]:
    """Every ACME and EAB path. The handlers behind them, and the JWS pipeline, PyJWT and the
    certificate code they import, are built on the first ACME request to the mount: a PKI mount that
    never sees one (most test sessions) does not import them (~25 ms and ~2,500 objects)."""
    built: dict[str, Handler] = {}

    def later(name: str) -> Handler:
        def handler(req: LogicalRequest):
            if not built:
                built.update(_handlers(backend))
            return built[name](req)
        return handler

    table: list[Path] = [
        Path("eab/?", {"after": Field(STRING, ""), "limit": Field(INT, -1)}, {"list": later("list-eab")}),
        Path(rf"eab/(?P<key_id>{UUID})", {"key_id": Field(STRING)}, {"delete": later("delete-eab")}),
    ]
    directory, nonce, account = later("directory"), later("new-nonce"), later("account")
    for prefix in PREFIXES:
        jws = _fields(prefix, JWS_FIELDS)
        table += [
            Path(f"{prefix}/directory", _fields(prefix), {"read": directory}, unauthenticated=True),
            Path(f"{prefix}/new-nonce", _fields(prefix), {"read": nonce, "head": nonce}, unauthenticated=True),
            Path(f"{prefix}/new-account", jws, {"update": account}, unauthenticated=True),
            Path(rf"{prefix}/account/(?P<kid>{UUID}?)", {**jws, "kid": Field(STRING)}, {"update": account},
                 unauthenticated=True),
            Path(f"{prefix}/new-order", jws, {"update": later("new-order")}, unauthenticated=True),
            Path(f"{prefix}/orders", jws, {"update": later("orders")}, unauthenticated=True),
            Path(rf"{prefix}/order/(?P<order_id>{UUID}?)", {**jws, "order_id": Field(STRING)},
                 {"update": later("order")}, unauthenticated=True),
            Path(rf"{prefix}/order/(?P<order_id>{UUID}?)/finalize", {**jws, "order_id": Field(STRING)},
                 {"update": later("finalize")}, unauthenticated=True),
            Path(rf"{prefix}/order/(?P<order_id>{UUID}?)/cert", {**jws, "order_id": Field(STRING)},
                 {"update": later("cert")}, unauthenticated=True),
            Path(f"{prefix}/authorization/(?P<auth_id>[^/]+)", {**jws, "auth_id": Field(STRING)},
                 {"update": later("authorization")}, unauthenticated=True),
            Path(f"{prefix}/challenge/(?P<auth_id>[^/]+)/(?P<challenge_type>[^/]+)",
                 {**jws, "auth_id": Field(STRING), "challenge_type": Field(STRING)},
                 {"update": later("challenge")}, unauthenticated=True),
            Path(f"{prefix}/revoke-cert", jws, {"update": later("revoke-cert")}, unauthenticated=True),
            Path(f"{prefix}/new-eab", _fields(prefix), {"update": later("new-eab")}),
        ]
    return table
