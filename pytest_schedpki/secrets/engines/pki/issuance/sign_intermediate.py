"""``root/sign-intermediate`` and ``issuer/:ref/sign-intermediate``: sign a CSR as a CA certificate.

Follows OpenBao 2.7.2's ``pathIssuerSignIntermediate`` + ``signCert(isCA=true)`` + certutil
``SignCertificate``. Order of checks (all 400 plain unless noted):

1. ``issuer_ref`` (body on the ``root/`` path, path capture otherwise) empty -> ``missing issuer
   reference``;
2. ``format`` not pem/der/pem_bundle -> ``The "format" path parameter must be "pem" or "der"``
   (sic: upstream's text on this path);
3. the issuer -> 500 ``could not fetch the CA certificate (was one set?): unable to find PKI issuer
   for reference: <ref>`` (and the other ``signing_issuer`` errors);
4. the CSR (``"csr" is empty``, ``csr contains no data``, parse error, RSA < 2048);
5. names: CN = ``common_name`` or, when that is empty, the CSR's CN; ``alt_names``/``ip_sans``/
   ``uri_sans``/``other_sans`` (the errors of policy.resolve_names, ``the provided URI Subject
   Alternative Name "<u>" is not a valid URI``); every name is allowed;
6. ``not_before`` must parse as RFC 3339 (it does not change NotBefore); TTL/``not_after``:
   ``ttl`` (seconds) -> mount default; above the mount max it is clamped with the ``TTL "..." is
   longer than permitted maxTTL "..."`` warning; ``ttl`` + ``not_after`` -> ``Either ttl or
   not_after should be provided...``; past the signer's NotAfter is *permitted* (warning below);
7. ``skid`` hex (``cannot parse requested SKID value as hex: encoding/hex: ...``);
8. the CSR signature (``request signature invalid``); a signer whose pathLen is 0 -> ``signing
   certificate has a max path length of zero, and cannot issue further CA certificates``;
   ``max_path_length`` below -1 -> 500 ``error signing cert: unable to create certificate: x509:
   invalid MaxPathLen, must be greater or equal to -1``; a ``not_after`` before 1950 -> 500 ``error
   signing cert: unable to create certificate: The not valid after date must be on or after 1950
   January 1.`` (divergence: Go writes a GeneralizedTime, cryptography cannot).

The certificate: BasicConstraints CA:TRUE critical with pathLen = ``max_path_length`` when sent
(``-1``: none, ``0``: a literal zero), else derived from the signer (none -> none, 0 -> 0, n -> n-1);
KeyUsage CertSign+CRLSign (+DigitalSignature when ``key_usage`` is sent and names it); EKU from
``ext_key_usage`` when sent (``ext_key_usage_oids``, when sent, replaces it and - parsed as names by
upstream - yields none); NameConstraints from ``permitted_dns_domains``; SKI (``skid`` or SHA-1 of the
key); AKI; AIA/CRL DP/FreshestCRL from the URLs; subject C/ST/L/street/postalCode/O/OU/CN/serialNumber
from the request. ``use_csr_values``: subject (as encoded) and SANs from the CSR and every CSR
extension but BasicConstraints copied (a CSR KeyUsage then *replaces* CertSign+CRLSign); request
``other_sans`` rebuild the SAN from the CSR's DNS/e-mail/IP/URI names (CSR otherNames are lost).
NotBefore = now - ``not_before_duration`` (30 s; 0 means 30 s). Signature: ``signature_bits``
256/384/512, else SHA-256 (RSA) / the curve's hash (EC); ``use_pss`` for RSA signers.

Response ``data``: ``certificate``, ``issuing_ca``, ``ca_chain`` (the new certificate first, then the
signer's chain), ``serial_number``, ``expiration`` (unix seconds); ``der``: base64 DER everywhere;
``pem_bundle``: ``certificate`` = new certificate + signer's chain. Warnings, in order: beyond the
signer's NotAfter; no subject; no AIA URLs; pathLen zero; the TTL clamp. The certificate is stored
(``LIST certs``, ``cert/:serial``).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from cryptography import x509

from pytest_schedpki.secrets.framework.fields import BOOL, COMMA_STRING_SLICE, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import (
    LogicalError,
    LogicalResponse,
    internal_error,
    multierror_inner,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.ca_generate import NO_SUBJECT_WARNING
from ..authority.ca_import import AIA_WARNING
from ..authority.ca_params import CA_COMMON_FIELDS
from ..authority.issuers import REF
from ..codecs import x509 as pkix
from ..codecs.goder import readable
from ..model import CertRecord, serial_to_hex
from .csr_signing import (
    check_api_uris,
    check_csr_signature,
    copied_csr_extensions,
    csr_standard_names,
    issuer_reference,
    names_or_error,
    parse_skid,
    permissive_role,
    request_csr,
)
from .issue import signing_issuer
from .leaf import FORMATS, SigningIssuer
from .validity import (
    ValidityError,
    ValidityRequest,
    backdated_not_before,
    leaf_not_after,
    leaf_not_before,
    parse_rfc3339,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

FORMAT_ERROR = 'The "format" path parameter must be "pem" or "der"'
BEYOND_ISSUER_WARNING = ("The expiration time for the signed certificate is after the CA's expiration time. If the new "
                         "certificate is not treated as a root, validation paths with the certificate past the issuing "
                         "CA's expiration time will fail.")
PATH_ZERO_WARNING = ("Max path length of the signed certificate is zero. This certificate cannot be used to issue "
                     "intermediate CA certificates.")
SIGNER_PATH_ZERO = "signing certificate has a max path length of zero, and cannot issue further CA certificates"
BAD_PATH_LENGTH = "error signing cert: unable to create certificate: x509: invalid MaxPathLen, must be greater or equal to -1"
DEFAULT_KEY_USAGE = ["DigitalSignature", "KeyAgreement", "KeyEncipherment"]

# addIssuerRefField + addCACommonFields + addKeyUsageRoleFields + addCAIssueFields + csr/use_csr_values/
# signature_bits/skid/use_pss (upstream's schema of both paths)
FIELDS: dict[str, Field] = {
    "issuer_ref": Field(STRING, "default"), "csr": Field(STRING, ""), "use_csr_values": Field(BOOL, False),
    **CA_COMMON_FIELDS,
    "key_usage": Field(COMMA_STRING_SLICE, DEFAULT_KEY_USAGE), "ext_key_usage": Field(COMMA_STRING_SLICE, []),
    "ext_key_usage_oids": Field(COMMA_STRING_SLICE), "max_path_length": Field(INT, -1),
    "permitted_dns_domains": Field(COMMA_STRING_SLICE), "issuer_name": Field(STRING),
    "signature_bits": Field(INT, 0), "skid": Field(STRING, ""), "use_pss": Field(BOOL, False),
}


def _validity(backend: PkiBackend, req: LogicalRequest, issuer: SigningIssuer, now: datetime.datetime
              ) -> tuple[datetime.datetime, datetime.datetime, list[str]]:
    """``(not_before, not_after, warnings)``: the role of this path carries the request's
    ``not_before``/``not_after``/``ttl`` (so ``ttl`` + ``not_after`` is refused before ``not_after``
    is parsed); leaf_not_after_behavior is forced to ``permit``."""
    data = req.data
    validity = ValidityRequest(
        now=now, issuer_not_after=issuer.certificate.not_valid_after_utc,
        mount_default_ttl=backend.mount.effective_default_ttl(), mount_max_ttl=backend.mount.effective_max_ttl(),
        ttl=data.get("ttl"), not_after=None, role_not_after=data.get("not_after"),
        role_ttl=data.get("ttl"), role_not_before=data.get("not_before"), not_after_bound="", not_before_bound="",
        leaf_not_after_behavior="permit")
    try:
        if data.sent("not_after") and data.get("not_after") == "":  # sent empty (or null): still parsed
            parse_rfc3339("")
        leaf_not_before(validity)  # parsed for its errors only: certutil back-dates from now
        not_after, warnings = leaf_not_after(validity)
    except ValidityError as exc:
        raise user_error(str(exc)) from None
    not_before = backdated_not_before(now, data.get("not_before_duration"))
    return not_before.replace(microsecond=0), not_after.replace(microsecond=0), warnings


def _path_length(req: LogicalRequest, issuer: SigningIssuer) -> int:
    """``max_path_length`` when sent, else one less than the signer's (none stays none, 0 stays 0)."""
    if req.data.sent("max_path_length"):
        return req.data.get("max_path_length")
    signer = _signer_path_length(issuer.certificate)
    if signer is None:
        return -1
    return 0 if signer == 0 else signer - 1


def _signer_path_length(cert: x509.Certificate) -> int | None:
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length
    except x509.ExtensionNotFound:
        return None


def _ext_key_usage_names(req: LogicalRequest) -> list[str]:
    data = req.data
    if data.sent("ext_key_usage_oids"):  # upstream parses these OIDs with the EKU *name* parser
        return list(data.get("ext_key_usage_oids"))
    return list(data.get("ext_key_usage")) if data.sent("ext_key_usage") else []


def _has_aia_urls(cert: x509.Certificate) -> bool:
    """Whether the certificate names any OCSP server, CA issuer URL or CRL distribution point (what
    Go's parser keeps in ``OCSPServer``/``IssuingCertificateURL``/``CRLDistributionPoints``)."""
    wanted = (x509.oid.ExtensionOID.AUTHORITY_INFORMATION_ACCESS, x509.oid.ExtensionOID.CRL_DISTRIBUTION_POINTS)
    for oid in wanted:
        try:
            value = readable(cert).extensions.get_extension_for_oid(oid).value
        except x509.ExtensionNotFound:
            continue
        if isinstance(value, x509.AuthorityInformationAccess):
            if any(isinstance(d.access_location, x509.UniformResourceIdentifier) and d.access_method in (
                    x509.oid.AuthorityInformationAccessOID.OCSP, x509.oid.AuthorityInformationAccessOID.CA_ISSUERS)
                   for d in value):
                return True
        elif isinstance(value, x509.CRLDistributionPoints):
            if any(isinstance(n, x509.UniformResourceIdentifier) for dp in value for n in (dp.full_name or [])):
                return True
    return False


def sign_intermediate(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """Handle one sign-intermediate request (see the module docstring for rules and texts)."""
    data = req.data
    ref = issuer_reference(req)
    if not ref:
        raise user_error("missing issuer reference")
    fmt = data.get("format")
    if fmt not in FORMATS:
        raise user_error(FORMAT_ERROR)
    issuer = signing_issuer(backend, ref)
    csr = request_csr(req)
    use_csr_values = data.get("use_csr_values")
    role = permissive_role(use_csr_common_name=data.get("common_name") == "", use_csr_sans=False)
    names = names_or_error(role, {
        "common_name": data.get("common_name"), "alt_names": data.get("alt_names") if data.sent("alt_names") else None,
        "exclude_cn_from_sans": data.get("exclude_cn_from_sans"), "serial_number": data.get("serial_number"),
        "ip_sans": data.get("ip_sans"), "uri_sans": data.get("uri_sans"), "other_sans": data.get("other_sans")}, csr)
    check_api_uris(data.get("uri_sans"))
    now = backend.now()
    not_before, not_after, ttl_warnings = _validity(backend, req, issuer, now)
    skid = parse_skid(data.get("skid")) if data.sent("skid") else b""
    path_length = _path_length(req, issuer)
    check_csr_signature(csr)
    if _signer_path_length(issuer.certificate) == 0:
        raise user_error(SIGNER_PATH_ZERO)
    if path_length < -1:
        raise internal_error(BAD_PATH_LENGTH)

    try:
        others = [pkix.other_name(oid, v) for oid, values in names.other_sans.items() for v in values]
    except LogicalError as exc:  # upstream's signing wraps the marshaling error
        raise internal_error(f"error signing cert: {multierror_inner(exc.errors[0])}") from None
    if use_csr_values:
        subject = csr.subject
        sans = others + csr_standard_names(csr) if others else []
        copied = copied_csr_extensions(csr, drop_san=bool(others))
    else:
        def unique(name: str) -> list[str]:
            return list(dict.fromkeys(data.get(name)))

        subject = pkix.build_subject(
            common_name=names.common_name, serial_number=names.serial_number, ou=unique("ou"),
            organization=unique("organization"), country=unique("country"), locality=unique("locality"),
            province=unique("province"), street_address=unique("street_address"), postal_code=unique("postal_code"))
        sans = others + [x509.DNSName(n) for n in names.dns_names] + [x509.RFC822Name(e) for e in names.email_addresses]
        sans += [x509.IPAddress(ip) for ip in names.ip_addresses] + [x509.UniformResourceIdentifier(u) for u in names.uris]
        copied = []
    try:
        cert = pkix.sign_certificate(
            issuer_cert=issuer.certificate, issuer_key=issuer.private_key, public_key=csr.public_key(),
            subject=subject, serial=pkix.new_serial(), not_before=not_before, not_after=not_after, sans=sans,
            is_ca=True, max_path_length=path_length,
            key_usage=data.get("key_usage") if data.sent("key_usage") else [], ext_key_usage=_ext_key_usage_names(req),
            permitted_dns_domains=data.get("permitted_dns_domains"), aia=issuer.aia,
            signature_bits=data.get("signature_bits"), use_pss=data.get("use_pss"), skid=skid or None,
            csr_extensions=copied)
    except ValueError as exc:  # what cryptography cannot encode (e.g. a not_after before 1950)
        raise internal_error(f"error signing cert: unable to create certificate: {exc}") from None
    except LogicalError as exc:  # what Go writes but cannot read back: its signing wraps the error
        raise internal_error(f"error signing cert: {multierror_inner(exc.errors[0])}") from None

    response = LogicalResponse(data=intermediate_response_data(cert, issuer, fmt))
    if cert.not_valid_after_utc > issuer.certificate.not_valid_after_utc:
        response.add_warning(BEYOND_ISSUER_WARNING)
    if len(cert.subject) == 0:
        response.add_warning(NO_SUBJECT_WARNING)
    if not _has_aia_urls(cert):
        response.add_warning(AIA_WARNING)
    serial = serial_to_hex(cert.serial_number)
    backend.state.certs[serial] = CertRecord(serial_number=serial, certificate=cert, pem=pkix.pem_of(cert),
                                             issuer_id=issuer.issuer_id, issued_at=now, path=req.path)
    if readable(cert).extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0:
        response.add_warning(PATH_ZERO_WARNING)
    for warning in ttl_warnings:
        response.add_warning(warning)
    return response


def intermediate_response_data(cert: x509.Certificate, issuer: SigningIssuer, fmt: str) -> dict[str, Any]:
    """``certificate``/``issuing_ca``/``ca_chain`` in ``fmt`` plus ``serial_number`` and ``expiration``."""
    chain = list(issuer.ca_chain)
    data: dict[str, Any] = {"expiration": int(cert.not_valid_after_utc.timestamp()),
                            "serial_number": serial_to_hex(cert.serial_number)}
    if fmt == "der":
        data["certificate"] = pkix.der_b64(cert)
        data["issuing_ca"] = pkix.der_b64(issuer.certificate)
        data["ca_chain"] = [pkix.der_b64(c) for c in [cert, *chain]]
        return data
    pems = [pkix.pem_of(c) for c in [cert, *chain]]
    data["certificate"] = "\n".join(pems) if fmt == "pem_bundle" else pems[0]
    data["issuing_ca"] = pkix.pem_of(issuer.certificate)
    data["ca_chain"] = pems
    return data


def paths(backend: PkiBackend) -> list[Path]:
    """``root/sign-intermediate`` (issuer from the ``issuer_ref`` field, ``default`` unless sent) and
    ``issuer/:ref/sign-intermediate`` (update only; neither needs sudo)."""

    def handler(req: LogicalRequest) -> LogicalResponse:
        return sign_intermediate(backend, req)

    return [
        Path(r"root/sign-intermediate", dict(FIELDS), {"update": handler}),
        Path(rf"issuer/{REF}/sign-intermediate", dict(FIELDS), {"update": handler}),
    ]
