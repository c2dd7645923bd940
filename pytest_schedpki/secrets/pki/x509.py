"""X.509 building blocks of the PKI engine, on ``cryptography``: keys, serials, certificates, CSRs, CRLs.

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
``pem_sequence``, ``go_asn1_error``) lives in :mod:`.pem_codec` and is re-exported here.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import re
import secrets
from collections.abc import Iterable, Sequence
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.name import _ASN1Type
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ...godur import go_quote
from ...gourl import x509_uri_invalid
from ..wire import internal_error, user_error
from .goder import (
    PLACEHOLDER_NOT_BEFORE,
    go_key_usage_der,
    go_oid_arcs,
    name_constraints_extension,
    oid_encodable,
    with_early_not_before,
)
from .goder import der_tlv as _der_tlv
from .pem_codec import (  # noqa: F401 - re-exported
    go_asn1_error,
    go_name_problem,
    invalid_public_key,
    name_error,
    pem_blocks,
    pem_decode,
    pem_sequence,
)

RSA_BITS = (2048, 3072, 4096, 8192)
EC_CURVES = {224: ec.SECP224R1, 256: ec.SECP256R1, 384: ec.SECP384R1, 521: ec.SECP521R1}
_CURVE_BITS = {"secp224r1": 224, "secp256r1": 256, "secp384r1": 384, "secp521r1": 521}

# ---------------------------------------------------------------------------------------------- keys


def validate_key_type_length(key_type: str, key_bits: int) -> int:
    """certutil ``ValidateKeyTypeLength`` after ``DefaultOrValueKeyBits``: returns the effective
    ``key_bits`` (rsa 0 -> 2048, ec 0 -> 256, ed25519 -> 0).

    Raises 400 ``unknown key type <t>``, ``RSA keys < 2048 bits are unsafe and not supported: got <n>``,
    ``unsupported bit length for RSA key: <n>``, ``unsupported bit length for EC key: <n>``.
    """
    if key_type == "rsa":
        key_bits = key_bits or 2048
        if key_bits < 2048:
            raise user_error(f"RSA keys < 2048 bits are unsafe and not supported: got {key_bits}")
        if key_bits not in RSA_BITS:
            raise user_error(f"unsupported bit length for RSA key: {key_bits}")
        return key_bits
    if key_type == "ec":
        key_bits = key_bits or 256
        if key_bits not in EC_CURVES:
            raise user_error(f"unsupported bit length for EC key: {key_bits}")
        return key_bits
    if key_type == "ed25519":
        return 0
    raise user_error(f"unknown key type {key_type}")


def generate_key(key_type: str, key_bits: int) -> tuple[Any, str, int]:
    """A fresh private key: ``(private_key, key_type, key_bits)`` with the effective bit length.

    ``key_type`` ``rsa`` (2048 for 0, 3072, 4096, 8192), ``ec`` (224, 256 for 0, 384, 521) or
    ``ed25519`` (bits ignored, reported as 0). Errors as :func:`validate_key_type_length` (400).
    Keys come from the process's :mod:`.keypool` (pre-generated RSA keys; deterministic keys when
    configured).
    """
    from . import keypool

    key_bits = validate_key_type_length(key_type, key_bits)
    if key_type == "rsa":
        return keypool.current().rsa(key_bits), "rsa", key_bits
    if key_type == "ec":
        return keypool.current().ec(EC_CURVES[key_bits]()), "ec", key_bits
    return keypool.current().ed25519(), "ed25519", 0


def key_type_of(public_key: Any) -> tuple[str, int]:
    """``("rsa"|"ec"|"ed25519", bits)`` of a public (or private) key; ed25519 bits are 0.
    Other key kinds give ``("", 0)``."""
    if isinstance(public_key, (rsa.RSAPublicKey, rsa.RSAPrivateKey)):
        return "rsa", public_key.key_size
    if isinstance(public_key, (ec.EllipticCurvePublicKey, ec.EllipticCurvePrivateKey)):
        return "ec", _CURVE_BITS.get(public_key.curve.name, public_key.curve.key_size)
    if isinstance(public_key, (ed25519.Ed25519PublicKey, ed25519.Ed25519PrivateKey)):
        return "ed25519", 0
    return "", 0


def new_serial() -> int:
    """A certificate serial as certutil draws it: uniform in ``[1, 2**159)`` (so 20 DER bytes and
    ~150-159 significant bits, always positive)."""
    while True:
        serial = secrets.randbelow(1 << 159)
        if serial:
            return serial


def public_keys_equal(a: Any, b: Any) -> bool:
    """Whether two public keys are the same key (compared by their SubjectPublicKeyInfo DER)."""
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    return a.public_bytes(serialization.Encoding.DER, fmt) == b.public_bytes(serialization.Encoding.DER, fmt)


# ------------------------------------------------------------------------------------------ naming

_PRINTABLE = re.compile(r"^[A-Za-z0-9 '()+,\-./:=?]*$")


def name_attribute(oid: x509.ObjectIdentifier, value: str) -> x509.NameAttribute:
    """One subject attribute encoded as Go's asn1 would: PrintableString when every character is in
    the printable set, else UTF8String."""
    kind = _ASN1Type.PrintableString if _PRINTABLE.match(value) else _ASN1Type.UTF8String
    # Go checks no lengths (a country of any length is accepted upstream); cryptography would refuse
    return x509.NameAttribute(oid, value, _type=kind, _validate=False)


def build_subject(*, common_name: str = "", ou: Sequence[str] = (), organization: Sequence[str] = (),
                  country: Sequence[str] = (), locality: Sequence[str] = (), province: Sequence[str] = (),
                  street_address: Sequence[str] = (), postal_code: Sequence[str] = (),
                  serial_number: str = "", extra: Sequence[x509.NameAttribute] = ()) -> x509.Name:
    """A subject in Go ``pkix.Name.ToRDNSequence`` order: C, ST, L, street, postalCode, O, OU, CN,
    serialNumber, then ``extra`` (e.g. one ``UID`` per user id, each its own RDN). Several values of
    one field share one multi-valued RDN, as Go writes them. Empty inputs give an empty Name."""
    rdns: list[x509.RelativeDistinguishedName] = []
    for oid, values in ((NameOID.COUNTRY_NAME, country), (NameOID.STATE_OR_PROVINCE_NAME, province),
                        (NameOID.LOCALITY_NAME, locality), (NameOID.STREET_ADDRESS, street_address),
                        (NameOID.POSTAL_CODE, postal_code), (NameOID.ORGANIZATION_NAME, organization),
                        (NameOID.ORGANIZATIONAL_UNIT_NAME, ou)):
        values = [v for v in values if v != ""]
        if values:
            rdns.append(x509.RelativeDistinguishedName([name_attribute(oid, v) for v in values]))
    if common_name:
        rdns.append(x509.RelativeDistinguishedName([name_attribute(NameOID.COMMON_NAME, common_name)]))
    if serial_number:
        rdns.append(x509.RelativeDistinguishedName([name_attribute(NameOID.SERIAL_NUMBER, serial_number)]))
    rdns.extend(x509.RelativeDistinguishedName([attr]) for attr in extra)
    return x509.Name(rdns)


def other_name(oid: str, value: str) -> x509.OtherName:
    """An otherName SAN whose value is ``[0] EXPLICIT UTF8String`` (what OpenBao writes for
    ``other_sans``); cryptography takes the inner value as DER, built here by hand.

    An OID Go cannot marshal raises 500 ``error marshaling other SANs: strconv.Atoi: parsing "":
    invalid syntax`` / ``... cryptobyte: invalid OID: 1`` (upstream fails there too, at signing)."""
    try:
        arcs = go_oid_arcs(oid)
    except ValueError as exc:
        raise internal_error(f"error marshaling other SANs: {exc}") from None
    if not oid_encodable(arcs):
        raise internal_error(f"error marshaling other SANs: cryptobyte: invalid OID: {'.'.join(map(str, arcs))}")
    raw = value.encode()
    return x509.OtherName(x509.ObjectIdentifier(".".join(map(str, arcs))), _der_tlv(0x0C, raw))


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
    for text in oids:
        try:
            arcs = go_oid_arcs(text.strip())
        except ValueError:
            continue  # certutil skips OIDs whose arcs are not integers
        if len(arcs) < 2 or arcs[0] > 2 or (arcs[0] < 2 and arcs[1] >= 40):  # encoding/asn1 refuses to marshal
            raise ValueError("asn1: structure error: invalid object identifier")
        if not oid_encodable(arcs) or max(arcs) >= 2 ** 31 or 40 * arcs[0] + arcs[1] >= 2 ** 31:
            # marshaled, but Go's parser reads arcs as non-negative 31-bit numbers only
            raise internal_error("unable to parse created certificate: x509: invalid extended key usages")
        usages.append(x509.ObjectIdentifier(".".join(map(str, arcs))))
    return x509.ExtendedKeyUsage(usages) if usages else None


def signature_hash(signing_key: Any, signature_bits: int = 0) -> hashes.HashAlgorithm | None:
    """The digest for a signature by ``signing_key``: RSA SHA-256 unless ``signature_bits`` is 384/512;
    EC the given bits, else curve-matched (P-224/P-256 SHA-256, P-384 SHA-384, P-521 SHA-512);
    ed25519 ``None``."""
    by_bits = {256: hashes.SHA256, 384: hashes.SHA384, 512: hashes.SHA512}
    if isinstance(signing_key, ed25519.Ed25519PrivateKey):
        return None
    if signature_bits in by_bits:
        return by_bits[signature_bits]()
    if isinstance(signing_key, ec.EllipticCurvePrivateKey):
        bits = _CURVE_BITS.get(signing_key.curve.name, 256)
        return hashes.SHA384() if bits == 384 else hashes.SHA512() if bits == 521 else hashes.SHA256()
    return hashes.SHA256()


def _pss_padding(signing_key: Any, use_pss: bool, algorithm: hashes.HashAlgorithm | None) -> Any:
    if use_pss and isinstance(signing_key, rsa.RSAPrivateKey) and algorithm is not None:
        return padding.PSS(mgf=padding.MGF1(algorithm), salt_length=padding.PSS.DIGEST_LENGTH)
    return None


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

    ski = x509.SubjectKeyIdentifier(skid) if skid else x509.SubjectKeyIdentifier.from_public_key(public_key)
    if issuer_cert is None:
        issuer_name, aki_id = subject, ski.digest
    else:
        issuer_name = issuer_cert.subject
        try:
            aki_id = issuer_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        except x509.ExtensionNotFound:
            aki_id = None
    early = not_before < PLACEHOLDER_NOT_BEFORE  # before 1950: written by hand afterwards (goder)
    builder = (certificate_builder(PLACEHOLDER_NOT_BEFORE if early else not_before, not_after)
               .subject_name(subject).issuer_name(issuer_name)
               .public_key(public_key).serial_number(serial))
    ku = _key_usage(key_usage, is_ca)
    if ku is not None and wanted(x509.oid.ExtensionOID.KEY_USAGE):
        builder = builder.add_extension(ku, critical=True)
    eku = _ext_key_usage(ext_key_usage, ext_key_usage_oids)
    if eku is not None and wanted(x509.oid.ExtensionOID.EXTENDED_KEY_USAGE):
        builder = builder.add_extension(eku, critical=False)
    if is_ca and wanted(x509.oid.ExtensionOID.BASIC_CONSTRAINTS):
        path_len = max_path_length if max_path_length is not None and max_path_length >= 0 else None
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=path_len), critical=True)
    if wanted(x509.oid.ExtensionOID.SUBJECT_KEY_IDENTIFIER):
        builder = builder.add_extension(ski, critical=False)
    if aki_id and wanted(x509.oid.ExtensionOID.AUTHORITY_KEY_IDENTIFIER):
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier(aki_id, None, None), critical=False)
    access = aia_extension(aia)
    if access is not None and wanted(x509.oid.ExtensionOID.AUTHORITY_INFORMATION_ACCESS):
        builder = builder.add_extension(access, critical=False)
    others = [s for s in sans if isinstance(s, x509.OtherName)]
    standard = _go_san_order([s for s in sans if not isinstance(s, x509.OtherName)])
    if standard and not others and wanted(x509.oid.ExtensionOID.SUBJECT_ALTERNATIVE_NAME):
        builder = builder.add_extension(x509.SubjectAlternativeName(standard), critical=len(subject) == 0)
    if permitted_dns_domains and wanted(x509.oid.ExtensionOID.NAME_CONSTRAINTS):
        builder = builder.add_extension(name_constraints_extension(permitted_dns_domains), critical=True)
    crl_dps = crl_distribution_points(aia)
    if crl_dps is not None and wanted(x509.oid.ExtensionOID.CRL_DISTRIBUTION_POINTS):
        builder = builder.add_extension(crl_dps, critical=False)
    for ext in csr_extensions:
        builder = builder.add_extension(ext.value, critical=ext.critical)
    if others and wanted(x509.oid.ExtensionOID.SUBJECT_ALTERNATIVE_NAME):
        builder = builder.add_extension(x509.SubjectAlternativeName(others + standard), critical=False)
    deltas = aia.get("delta_crl_distribution_points") or []
    if deltas and wanted(x509.oid.ExtensionOID.FRESHEST_CRL):
        builder = builder.add_extension(x509.FreshestCRL([
            x509.DistributionPoint([x509.UniformResourceIdentifier(u)], None, None, None) for u in deltas]),
            critical=False)
    for ext in extra_extensions:
        builder = builder.add_extension(ext.value, critical=ext.critical)
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


def _go_san_order(sans: list[x509.GeneralName]) -> list[x509.GeneralName]:
    """Go writes DNS names, then e-mails, then IPs, then URIs (others keep their place at the end)."""
    rank = {x509.DNSName: 0, x509.RFC822Name: 1, x509.IPAddress: 2, x509.UniformResourceIdentifier: 3}
    return sorted(sans, key=lambda s: rank.get(type(s), 4))


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


def _private_format(key: Any, pkcs8: bool) -> serialization.PrivateFormat:
    if pkcs8 or isinstance(key, ed25519.Ed25519PrivateKey):
        return serialization.PrivateFormat.PKCS8
    return serialization.PrivateFormat.TraditionalOpenSSL


def private_key_pem(key: Any, pkcs8: bool = False) -> str:
    """PEM of a private key, no trailing newline: ``RSA PRIVATE KEY`` (PKCS#1) / ``EC PRIVATE KEY``
    (SEC1) unless ``pkcs8``; ed25519 is always PKCS#8 ``PRIVATE KEY``."""
    raw = key.private_bytes(serialization.Encoding.PEM, _private_format(key, pkcs8), serialization.NoEncryption())
    return raw.decode().rstrip("\n")


def private_key_der_b64(key: Any, pkcs8: bool = False) -> str:
    """Base64 DER of a private key in the same formats as :func:`private_key_pem`."""
    raw = key.private_bytes(serialization.Encoding.DER, _private_format(key, pkcs8), serialization.NoEncryption())
    return base64.b64encode(raw).decode()


def private_key_type(key: Any) -> str:
    """``private_key_type`` as OpenBao reports it: ``rsa``, ``ec`` or ``ed25519``."""
    return key_type_of(key)[0]


def build_csr(private_key: Any, subject: x509.Name, sans: Sequence[x509.GeneralName] = (),
              add_basic_constraints: bool = False, signature_bits: int = 0, use_pss: bool = False
              ) -> x509.CertificateSigningRequest:
    """A CSR as OpenBao's ``intermediate/generate`` writes it: subject, a SAN extension when there are
    names (otherNames first), and with ``add_basic_constraints`` a critical CA:TRUE BasicConstraints
    without pathLen. Hash as :func:`signature_hash` (EC keys always curve-matched)."""
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    if sans:
        others = [s for s in sans if isinstance(s, x509.OtherName)]
        ordered = others + _go_san_order([s for s in sans if not isinstance(s, x509.OtherName)])
        builder = builder.add_extension(x509.SubjectAlternativeName(ordered), critical=False)
    if add_basic_constraints:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    bits = 0 if isinstance(private_key, ec.EllipticCurvePrivateKey) else signature_bits
    algorithm = signature_hash(private_key, bits)
    return builder.sign(private_key, algorithm, rsa_padding=_pss_padding(private_key, use_pss, algorithm))


def csr_pem(csr: x509.CertificateSigningRequest) -> str:
    """A CSR as PEM ``CERTIFICATE REQUEST``, no trailing newline."""
    return csr.public_bytes(serialization.Encoding.PEM).decode().rstrip("\n")


# ------------------------------------------------------------------------------------------- input

def parse_csr(pem: str) -> x509.CertificateSigningRequest:
    """Parse a PEM CSR the way OpenBao does (``pem.Decode`` + ``x509.ParseCertificateRequest``).

    The caller handles an empty value (``"csr" is empty``). Raises 400 ``csr contains no data`` when no
    PEM block decodes, and 400 ``certificate request could not be parsed: <Go asn1 error>`` when the
    DER is not a CSR (e.g. ``asn1: structure error: tags don't match (16 vs {class:0 tag:0 length:0
    isCompound:false}) {...} certificateRequest @2``).
    """
    blocks = pem_blocks(pem)
    if not blocks:
        raise user_error("csr contains no data")
    der = blocks[0][1]
    try:
        csr = x509.load_der_x509_csr(der)
    except x509.InvalidVersion:
        # Go ignores the CSR version and signs; cryptography cannot load a CSR that is not v1
        # (docs/divergences.md)
        raise user_error("certificate request could not be parsed: x509: unsupported certificate request version") from None
    except ValueError:
        reason = go_asn1_error(der)
        if reason == "x509: malformed certificate request":  # the structure is sound: maybe a bad name
            reason = go_name_problem(der, certificate=False) or reason
        raise user_error(f"certificate request could not be parsed: {reason}") from None
    problem = name_error(csr, der) or invalid_public_key(csr, "x509: malformed certificate request")
    if problem is None:
        try:
            list(csr.extensions)  # cryptography decodes them lazily; Go's text depends on the extension
        except (ValueError, x509.DuplicateExtension, x509.UnsupportedGeneralNameType):
            problem = "x509: malformed extension"
    if problem:
        raise user_error(f"certificate request could not be parsed: {problem}")
    return csr


def parse_pem_certificates(text: str) -> list[x509.Certificate]:
    """Every ``CERTIFICATE`` block of a PEM text, parsed (other block types are skipped).
    Raises ``ValueError`` for a block that is not a certificate; callers word their own errors."""
    try:
        return [x509.load_der_x509_certificate(der) for kind, der in pem_blocks(text) if kind == "CERTIFICATE"]
    except x509.InvalidVersion:  # callers treat every parse failure as ValueError
        raise ValueError("x509: invalid version") from None


def parse_pem_certificate(text: str) -> x509.Certificate:
    """The first ``CERTIFICATE`` of a PEM text; ``ValueError`` when there is none or it is invalid."""
    certs = parse_pem_certificates(text)
    if not certs:
        raise ValueError("no certificate found")
    return certs[0]


def load_private_key(der_or_pem: bytes) -> Any:
    """A private key from PEM or DER in PKCS#1, SEC1 or PKCS#8 (unencrypted); ``ValueError`` otherwise."""
    loader = serialization.load_pem_private_key if der_or_pem.lstrip().startswith(b"-----") \
        else serialization.load_der_private_key
    try:
        return loader(der_or_pem, password=None)
    except UnsupportedAlgorithm as exc:  # an unknown key algorithm or curve is a parse failure too
        raise ValueError(str(exc)) from None


# --------------------------------------------------------------------------------------------- CRL


def build_crl(issuer_cert: x509.Certificate, issuer_key: Any,
              revoked: Iterable[tuple[int, datetime.datetime]], number: int,
              this_update: datetime.datetime, next_update: datetime.datetime,
              signature_bits: int = 0, use_pss: bool = False, delta_of: int | None = None
              ) -> x509.CertificateRevocationList:
    """A complete CRL of ``issuer_cert`` signed by ``issuer_key``: v2, issuer DN = the CA's subject,
    extensions AuthorityKeyIdentifier (the CA's SKI) + CRLNumber ``number``, one entry per
    ``(serial, revocation_time)`` without entry extensions (OpenBao writes no reason codes).
    ``this_update``/``next_update`` are aware datetimes (OpenBao: now and now + ``config/crl`` expiry).
    ``delta_of``: build a delta CRL against that complete CRL number (critical DeltaCRLIndicator)."""
    builder = (x509.CertificateRevocationListBuilder().issuer_name(issuer_cert.subject)
               .last_update(this_update).next_update(next_update))
    try:
        ski = issuer_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        builder = builder.add_extension(x509.AuthorityKeyIdentifier(ski, None, None), critical=False)
    except x509.ExtensionNotFound:
        pass
    builder = builder.add_extension(x509.CRLNumber(number), critical=False)
    if delta_of is not None:
        builder = builder.add_extension(x509.DeltaCRLIndicator(delta_of), critical=True)
    entries = [_revoked_entry(serial, when) for serial, when in revoked]
    try:  # one builder with every entry: add_revoked_certificate copies the whole list each time
        builder = x509.CertificateRevocationListBuilder(
            builder._issuer_name, builder._last_update, builder._next_update, builder._extensions, entries)
    except AttributeError:  # pragma: no cover - a cryptography without these builder attributes
        for entry in entries:
            builder = builder.add_revoked_certificate(entry)
    algorithm = signature_hash(issuer_key, signature_bits)
    return builder.sign(issuer_key, algorithm, rsa_padding=_pss_padding(issuer_key, use_pss, algorithm))


_REVOKED_ENTRIES: dict[tuple[int, datetime.datetime], x509.RevokedCertificate] = {}
_REVOKED_ENTRIES_MAX = 100_000


def _revoked_entry(serial: int, when: datetime.datetime) -> x509.RevokedCertificate:
    """The CRL entry of one revocation, made once and reused by every later rebuild (immutable)."""
    key = (serial, when)
    entry = _REVOKED_ENTRIES.get(key)
    if entry is None:
        if len(_REVOKED_ENTRIES) >= _REVOKED_ENTRIES_MAX:
            _REVOKED_ENTRIES.clear()
        entry = _REVOKED_ENTRIES[key] = (x509.RevokedCertificateBuilder().serial_number(serial)
                                         .revocation_date(when).build())
    return entry


def crl_pem(crl: x509.CertificateRevocationList) -> str:
    """The CRL as one PEM ``X509 CRL`` block, no trailing newline (from :func:`crl_der`)."""
    body = base64.encodebytes(crl_der(crl)).decode().replace("\n", "")
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join(["-----BEGIN X509 CRL-----", *lines, "-----END X509 CRL-----"])


_CRL_DER: dict[int, tuple[x509.CertificateRevocationList, bytes]] = {}
_CRL_DER_MAX = 64


def crl_der(crl: x509.CertificateRevocationList) -> bytes:
    """The CRL's DER bytes (``GET crl``); encoded once per CRL object (a CRL of thousands of entries
    costs ~1 ms to encode) and remembered for the last :data:`_CRL_DER_MAX` CRLs."""
    cached = _CRL_DER.get(id(crl))
    if cached is not None and cached[0] is crl:
        return cached[1]
    der = crl.public_bytes(serialization.Encoding.DER)
    if len(_CRL_DER) >= _CRL_DER_MAX:
        _CRL_DER.pop(next(iter(_CRL_DER)), None)
    _CRL_DER[id(crl)] = (crl, der)
    return der
