"""PKI roles: the ``Role`` record (every OpenBao 2.7.2 role field with its upstream default) and the
``roles/`` paths.

* ``POST|PUT roles/:name`` replaces the role (fields not sent take their defaults) and answers 200
  with the full role (52 keys, TTLs as integer seconds); ``PATCH`` (merge-patch) changes only the
  fields sent (400 ``Unable to fetch role entry to patch`` for an unknown role);
* ``GET roles/:name`` -> the role, or 404 ``{"errors":[]}``; ``DELETE`` -> 204 (also when unknown);
* ``LIST roles/`` (``after``/``limit``) -> ``{"keys": [sorted names]}``, 404 ``{"errors":[]}`` when empty.

With ``SecretsService.enterprise`` on, roles also carry Vault Enterprise's ``no_store_metadata``
(bool, default ``false``; a 53rd key in responses); off, OpenBao ignores it with the unknown-parameter
warning (see enterprise/gate.py, enterprise/cert_metadata.py).

Validation order and texts follow ``pathRoleCreate``/``validateRole`` (see :func:`build_role`).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.fields import (
    BOOL,
    COMMA_STRING_SLICE,
    DURATION,
    INT,
    STRING,
    Field,
    FieldData,
)
from pytest_schedpki.secrets.framework.logical import (
    LogicalResponse,
    dumps,
    internal_error,
    not_found,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import find_issuer
from ..codecs.goder import go_oid_arcs
from ..enterprise.gate import enterprise_variant, is_enterprise
from .policy import PolicyError, parse_other_sans
from .policy_identifiers import PolicyIdentifierError, entries_from_json, storage_policies
from .validity import ValidityError, parse_rfc3339

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

NAME_RE = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
DEFAULT_KEY_USAGE = ["DigitalSignature", "KeyAgreement", "KeyEncipherment"]
NO_STORE_LEASE_WARNING = ("mutually exclusive values no_store=true and generate_lease=true were both specified; "
                          "no_store=true takes priority")
LEASE_WARNING = ("it is encouraged to disable generate_lease and rely on PKI's native capabilities when possible; "
                 "this option can cause instance-wide issues with large numbers of issued certificates")


def _strings() -> list[str]:
    return []


@dataclass(frozen=True)
class Role:
    """One role as stored. TTL-like fields (``ttl``, ``max_ttl``, ``not_before_duration``) are seconds;
    list fields are lists of strings; ``allowed_ip_sans_cidr`` holds normalised networks
    (``10.0.0.0/8``). Defaults are OpenBao's for a role created with an empty body."""

    name: str = ""
    ttl: int = 0
    max_ttl: int = 0
    allow_localhost: bool = True
    allowed_domains: list[str] = field(default_factory=_strings)
    allowed_domains_template: bool = False
    allow_globs_in_identity_templates: bool = False
    allow_bare_domains: bool = False
    allow_token_displayname: bool = False
    allow_subdomains: bool = False
    allow_glob_domains: bool = False
    allow_wildcard_certificates: bool = True
    allow_any_name: bool = False
    allowed_uri_sans_template: bool = False
    enforce_hostnames: bool = True
    allow_ip_sans: bool = True
    allowed_ip_sans_cidr: list[str] = field(default_factory=_strings)
    server_flag: bool = True
    client_flag: bool = True
    code_signing_flag: bool = False
    email_protection_flag: bool = False
    use_csr_common_name: bool = True
    use_csr_sans: bool = True
    key_type: str = "rsa"
    key_bits: int = 2048
    signature_bits: int = 0
    use_pss: bool = False
    key_usage: list[str] = field(default_factory=lambda: list(DEFAULT_KEY_USAGE))
    ext_key_usage: list[str] = field(default_factory=_strings)
    ext_key_usage_oids: list[str] = field(default_factory=_strings)
    ou: list[str] = field(default_factory=_strings)
    organization: list[str] = field(default_factory=_strings)
    country: list[str] = field(default_factory=_strings)
    locality: list[str] = field(default_factory=_strings)
    province: list[str] = field(default_factory=_strings)
    street_address: list[str] = field(default_factory=_strings)
    postal_code: list[str] = field(default_factory=_strings)
    generate_lease: bool = False
    no_store: bool = False
    allowed_other_sans: list[str] = field(default_factory=_strings)
    allowed_serial_numbers: list[str] = field(default_factory=_strings)
    allowed_user_ids: list[str] = field(default_factory=_strings)
    allowed_uri_sans: list[str] = field(default_factory=_strings)
    require_cn: bool = True
    cn_validations: list[str] = field(default_factory=lambda: ["email", "hostname"])
    policy_identifiers: list[str] = field(default_factory=_strings)
    basic_constraints_valid_for_non_ca: bool = False
    not_before_duration: int = 30
    not_before: str = ""
    not_before_bound: str = "permit"
    not_after: str = ""
    not_after_bound: str = "permit"
    issuer_ref: str = "default"
    no_store_metadata: bool = False  # Vault Enterprise only (emulated); never shown by OpenBao

    def to_response(self, enterprise: bool = False) -> dict[str, Any]:
        """The 52-key ``data`` of a role read/write (lists copied, TTLs as integer seconds); with
        ``enterprise`` also ``no_store_metadata``."""
        values = self.__dict__  # asdict() is ~10x slower
        data = {name: values[name] for name in _field_names()}
        for name in _LIST_FIELDS:
            data[name] = list(data[name])
        for name, value in data.items():
            if isinstance(value, dict):
                data[name] = _copy_value(value)
        del data["name"]
        if not enterprise:
            del data["no_store_metadata"]
        return data

    def response_text(self, enterprise: bool = False) -> tuple[dict[str, Any], str]:
        """``(to_response(enterprise), its JSON text with sorted keys)``, the text kept on the role for
        the next read: a role is never changed in place (a write or patch stores a new ``Role``), so the
        text stays true for as long as this object is the stored role."""
        kept = self.__dict__.get("_response_text")
        if kept is None or kept[0] != enterprise:
            data = self.to_response(enterprise)
            kept = self.__dict__["_response_text"] = (enterprise, data, dumps({k: data[k] for k in sorted(data)}))
        return dict(kept[1]), kept[2]


_NAMES: tuple[str, ...] = ()
_LIST_FIELDS: frozenset[str] = frozenset()


def _field_names() -> tuple[str, ...]:
    """Role's field names in declaration order (computed once)."""
    global _NAMES, _LIST_FIELDS
    if not _NAMES:
        defaults = Role()
        _LIST_FIELDS = frozenset(f.name for f in fields(Role) if isinstance(getattr(defaults, f.name), list))
        _NAMES = tuple(f.name for f in fields(Role))
    return _NAMES


def _copy_value(value: Any) -> Any:
    """A JSON-ready copy of one role field (the fields are scalars and lists of strings)."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return {k: _copy_value(v) for k, v in value.items()}
    return value


# request fields of roles/:name: name -> (framework type, default) as the OpenBao schema declares them
ROLE_FIELDS: dict[str, Field] = {
    "name": Field(STRING), "backend": Field(STRING),
    "ttl": Field(DURATION), "max_ttl": Field(DURATION),
    "allow_localhost": Field(BOOL, True), "allowed_domains": Field(COMMA_STRING_SLICE),
    "allowed_domains_template": Field(BOOL, False), "allow_globs_in_identity_templates": Field(BOOL, False),
    "allow_bare_domains": Field(BOOL), "allow_subdomains": Field(BOOL), "allow_glob_domains": Field(BOOL),
    "allow_wildcard_certificates": Field(BOOL, True), "allow_any_name": Field(BOOL),
    "enforce_hostnames": Field(BOOL, True), "allow_ip_sans": Field(BOOL, True),
    "allowed_ip_sans_cidr": Field(COMMA_STRING_SLICE), "allowed_uri_sans": Field(COMMA_STRING_SLICE),
    "allowed_uri_sans_template": Field(BOOL, False), "allowed_other_sans": Field(COMMA_STRING_SLICE),
    "allowed_serial_numbers": Field(COMMA_STRING_SLICE), "allowed_user_ids": Field(COMMA_STRING_SLICE),
    "server_flag": Field(BOOL, True), "client_flag": Field(BOOL, True),
    "code_signing_flag": Field(BOOL), "email_protection_flag": Field(BOOL),
    "key_type": Field(STRING, "rsa"), "key_bits": Field(INT, 0), "signature_bits": Field(INT, 0),
    "use_pss": Field(BOOL, False), "key_usage": Field(COMMA_STRING_SLICE, list(DEFAULT_KEY_USAGE)),
    "ext_key_usage": Field(COMMA_STRING_SLICE, []), "ext_key_usage_oids": Field(COMMA_STRING_SLICE),
    "use_csr_common_name": Field(BOOL, True), "use_csr_sans": Field(BOOL, True),
    "ou": Field(COMMA_STRING_SLICE), "organization": Field(COMMA_STRING_SLICE), "country": Field(COMMA_STRING_SLICE),
    "locality": Field(COMMA_STRING_SLICE), "province": Field(COMMA_STRING_SLICE),
    "street_address": Field(COMMA_STRING_SLICE), "postal_code": Field(COMMA_STRING_SLICE),
    "generate_lease": Field(BOOL), "no_store": Field(BOOL), "require_cn": Field(BOOL, True),
    "cn_validations": Field(COMMA_STRING_SLICE, ["email", "hostname"]), "policy_identifiers": Field(COMMA_STRING_SLICE),
    "basic_constraints_valid_for_non_ca": Field(BOOL), "not_before_duration": Field(DURATION, 30),
    "not_before": Field(STRING), "not_before_bound": Field(STRING, "permit"), "not_after": Field(STRING),
    "not_after_bound": Field(STRING, "permit"), "issuer_ref": Field(STRING, "default"),
}
_PLAIN = [f.name for f in fields(Role) if f.name not in (
    "name", "allow_token_displayname", "allowed_other_sans", "allowed_ip_sans_cidr", "policy_identifiers",
    "generate_lease", "cn_validations", "no_store_metadata")]
ENTERPRISE_ROLE_FIELDS: dict[str, Field] = {"no_store_metadata": Field(BOOL, False)}


def _policy_identifiers(data: FieldData, old: list[str]) -> list[str]:
    """``getPolicyIdentifier``: a string that decodes as a JSON array of entries becomes one compact
    JSON text per entry (:func:`~.policy_identifiers.entries_from_json`); otherwise the comma list of
    OIDs."""
    value, sent = data.get_ok("policy_identifiers")
    if not sent:
        return list(old)
    raw = data.raw.get("policy_identifiers")
    if isinstance(raw, str):
        entries = entries_from_json(raw)
        if entries is not None:
            return entries
    return list(value)


def _check_policy_identifiers(identifiers: list[str]) -> None:
    """The role write runs certutil ``CreatePolicyInformationExtensionFromStorageStrings`` over the
    list (``path_roles.go``): its error is a 500 with Go's text (see
    :func:`~.policy_identifiers.storage_policies`)."""
    try:
        storage_policies(identifiers)
    except PolicyIdentifierError as exc:
        raise internal_error(str(exc)) from None


def _cn_validations(values: list[str]) -> list[str]:
    if not values:
        return ["email", "hostname"]
    seen: list[str] = []
    for value in values:
        low = value.lower()
        if low not in ("disabled", "email", "hostname"):
            raise internal_error(f"cn_validations value incorrect: unknown type: `{value}`")
        if low in seen:
            raise internal_error(f"cn_validations value incorrect: `{low}` specified multiple times")
        seen.append(low)
    if "disabled" in seen and len(seen) > 1:
        raise internal_error("cn_validations value incorrect: cannot specify `disabled` along with `email` or `hostname`")
    return seen


def _validate_key(key_type: str, key_bits: int) -> int:
    """``ValidateDefaultOrValueKeyTypeSignatureLength`` as 2.7.2 applies it to roles: key_bits defaulted
    and checked (signature_bits is stored as given)."""
    if key_type == "rsa":
        key_bits = key_bits or 2048
        if key_bits < 2048:
            raise user_error(f"RSA keys < 2048 bits are unsafe and not supported: got {key_bits}")
        if key_bits not in (2048, 3072, 4096, 8192):
            raise user_error(f"unsupported bit length for RSA key: {key_bits}")
    elif key_type == "ec":
        key_bits = key_bits or 256
        if key_bits not in (224, 256, 384, 521):
            raise user_error(f"unsupported bit length for EC key: {key_bits}")
    elif key_type not in ("any", "ed25519"):
        raise user_error(f"unknown key type {key_type}")
    return key_bits


def issuer_ref_warning(state: Any, issuer_ref: str) -> str | None:
    """The warning a role gets when ``issuer_ref`` resolves to no issuer of the mount (else ``None``);
    the reference is only checked, never pinned (it may float to another issuer later)."""
    if find_issuer(state, issuer_ref) is not None:
        return None
    if issuer_ref == "default":
        return ("Issuing Certificate was set to default, but no default issuing certificate (configurable at "
                "/config/issuers) is currently set")
    return f"Issuing Certificate was set to {issuer_ref} but no issuing certificate currently has that name"


def build_role(name: str, data: FieldData, old: Role | None, state: Any) -> tuple[Role, list[str]]:
    """A role from a create (``old`` ``None``: unsent fields take defaults) or a patch (``old``: unsent
    fields keep their values). Returns ``(role, warnings)``.

    Raises, in OpenBao's order: 400 ``error parsing allowed_other_sans: ...``, 400 ``error parsing
    allowed_ip_sans_cidr: invalid CIDR address: <v>``, 400 unknown not_after_bound/not_before_bound
    texts, 400 ``"ttl" value must be less than "max_ttl" value``, 400 key type/bits texts, 400 ``"<oid>"
    could not be parsed as a valid oid for an extended key usage``, 500 policy identifier and
    cn_validations texts.
    """
    base = old or Role(name=name)
    values: dict[str, Any] = {}
    for key in _PLAIN:
        value, sent = data.get_ok(key)
        values[key] = value if (sent or old is None) else getattr(base, key)
    other_sans, sent = data.get_ok("allowed_other_sans")
    if sent or old is None:
        if other_sans and other_sans != ["*"]:
            try:
                parse_other_sans(other_sans)
            except PolicyError as exc:
                raise user_error(f"error parsing allowed_other_sans: {exc}") from None
    else:
        other_sans = list(base.allowed_other_sans)
    cidrs, sent = data.get_ok("allowed_ip_sans_cidr")
    if not sent and old is not None:
        cidrs = list(base.allowed_ip_sans_cidr)
    networks = []
    for cidr in cidrs:
        try:
            if "/" not in cidr:
                raise ValueError
            networks.append(str(ipaddress.ip_network(cidr, strict=False)))
        except ValueError:
            raise user_error(f"error parsing allowed_ip_sans_cidr: invalid CIDR address: {cidr}") from None
    warnings = []
    lease_value, lease_sent = data.get_ok("generate_lease")
    asked_lease = lease_value if (lease_sent or old is None) else base.generate_lease
    generate_lease = False if values["no_store"] else asked_lease
    if values["no_store"] and asked_lease:
        warnings.append(NO_STORE_LEASE_WARNING)
    elif generate_lease:
        warnings.append(LEASE_WARNING)
    bound, sent = data.get_ok("not_after_bound")
    if sent and bound not in ("permit", "forbid", "ttl-limited") and not _is_rfc3339(bound):
        raise user_error("Unknown value for field `not_after_bound`. Possible values are `permit`, `ttl-limited`, "
                         "`forbid`, or an explicit timestamp.")
    bound, sent = data.get_ok("not_before_bound")
    if sent and bound not in ("permit", "duration", "forbid"):
        raise user_error("Unknown value for field `not_before_bound`. Possible values are `permit` `duration` or `forbid`")
    if values["max_ttl"] > 0 and values["ttl"] > values["max_ttl"]:
        raise user_error('"ttl" value must be less than "max_ttl" value')
    values["key_bits"] = _validate_key(values["key_type"], values["key_bits"])
    for oid in values["ext_key_usage_oids"]:
        try:  # certutil's StringToOid: each arc through strconv.Atoi (a sign allowed, int64's range)
            go_oid_arcs(oid)
        except ValueError:
            raise user_error(f'"{oid}" could not be parsed as a valid oid for an extended key usage') from None
    policy_identifiers = _policy_identifiers(data, base.policy_identifiers)
    _check_policy_identifiers(policy_identifiers)
    values["issuer_ref"] = values["issuer_ref"] or "default"
    warning = issuer_ref_warning(state, values["issuer_ref"])
    validations, sent = data.get_ok("cn_validations")
    validations = _cn_validations(validations if (sent or old is None) else list(base.cn_validations))
    no_store_metadata = base.no_store_metadata if old is not None else False
    if "no_store_metadata" in data.schema:  # the Enterprise variant of the path
        value, sent = data.get_ok("no_store_metadata")
        no_store_metadata = value if (sent or old is None) else no_store_metadata
    role = replace(Role(name=name), **values, allowed_other_sans=list(other_sans), allowed_ip_sans_cidr=networks,
                   policy_identifiers=policy_identifiers, generate_lease=generate_lease, cn_validations=validations,
                   no_store_metadata=no_store_metadata)
    return role, ([warning] if warning else []) + warnings


def _is_rfc3339(text: str) -> bool:
    try:
        parse_rfc3339(text)
        return True
    except ValidityError:
        return False


def get_role(backend: PkiBackend, name: str) -> Role | None:
    """The stored role ``name`` of the mount, or ``None``."""
    return backend.state.roles.get(name)


def paths(backend: PkiBackend) -> list[Path]:
    """``roles/`` (list) and ``roles/:name`` (read, create/update, patch, delete)."""

    def write(req: LogicalRequest) -> LogicalResponse:
        name = req.data.get("name")
        role, warnings = build_role(name, req.data, None, backend.state)
        backend.state.roles[name] = role
        return LogicalResponse(data=role.to_response(is_enterprise(backend)), warnings=warnings)

    def patch(req: LogicalRequest) -> LogicalResponse:
        name = req.data.get("name")
        old = backend.state.roles.get(name)
        if old is None:
            raise user_error("Unable to fetch role entry to patch")
        role, warnings = build_role(name, req.data, old, backend.state)
        backend.state.roles[name] = role
        return LogicalResponse(data=role.to_response(is_enterprise(backend)), warnings=warnings)

    def read(req: LogicalRequest) -> LogicalResponse:
        role = backend.state.roles.get(req.data.get("name"))
        if role is None:
            raise not_found()
        data, text = role.response_text(is_enterprise(backend))
        return LogicalResponse(data=data, data_json=text)

    def delete(req: LogicalRequest) -> LogicalResponse:
        backend.state.roles.pop(req.data.get("name"), None)
        return LogicalResponse(status=204)

    def list_roles(req: LogicalRequest) -> LogicalResponse:
        keys = sorted(backend.state.roles)
        after, limit = req.data.get("after"), req.data.get("limit")
        if after:
            keys = [k for k in keys if k > after]
        if limit > 0:
            keys = keys[:limit]
        if not keys:
            raise not_found()
        return LogicalResponse(data={"keys": keys})

    role_path = Path(rf"roles/(?P<name>{NAME_RE})", dict(ROLE_FIELDS),
                     {"read": read, "update": write, "patch": patch, "delete": delete})
    return [
        Path(r"roles/?", {"after": Field(STRING), "limit": Field(INT)}, {"list": list_roles}),
        enterprise_variant(backend, role_path, ENTERPRISE_ROLE_FIELDS),
        role_path,
    ]
