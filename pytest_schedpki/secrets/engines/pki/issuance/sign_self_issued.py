"""``root/sign-self-issued`` (needs ``sudo``) and ``issuer/:ref/sign-self-issued`` (does not).

OpenBao's ``pathIssuerSignSelfIssued`` parses the submitted certificate, checks that it is a CA and
self-issued, points its AIA/CRL URLs at the mount's and hands the *parsed certificate itself* to Go's
``x509.CreateCertificate`` as the template, signed by the issuer. cryptography cannot re-sign an
existing certificate, so :func:`resign` rebuilds it with a ``CertificateBuilder`` the way Go
re-encodes such a template (verified against OpenBao 2.7.2):

* kept as they are: subject (as encoded), public key, serial number, NotBefore/NotAfter;
* issuer DN = the signing issuer's subject;
* re-encoded from what Go parses: KeyUsage (always critical), ExtendedKeyUsage (non-critical; the
  OIDs Go knows first, then the others), BasicConstraints (critical), SubjectKeyIdentifier (kept;
  when missing, the first 160 bits of the SHA-256 of the public key, as Go 1.25+ computes it),
  SubjectAltName (DNS names, e-mails, IPs, URIs grouped in that order; other name kinds such as
  otherName are lost; critical only for an empty subject), CertificatePolicies (policy OIDs only,
  qualifiers lost), NameConstraints (DNS/IP/e-mail/URI subtrees, original criticality);
* AuthorityKeyIdentifier = the issuer's SKI, unless the certificate's subject equals the issuer's
  subject (a rolled root of the same name): then the certificate's own AKI (often none) is kept;
* AuthorityInformationAccess (OCSP, CA issuers) and CRLDistributionPoints = the mount's/issuer's URLs
  (none configured: none, even when the certificate had some);
* every other extension (unknown OIDs, FreshestCRL, ...) is dropped;
* signature: the certificate's own algorithm when its key type matches the issuer's (e.g.
  ECDSA-SHA384, RSA-PSS-SHA384; SHA-224 and other hashes Go does not know fall back to the default,
  and so does SHA-1, which Go would keep but cryptography cannot sign with); otherwise the issuer's
  default (SHA-256 for RSA, the curve's hash for ECDSA, Ed25519) - or, with
  ``require_matching_certificate_algorithms``, 500 ``signing certificate's public key algorithm
  (ECDSA) does not match submitted certificate's (RSA), and require_matching_certificate_algorithms
  is true``.

Order of checks: ``issuer_ref`` empty -> 400 ``missing issuer reference``; no PEM block (or an empty
one) -> 400 ``certificate could not be PEM-decoded`` (only the first block is read); DER that does not
parse -> 400 ``error parsing certificate: x509: malformed certificate`` (Go's exact parser message
varies; a CSR gives ``x509: inner and outer signature algorithm identifiers don't match``); several
certificates in one block -> 400 ``<n> certificates found in PEM file, expected 1``; no
BasicConstraints CA:TRUE -> 400 ``given certificate is not a CA certificate``; issuer DN != subject DN
-> 400 ``given certificate is not self-issued``; the issuer (500 ``could not fetch the CA certificate
(was one set?): ...``); the algorithm rule above. Response ``data``: ``certificate`` (PEM, no trailing
newline) and ``issuing_ca``; nothing is stored, no warning.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from pytest_schedpki.secrets.framework.fields import BOOL, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import REF
from ..codecs import x509 as pkix
from ..codecs.goder import readable
from ..codecs.gokey import invalid_public_key
from ..codecs.goparse import certificate_error
from ..codecs.pem import (
    go_name_problem,
    load_der_certificate,
    name_error,
    pem_decode,
    serial_error,
)
from .csr_signing import issuer_reference
from .issue import signing_issuer
from .leaf import SigningIssuer

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

FIELDS: dict[str, Field] = {
    "certificate": Field(STRING), "require_matching_certificate_algorithms": Field(BOOL, False),
    "issuer_ref": Field(STRING, "default"),
}
NOT_CA = "given certificate is not a CA certificate"
NOT_SELF_ISSUED = "given certificate is not self-issued"
NOT_PEM = "certificate could not be PEM-decoded"

# the extended key usages Go's crypto/x509 knows (ExtKeyUsage); others are "unknown" and come after
_GO_KNOWN_EKU = (
    ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE, ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH,
    ExtendedKeyUsageOID.CODE_SIGNING, ExtendedKeyUsageOID.EMAIL_PROTECTION,
    x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"), x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
    x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"), ExtendedKeyUsageOID.TIME_STAMPING, ExtendedKeyUsageOID.OCSP_SIGNING,
    x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"), x509.ObjectIdentifier("2.16.840.1.113730.4.1"),
    x509.ObjectIdentifier("1.3.6.1.4.1.311.2.1.22"), x509.ObjectIdentifier("1.3.6.1.4.1.311.61.1.1"),
)
# hashes kept from the certificate's own algorithm; SHA-1 is missing on purpose: Go would sign with it,
# cryptography cannot (the issuer's default is used instead - a known divergence)
_GO_HASHES = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


class _GoKeyError(Exception):
    """``publicKeyType``'s refusal; ``str()`` is Go's error text."""


def _der_element_length(der: bytes) -> int | None:
    """Length of the first DER TLV of ``der`` (header included), or ``None`` when malformed."""
    if len(der) < 2:
        return None
    first = der[1]
    if first < 0x80:
        return 2 + first
    count = first & 0x7F
    if count == 0 or len(der) < 2 + count:
        return None
    return 2 + count + int.from_bytes(der[2:2 + count], "big")


def parse_submitted(text: str) -> x509.Certificate:
    """The one certificate of the first PEM block of ``text`` (``pem.Decode`` + ``ParseCertificates``);
    raises the 400s described in the module docstring."""
    block, _ = pem_decode(text or "")
    if block is None or not block[1]:
        raise user_error(NOT_PEM)
    der, certs = block[1], []
    while der:
        size = _der_element_length(der)
        try:
            if size is None or size > len(der):
                raise ValueError("truncated")
            certs.append(load_der_certificate(der[:size]))
            list(readable(certs[-1]).extensions)  # what Go reads although cryptography cannot
        except x509.InvalidVersion:  # Go: a version field above v3
            raise user_error("error parsing certificate: x509: invalid version") from None
        except (ValueError, x509.DuplicateExtension, x509.UnsupportedGeneralNameType):
            reason = certificate_error(der) or go_name_problem(der, certificate=True) or "x509: malformed certificate"
            raise user_error(f"error parsing certificate: {reason}") from None
        problem = (serial_error(certs[-1]) or name_error(certs[-1], der[:size])
                   or invalid_public_key(certs[-1], "x509: malformed certificate") or certificate_error(der[:size]))
        if problem:
            raise user_error(f"error parsing certificate: {problem}")
        der = der[size:]
    if len(certs) != 1:
        raise user_error(f"{len(certs)} certificates found in PEM file, expected 1")
    return certs[0]


def _extension(cert: x509.Certificate, kind: type) -> Any:
    try:
        return readable(cert).extensions.get_extension_for_class(kind)
    except x509.ExtensionNotFound:
        return None


def _is_ca(cert: x509.Certificate) -> bool:
    ext = _extension(cert, x509.BasicConstraints)
    return ext is not None and ext.value.ca


def _go_key_type(key: Any) -> str:
    """Go ``x509.PublicKeyAlgorithm.String()`` of a key (``RSA``, ``ECDSA``, ``Ed25519``); raises
    :class:`_GoKeyError` with Go's ``publicKeyType`` texts for anything else."""
    if isinstance(key, rsa.RSAPublicKey):
        return "RSA"
    if isinstance(key, ec.EllipticCurvePublicKey):
        if key.curve.name not in ("secp224r1", "secp256r1", "secp384r1", "secp521r1"):
            raise _GoKeyError("x509: unknown elliptic curve")
        return "ECDSA"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "Ed25519"
    raise _GoKeyError(_ONLY_SUPPORTED)


_ONLY_SUPPORTED = "x509: only RSA, ECDSA, Ed25519, and ML-DSA keys supported"  # bao 2.7.2's Go


def _key_type_or_500(cert: x509.Certificate, what: str) -> str:
    """The key's Go type name, or 500 ``error determining <what> algorithm type: &{%!e(string=x509: only
    RSA, ECDSA, Ed25519, and ML-DSA keys supported)}`` (Go formats the error with ``%e``)."""
    try:
        return _go_key_type(cert.public_key())
    except _GoKeyError as exc:
        raise internal_error(f"error determining {what} algorithm type: &{{%!e(string={exc})}}") from None
    except (ValueError, TypeError, UnsupportedAlgorithm):  # cryptography cannot even load the key
        raise internal_error(f"error determining {what} algorithm type: &{{%!e(string={_ONLY_SUPPORTED})}}") from None


def _signature(cert: x509.Certificate, issuer_key: Any, same_type: bool) -> tuple[Any, Any]:
    """``(hash, rsa_padding)`` for signing the rebuilt certificate: the certificate's own algorithm
    when the key types match (an algorithm Go does not know falls back to the default), else the
    issuer key's default."""
    if same_type and not isinstance(issuer_key, ed25519.Ed25519PrivateKey):
        try:
            algorithm = cert.signature_hash_algorithm
        except Exception:  # noqa: BLE001 - unsupported algorithm: Go's UnknownSignatureAlgorithm
            algorithm = None
        factory = _GO_HASHES.get(algorithm.name) if algorithm is not None else None
        if factory is not None:
            chosen = factory()
            params = cert.signature_algorithm_parameters if isinstance(issuer_key, rsa.RSAPrivateKey) else None
            if isinstance(params, padding.PSS):
                return chosen, padding.PSS(mgf=padding.MGF1(chosen), salt_length=padding.PSS.DIGEST_LENGTH)
            return chosen, None
    return pkix.signature_hash(issuer_key, 0), None


def _go_ski(public_key: Any) -> bytes:
    """Go 1.25+ ``CreateCertificate``'s generated SKI: the leftmost 160 bits of SHA-256 over the
    subjectPublicKey bits (RFC 7093 method 1)."""
    spki = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(_subject_public_key_bits(spki)).digest()[:20]


def _subject_public_key_bits(spki: bytes) -> bytes:
    """The BIT STRING contents (without the unused-bits octet) of a SubjectPublicKeyInfo DER."""
    def skip_header(data: bytes, offset: int) -> tuple[int, int]:
        length = data[offset + 1]
        offset += 2
        if length & 0x80:
            count = length & 0x7F
            length = int.from_bytes(data[offset:offset + count], "big")
            offset += count
        return offset, length

    start, _ = skip_header(spki, 0)  # outer SEQUENCE
    alg_start, alg_len = skip_header(spki, start)  # AlgorithmIdentifier
    bits_start, bits_len = skip_header(spki, alg_start + alg_len)
    return spki[bits_start + 1:bits_start + bits_len]


def _name_constraints(value: x509.NameConstraints) -> x509.NameConstraints | None:
    """The subtrees Go keeps (DNS, IP, e-mail, URI), in Go's marshalling order."""
    kinds = (x509.DNSName, x509.IPAddress, x509.RFC822Name, x509.UniformResourceIdentifier)

    def keep(trees: Any) -> list[x509.GeneralName] | None:
        kept = sorted((t for t in (trees or []) if isinstance(t, kinds)), key=lambda t: kinds.index(type(t)))
        return kept or None

    permitted, excluded = keep(value.permitted_subtrees), keep(value.excluded_subtrees)
    if permitted is None and excluded is None:
        return None
    return x509.NameConstraints(permitted, excluded)


def resign(cert: x509.Certificate, issuer: SigningIssuer, algorithm: Any, rsa_padding: Any) -> x509.Certificate:
    """Rebuild ``cert`` as Go's ``CreateCertificate(template=cert, parent=issuer)`` writes it (see
    the module docstring) and sign it with the issuer's key."""
    issuer_cert = issuer.certificate
    builder = (pkix.certificate_builder(cert.not_valid_before_utc, cert.not_valid_after_utc)
               .subject_name(cert.subject).issuer_name(issuer_cert.subject)
               .public_key(cert.public_key()).serial_number(pkix.serial_of(cert)))
    ku = _extension(cert, x509.KeyUsage)
    if ku is not None:
        builder = builder.add_extension(ku.value, critical=True)
    eku = _extension(cert, x509.ExtendedKeyUsage)
    if eku is not None:
        usages = list(eku.value)
        ordered = [o for o in usages if o in _GO_KNOWN_EKU] + [o for o in usages if o not in _GO_KNOWN_EKU]
        builder = builder.add_extension(x509.ExtendedKeyUsage(ordered), critical=False)
    bc = _extension(cert, x509.BasicConstraints)
    builder = builder.add_extension(bc.value, critical=True)
    ski = _extension(cert, x509.SubjectKeyIdentifier)
    ski_value = ski.value.digest if ski is not None and ski.value.digest else _go_ski(cert.public_key())
    builder = builder.add_extension(x509.SubjectKeyIdentifier(ski_value), critical=False)
    issuer_ski = _extension(issuer_cert, x509.SubjectKeyIdentifier)
    own_aki = _extension(cert, x509.AuthorityKeyIdentifier)
    aki = own_aki.value.key_identifier if own_aki is not None else None
    same_name = issuer_cert.subject.public_bytes() == cert.subject.public_bytes()
    if not same_name and issuer_ski is not None and issuer_ski.value.digest:
        aki = issuer_ski.value.digest
    if aki:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier(aki, None, None), critical=False)
    access = pkix.aia_extension(issuer.aia)
    if access is not None:
        builder = builder.add_extension(access, critical=False)
    san = _extension(cert, x509.SubjectAlternativeName)
    if san is not None:
        names = [n for kind in (x509.DNSName, x509.RFC822Name, x509.IPAddress, x509.UniformResourceIdentifier)
                 for n in san.value if isinstance(n, kind)]
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=len(cert.subject) == 0)
    policies = _extension(cert, x509.CertificatePolicies)
    if policies is not None and len(policies.value):
        builder = builder.add_extension(x509.CertificatePolicies(
            [x509.PolicyInformation(p.policy_identifier, None) for p in policies.value]), critical=False)
    constraints = _extension(cert, x509.NameConstraints)
    if constraints is not None:
        kept = _name_constraints(constraints.value)
        if kept is not None:
            builder = builder.add_extension(kept, critical=constraints.critical)
    crl_dps = pkix.crl_distribution_points(issuer.aia)
    if crl_dps is not None:
        builder = builder.add_extension(crl_dps, critical=False)
    return builder.sign(issuer.private_key, algorithm, rsa_padding=rsa_padding)


def sign_self_issued(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """Handle one sign-self-issued request (rules and texts in the module docstring)."""
    ref = issuer_reference(req)
    if not ref:
        raise user_error("missing issuer reference")
    cert = parse_submitted(req.data.get("certificate"))
    if not _is_ca(cert):
        raise user_error(NOT_CA)
    if cert.issuer != cert.subject:
        raise user_error(NOT_SELF_ISSUED)
    issuer = signing_issuer(backend, ref)
    signer_type = _key_type_or_500(issuer.certificate, "signing certificate")
    cert_type = _key_type_or_500(cert, "template")
    if signer_type != cert_type and req.data.get("require_matching_certificate_algorithms"):
        raise internal_error(f"signing certificate's public key algorithm ({signer_type}) does not match submitted "
                             f"certificate's ({cert_type}), and require_matching_certificate_algorithms is true")
    algorithm, rsa_padding = _signature(cert, issuer.private_key, signer_type == cert_type)
    if pkix.serial_of(cert) < 0:
        raise internal_error("error signing self-issued certificate: x509: serial number must be positive")
    try:
        signed = resign(cert, issuer, algorithm, rsa_padding)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:  # what cryptography refuses (e.g. serial 0)
        raise internal_error(f"error signing self-issued certificate: x509: {exc}") from None
    return LogicalResponse(data={"certificate": pkix.pem_of(signed), "issuing_ca": pkix.pem_of(issuer.certificate)})


def paths(backend: PkiBackend) -> list[Path]:
    """``root/sign-self-issued`` (sudo: OpenBao lists it in ``PathsSpecial.Root``) and
    ``issuer/:ref/sign-self-issued`` (no sudo). Update only."""

    def handler(req: LogicalRequest) -> LogicalResponse:
        return sign_self_issued(backend, req)

    return [
        Path(r"root/sign-self-issued", dict(FIELDS), {"update": handler}, sudo=True),
        Path(rf"issuer/{REF}/sign-self-issued", dict(FIELDS), {"update": handler}),
    ]
