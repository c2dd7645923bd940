"""The ``acme`` family's comparison of two servers' answers to the same step.

Compared exactly: the status, ``Content-Type``, ``Cache-Control``, the presence of ``Replay-Nonce``
and ``Retry-After``, ``Location`` and ``Link`` (each server's own address replaced by ``<server>``),
and the body: JSON (problem documents' ``type``, ``detail``, ``subproblems``; resources' keys, values
and types) after :func:`normalise`, a certificate chain by its certificates' subject, SANs and issuer,
anything else byte for byte. Volatile values are compared by type: UUIDs, RFC 3339 times, challenge
tokens, EAB keys and request ids (:data:`VOLATILE`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import parity_harness as h
import requests as http
from cryptography import x509

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
VOLATILE = ("token", "key", "request_id", "created_on")
HEADERS_EXACT = ("Content-Type", "Cache-Control")
HEADERS_PRESENT = ("Replay-Nonce", "Retry-After")
HEADERS_URL = ("Location", "Link")


def _text(value: str, server: str) -> str:
    return TIME.sub("<time>", UUID.sub("<uuid>", value.replace(server, "<server>")))


def normalise(value: Any, server: str, key: str | None = None) -> Any:
    """``value`` with ``server`` (the side's base URL) as ``<server>``, UUIDs as ``<uuid>``, RFC 3339
    times as ``<time>`` and :data:`VOLATILE` keys' values as ``<type>``."""
    if key in VOLATILE and value is not None:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        return {k: normalise(v, server, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, server) for v in value]
    if isinstance(value, str):
        return _text(value, server)
    return value


def _chain(resp: http.Response) -> list[dict[str, Any]] | None:
    if "pem-certificate-chain" not in resp.headers.get("Content-Type", ""):
        return None
    out = []
    try:
        certs = x509.load_pem_x509_certificates(resp.content)
    except ValueError:
        return [{"unparseable": resp.text[:200]}]
    for cert in certs:
        try:
            sans = [str(n.value) for n in cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value]
        except Exception:  # noqa: BLE001 - no SAN extension
            sans = []
        out.append({"subject": cert.subject.rfc4514_string(), "issuer": cert.issuer.rfc4514_string(), "sans": sans})
    return out


def _diff(a: Any, b: Any, path: str = "$") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}: key {k!r} only on bao" for k in sorted(set(a) - set(b))]
        out += [f"{path}: key {k!r} only on the double" for k in sorted(set(b) - set(a))]
        for k in sorted(set(a) & set(b)):
            out += _diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: bao {json.dumps(a)[:400]} != double {json.dumps(b)[:400]}"]


def compare(sides, real: http.Response, double: http.Response, tolerance: float = 2) -> list[str]:
    """The differences between bao's answer ``real`` and the double's (``sides``: the two
    :class:`~.acme_runner.AcmeSide`, for their base URLs). Empty when they agree."""
    rs, ds = sides[0].side.url, sides[1].side.url
    problems = []
    if real.status_code != double.status_code:
        problems.append(f"status: bao {real.status_code} != double {double.status_code}")
    for name in HEADERS_EXACT:
        if real.headers.get(name) != double.headers.get(name):
            problems.append(f"header {name}: bao {real.headers.get(name)!r} != double {double.headers.get(name)!r}")
    for name in HEADERS_PRESENT:
        if (name in real.headers) != (name in double.headers):
            problems.append(f"header {name}: present on {'bao' if name in real.headers else 'the double'} only")
    for name in HEADERS_URL:
        a, b = (_text(r.headers.get(name, ""), s) for r, s in ((real, rs), (double, ds)))
        if a != b:
            problems.append(f"header {name}: bao {a!r} != double {b!r}")
    rj, dj = h.body_json(real), h.body_json(double)
    rc, dc = _chain(real), _chain(double)
    if rj is not None or dj is not None:
        problems += _diff(normalise(rj, rs), normalise(dj, ds))
    elif rc is not None or dc is not None:
        if rc != dc:
            problems.append(f"certificate chain: bao {rc} != double {dc}")
    elif _text(real.text, rs) != _text(double.text, ds):
        problems.append(f"body: bao {real.content[:300]!r} != double {double.content[:300]!r}")
    return problems


def shown_body(resp: http.Response, server: str) -> str:
    """An answer for reproductions: status, content type, ``Location``, the body normalised."""
    j = h.body_json(resp)
    body = json.dumps(normalise(j, server), sort_keys=True) if j is not None else repr(resp.content[:300])
    loc = _text(resp.headers.get("Location", ""), server)
    return f"{resp.status_code} {resp.headers.get('Content-Type')} {('Location: ' + loc + ' ') if loc else ''}{body[:1500]}"
