"""The client-assertion JWT build that ``ACL.UpsertAuthMethods`` attempts before storing a method.

When ``Config.OIDCClientAssertion.KeySource`` is set, Nomad builds the ``private_key_jwt`` client
assertion (``lib/auth/oidc.BuildClientAssertionJWT`` with ``hashicorp/cap``'s constructors) and
answers ``400 invalid OIDCClientAssertion: failed to build client_assertion jwt: <error>`` when it
cannot. :func:`client_assertion_error` returns that ``<error>`` text or None.

Mirrored exactly: the re-validation (which also catches JWT-type methods, whose config validation
skips the assertion), ``missing client ID``, HMAC algorithm and secret-length rules
(HS256 >= 32 bytes, HS384 >= 48, HS512 >= 64), RSA algorithm names, ``"kid"`` in ExtraHeaders,
a missing/unparsable PEM block, non-RSA keys, and certificate validity against the double's clock.
Approximated (documented divergence): the wording of low-level ASN.1/x509 parse failures, which
comes from Go's crypto libraries, and file read errors for PemKeyFile/PemCertFile (read from the
double's own disk).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import os
import stat

from ..process.library_warnings import quiet
from .model import AuthMethodConfig, PrivateKey, validate_client_assertion

_KEY_NOT_PEM = "invalid key: Key must be a PEM encoded PKCS1 or PKCS8 key"
_HMAC_MIN = {"HS256": 32, "HS384": 48, "HS512": 64}


def _pem_block(data: bytes) -> bytes | None:
    """The DER bytes of the first PEM block, like Go's ``pem.Decode`` after Nomad's ``newlineHeaders``
    (header lines such as ``Proc-Type:`` skipped, whitespace ignored); None when there is none."""
    start = data.find(b"-----BEGIN ")
    if start < 0:
        return None
    line_end = data.find(b"-----", start + 11)
    if line_end < 0:
        return None
    kind = data[start + 11:line_end]
    end = data.find(b"-----END " + kind + b"-----", line_end + 5)
    if end < 0:
        return None
    lines = [ln for ln in data[line_end + 5:end].split(b"\n") if b":" not in ln]
    try:
        return base64.b64decode(b"".join(b"".join(lines).split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _der_shape(der: bytes) -> int | None:
    """The tag of the element after the version INTEGER: 0x02 PKCS#1, 0x30 PKCS#8, 0x04 SEC 1."""
    try:
        i = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)  # past the outer SEQUENCE header
        if der[0] != 0x30 or der[i] != 0x02:
            return None
        return der[i + 2 + der[i + 1]]
    except IndexError:
        return None


MAX_KEY_FILE = 1024 * 1024  # bytes read from a PemKeyFile/PemCertFile; PEM keys and certificates are far smaller


def _read(path: str, source: str) -> bytes:
    """The file's first :data:`MAX_KEY_FILE` bytes. Only regular files and directories are opened: a
    device, FIFO or socket (``/dev/zero``, ``/dev/stdin``) would make the double read forever or block
    while it holds the scheduler's lock, so it is refused (``not a regular file``)."""
    try:
        mode = os.stat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise ValueError(f"error reading {source}: open {path}: not a regular file")
        with open(path, "rb") as fh:
            return fh.read(MAX_KEY_FILE)
    except IsADirectoryError:
        raise ValueError(f"error reading {source}: read {path}: is a directory") from None
    except FileNotFoundError:
        raise ValueError(f"error reading {source}: open {path}: no such file or directory") from None
    except PermissionError:
        raise ValueError(f"error reading {source}: open {path}: permission denied") from None
    except OSError as exc:
        raise ValueError(f"error reading {source}: open {path}: {exc.strerror or exc}") from None


def _private_key(k: PrivateKey) -> str | None:
    """getCassPrivateKey (gojwt.ParseRSAPrivateKeyFromPEM): None for a usable RSA key, else the error."""
    source = "PemKey" if k.PemKey else "PemKeyFile"
    try:
        data = k.PemKey.encode() if k.PemKey else _read(k.PemKeyFile, source)
    except ValueError as exc:
        return str(exc)
    der = _pem_block(data)
    if der is None:
        return f"error parsing {source}: {_KEY_NOT_PEM}"
    shape = _der_shape(der)
    if shape == 0x04:
        return f"error parsing {source}: x509: failed to parse private key (use ParseECPrivateKey instead for this key format)"
    from cryptography.hazmat.primitives import serialization  # lazily: ~20 ms of start-up
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        key = serialization.load_der_private_key(der, password=None)
    except Exception:  # noqa: BLE001 - user-supplied bytes; Go reports an ASN.1 error here
        return f"error parsing {source}: asn1: structure error: malformed private key"
    if not isinstance(key, rsa.RSAPrivateKey):
        return f"error parsing {source}: key is not a valid RSA private key"
    return None


def _certificate(k: PrivateKey, now: datetime.datetime) -> str | None:
    """getCassCert: None when the certificate parses and is valid at ``now``, else the error text."""
    source = "PemCert" if k.PemCert else "PemCertFile"
    try:
        data = k.PemCert.encode() if k.PemCert else _read(k.PemCertFile, source)
    except ValueError as exc:
        return str(exc)
    der = _pem_block(data)
    if der is None:
        return f"failed to decode {source} PEM block"
    from cryptography import x509

    try:
        with quiet():  # a serial that is not positive warns; under -W error that would be the answer
            cert = x509.load_der_x509_certificate(der)
    except Exception:  # noqa: BLE001 - user-supplied bytes
        return f"failed to parse {source} bytes: x509: malformed certificate"
    if now < cert.not_valid_before_utc or now > cert.not_valid_after_utc:
        return "certificate has expired or is not yet valid"
    return None


def client_assertion_error(config: AuthMethodConfig | None, now: datetime.datetime) -> str | None:
    """The error ``BuildClientAssertionJWT`` would return for ``config`` at ``now`` (aware UTC), or None.

    Call only when ``config.OIDCClientAssertion.KeySource`` is non-empty, after canonicalization.
    """
    if config is None or config.OIDCClientAssertion is None:
        return "no auth method config or client assertion"
    ca = config.OIDCClientAssertion
    problem = validate_client_assertion(ca)
    if problem:
        return problem
    header_error = ('WithHeaders: "kid" not allowed in WithHeaders; use WithKeyID instead'
                    if "kid" in (ca.ExtraHeaders or {}) else None)
    errors: list[str] = []
    if not config.OIDCClientID:
        errors.append("missing client ID")
    if ca.KeySource == "client_secret":
        alg = ca.KeyAlgorithm
        if not alg:
            errors.append("missing signing algorithm")
        if not ca.ClientSecret:
            errors.append("missing client secret")
        elif alg not in _HMAC_MIN:
            errors.append(f'HSAlgorithm.Validate: unsupported algorithm "{alg}" for client secret')
        elif len(ca.ClientSecret.encode()) < _HMAC_MIN[alg]:
            errors.append(f'HSAlgorithm.Validate: invalid secret length for algorithm: "{alg}" '
                          f"must be at least {_HMAC_MIN[alg]} bytes long")
        if header_error:
            errors.append(header_error)
        return f"clientassertion.NewJWTWithHMAC: {chr(10).join(errors)}" if errors else None
    if ca.KeySource == "nomad":
        if header_error:
            errors.append(header_error)
        return f"clientassertion.NewJWTWithRSAKey: {chr(10).join(errors)}" if errors else None
    key = ca.PrivateKey  # private_key: validated above, so the key is present
    problem = _private_key(key)
    if problem:
        return problem
    if not key.KeyID:
        problem = _certificate(key, now)
        if problem:
            return problem
    if not ca.KeyAlgorithm:
        errors.append("missing signing algorithm")
    elif ca.KeyAlgorithm not in ("RS256", "RS384", "RS512"):
        errors.append(f'RSAlgorithm.Validate: unsupported algorithm "{ca.KeyAlgorithm}" for for RSA key')
    if header_error:
        errors.append(header_error)
    return f"clientassertion.NewJWTWithRSAKey: {chr(10).join(errors)}" if errors else None
