"""``acmeWrapper`` (``acme_wrappers.go``): what every ACME request checks before its handler.

In order: ``config/acme`` ``enabled`` (else :class:`AcmeDisabled`: an empty 404); ``config/cluster``
``path`` set (else ``serverInternal`` ``ACME feature requires local cluster 'path' field configuration
to be set``); the role and issuer of the directory prefix (``getAcmeRoleAndIssuer``):

* no role in the path: ``default_directory_policy`` - ``forbid`` refuses (``serverInternal``
  ``...: default directory not allowed by ACME policy``), ``sign-verbatim`` uses a permissive role,
  ``role:<name>`` that role;
* a role in the path: it must exist (``malformed`` ``...: role does not exist``), not be ``no_store``
  (``serverInternal`` ``...: role can not be used as NoStore is set to true``) and be in
  ``allowed_roles`` (``...: specified role not allowed by ACME policy``);
* the issuer: the path's, else the role's ``issuer_ref``, else ``default``; it must resolve
  (``malformed`` ``...: issuer does not exist``), have the ``issuing-certificates`` usage and a key
  (``serverInternal`` ``...: issuer missing proper issuance usage or key``) and be in
  ``allowed_issuers`` (``...: specified issuer not allowed by ACME policy``).

Without ``allow_role_ext_key_usage`` the role's extended key usage is forced to serverAuth only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.router import LogicalRequest

from ..acme_config import acme_config
from ..authority.issuers import IssuerNotFound, issuer_key, resolve_issuer
from ..issuance.roles import Role
from .problems import AcmeDisabled, AcmeProblem

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend
    from ..model import Issuer

PATH_NOT_SET = "ACME feature requires local cluster 'path' field configuration to be set"


def join_url(base: str, *parts: str) -> str:
    """Go's ``url.JoinPath`` for the URLs ACME hands out: one ``/`` between parts, a trailing ``/``
    of the last part kept."""
    text = base.rstrip("/")
    for part in parts:
        if part.strip("/"):
            text += "/" + part.strip("/")
    if parts and parts[-1].endswith("/"):
        text += "/"
    return text


def directory_prefix(path: str) -> str:
    """``getAcmeDirectory``: the request path up to and with its last ``/acme/`` (``roles/web/acme/``)."""
    slashed = "/" + path.lstrip("/")
    index = slashed.rfind("/acme/")
    return (slashed[:index] + "/acme/").lstrip("/")


@functools.lru_cache(maxsize=64)
def verbatim_role(issuer_ref: str) -> Role:
    """``buildSignVerbatimRoleWithNoData``: any name, any key, the CSR's names, no lease, and no
    ``require_cn`` (so finalize adds no common name: the leaf's subject is the CSR's, maybe empty).
    One object per ``issuer_ref`` (a :class:`Role` is frozen and never changed in place; building
    one costs tens of microseconds, on every ACME request)."""
    return Role(name="", allow_localhost=True, allow_any_name=True, allow_ip_sans=True,
                allow_wildcard_certificates=True, enforce_hostnames=False, key_type="any", key_bits=0,
                use_csr_common_name=True, use_csr_sans=True, require_cn=False, allowed_other_sans=["*"], allowed_serial_numbers=["*"],
                allowed_uri_sans=["*"], allowed_user_ids=["*"], cn_validations=["disabled"], generate_lease=False,
                not_before_duration=0, issuer_ref=issuer_ref or "default")


@dataclass
class AcmeContext:
    """One request's ACME context: ``base_url`` (``<cluster path>/<prefix>``, ending ``/acme/``),
    ``cluster_url``, ``directory`` (the prefix), ``role``, ``issuer``, ``config`` (``config/acme``)."""

    base_url: str
    cluster_url: str
    directory: str
    role: Any
    issuer: Issuer
    config: dict[str, Any]

    @property
    def eab_policy(self) -> str:
        return self.config["eab_policy"]

    def url(self, *parts: str) -> str:
        return join_url(self.base_url, *parts)

    def link_index(self) -> str:
        """``genAcmeLinkHeader``: ``<.../directory>;rel="index"``."""
        return f'<{self.url("directory")}>;rel="index"'


def cluster_path(backend: PkiBackend) -> str:
    """``getBasePathFromClusterConfig``: ``config/cluster`` ``path``; raises when it is empty."""
    path = (backend.state.extra.get("config_cluster") or {}).get("path", "")
    if not path:
        raise AcmeProblem("serverInternal", PATH_NOT_SET)
    return path


def _acme_role(backend: PkiBackend, name: str) -> Role:
    role = backend.state.roles.get(name)
    if role is None:
        raise AcmeProblem.lead("malformed", "role does not exist")
    if role.no_store:
        raise AcmeProblem.lead("serverInternal", "role can not be used as NoStore is set to true")
    return role


def _issuer(backend: PkiBackend, ref: str) -> Issuer:
    try:
        issuer = resolve_issuer(backend.state, ref or "default")
    except IssuerNotFound:
        raise AcmeProblem.lead("malformed", "issuer does not exist") from None
    if "issuing-certificates" in issuer.usage.split(",") and issuer_key(backend.state, issuer) is not None:
        return issuer
    raise AcmeProblem.lead("serverInternal", "issuer missing proper issuance usage or key")


def role_and_issuer(backend: PkiBackend, config: dict[str, Any], role_name: str, issuer_ref: str) -> tuple[Role, Issuer]:
    """``getAcmeRoleAndIssuer`` (see the module docstring)."""
    if not role_name:
        policy = config["default_directory_policy"]
        if policy == "forbid" or not (policy == "sign-verbatim" or policy.startswith("role:")):
            raise AcmeProblem.lead("serverInternal", "default directory not allowed by ACME policy")
        role = verbatim_role(issuer_ref) if policy == "sign-verbatim" else _acme_role(backend, policy[5:])
    else:
        role = _acme_role(backend, role_name)
        allowed = config["allowed_roles"]
        if allowed != ["*"] and role.name not in allowed:
            raise AcmeProblem.lead("serverInternal", "specified role not allowed by ACME policy")
    ref = issuer_ref or (role.issuer_ref if role.issuer_ref else "")
    issuer = _issuer(backend, ref)
    if config["allowed_issuers"] != ["*"]:
        found = False
        for index, name in enumerate(config["allowed_issuers"]):
            try:
                candidate = resolve_issuer(backend.state, name)
            except IssuerNotFound as exc:
                raise AcmeProblem("serverInternal", f"failed to resolve reference for allowed_issuer entry {index}: "
                                                    f"{exc.message}") from None
            if candidate.issuer_id == issuer.issuer_id:
                found = True
                break
        if not found:
            raise AcmeProblem.lead("serverInternal", "specified issuer not allowed by ACME policy")
    if not config["allow_role_ext_key_usage"]:
        role = _server_auth_only(role)
    return role, issuer


_NARROWED: dict[int, tuple[Role, Role]] = {}  # id(role) -> (that role, its serverAuth-only copy)


def _server_auth_only(role: Role) -> Role:
    """``role`` with its extended key usage forced to serverAuth only, made once per role object: roles
    are frozen, and a role write stores a new object (the entry keeps its source alive, so an id is
    not reused while it is cached; at most 256 entries)."""
    found = _NARROWED.get(id(role))
    if found is not None and found[0] is role:
        return found[1]
    narrowed = replace(role, ext_key_usage=["ServerAuth"], ext_key_usage_oids=[], server_flag=True, client_flag=False,
                       code_signing_flag=False, email_protection_flag=False)
    if len(_NARROWED) >= 256:
        _NARROWED.clear()
    _NARROWED[id(role)] = (role, narrowed)
    return narrowed


def acme_context(backend: PkiBackend, req: LogicalRequest) -> AcmeContext:
    """The context of an ACME request; raises :class:`AcmeDisabled` or :class:`AcmeProblem`."""
    config = acme_config(backend)
    if not config["enabled"]:
        raise AcmeDisabled()
    cluster = cluster_path(backend)
    prefix = directory_prefix(req.path)
    role, issuer = role_and_issuer(backend, config, req.data.get("role") if "role" in req.data.schema else "",
                                   req.data.get("issuer_ref") if "issuer_ref" in req.data.schema else "")
    return AcmeContext(base_url=join_url(cluster, prefix), cluster_url=cluster, directory=prefix, role=role,
                       issuer=issuer, config=config)
