"""The issued certificates of a PKI mount, decoded with ``cryptography`` a page at a time.

A page comes from the mount's :class:`~pytest_schedpki.secrets.engines.pki.certstore.CertStore`
without touching the other records: ``sort="newest"`` walks the store backwards (issue order),
``sort="serial"`` pages its sorted serial index (OpenBao's ``LIST certs`` order) from ``after``. The
cheap filters (serial prefix, role, revoked or not) read the record's own fields; only the page's
certificates are decoded (:func:`decode`, cached by certificate object, at most :data:`CACHE_SIZE`).
A text filter ``q`` (subject, SANs) must decode what it looks at: it stops after
:data:`SCAN_BUDGET` certificates and answers the cursor to go on from, so no request decodes the whole
store. The private key a test can read from ``CertRecord`` never leaves this module.
"""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Iterator
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

PAGE_SIZE = 50  # certificates per page by default
MAX_PAGE = 200  # the largest page a request gets
SCAN_BUDGET = 1000  # certificates a text filter (q) decodes per request at most
CACHE_SIZE = 4096  # decoded certificates kept

_cache: collections.OrderedDict[int, tuple[x509.Certificate, dict[str, Any]]] = collections.OrderedDict()
_cache_lock = threading.Lock()
decodes = 0  # certificates decoded since import (the cache's misses): tests read it


def _time(value) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def key_description(public_key) -> str:
    """``"rsa 2048"``, ``"ec P-256"``, ``"ed25519"`` (or the key class's name)."""
    if isinstance(public_key, rsa.RSAPublicKey):
        return f"rsa {public_key.key_size}"
    if isinstance(public_key, ec.EllipticCurvePublicKey):
        return "ec " + {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}.get(
            public_key.curve.name, public_key.curve.name)
    if isinstance(public_key, ed25519.Ed25519PublicKey):
        return "ed25519"
    return type(public_key).__name__


def _sans(cert: x509.Certificate) -> list[str]:
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    out: list[str] = []
    for name in ext:
        kind = {x509.DNSName: "DNS", x509.IPAddress: "IP", x509.RFC822Name: "email",
                x509.UniformResourceIdentifier: "URI"}.get(type(name), "other")
        out.append(f"{kind}:{name.value}")
    return out


def decode(cert: x509.Certificate) -> dict[str, Any]:
    """``{"subject", "common_name", "sans", "issuer", "not_before", "not_after", "key"}`` of ``cert``
    (RFC 4514 names, RFC 3339 UTC times, SANs as ``"DNS:a.example"``/``"IP:10.0.0.1"``), cached."""
    global decodes
    with _cache_lock:
        hit = _cache.get(id(cert))
        if hit is not None and hit[0] is cert:
            _cache.move_to_end(id(cert))
            return hit[1]
    common = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    try:
        key = key_description(cert.public_key())
    except Exception:  # noqa: BLE001 - an unusual key still shows the rest
        key = "unknown"
    fields = {"subject": cert.subject.rfc4514_string(), "common_name": str(common[0].value) if common else "",
              "sans": _sans(cert), "issuer": cert.issuer.rfc4514_string(),
              "not_before": _time(cert.not_valid_before_utc), "not_after": _time(cert.not_valid_after_utc),
              "key": key}
    with _cache_lock:
        decodes += 1
        _cache[id(cert)] = (cert, fields)  # the certificate kept alive: its id cannot be reused meanwhile
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return fields


def describe(record, now) -> dict[str, Any]:
    """One certificate row: :func:`decode`'s fields plus ``serial``, ``role``, ``issuer_id``,
    ``issued_at``, ``stored``, ``revoked``, ``revocation_time`` and ``expired`` (at ``now``)."""
    fields = decode(record.certificate)
    return {"serial": record.serial_number, "role": record.role, "issuer_id": record.issuer_id,
            "issued_at": _time(record.issued_at), "stored": bool(record.stored),
            "revoked": record.revocation_time is not None, "revocation_time": _time(record.revocation_time),
            "expired": record.certificate.not_valid_after_utc < now, **fields}


def _cheap_match(record, serial: str, role: str, status: str) -> bool:
    if serial and not record.serial_number.startswith(serial):
        return False
    if role and record.role != role:
        return False
    if status == "revoked" and record.revocation_time is None:
        return False
    return not (status == "unrevoked" and record.revocation_time is not None)


def _text_match(record, q: str) -> bool:
    fields = decode(record.certificate)
    return any(q in text.lower() for text in (fields["subject"], *fields["sans"], record.serial_number))


def _candidates(certs, sort: str, cursor: str) -> tuple[Iterator[tuple[str, Any]], int]:
    """(``(next cursor, record)`` pairs from ``cursor`` on, the stored count)."""
    if sort == "serial":
        serials = certs.page(cursor.replace(":", "-") if cursor else "", 0)
        return ((s.replace(":", "-"), certs[s]) for s in serials), len(certs.stored_serials())
    start = int(cursor) if cursor.isdigit() else 0
    walk = itertools.islice(reversed(certs), start, None)
    return ((str(start + i + 1), certs[s]) for i, s in enumerate(walk)), len(certs)


def certificate_page(certs, now, *, sort: str = "newest", cursor: str = "", limit: int = PAGE_SIZE,
                     serial: str = "", role: str = "", status: str = "", q: str = "") -> dict[str, Any]:
    """One page of ``certs`` (a CertStore; the caller holds the service lock).

    ``sort``: ``newest`` (issue order, every record, ``stored`` false for ``no_store`` ones) or
    ``serial`` (the stored ones, OpenBao's listing order); ``cursor``: the ``next`` of the previous
    page; ``limit``: 1 to :data:`MAX_PAGE`; filters: ``serial`` prefix (colon form), ``role``,
    ``status`` (``revoked``/``unrevoked``), ``q`` (text in subject, SANs or serial, any case).
    Returns ``{"items": [...], "next": cursor or None, "total": records in this order, "scanned":
    records looked at, "scan_stopped": bool}``; ``scan_stopped`` means the text filter spent its
    budget (:data:`SCAN_BUDGET`) and ``next`` goes on from where it stopped."""
    limit = max(1, min(int(limit), MAX_PAGE))
    serial = serial.strip().lower().replace("-", ":")
    q = q.strip().lower()
    pairs, total = _candidates(certs, "serial" if sort == "serial" else "newest", cursor)
    items: list[dict[str, Any]] = []
    scanned = decoded = 0
    next_cursor: str | None = None
    stopped = False
    last = cursor
    for position, record in pairs:
        if len(items) == limit or (q and decoded >= SCAN_BUDGET):
            next_cursor, stopped = last, len(items) < limit  # resumes at this record
            break
        scanned += 1
        last = position
        if not _cheap_match(record, serial, role, status):
            continue
        if q:
            decoded += 1
            if not _text_match(record, q):
                continue
        items.append(describe(record, now))
    return {"items": items, "next": next_cursor, "total": total, "scanned": scanned, "scan_stopped": stopped}

