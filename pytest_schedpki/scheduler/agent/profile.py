"""The double's agent identity and workload-identity signing key, one per scheduler state.

Nomad's keyring (``nomad/structs/keyring.go`` ``NewRootKey``/``NewRootKeyMeta``,
``nomad/encrypter.go`` ``SignClaims``/``GetPublicKey``) holds a root key whose ``KeyID`` is a
random UUID; since 1.7 each root key carries an RSA-2048 private key, and claims are signed RS256
with the header ``kid`` = that KeyID and ``typ`` = ``JWT``. The double makes one such key the first
time a state needs it and keeps it for the state's life: :meth:`SchedulerState.restore` (the
per-test reset) does not rotate it, so a harness that cached the JWKS keeps verifying.

:func:`profile_of` returns the :class:`AgentProfile` of a state; its fields are plain attributes
a test may change (``prometheus_metrics = False`` gives ``415 Prometheus is not enabled``).
"""

from __future__ import annotations

import base64
import datetime
import threading
import uuid
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import rsa

ROTATION_THRESHOLD_NS = 720 * 3600 * 10**9  # root_key_rotation_threshold default (nomad/config.go)
_lock = threading.Lock()
_profiles: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _b64url_uint(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class SigningKey:
    """An RS256 root key: ``key_id`` (UUID), ``private_key`` (RSA-2048), ``create_time`` (ns)."""

    key_id: str
    private_key: rsa.RSAPrivateKey
    create_time: int

    def jwk(self) -> dict:
        """The public key as go-jose's ``JSONWebKey`` marshals it (``use``, ``kty``, ``kid``,
        ``alg``, ``n``, ``e`` in that order)."""
        numbers = self.private_key.public_key().public_numbers()
        return {"use": "sig", "kty": "RSA", "kid": self.key_id, "alg": "RS256",
                "n": _b64url_uint(numbers.n), "e": _b64url_uint(numbers.e)}

    def sign(self, claims: dict) -> str:
        """``Encrypter.SignClaims``: a compact JWS, RS256, header ``kid`` and ``typ: JWT``."""
        import jwt  # here, not at import: the double's start-up stays free of cryptography

        return jwt.encode(claims, self.private_key, algorithm="RS256",
                          headers={"kid": self.key_id, "typ": "JWT"})


def _new_key(now: datetime.datetime) -> SigningKey:
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return SigningKey(str(uuid.uuid4()), private, int(now.timestamp() * 10**9))


@dataclass
class AgentProfile:
    """What ``/v1/agent/self``, ``/v1/status/*`` and the keyring show for one double.

    ``node_name`` and ``datacenter`` (``dc1``) are the agent's; ``rpc_addr`` is the leader's and
    the only peer's RPC address (``host:port``); ``prometheus_metrics`` is the telemetry switch (a
    dev agent's default, on); ``intro_default_ttl_ns``/``intro_max_ttl_ns`` are
    ``client.node_introduction``'s ``default_identity_ttl`` (5m) and ``max_identity_ttl`` (30m);
    ``oidc_issuer`` empty means no OIDC discovery document (Nomad's default).
    """

    key: SigningKey
    node_name: str = "schedpki"
    datacenter: str = "dc1"
    rpc_addr: str = "127.0.0.1:4647"
    serf_port: int = 4648
    prometheus_metrics: bool = True
    intro_default_ttl_ns: int = 5 * 60 * 10**9
    intro_max_ttl_ns: int = 30 * 60 * 10**9
    oidc_issuer: str = ""
    started: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(datetime.UTC))


def profile_of(state) -> AgentProfile:
    """The :class:`AgentProfile` of ``state`` (created, with its signing key, on first use)."""
    with _lock:
        found = _profiles.get(state)
        if found is None:
            found = AgentProfile(_new_key(state.clock.now()))
            _profiles[state] = found
        return found
