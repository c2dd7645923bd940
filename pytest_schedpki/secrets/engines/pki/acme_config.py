"""``config/acme``: the mount's ACME configuration (OpenBao ``path_config_acme.go``).

A read answers the stored record (OpenBao's defaults on a fresh mount: ACME disabled). A write keeps
the fields it does not send and checks, in this order, each answered 500 (a Go error, multierror)
and leaving the record unchanged:

* ``allowed_roles`` / ``allowed_issuers`` sent empty: ``<field> must take a non-zero length value;
  specify '*' as the value to allow anything or specify enabled=false to disable ACME entirely``;
* ``dns_resolver``: ``failed to parse DNS resolver address: <net.SplitHostPort error>`` / ``...: got
  empty address`` / ``...: expected IPv4/IPv6 address, likely got hostname``;
* ``eab_policy`` (trimmed, any case): ``invalid eab policy name provided, valid values are
  'not-required', 'new-account-required', 'always-required'``;
* ``default_directory_policy`` (``forbid``, ``sign-verbatim``, ``role:<name>``): ``invalid
  default_directory_policy: string <p> not a valid Default Directory Policy`` / ``...: no role
  specified by policy role:``; the role must be an ACME role (``default directory policy role <r> is
  not a valid ACME role: <why>``);
* ``allowed_roles`` other than ``["*"]``: no ``*`` (``cannot use '*' as role name at index <i>``),
  each an ACME role (``allowed_role <r> is not a valid acme role: <why>``), including the default
  directory's role (``default directory policy <p> was not specified in allowed_roles: [<roles>]``);
* ``allowed_issuers`` other than ``["*"]``: no ``*``, each resolvable (``failed validating
  allowed_issuers: unable to fetch issuer: <name>: <why>``);
* ``enabled``: ``config/cluster`` ``path`` must be set (``ACME feature requires local cluster 'path'
  field configuration to be set``).

OpenBao 2.7 has no ``max_ttl`` here (Vault's has; bao warns that it ignored the parameter).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.fields import BOOL, COMMA_STRING_SLICE, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .authority.issuers import IssuerNotFound, resolve_issuer

if TYPE_CHECKING:  # pragma: no cover
    from .backend import PkiBackend

ACME_DEFAULTS = {"allow_role_ext_key_usage": False, "allowed_issuers": ["*"], "allowed_roles": ["*"],
                 "default_directory_policy": "sign-verbatim", "dns_resolver": "", "eab_policy": "not-required",
                 "enabled": False}
EAB_POLICIES = ("not-required", "new-account-required", "always-required")
_KEY = "config_acme"
_NON_ZERO = ("{} must take a non-zero length value; specify '*' as the value to allow anything or specify "
             "enabled=false to disable ACME entirely")


def acme_config(backend: PkiBackend) -> dict[str, Any]:
    """The stored ``config/acme`` (a copy; OpenBao's defaults when never written)."""
    record = backend.state.extra.get(_KEY) or ACME_DEFAULTS
    return {k: list(v) if isinstance(v, list) else v for k, v in record.items()}


def split_host_port(text: str) -> str:
    """Go's ``net.SplitHostPort``: the host; raises ``ValueError`` with Go's text."""
    def fail(why: str) -> ValueError:
        return ValueError(f"address {text}: {why}")
    last = text.rfind(":")
    if last < 0:
        raise fail("missing port in address")
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise fail("missing ']' in address")
        if end + 1 == len(text) or text[end + 1] != ":":
            raise fail("missing port in address" if end + 1 == len(text) else "unexpected ']' in address")
        if end + 1 != last:
            raise fail("too many colons in address")
        host = text[1:end]
        if "[" in text[1:] or "]" in text[end + 1:]:
            raise fail("unexpected '[' in address")
        return host
    host = text[:last]
    if ":" in host:
        raise fail("too many colons in address")
    if "[" in text:
        raise fail("unexpected '[' in address")
    if "]" in text:
        raise fail("unexpected ']' in address")
    return host


def policy_type(policy: str) -> str:
    """``getDefaultDirectoryPolicyType``: ``forbid``/``sign-verbatim``/``role``; raises ``ValueError``."""
    if policy in ("forbid", "sign-verbatim"):
        return policy
    if policy.startswith("role:"):
        if len(policy) == 5:
            raise ValueError(f"no role specified by policy {policy}")
        return "role"
    raise ValueError(f"string {policy} not a valid Default Directory Policy")


def acme_role_problem(backend: PkiBackend, name: str) -> str:
    """``getAndValidateAcmeRole``'s refusal text for role ``name`` ('' when it is an ACME role)."""
    role = backend.state.roles.get(name)
    if role is None:
        return "the request message was malformed: role does not exist"
    if role.no_store:
        return "the server experienced an internal error: role can not be used as NoStore is set to true"
    return ""


def _check(backend: PkiBackend, config: dict[str, Any]) -> None:
    try:
        kind = policy_type(config["default_directory_policy"])
    except ValueError as exc:
        raise internal_error(f"invalid default_directory_policy: {exc}") from None
    default_role = config["default_directory_policy"][5:] if kind == "role" else ""
    if default_role and (why := acme_role_problem(backend, default_role)):
        raise internal_error(f"default directory policy role {default_role} is not a valid ACME role: {why}")
    roles = config["allowed_roles"]
    if roles != ["*"]:
        for index, name in enumerate(roles):
            if name == "*":
                raise internal_error(f"cannot use '*' as role name at index {index}")
            if why := acme_role_problem(backend, name):
                raise internal_error(f"allowed_role {name} is not a valid acme role: {why}")
        if kind == "role" and default_role not in roles:
            raise internal_error(f"default directory policy {config['default_directory_policy']} was not specified "
                                 f"in allowed_roles: [{' '.join(roles)}]")
    issuers = config["allowed_issuers"]
    if issuers != ["*"]:
        for index, name in enumerate(issuers):
            if name == "*":
                raise internal_error(f"cannot use '*' as issuer name at index {index}")
            try:
                resolve_issuer(backend.state, name)
            except IssuerNotFound as exc:
                raise internal_error(f"failed validating allowed_issuers: unable to fetch issuer: {name}: "
                                     f"{exc.message}") from None
    if config["enabled"] and not (backend.state.extra.get("config_cluster") or {}).get("path"):
        raise internal_error("ACME feature requires local cluster 'path' field configuration to be set")


def _check_resolver(value: str) -> None:
    if not value:
        return
    try:
        host = split_host_port(value)
    except ValueError as exc:
        raise internal_error(f"failed to parse DNS resolver address: {exc}") from None
    if host == "":
        raise internal_error("failed to parse DNS resolver address: got empty address")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise internal_error("failed to parse DNS resolver address: expected IPv4/IPv6 address, likely got "
                             "hostname") from None


def paths(backend: PkiBackend) -> list[Path]:
    def read(req: LogicalRequest) -> LogicalResponse:
        return LogicalResponse(data=acme_config(backend))

    def write(req: LogicalRequest) -> LogicalResponse:
        config, data = acme_config(backend), req.data
        for key in ("enabled", "allow_role_ext_key_usage", "default_directory_policy"):
            if data.sent(key):
                config[key] = data.get(key)
        for key in ("allowed_roles", "allowed_issuers"):
            if data.sent(key):
                config[key] = list(data.get(key))
                if not config[key]:
                    raise internal_error(_NON_ZERO.format(key))
        if data.sent("dns_resolver"):
            config["dns_resolver"] = data.get("dns_resolver")
            _check_resolver(config["dns_resolver"])
        if data.sent("eab_policy"):
            name = data.get("eab_policy").strip().lower()
            if name not in EAB_POLICIES:
                raise internal_error("invalid eab policy name provided, valid values are 'not-required', "
                                     "'new-account-required', 'always-required'")
            config["eab_policy"] = name
        _check(backend, config)
        backend.state.extra[_KEY] = config
        return LogicalResponse(data=acme_config(backend))

    fields = {"enabled": Field(BOOL, False), "allowed_issuers": Field(COMMA_STRING_SLICE, ["*"]),
              "allowed_roles": Field(COMMA_STRING_SLICE, ["*"]), "allow_role_ext_key_usage": Field(BOOL, False),
              "default_directory_policy": Field(STRING, "sign-verbatim"), "dns_resolver": Field(STRING, ""),
              "eab_policy": Field(STRING, "always-required")}
    return [Path("config/acme", fields, {"read": read, "update": write})]
