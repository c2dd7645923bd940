"""X.509 certificates of the PKI engine, on ``cryptography``: serials, subjects, extensions, signing,
PEM/DER output. Keys are :mod:`.keys`, CSRs :mod:`.csr`, CRL encoding :mod:`.crl` (re-exported here).

The certificate profile follows OpenBao's ``sdk/helper/certutil`` on Go's ``crypto/x509``:

* extensions in Go's order: KeyUsage (critical), ExtendedKeyUsage, BasicConstraints (critical),
  SubjectKeyIdentifier, AuthorityKeyIdentifier (keyIdentifier only), AuthorityInformationAccess,
  SubjectAlternativeName (critical when the subject is empty), NameConstraints (critical),
  CRLDistributionPoints, then extra extensions; an otherName SAN is written, as OpenBao does, in a
  SAN placed after the standard ones (otherNames first);
* SKI = SHA-1 of the subjectPublicKey bits (RFC 5280 method 1, as OpenBao computes it);
* CA certificates get KeyUsage CertSign+CRLSign (+DigitalSignature only when asked), leaves exactly
  the requested usages (none -> no KeyUsage extension);
* subject strings are PrintableString when Go would pick it, UTF8String otherwise.

PEM texts come back **without** a trailing newline, as OpenBao returns them (except ``issuer/:ref``
reads, whose callers add it). Input decoding with Go's rules (``pem_decode``, ``pem_blocks``,
``pem_sequence``, ``go_asn1_error``) lives in :mod:`.pem` and is re-exported here.
"""

from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import secrets
from collections.abc import Iterable, Sequence
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.golang.url import x509_uri_invalid
from pytest_schedpki.process.library_warnings import quiet
from pytest_schedpki.secrets.framework.logical import internal_error

from .crl import build_crl, crl_der, crl_pem  # noqa: F401 - re-exported
from .csr import build_csr, csr_pem, go_san_order, parse_csr  # noqa: F401 - re-exported
from .goder import (  # noqa: F401 - name_attribute, other_name re-exported
    PLACEHOLDER_NOT_BEFORE,
    go_key_usage_der,
    go_oid_arcs,
    name_attribute,
    name_constraints_extension,
    oid_encodable,
    other_name,
    with_early_not_before,
)
from .gokey import invalid_public_key  # noqa: F401 - re-exported
from .keys import (  # noqa: F401 - re-exported
    EC_CURVES,
    RSA_BITS,
    _pss_padding,
    generate_key,
    key_type_of,
    load_private_key,
    private_key_der_b64,
    private_key_pem,
    private_key_type,
    public_keys_equal,
    signature_hash,
    validate_key_type_length,
)
from .pem import (  # noqa: F401 - re-exported
    go_asn1_error,
    go_name_problem,
    load_der_certificate,
    name_error,
    pem_blocks,
    pem_decode,
    pem_sequence,
    serial_of,
)

_EXT = ExtensionOID


def new_serial() -> int:
    """A certificate serial as certutil draws it: uniform in ``[1, 2**159)`` (so 20 DER bytes and
    ~150-159 significant bits, always positive)."""
    while True:
        serial = secrets.randbelow(1 << 159)
        if serial:
            return serial


# ------------------------------------------------------------------------------------------ naming

def subject_prefix(*, ou: Sequence[str] = (), organization: Sequence[str] = (), country: Sequence[str] = (),
                   locality: Sequence[str] = (), province: Sequence[str] = (), street_address: Sequence[str] = (),
                   postal_code: Sequence[str] = ()) -> tuple[x509.RelativeDistinguishedName, ...]:
    """The RDNs of a subject before its CN, in Go ``pkix.Name.ToRDNSequence`` order: C, ST, L, street,
    postalCode, O, OU; several values of one field share one multi-valued RDN, as Go writes them;
    empty values are left out. Immutable: a role's prefix is the same on every issue."""
    rdns: list[x509.RelativeDistinguishedName] = []
    for oid, values in ((NameOID.COUNTRY_NAME, country), (NameOID.STATE_OR_PROVINCE_NAME, province),
                        (NameOID.LOCALITY_NAME, locality), (NameOID.STREET_ADDRESS, street_address),
                        (NameOID.POSTAL_CODE, postal_code), (NameOID.ORGANIZATION_NAME, organization),
                        (NameOID.ORGANIZATIONAL_UNIT_NAME, ou)):
        values = [v for v in values if v != ""]
        if values:
            rdns.append(x509.RelativeDistinguishedName([name_attribute(oid, v) for v in values]))
    return tuple(rdns)


def subject_with(prefix: Sequence[x509.RelativeDistinguishedName], *, common_name: str = "",
                 serial_number: str = "", extra: Sequence[x509.NameAttribute] = ()) -> x509.Name:
    """``prefix`` (:func:`subject_prefix`) followed by CN, serialNumber, then ``extra`` (e.g. one ``UID``
    per user id, each its own RDN), as Go orders them."""
    rdns = list(prefix)
    if common_name:
        rdns.append(x509.RelativeDistinguishedName([name_attribute(NameOID.COMMON_NAME, common_name)]))
    if serial_number:
        rdns.append(x509.RelativeDistinguishedName([name_attribute(NameOID.SERIAL_NUMBER, serial_number)]))
    rdns.extend(x509.RelativeDistinguishedName([attr]) for attr in extra)
    return x509.Name(rdns)


def build_subject(*, common_name: str = "", ou: Sequence[str] = (), organization: Sequence[str] = (),
                  country: Sequence[str] = (), locality: Sequence[str] = (), province: Sequence[str] = (),
                  street_address: Sequence[str] = (), postal_code: Sequence[str] = (),
                  serial_number: str = "", extra: Sequence[x509.NameAttribute] = ()) -> x509.Name:
    """A subject in Go ``pkix.Name.ToRDNSequence`` order: C, ST, L, street, postalCode, O, OU, CN,
    serialNumber, then ``extra`` (e.g. one ``UID`` per user id, each its own RDN). Several values of
    one field share one multi-valued RDN, as Go writes them. Empty inputs give an empty Name."""
    prefix = subject_prefix(ou=ou, organization=organization, country=country, locality=locality, province=province,
                            street_address=street_address, postal_code=postal_code)
    return subject_with(prefix, common_name=common_name, serial_number=serial_number, extra=extra)


# --------------------------------------------------------------------------------------- profile

KEY_USAGE_NAMES = ("digitalsignature", "contentcommitment", "keyencipherment", "dataencipherment",
                   "keyagreement", "certsign", "crlsign", "encipheronly", "decipheronly")

# role ext_key_usage names (lower-cased) -> OIDs, in the order certutil.AddKeyUsages appends them
EXT_KEY_USAGE_OIDS = {
    "any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
    "serverauth": ExtendedKeyUsageOID.SERVER_AUTH,
    "clientauth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "codesigning": ExtendedKeyUsageOID.CODE_SIGNING,
    "emailprotection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "ipsecendsystem": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"),
    "ipsectunnel": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
    "ipsecuser": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"),
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocspsigning": ExtendedKeyUsageOID.OCSP_SIGNING,
    "microsoftservergatedcrypto": x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"),
    "netscapeservergatedcrypto": x509.ObjectIdentifier("2.16.840.1.113730.4.1"),
}


def _key_usage(names: Iterable[str], is_ca: bool) -> x509.ExtensionType | None:
    wanted = {n.strip().lower() for n in names}
    if is_ca:
        wanted = {"certsign", "crlsign"} | ({"digitalsignature"} & wanted)
    wanted &= set(KEY_USAGE_NAMES)
    if not wanted:
        return None
    agreement = "keyagreement" in wanted
    if not agreement and wanted & {"encipheronly", "decipheronly"}:
        return go_key_usage_der(wanted)
    return x509.KeyUsage(
        digital_signature="digitalsignature" in wanted, content_commitment="contentcommitment" in wanted,
        key_encipherment="keyencipherment" in wanted, data_encipherment="dataencipherment" in wanted,
        key_agreement=agreement, key_cert_sign="certsign" in wanted, crl_sign="crlsign" in wanted,
        encipher_only=agreement and "encipheronly" in wanted, decipher_only=agreement and "decipheronly" in wanted)


def _ext_key_usage(names: Iterable[str], oids: Iterable[str]) -> x509.ExtendedKeyUsage | None:
    wanted = {n.strip().lower() for n in names}
    usages = [oid for name, oid in EXT_KEY_USAGE_OIDS.items() if name in wanted]
    extra: list[list[int]] = []
    for text in oids:
        try:
            arcs = go_oid_arcs(text.strip())
        except ValueError:
            continue  # certutil skips OIDs whose arcs are not integers
        if len(arcs) < 2 or arcs[0] > 2 or (arcs[0] < 2 and arcs[1] >= 40):  # encoding/asn1 refuses to marshal
            raise ValueError("asn1: structure error: invalid object identifier")
        extra.append(arcs)
    for arcs in extra:  # all of them marshaled first: the created certificate is parsed afterwards
        if not oid_encodable(arcs) or max(arcs) >= 2 ** 31 or 40 * arcs[0] + arcs[1] >= 2 ** 31:
            # marshaled, but Go's parser reads arcs as non-negative 31-bit numbers only
            raise internal_error("unable to parse created certificate: x509: invalid extended key usages")
        usages.append(x509.ObjectIdentifier(".".join(map(str, arcs))))
    return x509.ExtendedKeyUsage(usages) if usages else None


def certificate_builder(not_before: datetime.datetime, not_after: datetime.datetime) -> x509.CertificateBuilder:
    """A ``CertificateBuilder`` holding the validity period as given (aware datetimes), also when
    ``not_after`` is before ``not_before``: Go's ``CreateCertificate`` writes such certificates (e.g.
    sign-intermediate/sign-verbatim with a past ``not_after``), cryptography's setters refuse them,
    its constructor does not. Raises ``ValueError`` for a time before 1950 (cryptography cannot encode
    one, where Go would write a GeneralizedTime)."""
    if not_after >= not_before:
        return x509.CertificateBuilder().not_valid_before(not_before).not_valid_after(not_after)

    def naive_utc(when: datetime.datetime) -> datetime.datetime:
        when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None) if when.tzinfo else when
        if when < datetime.datetime(1950, 1, 1):
            raise ValueError("The not valid after date must be on or after 1950 January 1.")
        return when

    return x509.CertificateBuilder(not_valid_before=naive_utc(not_before), not_valid_after=naive_utc(not_after))



def _naive_validity(not_before: datetime.datetime, not_after: datetime.datetime
                    ) -> tuple[datetime.datetime, datetime.datetime]:
    """The period as the builder's setters store it (naive UTC), for a ``not_before`` at or after 1950;
    their ``ValueError`` for a ``not_after`` before 1950. A reversed period is kept (see above)."""
    before, after = (w.astimezone(datetime.timezone.utc).replace(tzinfo=None) if w.tzinfo else w
                     for w in (not_before, not_after))
    if after < datetime.datetime(1950, 1, 1):
        raise ValueError("The not valid after date must be on or after 1950 January 1.")
    return before, after


# a role's usages are the same on every issue: the (immutable) extension values are remembered per
# (names, is_ca) / (names, OIDs); a refusal raises every time (exceptions are not remembered)
_key_usage_of = functools.lru_cache(maxsize=256)(_key_usage)
_ext_key_usage_of = functools.lru_cache(maxsize=256)(_ext_key_usage)


@functools.lru_cache(maxsize=256)
def _key_id_of(cert: x509.Certificate) -> bytes | None:
    """An issuer's SubjectKeyIdentifier digest (``None`` without one), its leaves' AKI; remembered."""
    try:
        return cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except x509.ExtensionNotFound:
        return None


def aia_extension(aia: dict) -> x509.AuthorityInformationAccess | None:
    """The AuthorityInformationAccess value for an issuer's URLs (``ocsp_servers`` first, then
    ``issuing_certificates``, as Go writes them), or ``None`` when both lists are empty."""
    access = [x509.AccessDescription(x509.oid.AuthorityInformationAccessOID.OCSP, x509.UniformResourceIdentifier(u))
              for u in aia.get("ocsp_servers") or []]
    access += [x509.AccessDescription(x509.oid.AuthorityInformationAccessOID.CA_ISSUERS,
                                      x509.UniformResourceIdentifier(u))
               for u in aia.get("issuing_certificates") or []]
    return x509.AuthorityInformationAccess(access) if access else None


def crl_distribution_points(aia: dict) -> x509.CRLDistributionPoints | None:
    """The CRLDistributionPoints value for ``crl_distribution_points`` URLs, or ``None`` when empty."""
    urls = aia.get("crl_distribution_points") or []
    if not urls:
        return None
    return x509.CRLDistributionPoints([x509.DistributionPoint([x509.UniformResourceIdentifier(u)], None, None, None)
                                       for u in urls])

def sign_certificate(*, issuer_cert: x509.Certificate | None, issuer_key: Any, public_key: Any,
                     subject: x509.Name, serial: int, not_before: datetime.datetime,
                     not_after: datetime.datetime, sans: Sequence[x509.GeneralName] = (), is_ca: bool = False,
                     max_path_length: int | None = None, key_usage: Sequence[str] = (),
                     ext_key_usage: Sequence[str] = (), ext_key_usage_oids: Sequence[str] = (),
                     permitted_dns_domains: Sequence[str] = (), aia: dict[str, list[str]] | None = None,
                     signature_bits: int = 0, use_pss: bool = False, skid: bytes | None = None,
                     extra_extensions: Sequence[x509.Extension] = (),
                     csr_extensions: Sequence[x509.Extension] = ()) -> x509.Certificate:
    """Build and sign one certificate with OpenBao's profile.

    * ``issuer_cert`` ``None`` means self-signed (issuer = ``subject``, AKI = own SKI);
      ``issuer_key`` is the signing private key;
    * ``not_before``/``not_after``: aware datetimes (the caller back-dates not_before, 30 s by default);
    * ``max_path_length``: ``None`` or negative -> no pathLen; 0 and up -> pathLen (CA only);
    * ``key_usage``/``ext_key_usage``: OpenBao names, case-insensitive (``DigitalSignature``,
      ``ServerAuth``...); for a CA only DigitalSignature is added to CertSign+CRLSign;
    * ``aia``: ``issuing_certificates`` (AIA caIssuers), ``ocsp_servers`` (AIA OCSP),
      ``crl_distribution_points`` (CRL DP), ``delta_crl_distribution_points`` (FreshestCRL) URL lists;
    * ``signature_bits``: 0/256/384/512 (see :func:`signature_hash`); an EC issuer honours a non-zero
      value as certutil's CSR signing does, so pass 0 for the paths where OpenBao always uses the
      curve's hash (issue with a generated key, root generation); ``use_pss`` for RSA issuers;
    * ``skid``: explicit SKI bytes, else computed from ``public_key``;
    * ``csr_extensions``: extensions copied as they are from a CSR (Go's ``ExtraExtensions`` of
      ``use_csr_values``/sign-verbatim): each is written after CRLDistributionPoints, in the given
      order, and any extension this function would generate with the same OID is left out (so a
      CSR's KeyUsage, SAN, SKI... win over the computed ones).
    """
    aia = aia or {}
    copied = {ext.oid for ext in csr_extensions}

    def wanted(oid: x509.ObjectIdentifier) -> bool:
        return oid not in copied

    # the validity first, as the builder's setters checked it before anything else
    early = not_before < PLACEHOLDER_NOT_BEFORE  # before 1950: written by hand afterwards (goder)
    valid_from, valid_to = _naive_validity(PLACEHOLDER_NOT_BEFORE if early else not_before, not_after)
    ski = x509.SubjectKeyIdentifier(skid) if skid else x509.SubjectKeyIdentifier.from_public_key(public_key)
    if issuer_cert is None:
        issuer_name, aki_id = subject, ski.digest
    else:
        issuer_name, aki_id = issuer_cert.subject, _key_id_of(issuer_cert)
    # the extensions are collected in a list handed to the builder once (each add_extension copies the
    # builder and its list); _add refuses a duplicate OID with add_extension's own error
    extensions: list[x509.Extension] = []

    def _add(value: x509.ExtensionType, critical: bool) -> None:
        oid = value.oid
        for ext in extensions:
            if ext.oid == oid:
                raise ValueError("This extension has already been set.")
        extensions.append(x509.Extension(oid, critical, value))

    ku = _key_usage_of(tuple(key_usage), is_ca)
    if ku is not None and wanted(_EXT.KEY_USAGE):
        _add(ku, True)
    eku = _ext_key_usage_of(tuple(ext_key_usage), tuple(ext_key_usage_oids))
    if eku is not None and wanted(_EXT.EXTENDED_KEY_USAGE):
        _add(eku, False)
    if is_ca and wanted(_EXT.BASIC_CONSTRAINTS):
        path_len = max_path_length if max_path_length is not None and max_path_length >= 0 else None
        _add(x509.BasicConstraints(ca=True, path_length=path_len), True)
    if wanted(_EXT.SUBJECT_KEY_IDENTIFIER):
        _add(ski, False)
    if aki_id and wanted(_EXT.AUTHORITY_KEY_IDENTIFIER):
        _add(x509.AuthorityKeyIdentifier(aki_id, None, None), False)
    access = aia_extension(aia)
    if access is not None and wanted(_EXT.AUTHORITY_INFORMATION_ACCESS):
        _add(access, False)
    others = [s for s in sans if isinstance(s, x509.OtherName)]
    standard = go_san_order([s for s in sans if not isinstance(s, x509.OtherName)])
    if standard and not others and wanted(_EXT.SUBJECT_ALTERNATIVE_NAME):
        _add(x509.SubjectAlternativeName(standard), len(subject) == 0)
    if permitted_dns_domains and wanted(_EXT.NAME_CONSTRAINTS):
        _add(name_constraints_extension(permitted_dns_domains), True)
    crl_dps = crl_distribution_points(aia)
    if crl_dps is not None and wanted(_EXT.CRL_DISTRIBUTION_POINTS):
        _add(crl_dps, False)
    for ext in csr_extensions:
        _add(ext.value, ext.critical)
    if others and wanted(_EXT.SUBJECT_ALTERNATIVE_NAME):
        _add(x509.SubjectAlternativeName(others + standard), False)
    deltas = aia.get("delta_crl_distribution_points") or []
    if deltas and wanted(_EXT.FRESHEST_CRL):
        _add(x509.FreshestCRL([
            x509.DistributionPoint([x509.UniformResourceIdentifier(u)], None, None, None) for u in deltas]), False)
    for ext in extra_extensions:
        _add(ext.value, ext.critical)
    # the names and validity go to the constructor as the setters would have stored them (the names are
    # x509.Name objects, the times naive UTC); the key and serial keep their setters' checks
    builder = (x509.CertificateBuilder(issuer_name=issuer_name, subject_name=subject, not_valid_before=valid_from,
                                       not_valid_after=valid_to, extensions=extensions)
               .public_key(public_key).serial_number(serial))
    for uri in (s.value for s in sans if isinstance(s, x509.UniformResourceIdentifier)):
        if x509_uri_invalid(uri):  # Go writes it, then cannot parse the certificate it made
            raise internal_error(f"unable to parse created certificate: x509: cannot parse URI {go_quote(uri)}: "
                                 "invalid domain")
    algorithm = signature_hash(issuer_key, signature_bits)
    pss = _pss_padding(issuer_key, use_pss, algorithm)
    cert = builder.sign(issuer_key, algorithm, rsa_padding=pss)
    if early:
        cert = with_early_not_before(cert, not_before, issuer_key, lambda tbs: _sign_bytes(issuer_key, tbs, algorithm, pss))
    return cert


def _sign_bytes(key: Any, data: bytes, algorithm: hashes.HashAlgorithm | None, pss: Any) -> bytes:
    """A signature over ``data`` as ``CertificateBuilder.sign`` makes it (RSA PKCS#1 v1.5 or PSS,
    ECDSA, Ed25519)."""
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, pss or padding.PKCS1v15(), algorithm)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return key.sign(data, ec.ECDSA(algorithm))
    return key.sign(data)


def ip_general_name(text: str) -> x509.IPAddress:
    """An IP SAN from its text (IPv4 or IPv6); raises ``ValueError`` when it is not an address."""
    return x509.IPAddress(ipaddress.ip_address(text.strip()))


# ------------------------------------------------------------------------------------------ output


_PEMS: dict[int, tuple[x509.Certificate, str]] = {}
_PEMS_MAX = 256
_PARSED: dict[str, x509.Certificate] = {}
_PARSED_MAX = 256


def pem_of(cert: x509.Certificate) -> str:
    """The certificate as a PEM ``CERTIFICATE`` block, without the trailing newline. The PEM of the
    last :data:`_PEMS_MAX` certificates is remembered (issuers and chains are encoded on every
    issue, a new leaf several times)."""
    cached = _PEMS.get(id(cert))
    if cached is not None and cached[0] is cert:
        return cached[1]
    pem = cert.public_bytes(serialization.Encoding.PEM).decode().rstrip("\n")
    if len(_PEMS) >= _PEMS_MAX:
        _PEMS.pop(next(iter(_PEMS)), None)
    _PEMS[id(cert)] = (cert, pem)
    return pem


def certificate_of_pem(pem: str) -> x509.Certificate:
    """A PEM certificate parsed (``ValueError`` if it is not one); the last :data:`_PARSED_MAX` texts
    parsed are remembered (chains are read back on every issue). Certificates are immutable."""
    cert = _PARSED.get(pem)
    if cert is None:
        try:
            with quiet():  # a client's certificate may warn (serial not positive)
                cert = x509.load_pem_x509_certificate(pem.encode())
        except x509.InvalidVersion:
            raise ValueError("x509: invalid version") from None
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)), None)
        _PARSED[pem] = cert
    return cert


def der_b64(cert: x509.Certificate) -> str:
    """The certificate's DER, base64 (``format: der``)."""
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def parse_pem_certificates(text: str) -> list[x509.Certificate]:
    """Every ``CERTIFICATE`` block of a PEM text, parsed (other block types are skipped).
    Raises ``ValueError`` for a block that is not a certificate; callers word their own errors."""
    try:
        return [load_der_certificate(der) for kind, der in pem_blocks(text) if kind == "CERTIFICATE"]
    except x509.InvalidVersion:  # callers treat every parse failure as ValueError
        raise ValueError("x509: invalid version") from None


def parse_pem_certificate(text: str) -> x509.Certificate:
    """The first ``CERTIFICATE`` of a PEM text; ``ValueError`` when there is none or it is invalid."""
    certs = parse_pem_certificates(text)
    if not certs:
        raise ValueError("no certificate found")
    return certs[0]


