"""The differential normaliser: two servers' answers to the same request, compared.

On top of the parity harness's comparison (status, ``Content-Type``/``Cache-Control``/``X-Vault-Namespace``, top-level
keys, ``data`` key types, error and warning texts, the whole body after
``parity_harness.normalise``, and ``cert_facts`` of every certificate):

* **identities are mapped, not just masked**: every serial (colon and hyphen forms), issuer id and
  key id the double handed out in this sequence is replaced by the real server's counterpart
  before comparing, so "revoked the right certificate" and "named the right issuer" are checked;
* **token ids and accessors are mapped** the same way (each side's tokens created in the sequence,
  and the root token's accessor); a LIST of accessors is compared in sorted order;
* **times are tolerated by the request's own duration**: certificate validity lengths,
  ``lease_duration`` (also under ``auth``) and a token lookup's ``ttl`` may differ by the seconds both requests took plus 2 s (the two servers do not
  answer in the same second);
* **KeyUsage is compared as encoded**: the raw BIT STRING, because cryptography hides
  EncipherOnly/DecipherOnly without KeyAgreement.
"""

from __future__ import annotations

import json
import re
from typing import Any

import parity_harness as h
import requests as http

from pytest_schedpki.golang.duration import GoDurationError, parse_duration

CERT_KEYS = ("certificate", "issuing_ca", "ca_chain")
_KU_OID = b"\x06\x03\x55\x1d\x0f"


def key_usage_bits(cert_text: str) -> str | None:
    """Hex of the KeyUsage extension's value as encoded in the certificate (``None``: absent)."""
    try:
        from cryptography.hazmat.primitives.serialization import Encoding

        der = h.load_certificate(cert_text).public_bytes(Encoding.DER)
    except Exception:  # noqa: BLE001 - unparseable certificates are reported by cert_facts
        return None
    at = der.find(_KU_OID)
    if at < 0:
        return None
    rest = der[at + len(_KU_OID):]
    if rest[:3] == b"\x01\x01\xff":
        rest = rest[3:]
    if rest[:1] != b"\x04":
        return None
    return rest[2:2 + rest[1]].hex()


def id_mapping(real_vars: dict[str, Any], double_vars: dict[str, Any]) -> dict[str, str]:
    """``{double value: real value}`` for the serials, issuer ids and key ids of one sequence."""
    mapping: dict[str, str] = {}
    pairs = [(double_vars.get(k), real_vars.get(k)) for k in ("root_id", "root_key_id", "root_serial",
                                                               "other_root_id", "other_root_serial", "root_accessor")]
    pairs += [(d[0], r[0]) for d, r in zip(double_vars.get("issued", []), real_vars.get("issued", []), strict=False)]
    for d, r in zip(double_vars.get("tokens", []), real_vars.get("tokens", []), strict=False):
        pairs += [(d[0], r[0]), (d[1], r[1])]  # token id, accessor (empty for batch tokens: skipped)
    for dv, rv in pairs:
        if isinstance(dv, str) and isinstance(rv, str) and dv and rv:
            mapping[dv] = rv
            if ":" in dv:
                mapping[dv.replace(":", "-")] = rv.replace(":", "-")
    return mapping


def _mapped_json(resp: http.Response, mapping: dict[str, str]) -> Any:
    text = resp.text
    for dv, rv in mapping.items():
        text = text.replace(dv, rv)
    try:
        return json.loads(text)
    except ValueError:
        return None


def _tolerate(rj: Any, dj: Any, tolerance: float) -> None:
    """Make ``lease_duration`` (top-level and under ``auth``) and a token lookup's remaining ``ttl``
    equal on both sides when within ``tolerance`` seconds; a token's ``last_renewal_time`` (unix
    seconds) is compared by type only."""
    if not (isinstance(rj, dict) and isinstance(dj, dict)):
        return
    spots = [(rj, dj, "lease_duration")]
    if isinstance(rj.get("auth"), dict) and isinstance(dj.get("auth"), dict):
        spots.append((rj["auth"], dj["auth"], "lease_duration"))
    rd, dd = rj.get("data"), dj.get("data")
    if isinstance(rd, dict) and isinstance(dd, dict) and "creation_ttl" in rd and "creation_ttl" in dd:
        spots.append((rd, dd, "ttl"))
        for side in (rd, dd):
            if isinstance(side.get("last_renewal_time"), int) and side["last_renewal_time"] > 10**9:
                side["last_renewal_time"] = "<UNIX>"
    for r, d, key in spots:
        a, b = r.get(key), d.get(key)
        if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and abs(a - b) <= tolerance:
            d[key] = a
    _tolerate_capping(rj.get("warnings"), dj.get("warnings"), tolerance)


_CAPPED = re.compile(r'^TTL of "([^"]+)" exceeded the effective max_ttl of "([^"]+)"; TTL value is capped accordingly$')


def _tolerate_capping(rw: Any, dw: Any, tolerance: float) -> None:
    """The capping warning of a renewal names the time left before the token's max TTL, which each
    server counts at its own instant (truncated to the second): equal when the two remainders are
    within ``tolerance`` seconds and the capped TTL is the same."""
    if not (isinstance(rw, list) and isinstance(dw, list) and len(rw) == len(dw)):
        return
    for i, (a, b) in enumerate(zip(rw, dw, strict=True)):
        ma, mb = (_CAPPED.match(w) if isinstance(w, str) else None for w in (a, b))
        if ma and mb and ma.group(1) == mb.group(1):
            try:
                left = abs(parse_duration(ma.group(2)) - parse_duration(mb.group(2))) / 1e9
            except GoDurationError:
                continue
            if left <= tolerance:
                dw[i] = a


HOST_INFO_KEYS = frozenset({"cpu", "cpu_times", "disk", "host", "memory", "timestamp"})


def _host_info_by_type(rj: Any, dj: Any) -> None:
    """``sys/host-info`` describes the machine at the moment of the request (CPU times, free
    memory): its ``data`` values are compared by type when both sides answered one."""
    datas = [j.get("data") if isinstance(j, dict) else None for j in (rj, dj)]
    if all(isinstance(d, dict) and HOST_INFO_KEYS <= set(d) for d in datas):
        for d in datas:
            for key in list(d):
                d[key] = f"<TYPE {h.type_name(d[key])}>"


def _sort_mapped_keys(rj: Any, dj: Any, mapping: dict[str, str]) -> None:
    """``data.keys`` listing mapped ids (``LIST auth/token/accessors``) is sorted by each server's own
    random values: compare it as a set (sorted on both sides)."""
    values = set(mapping.values())
    for j in (rj, dj):
        keys = j.get("data", {}).get("keys") if isinstance(j, dict) and isinstance(j.get("data"), dict) else None
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys) and values & set(keys):
            keys.sort()


def compare(real: http.Response, double: http.Response, mapping: dict[str, str], tolerance: float) -> list[str]:
    """Every difference between the two answers (empty list: they agree)."""
    problems: list[str] = []
    if real.status_code != double.status_code:
        problems.append(f"status: bao {real.status_code} != double {double.status_code}")
    for name in h.COMPARED_HEADERS:
        if real.headers.get(name) != double.headers.get(name):
            problems.append(f"header {name}: bao {real.headers.get(name)!r} != double {double.headers.get(name)!r}")
    rj, dj = h.body_json(real), _mapped_json(double, mapping)
    if (rj is None) != (dj is None):
        problems.append("body: one side is JSON, the other is not "
                        f"(bao {real.content[:80]!r}, double {double.content[:80]!r})")
        return problems
    if rj is None:
        rk, dk = h.raw_kind(real.content), h.raw_kind(double.content)
        if "facts" in rk and "facts" in dk:
            if abs(rk["facts"]["validity_seconds"] - dk["facts"]["validity_seconds"]) > tolerance:
                problems.append("raw certificate validity differs")
            rk, dk = dict(rk, facts=h._without_validity(rk["facts"])), dict(dk, facts=h._without_validity(dk["facts"]))
        if rk != dk:
            problems.append(f"raw body: bao {rk} != double {dk}")
        return problems
    _tolerate(rj, dj, tolerance)
    _sort_mapped_keys(rj, dj, mapping)
    _host_info_by_type(rj, dj)
    problems += h._compare_json(rj, dj, (), False)
    if isinstance(rj, dict) and isinstance(dj, dict):
        rd, dd = rj.get("data"), dj.get("data")
        problems += h._compare_certs(_certificates_only(rd), _certificates_only(dd), CERT_KEYS, int(tolerance))
        if isinstance(rd, dict) and isinstance(dd, dict) and isinstance(rd.get("certificate"), str) \
                and isinstance(dd.get("certificate"), str):
            rku, dku = key_usage_bits(rd["certificate"]), key_usage_bits(dd["certificate"])
            if rku != dku:
                problems.append(f"certificate KeyUsage bits: bao {rku} != double {dku}")
    return problems


def _certificates_only(data: Any) -> Any:
    """``data`` without the :data:`CERT_KEYS` values that hold no certificate (``cert/crl`` answers
    its CRL under ``certificate``; the PEM block types are compared by the body comparison)."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for key in CERT_KEYS:
        values = out.get(key)
        items = values if isinstance(values, list) else [values]
        if any(isinstance(v, str) and "-----BEGIN" in v and "BEGIN CERTIFICATE-----" not in v for v in items):
            out.pop(key)
    return out


def summary(resp: http.Response) -> str:
    """A printable answer for reproductions: status, content type and the body (shortened)."""
    j = h.body_json(resp)
    if j is not None:
        body = json.dumps(h.normalise(j), sort_keys=True)
    else:
        body = repr(resp.content[:300])
    if len(body) > 1500:
        body = body[:1500] + "...(cut)"
    return f"{resp.status_code} {resp.headers.get('Content-Type')} {body}"
