"""Role policy for leaf certificates: which names, SANs, user ids and keys a role allows.

Pure functions over a role record (see roles.py) and request values, following OpenBao's
``validateNames``/``validateCommonName``/``generateCreationBundle``/``signCert``. Every refusal raises
:class:`PolicyError` whose ``str()`` is OpenBao's exact text; ``internal`` marks the few that OpenBao
answers with 500 instead of 400.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.golang.glob import go_glob  # noqa: F401 - also imported from here
from pytest_schedpki.golang.url import GoURLError, go_url_string

from ..codecs.x509 import key_type_of

UID_OID = x509.ObjectIdentifier("0.9.2342.19200300.100.1.1")

_LABEL = r"([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])"
HOSTNAME_RE = re.compile(rf"^(\*\.)?({_LABEL}\.)*{_LABEL}\.?$")
LEFT_WILD_LABEL_RE = re.compile(rf"^(\*|\*{_LABEL}|{_LABEL}\*|{_LABEL}\*{_LABEL})$")


class PolicyError(ValueError):
    """A refused request: ``str()`` is OpenBao's text; ``internal`` -> 500 multierror, else 400."""

    def __init__(self, message: str, internal: bool = False):
        super().__init__(message)
        self.internal = internal


def to_ascii(name: str) -> str:
    """Go ``idna.New(StrictDomainName, VerifyDNSLength).ToASCII``: non-ASCII labels become punycode
    without case mapping (``Ä.example.com`` -> ``xn--7ba.example.com``).

    Raises PolicyError ``idna: invalid label "<name>"`` for an empty label (``a..b``, trailing dot)
    and ``idna: invalid label "<label>"`` for a label over 63 octets or an undecodable one.
    ``""`` stays ``""``.
    """
    if name == "":
        return ""
    out = []
    for label in name.split("."):
        if label == "":
            raise PolicyError(f"idna: invalid label {go_quote(name)}")
        if "\ufffd" in label:  # what Go decoded from invalid text (or a lone surrogate escape)
            raise PolicyError(f"idna: invalid label {go_quote(label)}")
        if not label.isascii():
            label = "xn--" + label.encode("punycode").decode("ascii")  # no mapping, as Go's bare profile
        elif label.lower().startswith("xn--"):
            try:
                label[4:].encode().decode("punycode")
            except UnicodeError:
                raise PolicyError(f"idna: invalid label {go_quote(label[4:])}") from None
        if len(label) > 63:
            raise PolicyError(f"idna: invalid label {go_quote(label)}")
        out.append(label)
    return ".".join(out)


def _host_ok(name: str) -> bool:
    try:
        return bool(HOSTNAME_RE.match(to_ascii(name)))
    except PolicyError:
        return False


def _name_allowed(role: Any, name: str) -> bool:
    reduced = email_domain = name
    wildcard_label = ""
    is_email = is_wildcard = False
    if "@" in reduced:
        parts = reduced.split("@")
        if len(parts) != 2:
            return False
        reduced = email_domain = parts[1]
        is_email = True
    if "*" in reduced:
        is_wildcard = True
        if not role.allow_wildcard_certificates or reduced.count("*") > 1:
            return False
        pieces = reduced.split(".", 1)
        wildcard_label, reduced = (pieces[0], pieces[1]) if len(pieces) == 2 else (pieces[0], "")
        if "*" in reduced:
            return False
    if is_email and is_wildcard:
        return False
    if role.enforce_hostnames:
        if reduced != "" and not _host_ok(reduced):
            return False
        if is_wildcard and not LEFT_WILD_LABEL_RE.match(wildcard_label):
            return False
    if role.allow_any_name:
        return True
    if role.allow_localhost:
        if reduced in ("localhost", "localdomain") or (is_email and email_domain in ("localhost", "localdomain")):
            return True
        if role.allow_subdomains:
            for base in ("localhost", "localdomain"):
                if reduced.endswith("." + base) or (is_wildcard and reduced == base):
                    return True
    for domain in role.allowed_domains:
        if domain == "":
            continue
        if role.allow_bare_domains and (name.lower() == domain.lower()
                                        or (is_email and email_domain.lower() == domain.lower())):
            return True
        if role.allow_subdomains and (reduced.endswith("." + domain)
                                      or (is_wildcard and reduced.lower() == domain.lower())):
            return True
        if role.allow_glob_domains and "*" in domain and go_glob(domain, name):
            return True
    return False


def first_disallowed_name(role: Any, names: list[str]) -> str:
    """``validateNames``: the first of ``names`` (DNS names or e-mails) the role refuses, else ``""``.
    Honours allow_any_name, allow_localhost, allowed_domains with allow_bare_domains /
    allow_subdomains / allow_glob_domains, allow_wildcard_certificates and enforce_hostnames."""
    for name in names:
        if not _name_allowed(role, name):
            return name
    return ""


def common_name_refused(role: Any, common_name: str) -> bool:
    """``validateCommonName``: name rules plus ``cn_validations`` (``email``/``hostname``/``disabled``)."""
    validations = list(role.cn_validations)
    if validations == ["disabled"]:
        return False
    if first_disallowed_name(role, [common_name]):
        return True
    if not validations:
        return False
    kind = "email" if "@" in common_name else "hostname"
    return kind not in validations


def parse_other_sans(values: list[str]) -> dict[str, list[str]]:
    """``<oid>;UTF8:<value>`` entries -> ``{oid: [values]}`` (insertion ordered). Raises PolicyError
    ``expected a semicolon in other SAN "<v>"``, ``expected a colon in other SAN "<v>"``, ``only utf8
    other SANs are supported; found non-supported type in other SAN "<v>"`` (callers add a prefix)."""
    result: dict[str, list[str]] = {}
    for value in values:
        if ";" not in value:
            raise PolicyError(f"expected a semicolon in other SAN {go_quote(value)}")
        oid, typed = value.split(";", 1)
        if ":" not in typed:
            raise PolicyError(f"expected a colon in other SAN {go_quote(value)}")
        kind, text = typed.split(":", 1)
        if kind.lower() not in ("utf8", "utf-8"):
            raise PolicyError(f"only utf8 other SANs are supported; found non-supported type in other SAN {go_quote(value)}")
        result.setdefault(oid, []).append(text)
    return result


def check_other_sans(role: Any, requested: dict[str, list[str]]) -> None:
    """``validateOtherSANs`` against ``allowed_other_sans`` (``["*"]`` allows all; values are globs).
    Raises ``other SAN OID <oid> not allowed by this role`` or ``other SAN <v> not allowed for OID
    <oid> by this role``."""
    if list(role.allowed_other_sans) == ["*"]:
        return
    try:
        allowed = parse_other_sans(list(role.allowed_other_sans))
    except PolicyError as exc:
        raise PolicyError(f"error parsing role's allowed SANs: {exc}") from None
    for oid, values in requested.items():
        if oid == "":  # upstream reports the refused OID by name; an empty one slips through unrefused
            continue
        for value in values:
            if oid not in allowed:
                raise PolicyError(f"other SAN OID {oid} not allowed by this role")
            if not any(go_glob(pattern, value) for pattern in allowed[oid]):
                raise PolicyError(f"other SAN {value} not allowed for OID {oid} by this role")


def user_id_allowed(role: Any, user_id: str) -> bool:
    """``validateUserId``: case-insensitive member of ``allowed_user_ids`` or a ``*`` glob match;
    an empty list allows nothing."""
    allowed = list(role.allowed_user_ids)
    if user_id.lower() in (a.lower() for a in allowed):
        return True
    return any(a and "*" in a and go_glob(a, user_id) for a in allowed)


def serial_number_allowed(role: Any, serial_number: str) -> bool:
    """``validateSerialNumber`` (the subject's serialNumber attribute) against allowed_serial_numbers."""
    return any(a and (a == serial_number or ("*" in a and go_glob(a, serial_number)))
               for a in role.allowed_serial_numbers)


def uri_allowed(role: Any, uri: str) -> bool:
    """``validateURISAN``: a glob match against ``allowed_uri_sans`` (templates are used literally)."""
    return any(go_glob(pattern, uri) for pattern in role.allowed_uri_sans)


@dataclass
class LeafNames:
    """The identity a leaf will carry: subject CN and serialNumber, SANs by kind, other SANs."""

    common_name: str = ""
    serial_number: str = ""
    dns_names: list[str] = field(default_factory=list)
    email_addresses: list[str] = field(default_factory=list)
    ip_addresses: list[Any] = field(default_factory=list)
    uris: list[str] = field(default_factory=list)
    other_sans: dict[str, list[str]] = field(default_factory=dict)


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _add_host_or_email(names: LeafNames, value: str) -> None:
    if "@" in value:
        names.email_addresses.append(value)
    else:
        converted = to_ascii(value)
        if HOSTNAME_RE.match(converted):
            names.dns_names.append(converted)


def resolve_names(role: Any, request: dict[str, Any], csr: x509.CertificateSigningRequest | None = None) -> LeafNames:
    """The names part of ``generateCreationBundle``, in OpenBao's order of checks.

    ``request`` keys: ``common_name``, ``alt_names`` (comma string or ``None`` when not sent),
    ``exclude_cn_from_sans``, ``serial_number``, ``ip_sans``/``uri_sans``/``other_sans`` (lists).
    With a ``csr`` and ``use_csr_common_name``/``use_csr_sans`` the CSR's CN/SANs replace the request's.
    The CN becomes an rfc822Name when it holds ``@``, a DNS name when it looks like a host name.
    Raises PolicyError with the upstream texts (missing CN, ``common name X not allowed by this role``,
    ``subject alternate name X ...``, ``email address X ...``, other SAN, IP and URI errors).
    """
    names = LeafNames()
    csr_sans = _csr_sans(csr) if csr is not None else None
    if csr is not None and role.use_csr_common_name:
        names.common_name = _csr_attr(csr, x509.NameOID.COMMON_NAME)
    if not names.common_name:
        names.common_name = request.get("common_name") or ""
        if not names.common_name and role.require_cn:
            raise PolicyError('the common_name field is required, or must be provided in a CSR with '
                              '"use_csr_common_name" set to true, unless "require_cn" is set to false')
    names.serial_number = request.get("serial_number") or ""
    if not names.serial_number and csr is not None:
        names.serial_number = _csr_attr(csr, x509.NameOID.SERIAL_NUMBER)
    use_csr = csr_sans is not None and role.use_csr_sans
    if use_csr:
        names.dns_names = list(csr_sans.get_values_for_type(x509.DNSName))
        names.email_addresses = list(csr_sans.get_values_for_type(x509.RFC822Name))
    cn = names.common_name
    if cn and not request.get("exclude_cn_from_sans"):
        _add_host_or_email(names, cn)
    if not use_csr and request.get("alt_names") is not None:
        for value in _dedup(request["alt_names"].strip().split(",")) if request["alt_names"].strip() else []:
            _add_host_or_email(names, value)
    if cn and common_name_refused(role, cn):
        raise PolicyError(f"common name {cn} not allowed by this role")
    if names.serial_number and not serial_number_allowed(role, names.serial_number):
        raise PolicyError(f"serial_number {names.serial_number} not allowed by this role")
    bad = first_disallowed_name(role, names.dns_names)
    if bad:
        raise PolicyError(f"subject alternate name {bad} not allowed by this role")
    bad = first_disallowed_name(role, names.email_addresses)
    if bad:
        raise PolicyError(f"email address {bad} not allowed by this role")
    names.dns_names = _dedup(names.dns_names)
    names.email_addresses = sorted({e.strip() for e in names.email_addresses if e.strip()})
    _resolve_other_sans(role, request, csr_sans if use_csr else None, names)
    _resolve_ips(role, request, csr_sans if use_csr else None, names)
    _resolve_uris(role, request, csr_sans if use_csr else None, names)
    return names


def _resolve_other_sans(role: Any, request: dict[str, Any], csr_sans: Any, names: LeafNames) -> None:
    wanted = list(request.get("other_sans") or [])
    if csr_sans is not None:
        for other in csr_sans.get_values_for_type(x509.OtherName):
            value = _utf8_other_name(other)
            if value is None:
                raise PolicyError("could not parse requested other SAN: no UTF-8 string found in OtherName")
            wanted.append(f"{other.type_id.dotted_string};UTF8:{value}")
    if not wanted:
        return
    try:
        requested = parse_other_sans(wanted)
    except PolicyError as exc:
        raise PolicyError(f"could not parse requested other SAN: {exc}") from None
    check_other_sans(role, requested)
    names.other_sans = requested


def _resolve_ips(role: Any, request: dict[str, Any], csr_sans: Any, names: LeafNames) -> None:
    source = "the API"
    if csr_sans is not None:
        ips = list(csr_sans.get_values_for_type(x509.IPAddress))
        source = "CSR"
    else:
        ips = []
        for text in request.get("ip_sans") or []:
            try:
                if "%" in text:  # Go's net.ParseIP takes no IPv6 zone (fe80::1%eth0)
                    raise ValueError(text)
                ips.append(ipaddress.ip_address(text))
            except ValueError:
                raise PolicyError(f"the value {go_quote(text)} is not a valid IP address") from None
    # Go keeps an IPv4-mapped IPv6 address as the IPv4 address it maps (net.IP.To4): 4 bytes in the SAN
    ips = [getattr(ip, "ipv4_mapped", None) or ip for ip in ips]
    if ips and not role.allow_ip_sans:
        raise PolicyError(f"IP Subject Alternative Names are not allowed in this role, but was provided via {source}")
    if ips and role.allowed_ip_sans_cidr:
        networks = [ipaddress.ip_network(c, strict=False) for c in role.allowed_ip_sans_cidr]
        for ip in ips:
            if not any(ip.version == n.version and ip in n for n in networks):
                raise PolicyError(f'the IP address "{ip}" is not allowed in this role')
    names.ip_addresses = ips


def _resolve_uris(role: Any, request: dict[str, Any], csr_sans: Any, names: LeafNames) -> None:
    source = "CSR" if csr_sans is not None else "the API"
    uris = list(csr_sans.get_values_for_type(x509.UniformResourceIdentifier)) if csr_sans is not None \
        else list(request.get("uri_sans") or [])
    if not uris:
        return
    if not role.allowed_uri_sans:
        raise PolicyError(f"URI Subject Alternative Names are not allowed in this role, but were provided via {source}")
    for uri in uris:
        if not uri_allowed(role, uri):
            raise PolicyError(f"URI Subject Alternative Names were provided via {source} which are not valid for this role")
    if csr_sans is None:  # url.Parse each; the certificate gets Go's uri.String() re-encoding
        parsed = []
        for uri in uris:
            try:
                parsed.append(go_url_string(uri))
            except GoURLError:
                raise PolicyError(f"the provided URI Subject Alternative Name {go_quote(uri)} is not a valid URI") from None
        uris = parsed
    names.uris = uris


def resolve_user_ids(role: Any, user_ids: list[str], csr: x509.CertificateSigningRequest | None = None) -> list[str]:
    """Subject ``UID`` values: the request's ``user_ids``, else the CSR subject's UID attributes; each
    must pass :func:`user_id_allowed` (400 ``user_id <v> is not allowed by this role``)."""
    values = list(user_ids)
    if not values and csr is not None:
        values = [str(a.value) for a in _csr_subject(csr).get_attributes_for_oid(UID_OID)]
    for value in values:
        if not user_id_allowed(role, value):
            raise PolicyError(f"user_id {value} is not allowed by this role")
    return values


_LAST_SUBJECT: tuple[Any, x509.Name | None] = (None, None)


def _csr_subject(csr: x509.CertificateSigningRequest) -> x509.Name:
    """``csr.subject``, which cryptography decodes into new objects on every access: the last CSR's
    subject is remembered (one sign reads its CN, serialNumber and UIDs; a CSR is immutable, the
    entry holds it so its id cannot be reused)."""
    global _LAST_SUBJECT
    last, subject = _LAST_SUBJECT
    if last is csr and subject is not None:
        return subject
    subject = csr.subject
    _LAST_SUBJECT = (csr, subject)
    return subject


def _csr_attr(csr: x509.CertificateSigningRequest, oid: x509.ObjectIdentifier) -> str:
    attrs = _csr_subject(csr).get_attributes_for_oid(oid)
    return str(attrs[0].value) if attrs else ""


def _csr_sans(csr: x509.CertificateSigningRequest) -> Any:
    try:
        return csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return x509.SubjectAlternativeName([])


def _utf8_other_name(other: x509.OtherName) -> str | None:
    raw = other.value
    if len(raw) >= 2 and raw[0] == 0x0C:
        length, offset = raw[1], 2
        if length & 0x80:
            count = length & 0x7F
            length, offset = int.from_bytes(raw[2:2 + count], "big"), 2 + count
        try:
            return raw[offset:offset + length].decode()
        except UnicodeDecodeError:
            return None
    return None


def check_csr_key(role: Any, public_key: Any) -> tuple[str, int]:
    """``signCert``'s key rules for a CSR public key against the role's key_type/key_bits; returns
    ``(key_type, key_bits)`` of the CSR key.

    Raises 400 ``role requires keys of type <t>``, ``role requires a minimum of a <n>-bit key, but CSR's
    key is <m> bits``, ``RSA keys < 2048 bits are unsafe and not supported`` (role ``any``), ``Refusing
    to sign CSR with empty PublicKey...`` for unknown key algorithms.
    """
    actual_type, actual_bits = key_type_of(public_key)
    if actual_type == "":
        raise PolicyError("Refusing to sign CSR with empty PublicKey. This usually means the SubjectPublicKeyInfo field "
                          "has an OID not recognized by Go, such as 1.2.840.113549.1.1.10 for rsaPSS.")
    min_bits = role.key_bits
    if role.key_type in ("rsa", "ec", "ed25519"):
        if actual_type != role.key_type:
            raise PolicyError(f"role requires keys of type {role.key_type}")
    elif role.key_type == "any":
        if actual_type == "rsa" and actual_bits < 2048:
            raise PolicyError("RSA keys < 2048 bits are unsafe and not supported")
        min_bits = {"rsa": 2048, "ec": 224}.get(actual_type, 0)
    else:
        raise PolicyError(f"unsupported key type value: {role.key_type}", internal=True)
    if actual_type in ("rsa", "ec") and actual_bits < min_bits:
        raise PolicyError(f"role requires a minimum of a {min_bits}-bit key, but CSR's key is {actual_bits} bits")
    if actual_type == "rsa" and actual_bits < 2048:
        raise PolicyError(f"OpenBao requires a minimum of a 2048-bit key, but CSR's key is {actual_bits} bits")
    return actual_type, actual_bits
