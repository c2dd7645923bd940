"""Fill a PKI mount's store with many distinct certificates fast (no HTTP): for the page's paging test and
benchmarks/ui_certs.py."""

from __future__ import annotations

import datetime
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.secrets.engines.pki.model import CertRecord, serial_to_hex


def fill(double, count: int, mount: str = "pki") -> None:
    """``count`` distinct certificates signed by the mount's default issuer, stored as issuance stores
    them (every 10th revoked)."""
    backend = double.secrets.mounts[mount + "/"].backend
    state = backend.state
    issuer = state.issuers[state.default_issuer_id]
    key = state.keys[issuer.key_id].private_key
    leaf_key = ec.generate_private_key(ec.SECP256R1()).public_key()
    now = datetime.datetime.now(datetime.timezone.utc)
    with double.secrets.lock:
        for i in range(count):
            serial = int.from_bytes(os.urandom(19), "big") | (1 << 150)
            name = f"host{i}.example"
            cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, name)]))
                    .issuer_name(issuer.certificate.subject).public_key(leaf_key).serial_number(serial)
                    .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                    .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
                    .sign(key, hashes.SHA256()))
            hexed = serial_to_hex(serial)
            state.certs[hexed] = CertRecord(hexed, cert, issuer_id=issuer.issuer_id, role="web", issued_at=now,
                                            revocation_time=now if i % 10 == 0 else None)
