"""Differential testing of the double against a real ``bao server -dev`` (LocalStack/fakeredis style).

The pieces, from the bottom up:

* :class:`BaoServer` starts one real OpenBao dev server on ``127.0.0.1:<free port>`` (root token
  ``root``), waits for ``GET /v1/sys/health`` = 200 and stops exactly the PID it started.
  :func:`acquire_bao` / :func:`release_bao` share one process per pytest process (xdist: per worker).
* :class:`Side` is one target (``"bao"`` or ``"double"``): base URL, a ``requests`` session and
  ``vars``, a dict where a scenario keeps values that differ per side (issuer ids, serials, PEMs).
* :class:`Pair` sends the SAME request to both sides and returns an :class:`Exchange`. Any argument
  may be a callable ``f(side) -> value`` to send a side-specific value; string paths are formatted
  with ``side.vars`` plus ``mount`` (``"/v1/{mount}/issuer/{root_id}"``).
* :meth:`Exchange.same` compares the two responses and fails with a side-by-side report:
  status, ``Content-Type`` and ``Cache-Control``; for JSON bodies the top-level keys and the whole
  body after :func:`normalise` (random parts replaced by placeholders, so every deterministic value
  must match); for PEM/DER bodies the block types, trailing newline and parsed facts; and
  :func:`cert_facts` of the certificates found under ``cert_keys``.
* :meth:`Exchange.expect` pins what the REAL server does (status, error texts, warnings, data
  values) and checks the double says the same, so each test documents the upstream behaviour.

Nothing here writes outside a temporary directory: the dev server gets its own ``HOME`` so it does
not touch ``~/.vault-token``.
"""

from __future__ import annotations

import atexit
import base64
import datetime
import ipaddress
import json
import re
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509 import ocsp
from cryptography.x509.oid import NameOID

from pytest_schedpki.secrets.engines.pki.codecs.goder import KEY_USAGE_OID, NAME_CONSTRAINTS_OID
from pytest_schedpki.secrets.engines.pki.codecs.goder import extension_value_der as goder_extension_value
from pytest_schedpki.upstream.bao import BaoDevServer, bao_binary  # noqa: F401 - bao_binary re-exported

ROOT_TOKEN = "root"
REQUEST_TIMEOUT = 30  # seconds per HTTP request (key generation on a busy machine can be slow)

# ------------------------------------------------------------------------------------- the real server


def bao_on_path() -> str | None:
    """``shutil.which("bao")`` - the parity suite is skipped when this is ``None``."""
    return shutil.which("bao")


class BaoServer(BaoDevServer):
    """The real server the parity suites compare against: the product's own ``bao server -dev``
    starter (upstream mode runs the same one), root token ``root``, on a free port pair of
    127.0.0.1. ``start(timeout=30)`` raises RuntimeError with the log tail when it is not healthy in
    time; ``stop()`` ends only the process it started and removes its temporary HOME and log."""

    def __init__(self, binary: str):
        super().__init__(binary, ROOT_TOKEN)


_BAO_LOCK = threading.Lock()
_BAO: BaoServer | None = None
_BAO_USERS = 0


def acquire_bao() -> BaoServer:
    """The shared real server of this process, started on first use (raises RuntimeError if it
    cannot start; callers skip when :func:`bao_on_path` is None before calling this)."""
    global _BAO, _BAO_USERS
    with _BAO_LOCK:
        if _BAO is None:
            binary = bao_binary()
            if binary is None:
                raise RuntimeError("bao is not on PATH")
            _BAO = BaoServer(binary).start()
        _BAO_USERS += 1
        return _BAO


def release_bao() -> None:
    """Drop one user of the shared server; the last one stops it."""
    global _BAO, _BAO_USERS
    with _BAO_LOCK:
        _BAO_USERS -= 1
        if _BAO_USERS <= 0 and _BAO is not None:
            _BAO.stop()
            _BAO = None
            _BAO_USERS = 0


@atexit.register
def _stop_bao_at_exit() -> None:  # safety net if a session is interrupted
    if _BAO is not None:
        _BAO.stop()


# ------------------------------------------------------------------------------------- normalising

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SERIAL_COLON_RE = re.compile(r"(?:[0-9a-fA-F]{2}:)+[0-9a-fA-F]{2}")
SERIAL_HYPHEN_RE = re.compile(r"(?:[0-9a-fA-F]{2}-)+[0-9a-fA-F]{2}")
RFC3339_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
PEM_BLOCK_RE = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----")
PEM_ANY_RE = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----\n?", re.S)
B64_RE = re.compile(r"[A-Za-z0-9+/=\s]{100,}")
EMBEDDED_SERIAL_RE = re.compile(r"\b[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){7,}\b")
EMBEDDED_UNIX_RE = re.compile(r"\b1[5-9]\d{8}\b")
GO_LAYOUT = "2006-01-02T15:04:05"

#: integer fields that hold a unix time (seconds) wherever they appear
UNIX_TIME_KEYS = frozenset({
    "expiration", "not_before", "revocation_time", "issued_time", "server_time_utc", "last_tidy_time",
    "creation_time", "time_started", "time_finished",
})
#: string fields that hold a time (RFC3339 or Go time text) wherever they appear
TIME_STRING_KEYS = frozenset({
    "revocation_time_rfc3339", "issued_time_rfc3339", "issue_time", "expire_time", "last_modified",
    "next_update", "this_update", "creation_time_rfc3339",
})
#: string fields that are random secrets or ids
RANDOM_STRING_KEYS = {"client_token": "<TOKEN>", "token": "<TOKEN>", "accessor": "<ACCESSOR>",
                      "wrapped_accessor": "<ACCESSOR>",
                      "cluster_name": "<CLUSTER_NAME>", "internal_backend_uuid": "<UUID>"}


def normalise_message(text: str) -> str:
    """An error/warning text with embedded UUIDs, serials, times and PEMs replaced:
    ``<UUID>``, ``<SERIAL>``, ``<RFC3339>`` (Go's reference layout ``2006-01-02T15:04:05`` is kept),
    ``<UNIX>`` (10-digit unix seconds), ``<PEM TYPE>``."""
    text = PEM_ANY_RE.sub(lambda m: f"<PEM {m.group(1)}>", text)
    text = UUID_RE.sub("<UUID>", text)
    text = EMBEDDED_SERIAL_RE.sub("<SERIAL>", text)
    text = RFC3339_RE.sub(lambda m: m.group(0) if m.group(0).startswith(GO_LAYOUT) else "<RFC3339>", text)
    return EMBEDDED_UNIX_RE.sub("<UNIX>", text)


def normalise_string(value: str) -> str:
    """A whole string value with a random shape replaced by a placeholder.

    PEM text -> ``<PEM T1+T2>`` plus ``+NL`` when it ends with a newline (the PEM types in order);
    UUID -> ``<UUID>``; colon/hyphen hex -> ``<SERIAL colon|hyphen>``; RFC3339 -> ``<RFC3339>``;
    long base64 -> ``<BASE64>``. Anything else is returned unchanged.
    """
    if "-----BEGIN" in value:
        kinds = "+".join(PEM_BLOCK_RE.findall(value))
        return f"<PEM {kinds}>" + ("+NL" if value.endswith("\n") else "")
    if UUID_RE.fullmatch(value):
        return "<UUID>"
    if SERIAL_COLON_RE.fullmatch(value) and len(value) > 8:
        return "<SERIAL colon>"
    if SERIAL_HYPHEN_RE.fullmatch(value) and len(value) > 8:
        return "<SERIAL hyphen>"
    if RFC3339_RE.fullmatch(value):
        return "<RFC3339>"
    if len(value) >= 100 and B64_RE.fullmatch(value):
        return "<BASE64>"
    return value


def _is_random_key(key: Any) -> bool:
    return isinstance(key, str) and bool(
        UUID_RE.fullmatch(key) or (len(key) > 8 and (SERIAL_COLON_RE.fullmatch(key) or SERIAL_HYPHEN_RE.fullmatch(key))))


def normalise(value: Any, key: str | None = None, volatile: Iterable[str] = ()) -> Any:
    """A JSON value with every random part replaced, so two servers' answers compare equal when they
    agree on everything deterministic.

    * dict keys that are UUIDs/serials are collected under one key ``"<ID>*"`` whose value is the
      sorted list of the normalised values (the order of random keys is random);
    * ``errors``/``warnings`` lists -> :func:`normalise_message` per entry;
    * ``lease_id`` -> ``<prefix>/<LEASE_SUFFIX>``; token/accessor/cluster fields -> placeholders;
    * ints under :data:`UNIX_TIME_KEYS` (> 10**9) -> ``<UNIX>``; strings under
      :data:`TIME_STRING_KEYS` -> ``<TIME>`` (empty string kept);
    * keys named in ``volatile`` -> ``<TYPE typename>`` (value varies between runs, type must not);
    * other strings -> :func:`normalise_string`.
    """
    volatile = frozenset(volatile)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        randoms: list[Any] = []
        for k, v in value.items():
            if _is_random_key(k):
                randoms.append(normalise(v, None, volatile))
                continue
            if k in volatile:
                out[k] = f"<TYPE {type_name(v)}>"
            elif k in ("errors", "warnings") and isinstance(v, list):
                out[k] = [normalise_message(m) if isinstance(m, str) else m for m in v]
            elif k == "lease_id" and isinstance(v, str) and v:
                out[k] = v.rsplit("/", 1)[0] + "/<LEASE_SUFFIX>"
            elif k in RANDOM_STRING_KEYS and isinstance(v, str) and v:
                out[k] = RANDOM_STRING_KEYS[k]
            else:
                out[k] = normalise(v, k, volatile)
        if randoms:
            out["<ID>*"] = sorted(randoms, key=lambda x: json.dumps(x, sort_keys=True))
        return out
    if isinstance(value, list):
        return [normalise(x, key, volatile) for x in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and key in UNIX_TIME_KEYS and value > 10**9:
        return "<UNIX>"
    if isinstance(value, str):
        if key in TIME_STRING_KEYS and value:
            return "<TIME>"
        return normalise_string(value)
    return value


def type_name(value: Any) -> str:
    """JSON type name: null, bool, int, float, string, object, list[<sorted element types>]."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        inner = sorted({type_name(x) for x in value})
        return "list[" + "|".join(inner) + "]" if inner else "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def types_of(data: Any) -> dict[str, str] | None:
    """``{key: type_name(value)}`` of a dict (``None`` for anything else)."""
    if not isinstance(data, dict):
        return None
    return {k: type_name(v) for k, v in sorted(data.items())}


# ------------------------------------------------------------------------------------- certificates


def load_certificate(value: str | bytes) -> x509.Certificate:
    """A certificate from PEM text (the first CERTIFICATE block), base64 DER text, or DER bytes."""
    if isinstance(value, bytes):
        if value.lstrip().startswith(b"-----BEGIN"):
            return x509.load_pem_x509_certificate(value)
        return x509.load_der_x509_certificate(value)
    if "-----BEGIN CERTIFICATE-----" in value:
        block = re.search(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", value, re.S)
        return x509.load_pem_x509_certificate(block.group(0).encode())
    return x509.load_der_x509_certificate(base64.b64decode(value))


def pem_blocks(text: str) -> list[str]:
    """The PEM block types of ``text`` in order (``["RSA PRIVATE KEY", "CERTIFICATE"]``)."""
    return PEM_BLOCK_RE.findall(text or "")


def _name(name: x509.Name) -> list[str]:
    return [f"{attr.oid._name}={attr.value}" for attr in name]


def _key_kind(key: Any) -> str:
    if isinstance(key, rsa.RSAPublicKey):
        return f"rsa-{key.key_size}"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"ec-{key.curve.name}"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "ed25519"
    return type(key).__name__


def serial_class(serial: int) -> str:
    """``"random-160"`` for an upstream-style serial (20 random bytes: 129..160 bits), else
    ``"bits-<n>"``."""
    bits = serial.bit_length()
    return "random-160" if 128 < bits <= 160 else f"bits-{bits}"


def _verifies(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    key = issuer.public_key()
    try:
        if isinstance(key, rsa.RSAPublicKey):
            pad = cert.signature_algorithm_parameters
            key.verify(cert.signature, cert.tbs_certificate_bytes,
                       pad if isinstance(pad, padding.PSS) else padding.PKCS1v15(), cert.signature_hash_algorithm)
        elif isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(cert.signature, cert.tbs_certificate_bytes)
        else:
            return False
        return True
    except Exception:  # noqa: BLE001 - any failure is "does not verify"
        return False


_NC_OID, _KU_OID = NAME_CONSTRAINTS_OID, KEY_USAGE_OID


def extension_value_der(cert: x509.Certificate, oid_der: bytes) -> bytes | None:
    """The encoded value of the extension whose OID encodes as ``oid_der``, read from the
    certificate's DER (the double's own reader, ``codecs.goder``); None when absent."""
    return goder_extension_value(cert.public_bytes(serialization.Encoding.DER), oid_der)


def _readable(cert: x509.Certificate) -> x509.Certificate:
    """``cert``, or when cryptography cannot decode its extensions a copy it can read: ``*`` -> ``x``
    in a NameConstraints (Go writes dNSName constraints with ``*``), KeyAgreement set in a KeyUsage
    with EncipherOnly/DecipherOnly alone (Go writes what it is asked). :func:`cert_facts` then
    reports the constraint's DER (``name_constraints_der``); KeyUsage bits are compared as encoded
    by the differential fuzzer."""
    try:
        cert.extensions  # noqa: B018 - decoding them is the test
        return cert
    except ValueError:
        der = cert.public_bytes(serialization.Encoding.DER)
        value = extension_value_der(cert, _NC_OID)
        if value is not None:
            der = der.replace(value, value.replace(b"*", b"x"), 1)
        value = extension_value_der(cert, _KU_OID)
        if value is not None and len(value) >= 4:  # EncipherOnly/DecipherOnly without KeyAgreement
            bits = bytearray(value[3:])
            bits[0] |= 0x08
            unused = (bits[-1] & -bits[-1]).bit_length() - 1
            der = der.replace(value, value[:2] + bytes([unused]) + bytes(bits), 1)
        return x509.load_der_x509_certificate(der)


def cert_facts(cert: x509.Certificate | str | bytes, issuer: x509.Certificate | str | None = None) -> dict[str, Any]:
    """What two servers must agree on about a certificate they issued from the same request.

    Keys: ``version``, ``subject``/``issuer`` (``oid=value`` lists), ``self_issued``, ``key``
    (``rsa-2048``/``ec-secp256r1``), ``sig_alg`` (signature algorithm OID name), ``sig_hash``,
    ``validity_seconds`` (notAfter - notBefore), ``serial_class``, ``extensions`` (sorted
    ``name:critical`` list), ``basic_constraints``, ``key_usage``, ``ext_key_usage``, ``san`` (kinds
    -> values; otherName as ``oid:hexDER``), ``name_constraints``, ``policies_der`` (the CertificatePolicies value, hex), ``aia``, ``crl_dp``,
    ``aki_is_issuer_ski`` and ``verifies_with_issuer`` (when ``issuer`` is given or the cert is
    self-issued). ``validity_seconds`` is compared with a tolerance by :meth:`Exchange.same`.
    """
    if not isinstance(cert, x509.Certificate):
        cert = load_certificate(cert)
    if issuer is not None and not isinstance(issuer, x509.Certificate):
        issuer = load_certificate(issuer)
    nc_der = extension_value_der(cert, _NC_OID)  # before any '*' is masked by _readable
    cert, issuer = _readable(cert), _readable(issuer) if issuer is not None else None
    if issuer is None and cert.subject == cert.issuer:
        issuer = cert
    facts: dict[str, Any] = {
        "version": cert.version.name,
        "subject": _name(cert.subject),
        "issuer": _name(cert.issuer),
        "self_issued": cert.subject == cert.issuer,
        "key": _key_kind(cert.public_key()),
        "sig_alg": cert.signature_algorithm_oid._name,
        "sig_hash": cert.signature_hash_algorithm.name if cert.signature_hash_algorithm else None,
        "validity_seconds": int((cert.not_valid_after_utc - cert.not_valid_before_utc).total_seconds()),
        "serial_class": serial_class(cert.serial_number),
        "extensions": sorted(f"{e.oid._name}:{'critical' if e.critical else 'non-critical'}" for e in cert.extensions),
    }
    for ext in cert.extensions:
        v = ext.value
        if isinstance(v, x509.BasicConstraints):
            facts["basic_constraints"] = {"ca": v.ca, "path_length": v.path_length}
        elif isinstance(v, x509.KeyUsage):
            names = ["digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
                     "key_agreement", "key_cert_sign", "crl_sign"]
            usage = [n for n in names if getattr(v, n)]
            if v.key_agreement:
                usage += [n for n in ("encipher_only", "decipher_only") if getattr(v, n)]
            facts["key_usage"] = usage
        elif isinstance(v, x509.ExtendedKeyUsage):
            facts["ext_key_usage"] = [o._name for o in v]
        elif isinstance(v, x509.SubjectAlternativeName):
            san = {
                "dns": v.get_values_for_type(x509.DNSName),
                "ip": [str(i) for i in v.get_values_for_type(x509.IPAddress)],
                "uri": v.get_values_for_type(x509.UniformResourceIdentifier),
                "email": v.get_values_for_type(x509.RFC822Name),
                "other": [f"{o.type_id.dotted_string}:{o.value.hex()}" for o in v.get_values_for_type(x509.OtherName)],
            }
            facts["san"] = {k: x for k, x in san.items() if x}
        elif isinstance(v, x509.NameConstraints):
            facts["name_constraints"] = {"permitted": [g.value for g in (v.permitted_subtrees or [])],
                                         "excluded": [g.value for g in (v.excluded_subtrees or [])]}
            facts["name_constraints_der"] = (nc_der or b"").hex()
        elif isinstance(v, x509.CertificatePolicies):
            facts["policies_der"] = v.public_bytes().hex()
        elif isinstance(v, x509.AuthorityInformationAccess):
            facts["aia"] = [f"{d.access_method._name}:{d.access_location.value}" for d in v]
        elif isinstance(v, x509.CRLDistributionPoints):
            facts["crl_dp"] = [n.value for dp in v for n in (dp.full_name or [])]
    if issuer is not None:
        facts["verifies_with_issuer"] = _verifies(cert, issuer)
        try:
            aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
            ski = issuer.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
            facts["aki_is_issuer_ski"] = aki == ski
        except x509.ExtensionNotFound:
            facts["aki_is_issuer_ski"] = None
    return facts


def _cert_values(data: dict, key: str) -> list[tuple[str, str]]:
    """``[(label, pem_or_b64)]`` for ``data[key]`` (a string or a list of strings)."""
    value = data.get(key)
    if isinstance(value, list):
        return [(f"{key}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, str) and value:
        return [(key, value)]
    return []


def private_key_format(text: str) -> dict[str, Any]:
    """How a private key string is encoded: ``{"encoding": "pem"|"der-base64", "format": "pkcs1"|
    "sec1"|"pkcs8"|"?", "pem": [block types]}``. The DER structure decides the format: after the outer
    SEQUENCE, PKCS#8 has INTEGER 0 then a SEQUENCE (algorithm), PKCS#1 INTEGER 0 then INTEGER, SEC1
    INTEGER 1 then an OCTET STRING."""
    if "-----BEGIN" in text:
        blocks = pem_blocks(text)
        body = re.search(r"-----BEGIN [A-Z0-9 ]+-----(.*?)-----END", text, re.S).group(1)
        der, encoding = base64.b64decode("".join(body.split())), "pem"
    else:
        blocks, der, encoding = [], base64.b64decode(text), "der-base64"
    return {"encoding": encoding, "format": _der_key_format(der), "pem": blocks}


def _der_key_format(der: bytes) -> str:
    try:
        i = 1
        i += 1 + (der[i] & 0x7F) if der[i] & 0x80 else 1  # skip outer SEQUENCE length
        assert der[i] == 0x02  # version INTEGER
        version = der[i + 2]
        nxt = der[i + 2 + der[i + 1]]
        if version == 0 and nxt == 0x30:
            return "pkcs8"
        if version == 0 and nxt == 0x02:
            return "pkcs1"
        if version == 1 and nxt == 0x04:
            return "sec1"
    except (IndexError, AssertionError):
        pass
    return "?"


def load_private_key(text: str):
    """A private key from PEM or base64 DER (any of PKCS#1, SEC1, PKCS#8)."""
    if "-----BEGIN" in text:
        return serialization.load_pem_private_key(text.encode(), None)
    return serialization.load_der_private_key(base64.b64decode(text), None)


def key_matches(private_key_text: str, cert: str | bytes | x509.Certificate) -> bool:
    """Whether the private key belongs to the certificate's public key."""
    if not isinstance(cert, x509.Certificate):
        cert = load_certificate(cert)
    pub = load_private_key(private_key_text).public_key()
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    return pub.public_bytes(serialization.Encoding.DER, fmt) == cert.public_key().public_bytes(serialization.Encoding.DER, fmt)


# ------------------------------------------------------------------------------------- CSRs and keys


def ec_key() -> ec.EllipticCurvePrivateKey:
    """A fresh P-256 key."""
    return ec.generate_private_key(ec.SECP256R1())


_RSA_CACHE: dict[int, rsa.RSAPrivateKey] = {}


def rsa_key(bits: int = 2048) -> rsa.RSAPrivateKey:
    """An RSA key of ``bits`` (cached per size: CSRs only need *a* key of the right kind)."""
    if bits not in _RSA_CACHE:
        _RSA_CACHE[bits] = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return _RSA_CACHE[bits]


def make_csr(key, cn: str | None = None, dns: Iterable[str] = (), ips: Iterable[str] = (),
             uris: Iterable[str] = (), org: str | None = None, ca: bool | None = None) -> str:
    """A PEM CSR signed with ``key`` (SHA-256) with the given subject CN/O and SANs; ``ca`` adds a
    critical BasicConstraints extension."""
    attrs = []
    if cn:
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs))
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    names += [x509.UniformResourceIdentifier(u) for u in uris]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def self_signed_ca(key, cn: str, days: int = 365) -> str:
    """A self-signed CA certificate (PEM): BasicConstraints CA critical, KeyUsage CertSign+CRLSign."""
    now = utcnow()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
               .not_valid_after(now + datetime.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True))
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def rfc3339(dt: datetime.datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` (UTC, seconds)."""
    return dt.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


# ------------------------------------------------------------------------------------- sides and pairs

_UNSET: Any = object()


@dataclass
class Side:
    """One target. ``name`` is ``"bao"`` or ``"double"``; ``vars`` holds per-side scenario values
    (used to format paths and by callables passed to :meth:`Pair.send`)."""

    name: str
    url: str
    session: requests.Session = field(default_factory=requests.Session)
    vars: dict[str, Any] = field(default_factory=dict)

    def request(self, method: str, path: str, *, json: Any = _UNSET, data: Any = None,
                headers: dict[str, str] | None = None, token: str | None = ROOT_TOKEN,
                params: dict[str, str] | None = None) -> requests.Response:
        """Send one request. ``token`` goes in ``X-Vault-Token`` (``None``: no token header);
        ``headers`` are added last (and may override it); ``json`` is sent with
        ``Content-Type: application/json``; ``data`` as a raw body (str/bytes, no Content-Type unless
        given in ``headers``)."""
        h: dict[str, str] = {}
        if token is not None:
            h["X-Vault-Token"] = token
        h.update(headers or {})
        kwargs: dict[str, Any] = {"headers": h, "params": params, "timeout": REQUEST_TIMEOUT,
                                  "allow_redirects": False}
        if json is not _UNSET:
            kwargs["json"] = json
        elif data is not None:
            kwargs["data"] = data
        return self.session.request(method, self.url + path, **kwargs)


def _resolve(value: Any, side: Side) -> Any:
    return value(side) if callable(value) else value


def body_json(resp: requests.Response) -> Any:
    """The decoded JSON body, or ``None`` when the body is not JSON."""
    try:
        return resp.json()
    except ValueError:
        return None


def describe(resp: requests.Response, volatile: Iterable[str] = ()) -> str:
    """A short printable summary of a response (status, content type, normalised body)."""
    j = body_json(resp)
    if j is not None:
        body = json.dumps(normalise(j, volatile=volatile), indent=1, sort_keys=True)
    elif resp.content.lstrip().startswith(b"-----BEGIN"):
        body = normalise_string(resp.text)
    elif resp.content:
        body = f"<{len(resp.content)} bytes: {resp.content[:60]!r}>"
    else:
        body = "<empty>"
    if len(body) > 4000:
        body = body[:4000] + "\n... (cut)"
    return f"{resp.status_code} {resp.headers.get('Content-Type')}\n{body}"


COMPARED_HEADERS = ("Content-Type", "Cache-Control", "X-Vault-Namespace")


class ParityError(AssertionError):
    """A difference between the real server and the double (or a broken upstream expectation)."""


class Exchange:
    """The two answers to one request: ``real`` (bao) and ``double`` (requests.Response objects)."""

    def __init__(self, pair: Pair, label: str, real: requests.Response, double: requests.Response):
        self.pair = pair
        self.label = label
        self.real = real
        self.double = double

    # -- access --------------------------------------------------------------------------------
    def response(self, side: Side | str) -> requests.Response:
        name = side if isinstance(side, str) else side.name
        return self.real if name == "bao" else self.double

    def json(self, side: Side | str) -> Any:
        """The JSON body of one side (``None`` when not JSON)."""
        return body_json(self.response(side))

    def data(self, side: Side | str) -> Any:
        """``body["data"]`` of one side."""
        j = self.json(side)
        return j.get("data") if isinstance(j, dict) else None

    def capture(self, name: str, getter: Callable[[Any], Any]) -> Exchange:
        """Store ``getter(json_body)`` of each side in that side's ``vars[name]`` (fails clearly if
        the getter cannot read the body)."""
        for side in (self.pair.real, self.pair.double):
            try:
                side.vars[name] = getter(self.json(side))
            except Exception as exc:  # noqa: BLE001
                self._fail([f"cannot capture {name!r} on {side.name}: {type(exc).__name__}: {exc}"])
        return self

    # -- comparison ------------------------------------------------------------------------------
    def _fail(self, problems: list[str], volatile: Iterable[str] = ()) -> None:
        report = [f"PARITY {self.label}", *("  - " + p for p in problems),
                  "---- bao ----", describe(self.real, volatile), "---- double ----", describe(self.double, volatile)]
        errors = self.pair.handler_errors()
        if errors:
            report += ["---- double handler errors ----", *errors]
        raise ParityError("\n".join(report))

    def same(self, *, cert_keys: Iterable[str] = (), volatile: Iterable[str] = (), types_only: bool = False,
             validity_tolerance: int = 2, headers: Iterable[str] = COMPARED_HEADERS) -> Exchange:
        """Assert both servers answered alike; returns self.

        Compared: status; the ``headers`` (Content-Type, Cache-Control, X-Vault-Namespace by default); for JSON bodies
        the set of top-level keys, the types of ``data`` values, and the whole body after
        :func:`normalise` (``types_only=True`` compares top-level keys + ``data`` key types +
        errors/warnings only; ``volatile`` keys are compared by type); for other bodies the PEM
        block types and trailing newline, or the DER length class and parse result; and, for each
        key in ``cert_keys`` present in ``data`` (string or list), :func:`cert_facts` with
        ``validity_seconds`` allowed to differ by ``validity_tolerance`` seconds.
        """
        problems: list[str] = []
        r, d = self.real, self.double
        if r.status_code != d.status_code:
            problems.append(f"status: bao {r.status_code} != double {d.status_code}")
        for h in headers:
            if r.headers.get(h) != d.headers.get(h):
                problems.append(f"header {h}: bao {r.headers.get(h)!r} != double {d.headers.get(h)!r}")
        rj, dj = body_json(r), body_json(d)
        if (rj is None) != (dj is None):
            problems.append("body: one side is JSON, the other is not")
        elif rj is not None:
            problems += _compare_json(rj, dj, volatile, types_only)
        else:
            problems += _compare_raw(r.content, d.content)
        if isinstance(rj, dict) and isinstance(dj, dict):
            problems += _compare_certs(rj.get("data"), dj.get("data"), cert_keys, validity_tolerance)
        if problems:
            self._fail(problems, volatile)
        return self

    def expect(self, status: int | None = None, *, errors: list[str] | None = None,
               warnings: list[str] | None | object = _UNSET, data: dict[str, Any] | None = None,
               data_keys: Iterable[str] | None = None, content_type: str | None = None) -> Exchange:
        """Pin upstream behaviour on BOTH sides (texts compared after :func:`normalise_message`).

        ``errors``/``warnings`` are full lists (``warnings=None`` means the envelope has
        ``"warnings": null``); ``data`` maps keys to exact expected values; ``data_keys`` is the
        exact sorted set of keys in ``data``.
        """
        for side in (self.pair.real, self.pair.double):
            resp = self.response(side)
            problems: list[str] = []
            j = body_json(resp)
            if status is not None and resp.status_code != status:
                problems.append(f"{side.name}: status {resp.status_code}, expected {status}")
            if content_type is not None and resp.headers.get("Content-Type") != content_type:
                problems.append(f"{side.name}: Content-Type {resp.headers.get('Content-Type')!r}, expected {content_type!r}")
            if errors is not None:
                got = [normalise_message(e) for e in j.get("errors", [])] if isinstance(j, dict) and "errors" in j else None
                want = [normalise_message(e) for e in errors]
                if got != want:
                    problems.append(f"{side.name}: errors {got!r}, expected {want!r}")
            if warnings is not _UNSET:
                got_w = j.get("warnings", "<absent>") if isinstance(j, dict) else "<no json>"
                if isinstance(got_w, list):
                    got_w = [normalise_message(w) for w in got_w]
                want_w = None if warnings is None else [normalise_message(w) for w in warnings]
                if got_w != want_w:
                    problems.append(f"{side.name}: warnings {got_w!r}, expected {want_w!r}")
            if data is not None or data_keys is not None:
                got_data = j.get("data") if isinstance(j, dict) else None
                if not isinstance(got_data, dict):
                    problems.append(f"{side.name}: data is {got_data!r}, expected an object")
                else:
                    for k, v in (data or {}).items():
                        if got_data.get(k, "<absent>") != v:
                            problems.append(f"{side.name}: data[{k!r}] = {got_data.get(k, '<absent>')!r}, expected {v!r}")
                    if data_keys is not None and sorted(got_data) != sorted(data_keys):
                        problems.append(f"{side.name}: data keys {sorted(got_data)}, expected {sorted(data_keys)}")
            if problems:
                label = "UPSTREAM EXPECTATION (bao)" if side.name == "bao" else "EXPECTATION"
                self._fail([f"{label}: {p}" for p in problems])
        return self

    def check(self, fn: Callable[[Side, requests.Response], Any]) -> Exchange:
        """Run ``fn(side, response)`` for each side (bao first); an AssertionError from it is
        reported with both responses."""
        for side in (self.pair.real, self.pair.double):
            try:
                fn(side, self.response(side))
            except AssertionError as exc:
                self._fail([f"{side.name}: {exc}"])
        return self

    def facts(self, side: Side | str, key: str = "certificate", index: int | None = None) -> dict[str, Any]:
        """:func:`cert_facts` of ``data[key]`` (``data[key][index]`` for lists) on one side."""
        value = self.data(side)[key]
        if index is not None:
            value = value[index]
        return cert_facts(value)


def _compare_json(rj: Any, dj: Any, volatile: Iterable[str], types_only: bool) -> list[str]:
    problems: list[str] = []
    if isinstance(rj, dict) and isinstance(dj, dict):
        if set(rj) != set(dj):
            problems.append(f"top-level keys: bao {sorted(rj)} != double {sorted(dj)}")
        rd, dd = rj.get("data"), dj.get("data")
        if isinstance(rd, dict) and isinstance(dd, dict):
            rt, dt = types_of(rd), types_of(dd)
            if rt != dt:
                only_r = sorted(set(rt) - set(dt))
                only_d = sorted(set(dt) - set(rt))
                differing = sorted(k for k in set(rt) & set(dt) if rt[k] != dt[k])
                problems.append(f"data keys/types: only bao {only_r}, only double {only_d}, "
                                f"type differs {[(k, rt[k], dt[k]) for k in differing]}")
        elif type_name(rd) != type_name(dd):
            problems.append(f"data: bao {type_name(rd)} != double {type_name(dd)}")
        for key in ("errors", "warnings"):
            rv, dv = rj.get(key), dj.get(key)
            if key in volatile:  # compared by type, as every volatile key (a check pins each side's text)
                if type_name(rv) != type_name(dv):
                    problems.append(f"{key}: bao {type_name(rv)} != double {type_name(dv)}")
                continue
            rn = [normalise_message(x) for x in rv] if isinstance(rv, list) else rv
            dn = [normalise_message(x) for x in dv] if isinstance(dv, list) else dv
            if rn != dn:
                problems.append(f"{key}: bao {rn!r} != double {dn!r}")
    if not types_only and not problems:
        rn, dn = normalise(rj, volatile=volatile), normalise(dj, volatile=volatile)
        if rn != dn:
            problems += [f"value differs at {p}" for p in _diff_paths(rn, dn)][:20] or ["normalised bodies differ"]
    return problems


def _diff_paths(a: Any, b: Any, path: str = "$") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: bao {a.get(k, '<absent>')!r} / double {b.get(k, '<absent>')!r}")
            else:
                out += _diff_paths(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += _diff_paths(x, y, f"{path}[{i}]")
        return out
    if a != b:
        return [f"{path}: bao {json.dumps(a)[:300]} / double {json.dumps(b)[:300]}"]
    return []


def raw_kind(content: bytes) -> dict[str, Any]:
    """What a non-JSON body is: ``{"pem": [types], "trailing_newline": bool}``, ``{"der": "certificate"|
    "crl"|"unparseable", ...facts}``, or ``{"empty": True}``."""
    if not content:
        return {"empty": True}
    if content.lstrip().startswith(b"-----BEGIN"):
        text = content.decode("utf-8", errors="replace")
        return {"pem": pem_blocks(text), "trailing_newline": text.endswith("\n")}
    try:
        return {"der": "certificate", "facts": cert_facts(x509.load_der_x509_certificate(content))}
    except Exception:  # noqa: BLE001
        pass
    try:
        crl = x509.load_der_x509_crl(content)
        return {"der": "crl", "issuer": _name(crl.issuer), "entries": len(list(crl))}
    except Exception:  # noqa: BLE001
        pass
    try:
        return {"der": "ocsp", **ocsp_facts(ocsp.load_der_ocsp_response(content))}
    except Exception:  # noqa: BLE001
        pass
    return {"der": "unparseable", "text": content[:200].decode("latin-1")}


def ocsp_issuer_hashes(issuer: x509.Certificate, algorithm: hashes.HashAlgorithm) -> tuple[bytes, bytes]:
    """An OCSP CertID's ``(issuerNameHash, issuerKeyHash)`` for ``issuer`` (RFC 6960 4.1.1): the hash of
    its subject's DER and of its public key (the subjectPublicKey bits: the EC point, the PKCS#1 RSA key,
    the raw ed25519 key)."""
    key = issuer.public_key()
    if isinstance(key, ec.EllipticCurvePublicKey):
        bits = key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    elif isinstance(key, rsa.RSAPublicKey):
        bits = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
    else:
        bits = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    out = []
    for data in (issuer.subject.public_bytes(), bits):
        digest = hashes.Hash(algorithm)
        digest.update(data)
        out.append(digest.finalize())
    return out[0], out[1]


def ocsp_facts(response: ocsp.OCSPResponse) -> dict[str, Any]:
    """What two OCSP responses about the same question share: the response status and, when successful,
    the certificate status, CertID hash, responder id, signature algorithm, counts of responses,
    certificates and extensions, whether there is a revocation time/reason and the nextUpdate -
    thisUpdate span (seconds, ``None`` without nextUpdate). Times themselves are compared by the tests."""
    facts: dict[str, Any] = {"response_status": response.response_status.name}
    if response.response_status != ocsp.OCSPResponseStatus.SUCCESSFUL:
        return facts
    span = response.next_update_utc - response.this_update_utc if response.next_update_utc else None
    facts.update(
        cert_status=response.certificate_status.name, hash=response.hash_algorithm.name,
        responder_name=_name(response.responder_name) if response.responder_name else None,
        responder_key_hash=response.responder_key_hash is not None,
        signature_algorithm=response.signature_algorithm_oid.dotted_string,
        responses=len(list(response.responses)), certificates=len(response.certificates),
        extensions=len(response.extensions), single_extensions=len(response.single_extensions),
        revocation_time=response.revocation_time_utc is not None,
        revocation_reason=response.revocation_reason.name if response.revocation_reason else None,
        next_update_span=span.total_seconds() if span is not None else None)
    return facts


def _compare_raw(real: bytes, double: bytes) -> list[str]:
    rk, dk = raw_kind(real), raw_kind(double)
    if "facts" in rk and "facts" in dk:
        rk = dict(rk, facts=_without_validity(rk["facts"]))
        dk = dict(dk, facts=_without_validity(dk["facts"]))
    return [] if rk == dk else [f"raw body: bao {rk} != double {dk}"]


def _without_validity(facts: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in facts.items() if k != "validity_seconds"}


def _compare_certs(rd: Any, dd: Any, keys: Iterable[str], tolerance: int) -> list[str]:
    problems: list[str] = []
    if not isinstance(rd, dict) or not isinstance(dd, dict):
        return problems
    for key in keys:
        rv, dv = _cert_values(rd, key), _cert_values(dd, key)
        if len(rv) != len(dv):
            problems.append(f"{key}: bao has {len(rv)} certificate(s), double {len(dv)}")
            continue
        r_issuer = _issuer_of(rd)
        d_issuer = _issuer_of(dd)
        for (label, r_cert), (_, d_cert) in zip(rv, dv, strict=True):
            try:
                rf = cert_facts(r_cert, r_issuer if key == "certificate" else None)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{label}: bao certificate does not parse ({exc})")
                continue
            try:
                df = cert_facts(d_cert, d_issuer if key == "certificate" else None)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{label}: double certificate does not parse ({exc})")
                continue
            if abs(rf["validity_seconds"] - df["validity_seconds"]) > tolerance:
                problems.append(f"{label}.validity_seconds: bao {rf['validity_seconds']} != double {df['validity_seconds']}")
            for k in sorted(set(rf) | set(df)):
                if k != "validity_seconds" and rf.get(k, "<absent>") != df.get(k, "<absent>"):
                    problems.append(f"{label}.{k}: bao {rf.get(k, '<absent>')!r} != double {df.get(k, '<absent>')!r}")
    return problems


def _issuer_of(data: dict) -> x509.Certificate | None:
    value = data.get("issuing_ca")
    if isinstance(value, str) and value:
        try:
            return load_certificate(value)
        except Exception:  # noqa: BLE001
            return None
    return None


class Pair:
    """Both targets of one test, plus the test's mount name.

    ``mount`` is unique per test (the real server is shared by the whole session; the double is
    reset before each test). :meth:`new_mount` gives further unique names (``pki_int``-style).
    """

    def __init__(self, real: Side, double: Side, mount: str, double_obj: Any = None):
        self.real = real
        self.double = double
        self.mount = mount
        self.double_obj = double_obj
        self.mounts: list[str] = [mount]
        for side in (real, double):
            side.vars.setdefault("mount", mount)

    @property
    def sides(self) -> tuple[Side, Side]:
        return self.real, self.double

    def new_mount(self, suffix: str) -> str:
        """A further mount name for this test: ``<mount>_<suffix>`` (also set as ``vars[suffix]``)."""
        name = f"{self.mount}_{suffix}"
        self.mounts.append(name)
        for side in self.sides:
            side.vars[suffix] = name
        return name

    def handler_errors(self) -> list[str]:
        """Exceptions that escaped the double's handlers since the last call (as text)."""
        if self.double_obj is None:
            return []
        return [str(e) for e in self.double_obj.pop_handler_errors()]

    def send(self, method: str, path: str | Callable[[Side], str], *, json: Any = _UNSET, data: Any = None,
             headers: dict[str, str] | Callable[[Side], dict[str, str]] | None = None,
             token: str | None | Callable[[Side], str | None] = ROOT_TOKEN,
             params: dict[str, str] | None = None, label: str | None = None) -> Exchange:
        """Send the same request to bao then to the double; returns the :class:`Exchange`.

        Every argument may be a callable ``f(side)``; a string ``path`` is formatted with the side's
        ``vars`` (``{mount}`` and whatever the scenario captured).
        """
        responses = []
        for side in (self.real, self.double):
            p = _resolve(path, side)
            if "{" in p:
                p = p.format_map(side.vars)
            body = _UNSET if json is _UNSET else _resolve(json, side)
            responses.append(side.request(method, p, json=body, data=_resolve(data, side),
                                          headers=_resolve(headers, side), token=_resolve(token, side),
                                          params=params))
        shown = path if isinstance(path, str) else getattr(path, "__name__", "<path>")
        return Exchange(self, label or f"{method} {shown}", responses[0], responses[1])

    # -- common set-up steps (each compared) ----------------------------------------------------
    def enable_pki(self, mount: str | None = None, max_lease_ttl: str | None = "87600h") -> None:
        """Mount a PKI engine at ``mount`` (default: this test's mount) on both sides and, unless
        ``max_lease_ttl`` is None, tune its max lease TTL. Both steps must agree (204)."""
        mount = mount or self.mount
        self.send("POST", f"/v1/sys/mounts/{mount}", json={"type": "pki"}).same().expect(204)
        if max_lease_ttl is not None:
            self.send("POST", f"/v1/sys/mounts/{mount}/tune", json={"max_lease_ttl": max_lease_ttl}).same().expect(204)

    def generate_root(self, body: dict[str, Any] | None = None, mount: str | None = None, kind: str = "internal",
                      prefix: str = "root") -> Exchange:
        """``POST <mount>/root/generate/<kind>`` (default an EC P-256 root, CN ``Parity Root``, 87600h);
        compared with certificate facts; stores ``<prefix>_id``, ``<prefix>_serial`` and
        ``<prefix>_pem`` in each side's vars."""
        mount = mount or self.mount
        body = body if body is not None else {"common_name": "Parity Root", "ttl": "87600h", "key_type": "ec",
                                              "key_bits": 256}
        ex = self.send("POST", f"/v1/{mount}/root/generate/{kind}", json=body).same(
            cert_keys=("certificate", "issuing_ca")).expect(200)
        ex.capture(f"{prefix}_id", lambda j: j["data"]["issuer_id"])
        ex.capture(f"{prefix}_serial", lambda j: j["data"]["serial_number"])
        ex.capture(f"{prefix}_pem", lambda j: j["data"]["certificate"])
        return ex

    def create_role(self, name: str, body: dict[str, Any], mount: str | None = None) -> Exchange:
        """``POST <mount>/roles/<name>``; the whole returned role (deterministic) must be equal."""
        mount = mount or self.mount
        return self.send("POST", f"/v1/{mount}/roles/{name}", json=body).same().expect(200)

    def cleanup_real(self, side: Side | None = None) -> None:
        """Unmount this test's mounts on the real server (or ``side``), best effort."""
        for mount in self.mounts:
            try:
                (side or self.real).request("DELETE", f"/v1/sys/mounts/{mount}")
            except requests.RequestException:
                pass


def mount_name_for(test_name: str, counter: int) -> str:
    """A mount path unique in the session: ``p<counter>_<sanitised test name>`` (<= 48 chars)."""
    clean = re.sub(r"[^a-z0-9]+", "_", test_name.lower()).strip("_")
    clean = re.sub(r"^test_(parity_)?", "", clean)
    return f"p{counter}_{clean}"[:48].rstrip("_")
