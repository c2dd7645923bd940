"""Certificate signing requests: building one (intermediate generation) and parsing the ones clients send,
with OpenBao's error texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.secrets.framework.logical import user_error

from .gokey import invalid_public_key
from .keys import (
    _pss_padding,
    signature_hash,
)
from .pem import go_asn1_error, go_name_problem, name_error, pem_blocks


def go_san_order(sans: list[x509.GeneralName]) -> list[x509.GeneralName]:
    """Go writes DNS names, then e-mails, then IPs, then URIs (others keep their place at the end)."""
    rank = {x509.DNSName: 0, x509.RFC822Name: 1, x509.IPAddress: 2, x509.UniformResourceIdentifier: 3}
    return sorted(sans, key=lambda s: rank.get(type(s), 4))


def build_csr(private_key: Any, subject: x509.Name, sans: Sequence[x509.GeneralName] = (),
              add_basic_constraints: bool = False, signature_bits: int = 0, use_pss: bool = False
              ) -> x509.CertificateSigningRequest:
    """A CSR as OpenBao's ``intermediate/generate`` writes it: subject, a SAN extension when there are
    names (otherNames first), and with ``add_basic_constraints`` a critical CA:TRUE BasicConstraints
    without pathLen. Hash as :func:`signature_hash` (EC keys always curve-matched)."""
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    if sans:
        others = [s for s in sans if isinstance(s, x509.OtherName)]
        ordered = others + go_san_order([s for s in sans if not isinstance(s, x509.OtherName)])
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

_PARSED: dict[str, x509.CertificateSigningRequest] = {}
_PARSED_MAX = 64


def parse_csr(pem: str) -> x509.CertificateSigningRequest:
    """Parse a PEM CSR the way OpenBao does (``pem.Decode`` + ``x509.ParseCertificateRequest``).
    The last :data:`_PARSED_MAX` texts that parsed are remembered (a suite often signs one CSR many
    times; the result is a function of the text and the parsed CSR is immutable; refusals are not
    remembered and raise each time).

    The caller handles an empty value (``"csr" is empty``). Raises 400 ``csr contains no data`` when no
    PEM block decodes, and 400 ``certificate request could not be parsed: <Go asn1 error>`` when the
    DER is not a CSR (e.g. ``asn1: structure error: tags don't match (16 vs {class:0 tag:0 length:0
    isCompound:false}) {...} certificateRequest @2``).
    """
    csr = _PARSED.get(pem)
    if csr is not None:
        return csr
    csr = _parse_csr(pem)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)), None)
    _PARSED[pem] = csr
    return csr


def _parse_csr(pem: str) -> x509.CertificateSigningRequest:
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
