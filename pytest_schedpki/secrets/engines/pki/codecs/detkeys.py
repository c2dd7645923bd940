"""Deterministic private keys for reproducible test runs: key number ``index`` of a given ``seed``,
type and size is always the same key, on any machine.

**These keys are predictable by design**: anyone who knows the seed can recompute them. They exist so
that a test run can be replayed with the same key material; never use them to protect anything.

Method (``v1``): a byte stream is SHA-256 in counter mode over ``"schedpki-detkeys-v1" | seed | label``
(label e.g. ``rsa-2048-7``). RSA: each prime is drawn from the stream with its two top bits and its
low bit set, rejected when it shares a factor with the primes below 2000 or when ``p - 1`` is a
multiple of e = 65537, and accepted after :data:`MR_ROUNDS` Miller-Rabin rounds (bases from the
stream, base 2 first); ``d = e^-1 mod lcm(p-1, q-1)``. EC: the private scalar is the stream's first
``curve bits - 1`` bits with the low bit set (always below the group order). Ed25519: the stream's
first 32 bytes.

RSA derivation runs in pure Python (about 0.1-0.3 s per 2048-bit key, holding the GIL), so derived
RSA keys are cached as PKCS#8 DER files under :func:`cache_dir` and loaded from there afterwards.
"""

from __future__ import annotations

import hashlib
import math
import os
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

VERSION = "v1"
MR_ROUNDS = 8  # Miller-Rabin rounds per accepted prime (FIPS 186-4 C.3 asks 5 for 1024-bit primes)
PUBLIC_EXPONENT = 65537
ENV_CACHE = "SCHEDPKI_KEY_CACHE"  # cache directory; "off" disables the disk cache
_SMALL_PRIMORIAL: int | None = None


class Stream:
    """The seeded byte stream of one key (SHA-256 in counter mode)."""

    def __init__(self, seed: str, label: str):
        self._key = hashlib.sha256(f"schedpki-detkeys-{VERSION}\0{seed}\0{label}".encode()).digest()
        self._counter = 0

    def bytes(self, n: int) -> bytes:
        """The next ``n`` bytes."""
        out = bytearray()
        while len(out) < n:
            out += hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
        return bytes(out[:n])

    def bits(self, n: int) -> int:
        """The next ``n``-bit unsigned integer (top bit not forced)."""
        value = int.from_bytes(self.bytes((n + 7) // 8), "big")
        return value >> (8 * ((n + 7) // 8) - n)


def _primorial() -> int:
    global _SMALL_PRIMORIAL
    if _SMALL_PRIMORIAL is None:
        sieve = bytearray([1]) * 2000
        sieve[0:2] = b"\0\0"
        for i in range(2, 45):
            if sieve[i]:
                sieve[i * i::i] = bytearray(len(sieve[i * i::i]))
        _SMALL_PRIMORIAL = math.prod(i for i in range(3, 2000) if sieve[i])
    return _SMALL_PRIMORIAL


def _probably_prime(n: int, stream: Stream) -> bool:
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for round_number in range(MR_ROUNDS):
        a = 2 if round_number == 0 else 2 + stream.bits(n.bit_length() + 64) % (n - 3)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(stream: Stream, bits: int) -> int:
    primorial = _primorial()
    while True:
        candidate = stream.bits(bits) | (3 << (bits - 2)) | 1
        if math.gcd(candidate, primorial) != 1 or (candidate - 1) % PUBLIC_EXPONENT == 0:
            continue
        if _probably_prime(candidate, stream):
            return candidate


def derive_rsa(seed: str, bits: int, index: int) -> rsa.RSAPrivateKey:
    """RSA key number ``index`` of ``seed`` with a ``bits``-bit modulus (no disk cache)."""
    stream = Stream(seed, f"rsa-{bits}-{index}")
    half = bits // 2
    p = _prime(stream, bits - half)
    q = _prime(stream, half)
    while q == p:  # pragma: no cover - astronomically unlikely
        q = _prime(stream, half)
    if p < q:
        p, q = q, p
    lam = (p - 1) * (q - 1) // math.gcd(p - 1, q - 1)
    d = pow(PUBLIC_EXPONENT, -1, lam)
    numbers = rsa.RSAPrivateNumbers(p=p, q=q, d=d, dmp1=rsa.rsa_crt_dmp1(d, p), dmq1=rsa.rsa_crt_dmq1(d, q),
                                    iqmp=rsa.rsa_crt_iqmp(p, q),
                                    public_numbers=rsa.RSAPublicNumbers(PUBLIC_EXPONENT, p * q))
    return numbers.private_key(unsafe_skip_rsa_key_validation=True)


def derive_ec(seed: str, curve: ec.EllipticCurve, index: int) -> ec.EllipticCurvePrivateKey:
    """EC key number ``index`` of ``seed`` on ``curve``."""
    stream = Stream(seed, f"ec-{curve.name}-{index}")
    return ec.derive_private_key(stream.bits(curve.key_size - 1) | 1, curve)


def derive_ed25519(seed: str, index: int) -> ed25519.Ed25519PrivateKey:
    """Ed25519 key number ``index`` of ``seed``."""
    return ed25519.Ed25519PrivateKey.from_private_bytes(Stream(seed, f"ed25519-{index}").bytes(32))


def cache_dir() -> str | None:
    """Where derived RSA keys are kept: ``$SCHEDPKI_KEY_CACHE``, else
    ``$XDG_CACHE_HOME/pytest-schedpki/keys`` (``~/.cache/...``); ``None`` when set to ``off``."""
    configured = os.environ.get(ENV_CACHE, "")
    if configured.lower() == "off":
        return None
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pytest-schedpki", "keys")


def _cache_path(directory: str, seed: str, bits: int, index: int) -> str:
    tag = hashlib.sha256(seed.encode()).hexdigest()[:16]
    return os.path.join(directory, f"rsa{bits}-{VERSION}-{tag}-{index:06d}.der")


def rsa_key(seed: str, bits: int, index: int) -> Any:
    """RSA key number ``index`` of ``seed``: from the disk cache when present (a missing, unreadable or
    foreign file is derived again), else derived and written there (best effort)."""
    directory = cache_dir()
    path = _cache_path(directory, seed, bits, index) if directory else None
    if path is not None:
        try:
            with open(path, "rb") as fh:
                key = serialization.load_der_private_key(fh.read(), None, unsafe_skip_rsa_key_validation=True)
            if isinstance(key, rsa.RSAPrivateKey) and key.key_size == bits:
                return key
        except (OSError, ValueError, TypeError):
            pass
    key = derive_rsa(seed, bits, index)
    if path is not None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
            os.replace(tmp, path)
        except OSError:
            pass
    return key
