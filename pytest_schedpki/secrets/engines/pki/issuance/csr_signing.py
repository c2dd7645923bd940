"""What ``root/sign-intermediate`` and ``sign-verbatim`` share: OpenBao's ``signCert`` steps that do
not depend on a stored role.

Both paths build a role in memory (``pathIssuerSignIntermediate`` / ``buildSignVerbatimRole``) that
allows every name (``allow_any_name``, ``enforce_hostnames=false``, any IP/URI/other SAN/serial
number, ``cn_validations=["disabled"]``) and accepts every key type (``key_type="any"``: only RSA
below 2048 bits is refused). The helpers here:

* :func:`request_csr` - the ``csr`` field, decoded and parsed (400 ``"csr" is empty``, ``csr contains
  no data``, ``certificate request could not be parsed: <Go asn1 error>``) plus the key rules of a
  ``key_type="any"`` role (400 ``RSA keys < 2048 bits are unsafe and not supported``, ``Refusing to
  sign CSR with empty PublicKey...``);
* :func:`check_csr_signature` - certutil's self-signature check (400 ``request signature invalid``);
* :func:`copied_csr_extensions` - the CSR extensions certutil copies into the certificate when it
  takes values from the CSR (everything but BasicConstraints; the SAN too when other SANs are
  rebuilt);
* :func:`permissive_role` - the in-memory role, shaped for :func:`.policy.resolve_names`;
* :func:`issuer_reference` - ``extractRef`` of the ``issuer_ref`` field (``""`` means missing);
* :func:`parse_skid` - the ``skid`` hex string with Go's ``encoding/hex`` error texts;
* :func:`check_api_uris` - Go's ``url.Parse`` refusal of API ``uri_sans`` (400 ``the provided URI
  Subject Alternative Name "<u>" is not a valid URI``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.golang.url import GoURLError, go_url_string
from pytest_schedpki.secrets.framework.logical import internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest

from ..authority.ca_params import CA_ROLE
from ..authority.issuers import normalize_ref
from ..codecs.x509 import parse_csr
from .policy import PolicyError, check_csr_key, resolve_names

SIGNATURE_INVALID = "request signature invalid"
_ANY_KEY_ROLE = SimpleNamespace(key_type="any", key_bits=0)


def permissive_role(*, use_csr_common_name: bool, use_csr_sans: bool) -> SimpleNamespace:
    """The in-memory role of sign-intermediate (``use_csr_sans`` False; ``use_csr_common_name`` only
    when no ``common_name`` was sent) and sign-verbatim (both True): every name, IP, URI, other SAN,
    serial number and user id allowed; ``require_cn`` false."""
    return SimpleNamespace(**{**vars(CA_ROLE), "use_csr_common_name": use_csr_common_name,
                              "use_csr_sans": use_csr_sans, "allowed_user_ids": ["*"]})


def request_csr(req: LogicalRequest) -> x509.CertificateSigningRequest:
    """The request's ``csr`` parsed and checked as a ``key_type="any"`` role checks it.

    400 errors, in order: ``"csr" is empty``; ``csr contains no data`` (no PEM block);
    ``certificate request could not be parsed: <Go asn1 error>``; ``certificate request could not
    be parsed: x509: malformed extension`` (an extension cryptography cannot decode - Go's own text
    depends on the extension, this one is an approximation); ``RSA keys < 2048 bits are unsafe and
    not supported``; ``Refusing to sign CSR with empty PublicKey. ...`` (key algorithm unknown).
    """
    text = req.data.get("csr")
    if text == "":
        raise user_error('"csr" is empty')
    csr = parse_csr(text)
    try:
        list(csr.extensions)
    except (ValueError, x509.DuplicateExtension, x509.UnsupportedGeneralNameType):
        raise user_error("certificate request could not be parsed: x509: malformed extension") from None
    try:
        check_csr_key(_ANY_KEY_ROLE, csr.public_key())
    except PolicyError as exc:
        raise user_error(str(exc)) from None
    except (ValueError, TypeError, UnsupportedAlgorithm):  # a key cryptography cannot load: Go has none either
        raise user_error("Refusing to sign CSR with empty PublicKey. This usually means the SubjectPublicKeyInfo "
                         "field has an OID not recognized by Go, such as 1.2.840.113549.1.1.10 for rsaPSS.") from None
    return csr


_CHECKED: dict[int, tuple[x509.CertificateSigningRequest, bool]] = {}
_CHECKED_MAX = 64


def check_csr_signature(csr: x509.CertificateSigningRequest) -> None:
    """certutil ``signCertificate``'s first step: the CSR must carry a valid self-signature
    (400 ``request signature invalid``). The verdict for the last :data:`_CHECKED_MAX` CSR objects is
    remembered (``parse_csr`` hands back the same object for the same text; an entry holds its CSR,
    so an id is not reused while remembered)."""
    cached = _CHECKED.get(id(csr))
    if cached is not None and cached[0] is csr:
        valid = cached[1]
    else:
        try:
            valid = csr.is_signature_valid
        except Exception:  # noqa: BLE001 - an algorithm cryptography cannot check is not a valid signature
            valid = False
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)), None)
        _CHECKED[id(csr)] = (csr, valid)
    if not valid:
        raise user_error(SIGNATURE_INVALID)


def has_basic_constraints(csr: x509.CertificateSigningRequest) -> bool:
    """Whether the CSR requests a BasicConstraints extension (any value)."""
    return any(ext.oid == x509.oid.ExtensionOID.BASIC_CONSTRAINTS for ext in csr.extensions)


def copied_csr_extensions(csr: x509.CertificateSigningRequest, *, drop_san: bool) -> list[x509.Extension]:
    """The CSR extensions certutil puts in ``ExtraExtensions`` when it uses the CSR's values, in the
    CSR's order and with their criticality: all of them except BasicConstraints, and except the
    SubjectAlternativeName when ``drop_san`` (other SANs were requested: the SAN is then rebuilt
    from the CSR's DNS/e-mail/IP/URI names plus the other SANs)."""
    skipped = {x509.oid.ExtensionOID.BASIC_CONSTRAINTS}
    if drop_san:
        skipped.add(x509.oid.ExtensionOID.SUBJECT_ALTERNATIVE_NAME)
    return [ext for ext in csr.extensions if ext.oid not in skipped]


def csr_standard_names(csr: x509.CertificateSigningRequest) -> list[x509.GeneralName]:
    """The DNS, e-mail, IP and URI names of the CSR's SAN (what Go keeps in ``csr.DNSNames`` etc.;
    other name kinds are dropped)."""
    try:
        san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    kinds = (x509.DNSName, x509.RFC822Name, x509.IPAddress, x509.UniformResourceIdentifier)
    return [name for name in san if isinstance(name, kinds)]


def issuer_reference(req: LogicalRequest) -> str:
    """``extractRef(data, "issuer_ref")``: trimmed, any casing of ``default`` as ``default``;
    ``""`` when empty (callers answer ``missing issuer reference``)."""
    return normalize_ref(req.data.get("issuer_ref"))


_HEX = set("0123456789abcdefABCDEF")


def _go_invalid_byte(byte: int) -> str:
    char = chr(byte)
    shown = f" '{char}'" if char.isprintable() else ""
    return f"encoding/hex: invalid byte: U+{byte:04X}{shown}"


def parse_skid(text: str) -> bytes:
    """The ``skid`` parameter as bytes: ``:``, ``-`` and spaces are removed, the rest is hex.

    400 ``cannot parse requested SKID value as hex: encoding/hex: invalid byte: U+007A 'z'`` (the
    first bad byte, checked pairwise as Go does) or ``...: encoding/hex: odd length hex string``."""
    cleaned = text
    for separator in (":", "-", " "):
        cleaned = cleaned.replace(separator, "")
    raw = cleaned.encode("utf-8", errors="surrogatepass")
    prefix = "cannot parse requested SKID value as hex: "
    for index in range(1, len(raw), 2):
        for byte in (raw[index - 1], raw[index]):
            if chr(byte) not in _HEX:
                raise user_error(prefix + _go_invalid_byte(byte))
    if len(raw) % 2 == 1:
        if chr(raw[-1]) not in _HEX:
            raise user_error(prefix + _go_invalid_byte(raw[-1]))
        raise user_error(prefix + "encoding/hex: odd length hex string")
    return bytes.fromhex(cleaned) if raw else b""


def _go_url_parse_fails(uri: str) -> bool:
    """Whether Go's ``url.Parse`` refuses ``uri`` (:mod:`pytest_schedpki.golang.url`)."""
    try:
        go_url_string(uri)
    except GoURLError:
        return True
    return False


def check_api_uris(uris: list[str]) -> None:
    """400 ``the provided URI Subject Alternative Name "<u>" is not a valid URI`` for the first
    request ``uri_sans`` entry Go's ``url.Parse`` would refuse (an approximation of its rules)."""
    for uri in uris:
        if _go_url_parse_fails(uri):
            raise user_error(f"the provided URI Subject Alternative Name {go_quote(uri)} is not a valid URI")


def names_or_error(role: Any, request: dict[str, Any], csr: x509.CertificateSigningRequest | None) -> Any:
    """:func:`.policy.resolve_names` with its refusals as 400 (500 for the internal ones)."""
    try:
        return resolve_names(role, request, csr)
    except PolicyError as exc:
        raise (internal_error(str(exc)) if exc.internal else user_error(str(exc))) from None


__all__ = ["SIGNATURE_INVALID", "permissive_role", "request_csr", "check_csr_signature", "has_basic_constraints",
           "copied_csr_extensions", "csr_standard_names", "issuer_reference", "parse_skid", "check_api_uris",
           "names_or_error"]
