"""``new-account`` and ``account/:kid`` (``path_acme_account.go``).

The payload's ``contact`` (a list of strings), ``termsOfServiceAgreed``, ``onlyReturnExisting`` (bools),
``status`` (a string) and ``externalAccountBinding`` (an object) are type-checked first (malformed
``invalid type (<go type>) for field '<f>': ...``). ``onlyReturnExisting`` looks the key up (200, or
accountDoesNotExist ``an account with this key does not exist: ...``). On ``new-account`` a ``kid`` is
refused, a known key answers its account (200), else the EAB (:mod:`.eab`) and ``eab_policy`` are
applied and the account is created (201). On ``account/:kid`` the contact list is replaced and
``status: deactivated`` deactivates. Every answer: ``status``, ``orders`` (URL), ``contact`` when
set, ``Location: <base>/account/<kid>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.router import LogicalRequest

from .context import AcmeContext
from .eab import enforce_for_existing, verify_eab
from .jws import JwsContext
from .pipeline import Answer
from .problems import AcmeProblem
from .state import Account, owned, store, writable

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def go_type(value: Any) -> str:
    """Go's ``%T`` of a JSON value decoded into ``interface{}``."""
    return {bool: "bool", int: "float64", float: "float64", str: "string", list: "[]interface {}",
            dict: "map[string]interface {}"}.get(type(value), "<nil>")


def account_answer(ctx: AcmeContext, account: Account, status: int = 200) -> Answer:
    """``formatAccountResponse``."""
    location = ctx.base_url + "account/" + account.kid
    data: dict[str, Any] = {"status": account.status, "orders": location + "/orders"}
    if account.contact:
        data["contact"] = list(account.contact)
    return Answer(data=data, status=status, headers={"Location": location})


def _fields(payload: dict[str, Any]) -> tuple[list[str], bool, bool, str, dict[str, Any] | None]:
    contacts: list[str] = []
    if "contact" in payload:
        raw = payload["contact"]
        if not isinstance(raw, list):
            raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(raw)}) for field 'contact'")
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(item)}) for field 'contact' item {index}")
            contacts.append(item)
    flags = {}
    for name in ("termsOfServiceAgreed", "onlyReturnExisting"):
        flags[name] = False
        if name in payload:
            if not isinstance(payload[name], bool):
                raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(payload[name])}) for field '{name}'")
            flags[name] = payload[name]
    status = ""
    if "status" in payload:
        if not isinstance(payload["status"], str):  # upstream names the wrong field in this text
            raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(payload.get('onlyReturnExisting'))}) for "
                                                "field 'onlyReturnExisting'")
        status = payload["status"]
    eab = None
    if "externalAccountBinding" in payload:
        eab = payload["externalAccountBinding"]
        if not isinstance(eab, dict):
            raise AcmeProblem.lead("malformed", "externalAccountBinding field was unparseable")
    return contacts, flags["termsOfServiceAgreed"], flags["onlyReturnExisting"], status, eab


def account_by_key(backend: PkiBackend, ctx: AcmeContext, thumbprint: str) -> Account | None:
    """``LoadAccountByKey``: the account of this directory with this key thumbprint."""
    acme = store(backend)
    kid = acme.thumbprints.get(thumbprint)
    account = acme.accounts.get(kid or "")
    if account is None:
        return None
    if account.directory != ctx.directory:
        raise AcmeProblem("malformed", "failed to load account by thumbprint: the request message was malformed: "
                                       "account part of different ACME directory path")
    return account


def handle_account(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext,
                   payload: dict[str, Any] | None) -> Answer:
    """``acmeNewAccountHandler`` (both paths)."""
    contacts, terms, only_existing, status, eab_data = _fields(payload or {})
    if only_existing:
        account = account_by_key(backend, ctx, user.thumbprint())
        if account is None:
            raise AcmeProblem.wrap("accountDoesNotExist", "an account with this key does not exist")
        enforce_for_existing(ctx, account)
        return account_answer(ctx, account)
    if req.path.endswith("/new-account"):
        return _create(backend, req, ctx, user, contacts, terms, eab_data)
    return _update(backend, ctx, user, contacts, status, eab_data)


def _create(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, contacts: list[str],
            terms: bool, eab_data: dict[str, Any] | None) -> Answer:
    if user.existing:
        raise AcmeProblem.wrap("malformed", "cannot submit to newAccount with 'kid'")
    thumb = user.thumbprint()
    known = account_by_key(backend, ctx, thumb)
    if known is not None:
        enforce_for_existing(ctx, known)
        return account_answer(ctx, known)
    eab = verify_eab(backend, ctx, user, req.path, eab_data) if eab_data else None
    if ctx.eab_policy in ("always-required", "new-account-required") and eab is None:
        raise AcmeProblem("externalAccountRequired")
    acme = writable(backend)
    if eab is not None:
        acme.eabs.pop(eab.kid, None)  # consumed, even if the creation below failed upstream
    account = Account(kid=_new_kid(), jwk=user.jwk, jwk_raw=user.jwk_raw, thumbprint=thumb, directory=ctx.directory,
                      created=backend.now(), contact=contacts, terms_agreed=terms, eab=eab.kid if eab else "")
    acme.accounts[account.kid] = account
    acme.thumbprints[thumb] = account.kid
    answer = account_answer(ctx, account, status=201)
    if eab is not None and eab_data:
        answer.data["externalAccountBinding"] = eab_data
    return answer


def _new_kid() -> str:
    from .state import new_uuid
    return new_uuid()


def _update(backend: PkiBackend, ctx: AcmeContext, user: JwsContext, contacts: list[str], status: str,
            eab_data: dict[str, Any] | None) -> Answer:
    if not user.existing:
        raise AcmeProblem.wrap("malformed", "cannot submit to account updates without a 'kid'")
    if eab_data:
        raise AcmeProblem.lead("malformed", "not allowed to update EAB data in accounts")
    account = store(backend).accounts.get(user.kid)
    if account is None:
        raise AcmeProblem("accountDoesNotExist", "error loading account: account not found: "
                                                 "the request specified an account that does not exist")
    enforce_for_existing(ctx, account)
    if account.status != "valid":
        raise AcmeProblem("unauthorized")
    changed = sorted(account.contact) != sorted(contacts)
    if changed or status == "deactivated":
        account = owned(writable(backend), "accounts", user.kid)
        account.contact = contacts
        if status == "deactivated":
            account.status = "deactivated"
            account.revoked_at = backend.now()
    return account_answer(ctx, account)
