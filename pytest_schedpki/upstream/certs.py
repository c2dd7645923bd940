"""``schedpki.certs`` over the API of a real Vault/OpenBao (upstream mode).

Records come from ``GET sys/mounts`` (every ``pki`` mount), ``LIST <mount>/certs``, ``GET
<mount>/cert/<serial>`` (certificate and revocation time) and ``LIST <mount>/issuers`` / ``GET
<mount>/issuer/<id>`` (each certificate's issuer is the one whose key verifies its signature). The
real server keeps no role and no private key with a certificate: both come from the recording proxy
for certificates issued through it (``role`` is ``""`` and ``private_key`` ``None`` otherwise).
``issued_at`` is when the proxy saw the answer, else the certificate's NotBefore. Assertions, near
misses and ``verify_chain`` behave as with the double (the default ``at`` is the real time).
"""

from __future__ import annotations

import datetime
from types import SimpleNamespace

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from ..clock import RealClock
from ..testing import CertificateInspector, IssuedCertificate, _signed_by
from .client import Client
from .proxy import RecordingProxy


class UpstreamCertificateInspector(CertificateInspector):
    """:class:`~pytest_schedpki.testing.CertificateInspector` reading a real server through ``client``
    (root token); ``proxy`` supplies roles, keys and issue times it saw."""

    def __init__(self, client: Client, proxy: RecordingProxy | None):
        super().__init__(SimpleNamespace(clock=RealClock()))  # type: ignore[arg-type]
        self.client = client
        self.proxy = proxy

    def _pki_mounts(self) -> list[str]:
        mounts = self.client.call("GET", "/v1/sys/mounts").data()
        return sorted(path.rstrip("/") for path, info in mounts.items() if (info or {}).get("type") == "pki")

    def _issuer_certs(self, mount: str) -> list[tuple[str, str, x509.Certificate]]:
        answer = self.client.call("LIST", f"/v1/{mount}/issuers", ok=(200, 404))
        if answer.status != 200:
            return []
        out = []
        for issuer_id, info in (answer.data().get("key_info") or {}).items():
            pem = self.client.call("GET", f"/v1/{mount}/issuer/{issuer_id}").data().get("certificate", "")
            out.append((issuer_id, (info or {}).get("issuer_name", ""), x509.load_pem_x509_certificate(pem.encode())))
        return out

    def all(self) -> list[IssuedCertificate]:
        """Every certificate of every PKI mount of the real server, oldest first."""
        learned = dict(self.proxy.learned) if self.proxy else {}
        records = []
        for mount in self._pki_mounts():
            issuers = self._issuer_certs(mount)
            for serial in self.client.keys(f"/v1/{mount}/certs"):
                data = self.client.call("GET", f"/v1/{mount}/cert/{serial}").data()
                pem = data.get("certificate", "")
                cert = x509.load_pem_x509_certificate(pem.encode())
                issuer_id, issuer_name = next(((i, n) for i, n, c in issuers
                                               if c.subject == cert.issuer and _signed_by(cert, c)), ("", ""))
                seen = learned.get(serial.lower())
                key = None
                if seen and seen.private_key:
                    try:
                        key = serialization.load_pem_private_key(seen.private_key.encode(), None)
                    except ValueError:
                        key = None
                revoked_at = None
                if data.get("revocation_time"):
                    revoked_at = datetime.datetime.fromtimestamp(int(data["revocation_time"]), datetime.timezone.utc)
                records.append(IssuedCertificate(
                    serial.lower(), mount, issuer_id, issuer_name, seen.role if seen else "", cert, pem, key,
                    seen.issued_at if seen else cert.not_valid_before_utc, revoked_at))
        return sorted(records, key=lambda r: (r.issued_at, r.serial_number))

    def crl(self, mount: str = "pki", issuer_ref: str = "default") -> x509.CertificateRevocationList:
        """The issuer's current CRL as the real server serves it (``GET <mount>/issuer/<ref>/crl/der``)."""
        answer = self.client.call("GET", f"/v1/{mount.strip('/')}/issuer/{issuer_ref}/crl/der", ok=(200,))
        return x509.load_der_x509_crl(answer.body)

    def _issuers(self, mount: str | None) -> list[x509.Certificate]:
        mounts = [mount.strip("/")] if mount else []
        mounts += [m for m in self._pki_mounts() if m not in mounts]
        return [cert for m in mounts for _, _, cert in self._issuer_certs(m)]
