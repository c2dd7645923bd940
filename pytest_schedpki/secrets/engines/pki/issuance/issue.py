"""``issue/:role``, ``sign/:role`` and their ``issuer/:ref/...`` variants.

Order of checks (OpenBao ``metricsWrap`` + ``pathIssueSignCert``): role (400 ``unknown role: <r>``)
-> key_type for ``any`` roles (issue) -> issuer (500 ``could not fetch the CA certificate (was one
set?): unable to find PKI issuer for reference: <ref>``) -> ``format`` (400) -> CSR (sign) -> names,
validity, user ids -> signing. The certificate is stored (``CertRecord``) unless the role has
``no_store``; roles with ``generate_lease`` answer with a lease (``lease_id`` ``<mount>issue/<role>/<24
chars>``, ``lease_duration`` = seconds until NotAfter).

With ``SecretsService.enterprise`` on (Vault Enterprise emulation), each path also takes
``cert_metadata``, checked right after the role (cert_metadata.py) and stored with the serial.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cryptography import x509

from pytest_schedpki.secrets.framework.fields import BOOL, COMMA_STRING_SLICE, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import IssuerNotFound, aia_for, chain_for, issuer_key, resolve_issuer
from ..codecs import x509 as pkix
from ..codecs.gokey import public_key_or_none
from ..enterprise.cert_metadata import CERT_METADATA_FIELDS, store_cert_metadata, take_cert_metadata
from ..enterprise.gate import enterprise_variant
from ..model import CertRecord, serial_to_hex
from .csr_signing import check_csr_signature
from .leaf import FORMAT_ERROR, FORMATS, LeafRequest, SigningIssuer, build_leaf, response_data
from .policy import PolicyError, check_csr_key
from .roles import NAME_RE, Role
from .validity import ValidityError

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

KEY_TYPE_IGNORED = "parameters key_type and key_bits ignored as role had specific values"
CN_IGNORED = 'the common_name field was provided but the role is set with "use_csr_common_name" set to true'
ALT_NAMES_IGNORED = 'the alt_names field was provided but the role is set with "use_csr_sans" set to true'
BASIC_CONSTRAINTS_IGNORED = "specified CSR contained a Basic Constraints extension that was ignored during issuance"
ANY_KEY_TYPE_ERROR = ('role key type "any" not allowed for issuing certificates without providing key_type '
                      "and/or key_bits request parameters")

# fields of issue/sign (OpenBao addNonCACommonFields); issue adds key_type/key_bits, sign adds csr
COMMON_FIELDS: dict[str, Field] = {
    "role": Field(STRING), "issuer_ref": Field(STRING, "default"), "common_name": Field(STRING),
    "alt_names": Field(STRING), "ip_sans": Field(COMMA_STRING_SLICE), "uri_sans": Field(COMMA_STRING_SLICE),
    "other_sans": Field(COMMA_STRING_SLICE), "user_ids": Field(COMMA_STRING_SLICE), "serial_number": Field(STRING),
    "ttl": Field(DURATION), "not_before": Field(STRING), "not_after": Field(STRING),
    "exclude_cn_from_sans": Field(BOOL, False), "format": Field(STRING, "pem"),
    "private_key_format": Field(STRING, "der"), "remove_roots_from_chain": Field(BOOL, False),
}
ISSUE_FIELDS = {**COMMON_FIELDS, "key_type": Field(STRING, ""), "key_bits": Field(INT, 0)}
SIGN_FIELDS = {**COMMON_FIELDS, "csr": Field(STRING, "")}
_LEASE_ALPHABET = string.ascii_letters + string.digits
_BASIC_CONSTRAINTS = x509.oid.ExtensionOID.BASIC_CONSTRAINTS


def signing_issuer(backend: PkiBackend, ref: str) -> SigningIssuer:
    """The issuer ``ref`` (``default``, id or name) ready for signing (``fetchCAInfo`` with the
    issuing-certificates usage).

    Raises 500 ``could not fetch the CA certificate (was one set?): unable to find PKI issuer for
    reference: <ref>`` (or ``...: no default issuer currently configured``), ``could not fetch the CA
    certificate (was one set?): unable to fetch corresponding key for issuer <id>; unable to use this
    issuer for signing`` (no key) and ``error fetching CA certificate: error while attempting to use
    issuer <id>: requested usage issuing-certificates for issuer [id:<id> / name:<n>] but only had usage
    <usages>`` (usage lacks ``issuing-certificates``).
    """
    try:
        issuer = resolve_issuer(backend.state, ref)
    except IssuerNotFound as exc:
        raise internal_error(f"could not fetch the CA certificate (was one set?): {exc.message}") from None
    usages = [u for u in issuer.usage.split(",") if u]
    if "issuing-certificates" not in usages:
        name = f"id:{issuer.issuer_id}" + (f" / name:{issuer.issuer_name}" if issuer.issuer_name else "")
        raise internal_error(f"error fetching CA certificate: error while attempting to use issuer {issuer.issuer_id}: "
                             f"requested usage issuing-certificates for issuer [{name}] but only had usage "
                             f"{','.join(sorted(usages))}")
    key = issuer_key(backend.state, issuer)
    if key is None:
        raise internal_error(f"could not fetch the CA certificate (was one set?): unable to fetch corresponding key for "
                             f"issuer {issuer.issuer_id}; unable to use this issuer for signing")
    chain = [pkix.certificate_of_pem(p) for p in chain_for(backend.state, issuer)]
    aia = aia_for(backend.state, issuer)
    templating = issuer.enable_aia_url_templating if any(getattr(issuer, k) for k in (
        "issuing_certificates", "crl_distribution_points", "ocsp_servers")) else backend.state.config_urls.get(
        "enable_templating", False)
    if templating:
        aia = {k: [u.replace("{{issuer_id}}", issuer.issuer_id) for u in v] for k, v in aia.items()}
    return SigningIssuer(issuer_id=issuer.issuer_id, certificate=issuer.certificate, private_key=key.private_key,
                         ca_chain=chain or [issuer.certificate],
                         leaf_not_after_behavior=issuer.leaf_not_after_behavior, aia=aia)


def _role(backend: PkiBackend, name: str) -> Role:
    role = backend.state.roles.get(name)
    if role is None:
        raise user_error(f"unknown role: {name}")
    return role


def _leaf_request(req: LogicalRequest) -> LeafRequest:
    data = req.data
    return LeafRequest(
        common_name=data.get("common_name"), alt_names=data.get("alt_names") if data.sent("alt_names") else None,
        ip_sans=data.get("ip_sans"), uri_sans=data.get("uri_sans"), other_sans=data.get("other_sans"),
        user_ids=data.get("user_ids"), serial_number=data.get("serial_number"),
        exclude_cn_from_sans=data.get("exclude_cn_from_sans"), ttl=data.get("ttl"),
        not_after=data.get("not_after") if data.sent("not_after") else None,
        not_before=data.get("not_before") if data.sent("not_before") else None)


def _any_role_for_issue(role: Role, req: LogicalRequest) -> tuple[Role, bool]:
    """``pathIssue``: an ``any`` role takes key_type/key_bits from the request; other roles ignore
    them (with a warning)."""
    type_sent, bits_sent = req.data.sent("key_type"), req.data.sent("key_bits")
    if role.key_type != "any":
        return role, type_sent or bits_sent
    if not type_sent:
        raise user_error(ANY_KEY_TYPE_ERROR)
    key_type = req.data.get("key_type")
    key_bits = req.data.get("key_bits") if bits_sent else role.key_bits
    if key_type == "any":  # passes the role check unvalidated; key generation refuses it (leaf.build_leaf)
        return replace(role, key_type=key_type, key_bits=key_bits), False
    try:
        key_bits = pkix.validate_key_type_length(key_type, key_bits)
    except Exception as exc:
        raise internal_error(f"failed to validate role: {getattr(exc, 'errors', [str(exc)])[0]}") from None
    return replace(role, key_type=key_type, key_bits=key_bits), False


def _parse_csr(req: LogicalRequest) -> x509.CertificateSigningRequest:
    text = req.data.get("csr")
    if text == "":
        raise user_error('"csr" is empty')
    return pkix.parse_csr(text)


def _has_basic_constraints(csr: x509.CertificateSigningRequest) -> bool:
    try:  # a scan, not get_extension_for_class: its miss (the common case) raises ExtensionNotFound
        return any(ext.oid == _BASIC_CONSTRAINTS for ext in csr.extensions)
    except ValueError:
        return False


def _stored_key_pem(leaf: Any, data: dict[str, Any], fmt: str, private_key_format: str) -> str | None:
    """The generated key as PEM (PKCS#1/SEC1) for the CertRecord: the response's own text when it is
    that very encoding (pem/pem_bundle without pkcs8), else encoded here; ``None`` on sign."""
    if leaf.private_key is None:
        return None
    if fmt != "der" and private_key_format != "pkcs8":
        return data["private_key"]
    return pkix.private_key_pem(leaf.private_key)


def _lease_duration(backend: PkiBackend, not_after: Any) -> int:
    """Seconds from the answer's time to NotAfter (``Secret.TTL``); a NotAfter already passed gives a
    negative TTL, which the core replaces by the mount's default lease TTL (768h unless tuned), and
    the mount's max lease TTL caps it."""
    remaining = (not_after - backend.now()).total_seconds()
    seconds = int(remaining) if remaining >= 0 else backend.mount.effective_default_ttl()
    return min(seconds, backend.mount.effective_max_ttl())


def _lease_id(backend: PkiBackend, req: LogicalRequest) -> str:
    suffix = "".join(secrets.choice(_LEASE_ALPHABET) for _ in range(24))
    return f"{backend.mount.path}{req.path}/{suffix}"


def handle_issue_sign(backend: PkiBackend, req: LogicalRequest, *, use_csr: bool, from_path: bool) -> LogicalResponse:
    """One issue (``use_csr`` False) or sign request; ``from_path`` when the issuer comes from the
    ``issuer/:ref/...`` path instead of the role's ``issuer_ref``."""
    role = _role(backend, req.data.get("role"))
    metadata = take_cert_metadata(backend, req, role, "sign" if use_csr else "issue")
    key_params_ignored = False
    if not use_csr:
        role, key_params_ignored = _any_role_for_issue(role, req)
    ref = req.data.get("issuer_ref") if from_path else (role.issuer_ref or "default")
    issuer = signing_issuer(backend, ref)
    fmt = req.data.get("format")
    if fmt not in FORMATS:
        raise user_error(FORMAT_ERROR)
    now = backend.now()
    warnings: list[str] = []
    csr = None
    try:
        if use_csr:
            csr = _parse_csr(req)
            check_csr_key(role, public_key_or_none(csr))
        leaf = build_leaf(role=role, request=_leaf_request(req), issuer=issuer, now=now,
                          mount_default_ttl=backend.mount.effective_default_ttl(),
                          mount_max_ttl=backend.mount.effective_max_ttl(), csr=csr)
    except PolicyError as exc:
        raise (internal_error(str(exc)) if exc.internal else user_error(str(exc))) from None
    except ValidityError as exc:
        raise user_error(str(exc)) from None
    if csr is not None:
        check_csr_signature(csr)  # certutil checks the CSR's own signature last, before signing
    if csr is not None:
        if role.use_csr_common_name and req.data.get("common_name"):
            warnings.append(CN_IGNORED)
        if role.use_csr_sans and req.data.get("alt_names"):
            warnings.append(ALT_NAMES_IGNORED)
    warnings += leaf.warnings
    if csr is not None and _has_basic_constraints(csr) and not role.basic_constraints_valid_for_non_ca:
        warnings.append(BASIC_CONSTRAINTS_IGNORED)
    data = response_data(leaf, fmt=fmt, private_key_format=req.data.get("private_key_format"),
                         remove_roots_from_chain=req.data.get("remove_roots_from_chain"))
    response = LogicalResponse(data=data, warnings=warnings)
    if role.generate_lease:
        response.lease_id = _lease_id(backend, req)
        response.lease_duration = _lease_duration(backend, leaf.certificate.not_valid_after_utc)
    serial = serial_to_hex(leaf.certificate.serial_number)
    # no_store certificates are kept unlisted (stored=False): the API never shows them, tests can inspect them
    backend.state.certs[serial] = CertRecord(
        serial_number=serial, certificate=leaf.certificate, pem=pkix.pem_of(leaf.certificate),
        issuer_id=issuer.issuer_id, role=role.name, issued_at=now, stored=not role.no_store,
        private_key_pem=_stored_key_pem(leaf, data, fmt, req.data.get("private_key_format")))
    store_cert_metadata(backend, serial, metadata, certificate=leaf.certificate, issuer_id=issuer.issuer_id,
                        role=role.name)
    if key_params_ignored:
        response.add_warning(KEY_TYPE_IGNORED)
    return response


def paths(backend: PkiBackend) -> list[Path]:
    """``issue/:role``, ``sign/:role``, ``issuer/:ref/issue/:role``, ``issuer/:ref/sign/:role`` (update)."""

    def handler(use_csr: bool, from_path: bool):
        return lambda req: handle_issue_sign(backend, req, use_csr=use_csr, from_path=from_path)

    ref = rf"issuer/(?P<issuer_ref>{NAME_RE})"
    openbao = [
        Path(rf"issue/(?P<role>{NAME_RE})", dict(ISSUE_FIELDS), {"update": handler(False, False)}),
        Path(rf"sign/(?P<role>{NAME_RE})", dict(SIGN_FIELDS), {"update": handler(True, False)}),
        Path(rf"{ref}/issue/(?P<role>{NAME_RE})", dict(ISSUE_FIELDS), {"update": handler(False, True)}),
        Path(rf"{ref}/sign/(?P<role>{NAME_RE})", dict(SIGN_FIELDS), {"update": handler(True, True)}),
    ]
    # Vault Enterprise variants (cert_metadata) first; they match only while the emulation is on
    return [enterprise_variant(backend, p, CERT_METADATA_FIELDS) for p in openbao] + openbao
