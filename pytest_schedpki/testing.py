"""What tests import to inspect the secrets service: issued certificates as records, assertions with
near-miss messages, the current CRL parsed, and chain verification at a chosen time.

Everything reads the backends directly (no HTTP); records are built from the mounts' certificate
stores, so they cover every certificate the mounts keep (issued, signed, signed intermediates and
generated roots).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from .secrets.http import dispatch

if TYPE_CHECKING:  # pragma: no cover
    from .secrets.service import SecretsService

_CRITERIA = ("serial_number", "common_name", "san", "role", "issuer", "mount", "revoked")


@dataclass(frozen=True)
class IssuedCertificate:
    """One certificate a PKI mount holds.

    ``serial_number`` lowercase colon hex; ``mount`` the mount path without ``/``; ``issuer_id`` and
    ``issuer_name`` of the signing issuer; ``role`` (``""`` when none); ``certificate`` the parsed
    cryptography certificate; ``private_key`` the generated key (issue only, else ``None``);
    ``issued_at``/``revoked_at`` aware UTC datetimes on the double's clock (``revoked_at`` ``None``
    while valid).
    """

    serial_number: str
    mount: str
    issuer_id: str
    issuer_name: str
    role: str
    certificate: x509.Certificate
    pem: str
    private_key: Any
    issued_at: datetime.datetime | None
    revoked_at: datetime.datetime | None

    @property
    def common_name(self) -> str:
        """The subject CN (``""`` when the subject has none)."""
        values = self.certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return str(values[0].value) if values else ""

    @property
    def sans(self) -> list[str]:
        """Every subject alternative name as text: DNS names, IPs, URIs and e-mail addresses."""
        try:
            ext = self.certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return []
        out: list[str] = []
        for name in ext:
            if isinstance(name, (x509.DNSName, x509.UniformResourceIdentifier, x509.RFC822Name)):
                out.append(name.value)
            elif isinstance(name, x509.IPAddress):
                out.append(str(name.value))
        return out

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def describe(self) -> str:
        """One line for assertion messages."""
        state = f"revoked at {self.revoked_at.isoformat()}" if self.revoked_at else "valid"
        return (f"{self.mount}/{self.serial_number} cn={self.common_name!r} sans={self.sans} role={self.role!r} "
                f"issuer={self.issuer_name or self.issuer_id} {state}")


class CertificateInspector:
    """Queries and assertions over every PKI mount of a secrets service (``schedpki.certs``)."""

    def __init__(self, service: SecretsService):
        self.service = service

    def all(self) -> list[IssuedCertificate]:
        """Every certificate of every PKI mount, oldest first (by issue time, then serial)."""
        records: list[IssuedCertificate] = []
        with self.service.lock:
            for path, mount in self.service.mounts.items():
                if mount.type != "pki":
                    continue
                state = mount.backend.state
                for record in state.certs.values():
                    issuer = state.issuers.get(record.issuer_id)
                    key = (serialization.load_pem_private_key(record.private_key_pem.encode(), None)
                           if record.private_key_pem else None)
                    records.append(IssuedCertificate(
                        record.serial_number, path.rstrip("/"), record.issuer_id, issuer.issuer_name if issuer else "",
                        record.role, record.certificate, record.pem, key, record.issued_at, record.revocation_time,
                    ))
        epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
        return sorted(records, key=lambda r: (r.issued_at or epoch, r.serial_number))

    def find(self, **criteria: Any) -> list[IssuedCertificate]:
        """Certificates matching every criterion: ``serial_number`` (any spelling), ``common_name``,
        ``san`` (one of the SANs), ``role``, ``issuer`` (id or name), ``mount``, ``revoked`` (bool).
        Raises TypeError for an unknown criterion."""
        unknown = set(criteria) - set(_CRITERIA)
        if unknown:
            raise TypeError(f"unknown criteria: {', '.join(sorted(unknown))}; use {', '.join(_CRITERIA)}")
        return [c for c in self.all() if all(_matches(c, k, v) for k, v in criteria.items())]

    def assert_issued(self, count: int | None = None, **criteria: Any) -> IssuedCertificate:
        """Assert certificates matching ``criteria`` exist (exactly ``count`` if given); returns the
        newest. The AssertionError lists near misses: certificates matching some of the criteria."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this helper's source
        found = self.find(**criteria)
        if found and (count is None or len(found) == count):
            return found[-1]
        wanted = "a certificate" if count is None else _count(count, "certificate")
        raise AssertionError(self._message(f"expected {wanted}", criteria, found))

    def assert_revoked(self, **criteria: Any) -> IssuedCertificate:
        """Assert a certificate matching ``criteria`` exists and is revoked; returns it."""
        __tracebackhide__ = True
        found = self.find(**criteria)
        revoked = [c for c in found if c.revoked]
        if revoked:
            return revoked[-1]
        raise AssertionError(self._message("expected a revoked certificate", criteria, found))

    def assert_not_revoked(self, **criteria: Any) -> IssuedCertificate:
        """Assert a certificate matching ``criteria`` exists and none of the matches is revoked."""
        __tracebackhide__ = True
        found = self.find(**criteria)
        if found and not any(c.revoked for c in found):
            return found[-1]
        raise AssertionError(self._message("expected a certificate that is not revoked", criteria, found))

    def _message(self, what: str, criteria: dict[str, Any], found: list[IssuedCertificate]) -> str:
        lines = [f"{what} matching {criteria}; found {len(found)}"]
        lines += ["  match:     " + c.describe() for c in found]
        matched = {(c.mount, c.serial_number) for c in found}
        near = [c for c in self.all() if (c.mount, c.serial_number) not in matched and any(_matches(c, k, v) for k, v in criteria.items())]
        lines += ["  near miss: " + c.describe() for c in near[-10:]]
        if not found and not near:
            everything = self.all()
            lines.append(f"  the mounts hold {_count(len(everything), 'certificate')}" + (":" if everything else ""))
            lines += ["  " + c.describe() for c in everything[-10:]]
        return "\n".join(lines)

    def crl(self, mount: str = "pki", issuer_ref: str = "default") -> x509.CertificateRevocationList:
        """The issuer's current CRL as the API would serve it, parsed."""
        response = dispatch(self.service, "read", f"{mount.strip('/')}/issuer/{issuer_ref}/crl/der", {}, None)
        return x509.load_der_x509_crl(response.raw[0])

    def verify_chain(self, certificate: IssuedCertificate | x509.Certificate | str, mount: str | None = None,
                     at: datetime.datetime | None = None) -> list[x509.Certificate]:
        """Verify ``certificate`` up to a self-signed issuer held by the mounts, at time ``at`` (default:
        the double's clock). ``certificate`` is a record, a cryptography certificate, a PEM text or a
        serial number of a certificate the mounts hold (colon hex as Vault writes it,
        ``"1a:2b:..."``, or plain hex ``"1A2B..."``). Returns the chain (leaf first). Raises
        AssertionError naming the link that fails: signature (``verify_directly_issued_by``),
        validity at ``at``, or no issuer found; or no certificate with that serial."""
        __tracebackhide__ = True
        if isinstance(certificate, str) and "-----BEGIN" not in certificate:
            certificate = self._by_serial(certificate, mount)
        if isinstance(certificate, IssuedCertificate):
            mount = mount or certificate.mount
            cert = certificate.certificate
        elif isinstance(certificate, str):
            cert = x509.load_pem_x509_certificate(certificate.encode())
        else:
            cert = certificate
        at = at or self.service.clock.now()
        cas = self._issuers(mount)
        chain = [cert]
        while True:
            current = chain[-1]
            if not (current.not_valid_before_utc <= at <= current.not_valid_after_utc):
                raise AssertionError(f"{current.subject.rfc4514_string()} is not valid at {at.isoformat()} "
                                     f"({current.not_valid_before_utc.isoformat()} .. {current.not_valid_after_utc.isoformat()})")
            if current.issuer == current.subject and _signed_by(current, current):
                return chain
            parent = next((ca for ca in cas if ca.subject == current.issuer and _signed_by(current, ca)), None)
            if parent is None:
                raise AssertionError(f"no issuer of {current.subject.rfc4514_string()} in "
                                     f"{'mount ' + mount if mount else 'any mount'} verifies its signature")
            if len(chain) > 10:
                raise AssertionError("chain longer than 10 certificates")
            chain.append(parent)

    def _by_serial(self, serial: str, mount: str | None) -> IssuedCertificate:
        __tracebackhide__ = True
        if _serial_int(serial) is None:
            raise AssertionError(f"{serial!r} is neither a PEM certificate nor a serial number (hex, with or "
                                 "without colons)")
        found = self.find(serial_number=serial, **({"mount": mount} if mount else {}))
        if not found:
            raise AssertionError(f"no certificate with serial {serial!r} in "
                                 f"{'mount ' + mount if mount else 'the PKI mounts'}")
        return found[-1]

    def _issuers(self, mount: str | None) -> list[x509.Certificate]:
        with self.service.lock:
            return [issuer.certificate for path, m in self.service.mounts.items()
                    if m.type == "pki" and (mount is None or path.rstrip("/") == mount.strip("/"))
                    for issuer in m.backend.state.issuers.values()] + (
                self._issuers(None) if mount is not None else [])


def _signed_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, Exception):  # noqa: BLE001 - InvalidSignature and friends
        return False
    return True


def _count(n: int, noun: str) -> str:
    """``"1 certificate"``, ``"2 certificates"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _serial_int(text: Any) -> int | None:
    """A serial number written as hex with or without ``:``/``-`` separators, as an integer (``None``
    when it is not one)."""
    digits = str(text).strip().replace(":", "").replace("-", "")
    try:
        return int(digits, 16) if digits else None
    except ValueError:
        return None


def _matches(cert: IssuedCertificate, key: str, value: Any) -> bool:
    if key == "serial_number":
        wanted = _serial_int(value)
        return wanted is not None and wanted == _serial_int(cert.serial_number)
    if key == "common_name":
        return cert.common_name == value
    if key == "san":
        try:
            value = str(ipaddress.ip_address(value))
        except ValueError:
            pass
        return value in cert.sans
    if key == "role":
        return cert.role == value
    if key == "issuer":
        return value in (cert.issuer_id, cert.issuer_name)
    if key == "mount":
        return cert.mount == str(value).strip("/")
    if key == "revoked":
        return cert.revoked == bool(value)
    return False
