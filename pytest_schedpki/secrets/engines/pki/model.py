"""State records of one PKI mount: keys, issuers, roles, stored certificates, configuration.

Records are plain dataclasses; cryptography key and certificate objects inside them are immutable
and shared between snapshots, so resetting a mount never regenerates keys.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509

from .certstore import CertStore
from .codecs.x509 import pem_of


def serial_to_hex(serial: int) -> str:
    """A certificate serial as OpenBao prints it: lowercase colon-separated hex bytes
    (``"7a:26:69:dc:..."``), at least one byte."""
    return serial.to_bytes(max(1, (serial.bit_length() + 7) // 8), "big").hex(":")


def normalize_serial(text: str) -> str:
    """Accept colon- or hyphen-separated hex in any case; return the lowercase colon form."""
    return text.strip().lower().replace("-", ":")


@dataclass(frozen=True)
class Key:
    """A managed private key. ``key_type`` is ``rsa``/``ec``/``ed25519``; ``key_bits`` 0 for ed25519;
    ``private_key`` is a cryptography private key object."""

    key_id: str
    key_name: str
    key_type: str
    key_bits: int
    private_key: Any


@dataclass
class Issuer:
    """A CA certificate of the mount (root or intermediate), possibly without a key.

    ``certificate`` is the parsed cryptography certificate; ``ca_chain`` the PEMs from this issuer
    up to its root (itself first) as ``issuer/:ref`` reads it; ``leaf_not_after_behavior`` is
    ``err``/``truncate``/``permit``; ``usage`` a comma list of ``read-only``, ``issuing-certificates``,
    ``crl-signing``, ``ocsp-signing``.
    """

    issuer_id: str
    issuer_name: str
    certificate: x509.Certificate
    key_id: str | None
    ca_chain: list[str] = field(default_factory=list)
    manual_chain: list[str] | None = None
    leaf_not_after_behavior: str = "err"
    usage: str = "crl-signing,issuing-certificates,ocsp-signing,read-only"
    revocation_signature_algorithm: str = ""
    issuing_certificates: list[str] = field(default_factory=list)
    crl_distribution_points: list[str] = field(default_factory=list)
    delta_crl_distribution_points: list[str] = field(default_factory=list)
    ocsp_servers: list[str] = field(default_factory=list)
    enable_aia_url_templating: bool = False
    revoked: bool = False
    revocation_time: datetime.datetime | None = None


@dataclass(frozen=True, init=False)
class CertRecord:
    """A certificate the mount issued or signed (or stored on revocation by PEM).

    ``serial_number`` lowercase colon hex; ``issuer_id`` of the signing issuer; ``role`` the role
    name or ``""``; ``issued_at`` the double's clock at issuance; ``private_key_pem`` only kept for
    the test assertions (OpenBao never stores it); ``revocation_time`` set once revoked.

    ``pem`` (no trailing newline) is made from ``certificate`` when read, not stored: ~1 KiB less per
    stored certificate. A ``pem`` given to the constructor that differs from that canonical form is
    kept as given (in ``pem_text``).
    """

    serial_number: str
    certificate: x509.Certificate
    issuer_id: str
    role: str = ""
    issued_at: datetime.datetime | None = None
    private_key_pem: str | None = None
    revocation_time: datetime.datetime | None = None
    stored: bool = True
    path: str = ""
    pem_text: str | None = field(default=None, repr=False)

    def __init__(self, serial_number: str, certificate: x509.Certificate, pem: str | None = None,
                 issuer_id: str = "", role: str = "", issued_at: datetime.datetime | None = None,
                 private_key_pem: str | None = None, revocation_time: datetime.datetime | None = None,
                 stored: bool = True, path: str = "", pem_text: str | None = None):
        if pem is not None and pem_text is None and pem != _canonical_pem(certificate):
            pem_text = pem
        for name, value in (("serial_number", serial_number), ("certificate", certificate),
                            ("issuer_id", issuer_id), ("role", role), ("issued_at", issued_at),
                            ("private_key_pem", private_key_pem), ("revocation_time", revocation_time),
                            ("stored", stored), ("path", path), ("pem_text", pem_text)):
            object.__setattr__(self, name, value)

    @property
    def pem(self) -> str:
        """The certificate as PEM, without the trailing newline."""
        return self.pem_text if self.pem_text is not None else _canonical_pem(self.certificate)


def _canonical_pem(certificate: x509.Certificate) -> str:
    return pem_of(certificate)


def _issuer_copy(issuer: Issuer) -> Issuer:
    """``replace(issuer, ca_chain=list(issuer.ca_chain))`` at a fraction of its cost (snapshots copy
    every issuer on every write): ``copy.copy``'s own steps for a plain dataclass (a new instance
    given the attribute dict), without its generic ``__reduce_ex__`` round trip."""
    new = object.__new__(Issuer)
    new.__dict__.update(issuer.__dict__)
    new.ca_chain = list(issuer.ca_chain)
    return new


def default_config_urls() -> dict[str, Any]:
    """``config/urls`` as a fresh mount reads it."""
    return {"crl_distribution_points": [], "delta_crl_distribution_points": [], "enable_templating": False,
            "issuing_certificates": [], "ocsp_servers": []}


def default_config_crl() -> dict[str, Any]:
    """``config/crl`` as a fresh mount reads it."""
    return {"allow_expired_cert_revocation": False, "auto_rebuild": False, "auto_rebuild_grace_period": "12h",
            "delta_rebuild_interval": "15m", "disable": False, "enable_delta": False, "expiry": "72h",
            "ocsp_disable": False, "ocsp_expiry": "12h"}


@dataclass
class PkiState:
    """Everything one PKI mount holds. Dict values are records; :meth:`copy` is a cheap snapshot.

    * ``keys``/``issuers``: by id (UUID strings); ``default_issuer_id`` may be ``""``;
    * ``roles``: by name (role records, see roles.py);
    * ``certs``: stored certificates by serial (colon hex), a :class:`CertStore`;
    * ``crl_numbers``: next CRL number per issuer id; ``crls``: last built CRL per issuer id.
    """

    keys: dict[str, Key] = field(default_factory=dict)
    issuers: dict[str, Issuer] = field(default_factory=dict)
    default_issuer_id: str = ""
    default_follows_latest_issuer: bool = False
    default_key_id: str = ""
    roles: dict[str, Any] = field(default_factory=dict)
    certs: dict[str, CertRecord] = field(default_factory=CertStore)
    config_urls: dict[str, Any] = field(default_factory=default_config_urls)
    config_crl: dict[str, Any] = field(default_factory=default_config_crl)
    crl_numbers: dict[str, int] = field(default_factory=dict)
    crls: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def copy(self, certs: CertStore | None = None) -> PkiState:
        """A snapshot: new containers, shared immutable records (issuers are copied one level).

        ``certs``: the store the copy holds instead of a copy of this one's (O(stored)): the live store
        itself for a write's savepoint (its undo log covers it), or a baseline's checkout."""
        if certs is None:
            certs = self.certs.copy() if isinstance(self.certs, CertStore) else CertStore(self.certs)
        return PkiState(
            keys=dict(self.keys),
            issuers={k: _issuer_copy(v) for k, v in self.issuers.items()},
            default_issuer_id=self.default_issuer_id,
            default_follows_latest_issuer=self.default_follows_latest_issuer,
            default_key_id=self.default_key_id,
            roles=dict(self.roles),
            certs=certs,
            config_urls={k: (list(v) if isinstance(v, list) else v) for k, v in self.config_urls.items()},
            config_crl=dict(self.config_crl),
            crl_numbers=dict(self.crl_numbers),
            crls=dict(self.crls),
            extra=dict(self.extra),
        )
