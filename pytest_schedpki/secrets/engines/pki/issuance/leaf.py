"""Building a leaf certificate for ``issue``/``sign``: role policy + validity + the X.509 profile, and
the response ``data`` in the requested ``format``.

The steps and their order are OpenBao's ``generateCreationBundle`` + ``certutil.CreateCertificate`` /
``SignCertificate``: names and SANs (policy.py), NotBefore/NotAfter (validity.py), subject user ids,
then key generation (issue) and signing by the issuer (x509.py). Errors raise
:class:`~.policy.PolicyError` / :class:`~.validity.ValidityError` carrying the upstream texts.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.secrets.framework.logical import internal_error, user_error

from ..codecs import x509 as pkix
from ..model import serial_to_hex
from .policy import UID_OID, LeafNames, PolicyError, resolve_names, resolve_user_ids
from .policy_identifiers import certificate_policies
from .validity import ValidityRequest, backdated_not_before, check_order, leaf_not_after, leaf_not_before

FORMATS = ("pem", "der", "pem_bundle")
FORMAT_ERROR = 'the "format" path parameter must be "pem", "der", or "pem_bundle"'


@dataclass
class SigningIssuer:
    """What signing needs from an issuer: ``certificate``, ``private_key``, ``ca_chain`` (parsed
    certificates from this issuer up to its root, itself first), ``leaf_not_after_behavior`` and the
    AIA URL lists (``issuing_certificates``, ``crl_distribution_points``, ``ocsp_servers``,
    ``delta_crl_distribution_points``) already resolved (issuer's own, else the mount's config/urls)."""

    issuer_id: str
    certificate: x509.Certificate
    private_key: Any
    ca_chain: list[x509.Certificate]
    leaf_not_after_behavior: str = "err"
    aia: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class LeafRequest:
    """The request values of issue/sign, already converted by the field schema. TTL in seconds;
    ``not_after``/``not_before``/``alt_names`` are ``None`` when not sent."""

    common_name: str = ""
    alt_names: str | None = None
    ip_sans: list[str] = field(default_factory=list)
    uri_sans: list[str] = field(default_factory=list)
    other_sans: list[str] = field(default_factory=list)
    user_ids: list[str] = field(default_factory=list)
    serial_number: str = ""
    exclude_cn_from_sans: bool = False
    ttl: int = 0
    not_after: str | None = None
    not_before: str | None = None


@dataclass
class Leaf:
    """A signed leaf: the certificate, its generated private key (``None`` on sign), the issuer and
    the warnings collected while building it."""

    certificate: x509.Certificate
    private_key: Any
    issuer: SigningIssuer
    warnings: list[str]


@dataclass(frozen=True)
class _RoleProfile:
    """What a role contributes to every leaf it signs, derived once per role record: the subject's RDNs
    before the CN (its O/OU/C/... values deduplicated), the key usage names and OIDs, and the extra
    extensions (policies, BasicConstraints). All immutable."""

    subject_prefix: tuple[x509.RelativeDistinguishedName, ...]
    key_usage: tuple[str, ...]
    ext_key_usage: tuple[str, ...]
    ext_key_usage_oids: tuple[str, ...]
    extra_extensions: tuple[x509.Extension, ...]


_PROFILES: dict[int, tuple[Any, _RoleProfile]] = {}
_PROFILES_MAX = 256


def _profile(role: Any) -> _RoleProfile:
    """The role's :class:`_RoleProfile`, remembered per role object: role records are frozen and a
    write stores a new record, so an object's profile never changes (a restore or a rolled-back write
    brings back records whose own profiles stay right). The entry holds the role, so its id is not
    reused while remembered."""
    cached = _PROFILES.get(id(role))
    if cached is not None and cached[0] is role:
        return cached[1]

    def dedup(values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))

    profile = _RoleProfile(
        subject_prefix=pkix.subject_prefix(
            ou=dedup(role.ou), organization=dedup(role.organization), country=dedup(role.country),
            locality=dedup(role.locality), province=dedup(role.province),
            street_address=dedup(role.street_address), postal_code=dedup(role.postal_code)),
        key_usage=tuple(role.key_usage), ext_key_usage=tuple(_ext_key_usage_names(role)),
        ext_key_usage_oids=tuple(role.ext_key_usage_oids), extra_extensions=tuple(_extra_extensions(role)))
    if not getattr(getattr(type(role), "__dataclass_params__", None), "frozen", False):
        return profile  # a mutable stand-in (none today): not remembered
    if len(_PROFILES) >= _PROFILES_MAX:
        _PROFILES.pop(next(iter(_PROFILES)), None)
    _PROFILES[id(role)] = (role, profile)
    return profile


def _subject(profile: _RoleProfile, names: LeafNames, user_ids: list[str]) -> x509.Name:
    extra = [pkix.name_attribute(UID_OID, uid) for uid in user_ids]
    return pkix.subject_with(profile.subject_prefix, common_name=names.common_name,
                             serial_number=names.serial_number, extra=extra)


def _sans(names: LeafNames) -> list[x509.GeneralName]:
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in names.dns_names]
    sans += [x509.RFC822Name(e) for e in names.email_addresses]
    sans += [x509.IPAddress(ip) for ip in names.ip_addresses]
    sans += [x509.UniformResourceIdentifier(u) for u in names.uris]
    sans += [pkix.other_name(oid, value) for oid, values in names.other_sans.items() for value in values]
    return sans


def _extra_extensions(role: Any) -> list[x509.Extension]:
    extra = certificate_policies(list(role.policy_identifiers))
    if role.basic_constraints_valid_for_non_ca:
        extra.append(x509.Extension(x509.oid.ExtensionOID.BASIC_CONSTRAINTS, True, x509.BasicConstraints(False, None)))
    return extra  # FreshestCRL (delta CRL URLs) comes from x509.sign_certificate with the other AIA data


def _ext_key_usage_names(role: Any) -> list[str]:
    names = [flag for flag, on in (("ServerAuth", role.server_flag), ("ClientAuth", role.client_flag),
                                   ("CodeSigning", role.code_signing_flag),
                                   ("EmailProtection", role.email_protection_flag)) if on]
    return names + list(role.ext_key_usage)


def build_leaf(*, role: Any, request: LeafRequest, issuer: SigningIssuer, now: datetime.datetime,
               mount_default_ttl: int, mount_max_ttl: int, csr: x509.CertificateSigningRequest | None = None) -> Leaf:
    """Check ``request`` against ``role`` and sign a leaf with ``issuer``.

    Issue (``csr`` ``None``) generates a key of the role's key_type/key_bits; sign uses the CSR's
    public key (its key was already checked with ``policy.check_csr_key``). NotBefore is ``now -
    not_before_duration`` (30 s) unless an explicit not_before applies (issue only, as certutil);
    NotAfter per :func:`validity.leaf_not_after`. X.509 times carry whole seconds.
    """
    names = resolve_names(role, {
        "common_name": request.common_name, "alt_names": request.alt_names,
        "exclude_cn_from_sans": request.exclude_cn_from_sans, "serial_number": request.serial_number,
        "ip_sans": request.ip_sans, "uri_sans": request.uri_sans, "other_sans": request.other_sans}, csr)
    validity = ValidityRequest(
        now=now, issuer_not_after=issuer.certificate.not_valid_after_utc, mount_default_ttl=mount_default_ttl,
        mount_max_ttl=mount_max_ttl, ttl=request.ttl, not_after=request.not_after, not_before=request.not_before,
        role_ttl=role.ttl, role_max_ttl=role.max_ttl, role_not_after=role.not_after, role_not_before=role.not_before,
        role_not_before_duration=role.not_before_duration, not_after_bound=role.not_after_bound,
        not_before_bound=role.not_before_bound, leaf_not_after_behavior=issuer.leaf_not_after_behavior)
    explicit_not_before = leaf_not_before(validity)
    not_after, warnings = leaf_not_after(validity)
    user_ids = resolve_user_ids(role, request.user_ids, csr)
    not_before = backdated_not_before(now, role.not_before_duration)
    private_key = None
    if csr is None:
        if explicit_not_before is not None:
            not_before = explicit_not_before
        check_order(not_before, not_after)
        if role.key_type == "any":  # an `any` role asked for key_type `any`: certutil.GeneratePrivateKey
            raise user_error("unknown key type: any")
        private_key, _, _ = pkix.generate_key(role.key_type, role.key_bits)
        public_key = private_key.public_key()
    else:
        public_key = csr.public_key()
    signature_bits = role.signature_bits
    if csr is None and isinstance(issuer.private_key, ec.EllipticCurvePrivateKey):
        signature_bits = 0  # CreateCertificate picks the curve's hash; SignCertificate honours the role's bits
    sans = _sans(names)
    profile = _profile(role)
    try:
        certificate = pkix.sign_certificate(
            issuer_cert=issuer.certificate, issuer_key=issuer.private_key, public_key=public_key,
            subject=_subject(profile, names, user_ids), serial=pkix.new_serial(),
            not_before=_whole_seconds(not_before), not_after=_whole_seconds(not_after), sans=sans,
            key_usage=profile.key_usage, ext_key_usage=profile.ext_key_usage,
            ext_key_usage_oids=profile.ext_key_usage_oids, aia=issuer.aia, signature_bits=signature_bits,
            use_pss=role.use_pss, extra_extensions=profile.extra_extensions)
    except ValueError as exc:  # what Go's CreateCertificate refuses too (e.g. an EKU OID "0")
        raise internal_error(f"unable to create certificate: {exc}") from None
    return Leaf(certificate=certificate, private_key=private_key, issuer=issuer, warnings=warnings)


def _whole_seconds(when: datetime.datetime) -> datetime.datetime:
    return when.replace(microsecond=0)


def is_self_signed(cert: x509.Certificate) -> bool:
    """``remove_roots_from_chain``'s test: AKI equal to SKI, or no AKI and issuer == subject with a
    valid self-signature."""
    try:
        aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
    except x509.ExtensionNotFound:
        aki = None
    if aki:
        try:
            ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        except x509.ExtensionNotFound:
            return False
        return aki == ski
    if cert.issuer != cert.subject:
        return False
    try:
        cert.verify_directly_issued_by(cert)
        return True
    except Exception:  # any failure (signature, algorithm) means "not self-signed"
        return False


def response_data(leaf: Leaf, *, fmt: str, private_key_format: str, remove_roots_from_chain: bool) -> dict[str, Any]:
    """The ``data`` of an issue/sign response.

    Keys: ``certificate``, ``issuing_ca``, ``ca_chain`` (omitted when empty, e.g. a root mount with
    ``remove_roots_from_chain``), ``serial_number`` (colon hex), ``not_before``/``expiration`` (int unix
    seconds), plus ``private_key``/``private_key_type`` on issue. ``pem``: PEM texts; ``der``: base64
    DER; ``pem_bundle``: ``certificate`` = key (PKCS#1/SEC1 even with pkcs8) + leaf + full chain.
    ``private_key_format`` ``pkcs8`` switches only ``private_key`` to PKCS#8; other values act as ``der``.
    """
    cert, key = leaf.certificate, leaf.private_key
    full_chain = list(leaf.issuer.ca_chain)
    chain = [c for c in full_chain if not is_self_signed(c)] if remove_roots_from_chain else full_chain
    pkcs8 = private_key_format == "pkcs8"
    data: dict[str, Any] = {
        "serial_number": serial_to_hex(cert.serial_number),
        "not_before": int(cert.not_valid_before_utc.timestamp()),
        "expiration": int(cert.not_valid_after_utc.timestamp()),
    }
    if fmt == "der":
        data["certificate"] = pkix.der_b64(cert)
        data["issuing_ca"] = pkix.der_b64(leaf.issuer.certificate)
        if chain:
            data["ca_chain"] = [pkix.der_b64(c) for c in chain]
        if key is not None:
            data["private_key"] = pkix.private_key_der_b64(key, pkcs8)
    else:
        data["issuing_ca"] = pkix.pem_of(leaf.issuer.certificate)
        if chain:
            data["ca_chain"] = [pkix.pem_of(c) for c in chain]
        if fmt == "pem_bundle":
            blocks = ([pkix.private_key_pem(key)] if key is not None else []) + [pkix.pem_of(cert)]
            blocks += [pkix.pem_of(c) for c in full_chain]
            data["certificate"] = "\n".join(blocks)
        else:
            data["certificate"] = pkix.pem_of(cert)
        if key is not None:
            data["private_key"] = pkix.private_key_pem(key, pkcs8)
    if key is not None:
        data["private_key_type"] = pkix.private_key_type(key)
    return data


__all__ = ["FORMATS", "FORMAT_ERROR", "SigningIssuer", "LeafRequest", "Leaf", "build_leaf", "response_data",
           "is_self_signed", "PolicyError"]
