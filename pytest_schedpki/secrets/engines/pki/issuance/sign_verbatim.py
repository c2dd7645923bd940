"""``sign-verbatim``, ``sign-verbatim/:role``, ``issuer/:ref/sign-verbatim`` and
``issuer/:ref/sign-verbatim/:role``: sign a CSR with the values it carries.

Follows OpenBao 2.7.2's ``pathSignVerbatim`` (``buildSignVerbatimRole`` + ``pathIssueSignCert`` with
``useCSR`` and ``useCSRValues``). No name policy applies (every CN/SAN is accepted); the subject is
the CSR's (as encoded; ``user_ids`` and ``common_name`` are accepted but change nothing), the SANs
and every CSR extension except BasicConstraints are copied. Request values act only where the CSR
has nothing:

* ``key_usage`` (default DigitalSignature, KeyAgreement, KeyEncipherment; names case-insensitive;
  ``[]`` = none) when the CSR has no KeyUsage extension;
* ``ext_key_usage`` (names) and ``ext_key_usage_oids`` when it has no ExtendedKeyUsage extension
  (so by default: no EKU);
* ``other_sans`` are added to the CSR's otherNames; when there is any, the SAN is rebuilt (other
  names first, then the CSR's DNS/e-mail/IP/URI names) instead of copied;
* a CSR BasicConstraints (even CA:TRUE) is dropped with the warning ``specified CSR contained a Basic
  Constraints extension that was ignored during issuance``, unless ``basic_constraints_valid_for_non_ca``
  (request, else the role's) writes a CA:FALSE one.

Role (``:role``; ``role`` in the body is replaced by the path's, empty on the role-less paths):
only its ``ttl``, ``max_ttl``, ``generate_lease``, ``no_store``, ``not_before_duration``,
``issuer_ref`` and ``basic_constraints_valid_for_non_ca`` apply. Issuer: ``sign-verbatim/:role``
uses the role's ``issuer_ref``; ``sign-verbatim`` the body's ``issuer_ref`` (default ``default``;
empty -> 500 ``missing issuer reference``); ``issuer/:ref/...`` the path's.

Validity: ``ttl`` -> role ttl -> mount default; max = role max_ttl -> mount max (clamp + ``TTL "..."
is longer than permitted maxTTL "..."`` warning); ``not_after`` instead of ``ttl``; beyond the
issuer's NotAfter the issuer's ``leaf_not_after_behavior`` decides (``err``: 400 ``cannot satisfy
request, as TTL would result in notAfter of <t> that is beyond the expiration of the CA certificate
at <t>``). ``not_before`` is ignored. NotBefore = now - role ``not_before_duration`` (30 s).
``signature_bits``/``use_pss`` as for sign-intermediate.

Errors, in order: 400 ``unknown role: <r>``; Vault Enterprise ``cert_metadata`` checks (only with
the emulation on, cert_metadata.py); 500 issuer errors; 400 ``the "format" path parameter must be
"pem", "der", or "pem_bundle"``; the CSR errors (``"csr" is empty``, ``csr contains no data``, parse,
``RSA keys < 2048 bits are unsafe and not supported``); other SAN parse errors; validity errors; 400
``request signature invalid``. Response as ``sign/:role`` (``not_before`` included, ``ca_chain``
dropped with ``remove_roots_from_chain`` on a root mount); warnings in order: ``common_name`` /
``alt_names`` ignored, TTL clamp, BasicConstraints ignored. The certificate is stored unless the
role has ``no_store``; a ``generate_lease`` role answers with a lease.

A ``not_after`` before 1950 gives 500 ``unable to create certificate: The not valid after date must be
on or after 1950 January 1.`` (divergence: Go writes a GeneralizedTime, cryptography cannot).

``enforce_leaf_not_after_behavior`` (Vault) is not an OpenBao parameter: it gets the ``Endpoint
ignored these unrecognized parameters`` warning and the issuer's behaviour always applies.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from cryptography import x509

from pytest_schedpki.secrets.framework.fields import BOOL, COMMA_STRING_SLICE, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import REF
from ..codecs import x509 as pkix
from ..enterprise.cert_metadata import CERT_METADATA_FIELDS, store_cert_metadata, take_cert_metadata
from ..enterprise.gate import enterprise_variant
from ..model import CertRecord, serial_to_hex
from .csr_signing import (
    check_csr_signature,
    copied_csr_extensions,
    csr_standard_names,
    has_basic_constraints,
    issuer_reference,
    names_or_error,
    permissive_role,
    request_csr,
)
from .issue import _lease_id, signing_issuer
from .leaf import FORMAT_ERROR, FORMATS, Leaf, response_data
from .validity import ValidityError, ValidityRequest, backdated_not_before, leaf_not_after

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

CN_IGNORED = 'the common_name field was provided but the role is set with "use_csr_common_name" set to true'
ALT_NAMES_IGNORED = 'the alt_names field was provided but the role is set with "use_csr_sans" set to true'
BASIC_CONSTRAINTS_IGNORED = "specified CSR contained a Basic Constraints extension that was ignored during issuance"

# getCsrSignVerbatimSchemaFields: addNonCACommonFields + addSignVerbatimRoleFields + csr
FIELDS: dict[str, Field] = {
    "role": Field(STRING), "issuer_ref": Field(STRING, "default"), "csr": Field(STRING, ""),
    "common_name": Field(STRING), "alt_names": Field(STRING), "ip_sans": Field(COMMA_STRING_SLICE),
    "uri_sans": Field(COMMA_STRING_SLICE), "other_sans": Field(COMMA_STRING_SLICE),
    "user_ids": Field(COMMA_STRING_SLICE), "serial_number": Field(STRING), "ttl": Field(DURATION),
    "not_before": Field(STRING), "not_after": Field(STRING), "exclude_cn_from_sans": Field(BOOL, False),
    "format": Field(STRING, "pem"), "private_key_format": Field(STRING, "der"),
    "remove_roots_from_chain": Field(BOOL, False),
    "key_usage": Field(COMMA_STRING_SLICE, ["DigitalSignature", "KeyAgreement", "KeyEncipherment"]),
    "ext_key_usage": Field(COMMA_STRING_SLICE, []), "ext_key_usage_oids": Field(COMMA_STRING_SLICE),
    "signature_bits": Field(INT, 0), "use_pss": Field(BOOL, False),
    "basic_constraints_valid_for_non_ca": Field(BOOL, False),
}


def _signing_issuer(backend: PkiBackend, req: LogicalRequest, role: Any, from_role_path: bool) -> Any:
    """``fetchCaSigningBundle``: the role's issuer on ``sign-verbatim/:role``, else the
    ``issuer_ref`` field (body or path); empty -> 500 ``missing issuer reference``."""
    if from_role_path:
        ref = (role.issuer_ref if role is not None else "") or "default"
    else:
        ref = issuer_reference(req)
        if not ref:
            raise internal_error("missing issuer reference")
    return signing_issuer(backend, ref)


def _verbatim_role(req: LogicalRequest, role: Any) -> SimpleNamespace:
    """``buildSignVerbatimRole``: the request's key usages / signature settings plus the few role
    values that apply (seconds for TTLs)."""
    data = req.data
    bc_valid = data.get("basic_constraints_valid_for_non_ca")
    if role is not None and not data.sent("basic_constraints_valid_for_non_ca"):
        bc_valid = role.basic_constraints_valid_for_non_ca
    return SimpleNamespace(
        key_usage=list(data.get("key_usage")), ext_key_usage=list(data.get("ext_key_usage")),
        ext_key_usage_oids=list(data.get("ext_key_usage_oids")), signature_bits=data.get("signature_bits"),
        use_pss=data.get("use_pss"), basic_constraints_valid_for_non_ca=bc_valid,
        ttl=role.ttl if role is not None and role.ttl > 0 else 0,
        max_ttl=role.max_ttl if role is not None and role.max_ttl > 0 else 0,
        not_before_duration=role.not_before_duration if role is not None and role.not_before_duration > 0 else 0,
        generate_lease=bool(role is not None and role.generate_lease), no_store=bool(role is not None and role.no_store),
        name=role.name if role is not None else "")


def sign_verbatim(backend: PkiBackend, req: LogicalRequest, *, from_role_path: bool) -> LogicalResponse:
    """Handle one sign-verbatim request (see the module docstring). ``from_role_path`` is true on
    ``sign-verbatim/:role`` (the only path whose issuer comes from the role)."""
    data = req.data
    role_name = data.get("role")
    role = None
    if role_name:
        role = backend.state.roles.get(role_name)
        if role is None:
            raise user_error(f"unknown role: {role_name}")
    metadata = take_cert_metadata(backend, req, role, "sign-verbatim")
    vrole = _verbatim_role(req, role)
    issuer = _signing_issuer(backend, req, role, from_role_path)
    fmt = data.get("format")
    if fmt not in FORMATS:
        raise user_error(FORMAT_ERROR)
    csr = request_csr(req)
    names = names_or_error(permissive_role(use_csr_common_name=True, use_csr_sans=True), {
        "common_name": data.get("common_name"), "alt_names": data.get("alt_names") if data.sent("alt_names") else None,
        "exclude_cn_from_sans": data.get("exclude_cn_from_sans"), "serial_number": data.get("serial_number"),
        "ip_sans": data.get("ip_sans"), "uri_sans": data.get("uri_sans"), "other_sans": data.get("other_sans")}, csr)
    now = backend.now()
    validity = ValidityRequest(
        now=now, issuer_not_after=issuer.certificate.not_valid_after_utc,
        mount_default_ttl=backend.mount.effective_default_ttl(), mount_max_ttl=backend.mount.effective_max_ttl(),
        ttl=data.get("ttl"), not_after=data.get("not_after") if data.sent("not_after") else None,
        role_ttl=vrole.ttl, role_max_ttl=vrole.max_ttl, not_after_bound="", not_before_bound="",
        leaf_not_after_behavior=issuer.leaf_not_after_behavior)
    try:
        not_after, ttl_warnings = leaf_not_after(validity)
    except ValidityError as exc:
        raise user_error(str(exc)) from None
    bc_requested = has_basic_constraints(csr)
    check_csr_signature(csr)

    others = [pkix.other_name(oid, v) for oid, values in names.other_sans.items() for v in values]
    extra = []
    if vrole.basic_constraints_valid_for_non_ca:
        extra.append(x509.Extension(x509.oid.ExtensionOID.BASIC_CONSTRAINTS, True, x509.BasicConstraints(False, None)))
    try:
        cert = pkix.sign_certificate(
            issuer_cert=issuer.certificate, issuer_key=issuer.private_key, public_key=csr.public_key(),
            subject=csr.subject, serial=pkix.new_serial(),
            not_before=backdated_not_before(now, vrole.not_before_duration).replace(microsecond=0),
            not_after=not_after.replace(microsecond=0), sans=others + csr_standard_names(csr) if others else [],
            key_usage=vrole.key_usage, ext_key_usage=vrole.ext_key_usage, ext_key_usage_oids=vrole.ext_key_usage_oids,
            aia=issuer.aia, signature_bits=vrole.signature_bits, use_pss=vrole.use_pss, extra_extensions=extra,
            csr_extensions=copied_csr_extensions(csr, drop_san=bool(others)))
    except ValueError as exc:  # what cryptography cannot encode (e.g. a not_after before 1950)
        raise internal_error(f"unable to create certificate: {exc}") from None

    response = LogicalResponse(data=response_data(
        Leaf(certificate=cert, private_key=None, issuer=issuer, warnings=[]), fmt=fmt,
        private_key_format=data.get("private_key_format"), remove_roots_from_chain=data.get("remove_roots_from_chain")))
    if vrole.generate_lease:
        response.lease_id = _lease_id(backend, req)
        response.lease_duration = max(0, int((cert.not_valid_after_utc - now).total_seconds()))
    serial = serial_to_hex(cert.serial_number)
    # no_store certificates are kept unlisted (stored=False) so tests can still inspect them
    backend.state.certs[serial] = CertRecord(serial_number=serial, certificate=cert, pem=pkix.pem_of(cert),
                                             issuer_id=issuer.issuer_id, role=vrole.name, issued_at=now,
                                             stored=not vrole.no_store)
    store_cert_metadata(backend, serial, metadata, certificate=cert, issuer_id=issuer.issuer_id, role=vrole.name)
    if data.get("common_name"):
        response.add_warning(CN_IGNORED)
    if data.get("alt_names"):
        response.add_warning(ALT_NAMES_IGNORED)
    for warning in ttl_warnings:
        response.add_warning(warning)
    if bc_requested and not vrole.basic_constraints_valid_for_non_ca:
        response.add_warning(BASIC_CONSTRAINTS_IGNORED)
    return response


def paths(backend: PkiBackend) -> list[Path]:
    """The four sign-verbatim paths (update only, no sudo). As upstream's ``OptionalParamRegex``,
    the role part is ``.+`` (``sign-verbatim/a/b`` -> ``unknown role: a/b``) and the role-less paths
    capture an empty ``role`` (a body ``role`` is replaced, with the framework's warning). Each has
    a Vault Enterprise twin declaring ``cert_metadata`` (see enterprise/gate.py), listed first."""

    def handler(from_role_path: bool):
        return lambda req: sign_verbatim(backend, req, from_role_path=from_role_path)

    openbao = [
        Path(r"sign-verbatim(?P<role>)", dict(FIELDS), {"update": handler(False)}),
        Path(r"sign-verbatim/(?P<role>.+)", dict(FIELDS), {"update": handler(True)}),
        Path(rf"issuer/{REF}/sign-verbatim(?P<role>)", dict(FIELDS), {"update": handler(False)}),
        Path(rf"issuer/{REF}/sign-verbatim/(?P<role>.+)", dict(FIELDS), {"update": handler(False)}),
    ]
    return [enterprise_variant(backend, p, CERT_METADATA_FIELDS) for p in openbao] + openbao
