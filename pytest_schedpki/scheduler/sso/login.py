"""``POST /v1/acl/login``: Nomad's ``ACL.Login`` (nomad/acl_endpoint.go), ``reference §5, §9``.

:func:`login` runs, in order: ACLs on (400), request validation (``400 invalid login request:
<multierror>``), the auth method in the local region's view (``400 auth-method "<name>" not
found``), its type (``400 unsupported auth-method type: <Type>``), JWT validation on the double's
clock (``401 unable to validate provided token: <err>``), claims -> selector data (500), binding
(500), ``400 no role or policy bindings matched``, the token name (``500 failed to generate ACL
token name: ...``; over 256 characters ``400 token 0 invalid: ...``) and the token write.
"""

from __future__ import annotations

from ..model import SchedulerError, multierror_text
from ..tokens import ACLToken
from .claims import BindError, ClaimError, bind, interpolate, selector_data
from .jwt_validate import JWTError, validate

LOGIN_FIELDS = {"AuthMethodName": "string", "LoginToken": "string"}


def _go_q(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def method_for(state, name: str):
    """The auth method ``name`` as the local region sees it, or ``400 auth-method "<name>" not found``."""
    method = state.get_auth_method(name)
    if method is None:
        raise SchedulerError(400, f"auth-method {_go_q(name)} not found")
    return method


def issue_token(state, method, method_type: str, claims: dict) -> tuple[int, ACLToken]:
    """Claims -> selector data -> bindings -> token (shared by JWT login and OIDC complete-auth).
    The rules, role names and policy names are read under the state's lock as one snapshot; the
    selectors (go-bexpr over RE2) and bind-name templates run after it is released."""
    config = method.Config
    try:
        datum, variables = selector_data(claims, config.ClaimMappings if config else None,
                                         config.ListClaimMappings if config else None)
    except ClaimError as exc:
        raise SchedulerError(500, str(exc)) from None
    except RecursionError:  # claims nested deeper than Python can walk (Go has no such limit)
        raise SchedulerError(500, "error converting claims: nested too deeply") from None
    acl = state.acl
    with state._lock:  # a consistent snapshot (Nomad binds over a state snapshot); no user input runs here
        rules = state.binding_rules.for_method(method.Name)
        role_ids = {role.Name: role.ID for role in acl.roles.values()}
        policies = frozenset(acl.policies)
    try:  # selectors and templates are evaluated outside the scheduler's lock
        bound = bind(rules, datum, variables, role_ids.get, policies.__contains__)
    except BindError as exc:
        raise SchedulerError(500, str(exc)) from None
    if bound.none():
        raise SchedulerError(400, "no role or policy bindings matched")
    name_vars = {"auth_method_type": method_type, "auth_method_name": method.Name,
                 **{f"value.{k}": v for k, v in datum["value"].items()}}
    try:
        name = interpolate(method.TokenNameFormat or "${auth_method_type}-${auth_method_name}", name_vars)
    except ClaimError as exc:
        raise SchedulerError(500, f"failed to generate ACL token name: {exc}") from None
    if len(name) > 256:
        raise SchedulerError(400, "token 0 invalid: " + multierror_text(["token name too long"]))
    return acl.create_login_token(name, bound.management, bound.policies, bound.roles,
                                  method.TokenLocality == "global", method.MaxTokenTTL)


def check_ready(state) -> None:
    """ACLs on (400) and a leader for the write (500), as the login RPCs need."""
    with state._lock:
        state._check_acl()
        if not state.leader and not state._federated():
            raise SchedulerError(500, "No cluster leader")


def login(state, auth_method_name: str, login_token: str) -> tuple[int, ACLToken]:
    """``ACL.Login`` for a JWT auth method; returns (raft index, the new token). Raises SchedulerError."""
    check_ready(state)
    errors = [text for missing, text in ((not auth_method_name, "missing auth method name"),
                                         (not login_token, "missing login token")) if missing]
    if errors:
        raise SchedulerError(400, "invalid login request: " + multierror_text(errors))
    method = method_for(state, auth_method_name)
    if method.Type != "JWT":
        raise SchedulerError(400, f"unsupported auth-method type: {method.Type}")
    try:
        claims = validate(login_token, method.Config, state.clock.now().timestamp())
    except JWTError as exc:
        raise SchedulerError(401, f"unable to validate provided token: {exc}") from None
    return issue_token(state, method, "JWT", claims)
