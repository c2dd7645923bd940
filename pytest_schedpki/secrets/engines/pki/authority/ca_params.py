"""Request parameters of CA generation (``root/generate/:type``, ``intermediate/generate/:type`` and
their ``issuers/generate/...`` aliases), checked in OpenBao's order (``getGenerationParams`` then the
names and validity parts of ``generateCreationBundle`` with a permissive CA role).

Everything here raises ``LogicalError`` (400 plain) with the upstream texts.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from cryptography import x509 as cx509

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.secrets.framework.fields import (
    BOOL,
    COMMA_STRING_SLICE,
    DURATION,
    INT,
    STRING,
    Field,
    FieldData,
)
from pytest_schedpki.secrets.framework.logical import user_error

from ..codecs.x509 import build_subject, ip_general_name, key_type_of, other_name, validate_key_type_length
from ..issuance.policy import PolicyError, resolve_names
from ..issuance.validity import (
    ValidityError,
    ValidityRequest,
    backdated_not_before,
    check_order,
    leaf_not_after,
)
from .keys import KeyNotFound, resolve_key

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

TYPE_RE = r"(?P<exported>[0-9A-Za-z_](([0-9A-Za-z_.-]+)?[0-9A-Za-z_])?)"
FORMATS = ("pem", "der", "pem_bundle")

# addCACommonFields: the subject, SAN, format and validity fields of every CA-creating path
# (root and intermediate generation, sign-intermediate)
CA_COMMON_FIELDS: dict[str, Field] = {
    "common_name": Field(STRING), "alt_names": Field(STRING),
    "ip_sans": Field(COMMA_STRING_SLICE), "uri_sans": Field(COMMA_STRING_SLICE), "other_sans": Field(COMMA_STRING_SLICE),
    "exclude_cn_from_sans": Field(BOOL, False), "format": Field(STRING, "pem"),
    "private_key_format": Field(STRING, "der"), "ttl": Field(DURATION),
    "ou": Field(COMMA_STRING_SLICE), "organization": Field(COMMA_STRING_SLICE), "country": Field(COMMA_STRING_SLICE),
    "locality": Field(COMMA_STRING_SLICE), "province": Field(COMMA_STRING_SLICE),
    "street_address": Field(COMMA_STRING_SLICE), "postal_code": Field(COMMA_STRING_SLICE),
    "serial_number": Field(STRING), "not_before": Field(STRING), "not_after": Field(STRING),
    "not_before_duration": Field(DURATION, 30),
}
# addCACommonFields + addCAKeyGenerationFields (both generate paths)
COMMON_FIELDS: dict[str, Field] = {
    "exported": Field(STRING), **CA_COMMON_FIELDS, "key_type": Field(STRING, "rsa"), "key_bits": Field(INT, 0),
    "signature_bits": Field(INT, 0), "use_pss": Field(BOOL, False), "external_key_ref": Field(STRING),
    "key_ref": Field(STRING, "default"), "key_name": Field(STRING),
}
# root only: addKeyUsageRoleFields + addCAIssueFields
ROOT_FIELDS: dict[str, Field] = {
    **COMMON_FIELDS,
    "key_usage": Field(COMMA_STRING_SLICE, ["DigitalSignature", "KeyAgreement", "KeyEncipherment"]),
    "ext_key_usage": Field(COMMA_STRING_SLICE), "ext_key_usage_oids": Field(COMMA_STRING_SLICE),
    "max_path_length": Field(INT, -1), "permitted_dns_domains": Field(COMMA_STRING_SLICE),
    "issuer_name": Field(STRING),
}
INTERMEDIATE_FIELDS: dict[str, Field] = {**COMMON_FIELDS, "add_basic_constraints": Field(BOOL, False)}

# the role generateCert/generateIntermediateCSR use for CA requests: every name is allowed
CA_ROLE = SimpleNamespace(
    allow_any_name=True, allow_localhost=True, allow_ip_sans=True, allow_wildcard_certificates=True,
    enforce_hostnames=False, allowed_uri_sans=["*"], allowed_other_sans=["*"], allowed_serial_numbers=["*"],
    allowed_user_ids=["*"], cn_validations=["disabled"], require_cn=False, use_csr_common_name=False,
    use_csr_sans=False, allowed_ip_sans_cidr=[], allowed_domains=[], allow_bare_domains=False,
    allow_subdomains=False, allow_glob_domains=False,
)


@dataclass
class GenerationParams:
    """Checked generation parameters: ``exported`` (private key returned), ``fmt``, the key to use
    (``existing_key`` for ``existing``, else a new ``key_type``/``key_bits`` one), ``signature_bits``
    (0 = automatic) and ``use_pss``."""

    kind: str
    exported: bool
    fmt: str
    key_type: str
    key_bits: int
    signature_bits: int
    use_pss: bool
    existing_key: Any = None


def generation_params(backend: PkiBackend, data: FieldData) -> GenerationParams:
    """``getGenerationParams``. 400 errors, in order: ``the "exported" path parameter must be
    "internal", "existing", exported" or "kms"`` (sic); kms/external_key_ref rules; ``the "format"
    path parameter must be "pem", "der", or "pem_bundle"``; for ``existing``: ``invalid parameter for
    the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode`` and
    ``failed to lookup public key from existing key: unable to find PKI key for reference: <ref>``;
    key/hash checks (``unknown key type <t>``, ``unsupported bit length for EC key: <n>``,
    ``unsupported hash signature algorithm: <n>`` for RSA)."""
    kind = data.get("exported")
    if kind not in ("exported", "internal", "existing", "kms"):
        raise user_error('the "exported" path parameter must be "internal", "existing", exported" or "kms"')
    external = data.get("external_key_ref").strip()
    if kind == "kms" and not external:
        raise user_error('must specify "external_key_ref" on "kms"-typed generation requests')
    if kind != "kms" and external:
        raise user_error(f'cannot specify "external_key_ref" on {go_quote(kind)}-typed generation requests')
    fmt = data.get("format")
    if fmt not in FORMATS:
        raise user_error('the "format" path parameter must be "pem", "der", or "pem_bundle"')
    existing = None
    if kind in ("existing", "kms"):
        if "key_type" in data.raw or "key_bits" in data.raw:
            raise user_error("invalid parameter for the kms/existing path parameter, key_type nor key_bits "
                             "arguments can be set in this mode")
        if kind == "kms":
            raise user_error('failed to get external key: invalid key reference: must be "<config name>:<key name>"')
        try:
            existing = resolve_key(backend.state, data.get("key_ref"))
        except KeyNotFound as exc:
            raise user_error(f"failed to lookup public key from existing key: {exc.message}") from None
        key_type, key_bits = key_type_of(existing.private_key)
    else:
        key_type, key_bits = data.get("key_type"), data.get("key_bits")
    key_bits = validate_key_type_length(key_type, key_bits)
    signature_bits = data.get("signature_bits")
    if key_type == "rsa":
        signature_bits = signature_bits or 256
        if signature_bits not in (256, 384, 512):
            raise user_error(f"unsupported hash signature algorithm: {signature_bits}")
    return GenerationParams(kind=kind, exported=kind == "exported", fmt=fmt, key_type=key_type, key_bits=key_bits,
                            signature_bits=signature_bits, use_pss=data.get("use_pss"), existing_key=existing)


def ca_subject_and_sans(data: FieldData) -> tuple[cx509.Name, list[cx509.GeneralName]]:
    """The subject (CN, serialNumber, OU/O/C/L/ST/street/postalCode, duplicates removed) and the SANs
    (CN as DNS or e-mail SAN unless ``exclude_cn_from_sans``, ``alt_names``, ``ip_sans``, ``uri_sans``,
    ``other_sans``). 400 ``the value "<v>" is not a valid IP address``, ``could not parse requested
    other SAN: expected a semicolon in other SAN "<v>"`` and the other upstream name errors."""
    request = {
        "common_name": data.get("common_name"), "serial_number": data.get("serial_number"),
        "exclude_cn_from_sans": data.get("exclude_cn_from_sans"),
        "alt_names": data.get("alt_names") if data.sent("alt_names") else None,
        "ip_sans": data.get("ip_sans"), "uri_sans": data.get("uri_sans"), "other_sans": data.get("other_sans"),
    }
    try:
        names = resolve_names(CA_ROLE, request)
    except PolicyError as exc:
        raise user_error(str(exc)) from None

    def unique(values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))

    subject = build_subject(common_name=names.common_name, serial_number=names.serial_number,
                            ou=unique(data.get("ou")), organization=unique(data.get("organization")),
                            country=unique(data.get("country")), locality=unique(data.get("locality")),
                            province=unique(data.get("province")), street_address=unique(data.get("street_address")),
                            postal_code=unique(data.get("postal_code")))
    sans: list[cx509.GeneralName] = [other_name(oid, v) for oid, values in names.other_sans.items() for v in values]
    sans += [cx509.DNSName(n) for n in names.dns_names]
    sans += [cx509.RFC822Name(e) for e in names.email_addresses]
    sans += [ip_general_name(str(ip)) for ip in names.ip_addresses]
    sans += [cx509.UniformResourceIdentifier(u) for u in names.uris]
    return subject, sans


def ca_validity(backend: PkiBackend, data: FieldData, now: datetime.datetime, ordered: bool = True
                ) -> tuple[datetime.datetime, datetime.datetime, list[str]]:
    """``(not_before, not_after, warnings)`` of a self-signed CA: ``ttl`` (seconds) or ``not_after``
    (RFC 3339; both -> 400 ``Either ttl or not_after should be provided...``); ttl defaults to the
    mount's default lease TTL and is clamped to its max with the ``TTL "..." is longer than permitted
    maxTTL "..."`` warning; NotBefore = now - ``not_before_duration`` (30 s). 400 ``The certificate's
    Not Before (<t>) is later than the certificate's Not After (<t>)`` for a past ``not_after``."""
    mount = backend.mount
    far = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc)
    request = ValidityRequest(now=now, issuer_not_after=far, mount_default_ttl=mount.effective_default_ttl(),
                              mount_max_ttl=mount.effective_max_ttl(), ttl=data.get("ttl"),
                              not_after=data.get("not_after") if data.sent("not_after") else None,
                              not_after_bound="", not_before_bound="")
    try:
        not_after, warnings = leaf_not_after(request)
        not_before = backdated_not_before(now, data.get("not_before_duration"))
        if ordered:  # the CSR path never compares them
            check_order(not_before, not_after)
    except ValidityError as exc:
        raise user_error(str(exc)) from None
    return not_before, not_after, warnings
