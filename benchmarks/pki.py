"""The PKI workload, identical for both servers: one ``pki`` mount (max_lease_ttl 87600h) with an
internal RSA-2048 root, roles ``ec`` (P-256) and ``rsa`` (RSA-2048), ttl 1h / max_ttl 24h, any
name, certificates stored; and the operations timed on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from timing import Op

ROLE = {"allow_any_name": True, "enforce_hostnames": False, "ttl": "1h", "max_ttl": "24h", "no_store": False}


def setup(base: str, token: str) -> None:
    """Mount ``pki``, generate the root, write the roles. Raises RuntimeError on any failure."""
    session = requests.Session()
    session.headers["X-Vault-Token"] = token
    steps = [
        ("sys/mounts/pki", {"type": "pki", "config": {"max_lease_ttl": "87600h"}}),
        ("pki/root/generate/internal", {"common_name": "bench root", "key_type": "rsa", "key_bits": 2048,
                                        "ttl": "87600h", "issuer_name": "root"}),
        ("pki/roles/ec", {**ROLE, "key_type": "ec", "key_bits": 256}),
        ("pki/roles/rsa", {**ROLE, "key_type": "rsa", "key_bits": 2048}),
    ]
    for path, body in steps:
        response = session.post(f"{base}/v1/{path}", json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"setup {path}: {response.status_code} {response.text[:300]}")


def setup_like_default_seed(base: str, token: str) -> None:
    """What ``pytest_schedpki/default_seed.yaml`` creates, over HTTP: mount ``pki`` (87600h), an EC
    P-256 root ``root``, role ``example-dot-com``."""
    session = requests.Session()
    session.headers["X-Vault-Token"] = token
    steps = [
        ("sys/mounts/pki", {"type": "pki", "config": {"max_lease_ttl": "87600h"}}),
        ("pki/root/generate/internal", {"common_name": "schedpki Example Root CA", "issuer_name": "root",
                                        "ttl": "87600h", "key_type": "ec", "key_bits": 256}),
        ("pki/roles/example-dot-com", {"allowed_domains": ["example.com"], "allow_subdomains": True,
                                       "allow_bare_domains": True, "ttl": "24h", "max_ttl": "72h",
                                       "key_type": "ec", "key_bits": 256}),
    ]
    for path, body in steps:
        response = session.post(f"{base}/v1/{path}", json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"setup {path}: {response.status_code} {response.text[:300]}")


def make_csr() -> str:
    """A PEM CSR for ``csr.example.com`` with a fresh RSA-2048 key (made once, sent to both)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    csr = (x509.CertificateSigningRequestBuilder()
           .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "csr.example.com")]))
           .sign(key, hashes.SHA256()))
    return csr.public_bytes(serialization.Encoding.PEM).decode()


@dataclass
class Operation:
    """One timed operation: ``key`` (table id), ``label``, ``op`` and request counts per round for one
    thread (``sequential``) and four threads (``concurrent``). ``needs_serials``: each round first
    issues, untimed, the certificates it revokes. ``prepare(base, count, sessions)`` runs untimed before
    each round on each server (its inputs keyed by ``base``; ``sessions`` are the round's client
    sessions) and returns the number of the round's first request."""

    key: str
    label: str
    op: Op
    sequential: int = 100
    concurrent: int = 200
    needs_serials: bool = False
    prepare: Callable[[str, int, list[requests.Session]], int] | None = None


class Serials:
    """Serials issued untimed for revoke rounds, per server base URL."""

    def __init__(self) -> None:
        self.by_base: dict[str, list[str]] = {}

    def stock(self, base: str, token: str, count: int) -> int:
        """Issue ``count`` EC certificates on ``base``; returns the number of the first new serial."""
        session = requests.Session()
        session.headers["X-Vault-Token"] = token
        serials = self.by_base.setdefault(base, [])
        first = len(serials)
        for i in range(count):
            response = session.post(f"{base}/v1/pki/issue/ec", json={"common_name": f"revoke-{first + i}.example.com"})
            response.raise_for_status()
            serials.append(response.json()["data"]["serial_number"])
        return first


def operations(csr_pem: str, serials: Serials) -> list[Operation]:
    """The PKI operations in run order (LIST and revoke after the issuing ones)."""

    def issue(role: str) -> Op:
        def op(session: requests.Session, base: str, n: int) -> requests.Response:
            return session.post(f"{base}/v1/pki/issue/{role}", json={"common_name": f"h{n}.example.com"})
        return op

    def sign(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.post(f"{base}/v1/pki/sign/rsa", json={"csr": csr_pem, "common_name": "csr.example.com"})

    def read_role(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.get(f"{base}/v1/pki/roles/ec")

    def list_certs(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.request("LIST", f"{base}/v1/pki/certs")

    def crl(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.get(f"{base}/v1/pki/crl")

    def revoke(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.post(f"{base}/v1/pki/revoke", json={"serial_number": serials.by_base[base][n]})

    return [
        Operation("issue_ec", "issue, EC P-256 key", issue("ec")),
        Operation("issue_rsa", "issue, RSA-2048 key", issue("rsa")),
        Operation("sign", "sign an RSA-2048 CSR", sign),
        Operation("read_role", "read a role", read_role, 400, 800),
        Operation("list_certs", "LIST certs", list_certs),
        Operation("revoke", "revoke a certificate", revoke, needs_serials=True),
        Operation("crl", "fetch the CRL (DER)", crl),
    ]
