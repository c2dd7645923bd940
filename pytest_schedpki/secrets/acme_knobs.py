"""Knobs for testing ACME clients against the double (Pebble's switches, as users know them); all off
by default, so the double answers as OpenBao does.

One :class:`AcmeKnobs` per secrets service (``SecretsService.acme_knobs``), read by every PKI mount's
ACME engine at request time; ``DoubleHandle.acme_knobs(...)``, ``POST /_schedpki/acme`` and the seed's
``acme_knobs`` set it, a reset turns every knob off again.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, fields
from typing import Any

FIELDS = ("challenge_address", "always_valid", "validation_delay", "bad_nonce_share", "seed")


@dataclass
class AcmeKnobs:
    """* ``challenge_address``: ``"host:port"`` where http-01 and tls-alpn-01 validation connects
      instead of port 80/443 of the identifier (the HTTP ``Host`` header and the TLS server name stay
      the identifier), and the DNS server (UDP) asked for dns-01 TXT records; ``""``: upstream's;
    * ``always_valid``: a challenge the client accepts is valid at once, nothing is fetched;
    * ``validation_delay``: seconds (real time) a validation waits before its first attempt;
    * ``bad_nonce_share``: the share (0 to 1) of otherwise valid nonces refused with ``badNonce``
      (drawn from a generator seeded with ``seed``, so runs repeat).

    :meth:`update` raises ``ValueError`` naming a bad field."""

    challenge_address: str = ""
    always_valid: bool = False
    validation_delay: float = 0.0
    bad_nonce_share: float = 0.0
    seed: int | None = None
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def update(self, **values: Any) -> None:
        """Set the given knobs (names of :data:`FIELDS`), all checked before any is set."""
        unknown = sorted(set(values) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown ACME knob(s) {unknown}; known: {list(FIELDS)}")
        address = values.get("challenge_address", self.challenge_address)
        if not isinstance(address, str) or (address and (":" not in address or
                                                         not address.rsplit(":", 1)[1].isdigit())):
            raise ValueError(f"challenge_address must be 'host:port' or '', not {address!r}")
        if not isinstance(values.get("always_valid", False), bool):
            raise ValueError("always_valid must be true or false")
        delay = values.get("validation_delay", 0.0)
        if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= 3600:
            raise ValueError("validation_delay must be a number of seconds from 0 to 3600")
        share = values.get("bad_nonce_share", 0.0)
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ValueError("bad_nonce_share must be a number from 0 to 1")
        seed = values.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError("seed must be an integer or null")
        for name, value in values.items():
            setattr(self, name, value)
        if "seed" in values or "bad_nonce_share" in values:
            self._random = random.Random(self.seed)

    def clear(self) -> None:
        """Every knob off (OpenBao's behaviour)."""
        for item in fields(self):
            if item.name != "_random":
                setattr(self, item.name, item.default)
        self._random = random.Random()

    def describe(self) -> dict[str, Any]:
        """The knobs as JSON-ready values."""
        return {name: getattr(self, name) for name in FIELDS}

    def refuse_nonce(self) -> bool:
        """Whether to refuse this valid nonce (``bad_nonce_share``)."""
        return self.bad_nonce_share > 0 and self._random.random() < self.bad_nonce_share
