"""Intentional divergences the differential fuzzer accepts, each pointing at its row of
``docs/divergences.md`` (the row's first cell, checked by ``test_differential.py``).

An entry matches only when EVERY difference found for a request is explained by it: a narrow
predicate over the request and both answers. Anything not listed fails the fuzzer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import parity_harness as h
import requests as http

from .requests_gen import Raw, Req


@dataclass(frozen=True)
class Allowed:
    """``row``: the first cell of the divergences.md row; ``applies(req, bao, double, problems)``."""

    row: str
    applies: Callable[[Req, http.Response, http.Response, list[str]], bool]


def _errors(resp: http.Response) -> list[str]:
    j = h.body_json(resp)
    return j.get("errors") or [] if isinstance(j, dict) else []


def _both_error_texts(bao_has: str, double_has: str) -> Callable:
    """Same status, one error each: bao's contains ``bao_has``, the double's ``double_has``."""

    def applies(req, bao, double, problems) -> bool:
        be, de = _errors(bao), _errors(double)
        return (bao.status_code == double.status_code and len(be) == len(de) == 1 and bao_has in be[0]
                and double_has in de[0] and all(p.startswith(("errors:", "value differs at $.errors")) for p in problems))

    return applies


_FIELD_ERROR = re.compile(r'^(Field validation failed: )?error converting input for field "([^"]+)": ')


def _another_invalid_field(req, bao, double, problems) -> bool:
    """Both refuse the request for a field that fails conversion, naming different fields that were
    both sent: Go meets them in random map order."""
    be, de = _errors(bao), _errors(double)
    if not (bao.status_code == double.status_code == 400 and len(be) == len(de) == 1):
        return False
    bm, dm = _FIELD_ERROR.match(be[0]), _FIELD_ERROR.match(de[0])
    body = req.body if isinstance(req.body, dict) else getattr(req.body, "value", None)
    if isinstance(req.body, Raw) and body is None:  # a body given as text (one with a syntax slip that still parses)
        try:
            body = json.loads(req.body.prefix + req.body.text)
        except ValueError:
            body = None
    return bool(bm and dm and isinstance(body, dict) and bm.group(2) in body and dm.group(2) in body
                and bm.group(2) != dm.group(2) and bm.group(1) == dm.group(1))  # same prefix (token roles: none)


def _san_facts(resp: http.Response) -> dict | None:
    data = (h.body_json(resp) or {}).get("data") or {}
    try:
        san = dict(h.cert_facts(data["certificate"]).get("san", {}))
    except Exception:  # noqa: BLE001 - no certificate: not this divergence
        return None
    san["other"] = sorted(san.get("other", []))
    return san


_OID_REFUSED = re.compile(r"^other SAN OID (\S+) not allowed by this role$")


def _other_sans_order(req, bao, double, problems) -> bool:
    """The certificates differ only in the order of otherName SANs with several OIDs, or the role
    refuses a different one of the requested OIDs first (Go walks its map of OIDs in random order), or
    bao met an empty OID first, which passes its check (``validateOtherSANs`` returns the bad OID
    ``""``, read as no bad OID), where the double refuses the other OID."""
    be, de = _errors(bao), _errors(double)
    body = req.body if isinstance(req.body, dict) else {}
    requested = body.get("other_sans", "")
    entries = requested if isinstance(requested, list) else str(requested).split(",")
    if (len(de) == 1 and _OID_REFUSED.match(de[0]) and any(str(e).startswith(";") for e in entries)
            and not (len(be) == 1 and _OID_REFUSED.match(be[0]))):
        return True
    if bao.status_code == double.status_code == 400 and len(be) == len(de) == 1:
        bm, dm = _OID_REFUSED.match(be[0]), _OID_REFUSED.match(de[0])
        wanted = str(requested)
        return bool(bm and dm and bm.group(1) + ";" in wanted and dm.group(1) + ";" in wanted)
    # sign-intermediate also returns the new certificate as ca_chain[0]
    if not all(p.startswith(("certificate.san:", "ca_chain[0].san:")) for p in problems):
        return False
    bs, ds = _san_facts(bao), _san_facts(double)
    return bs is not None and bs == ds and len(bs.get("other", [])) > 1


_CERT_PARSE = re.compile(r"(error parsing certificate|certificate could not be parsed|Error parsing issuer \d+): x509: "
                         r"invalid RDNSequence: invalid attribute value: unsupported string type: \d+")


_GENERIC_REFUSAL = re.compile(r"(error parsing certificate|certificate could not be parsed|Error parsing issuer \d+): "
                              r"x509: malformed certificate\b")


def _certificate_cryptography_cannot_read(req, bao, double, problems) -> bool:
    """The double refuses a certificate bao reads: a name holding a value that is not a string type, or a
    certificate that Go's walk accepts (e.g. a v1 certificate carrying extensions, which Go ignores)
    while cryptography cannot load it - the double's generic text, and bao got past parsing."""
    errors = _errors(double)
    if len(errors) != 1:
        return False
    if _CERT_PARSE.search(errors[0]):
        return True
    return bool(_GENERIC_REFUSAL.search(errors[0])) and not any(
        "pars" in e for e in _errors(bao))  # bao's answer is not a parse error


_BUILTIN = ("cubbyhole/", "identity/", "sys/")
_BUILTIN_PATH = re.compile(r"^/v1/sys/(mounts|auth)/(cubbyhole|identity|sys|auth/token|token)(/tune)?/?$")


def _builtin_mounts(req, bao, double, problems) -> bool:
    """bao's built-in mounts (cubbyhole/, identity/, sys/, and the token auth mount's tune): the double
    has none, so reading one fails there, and listings differ only in those keys."""
    path = req.template
    if _BUILTIN_PATH.match(path):
        return bao.status_code == 200 and double.status_code == 400
    if req.method == "GET" and path.rstrip("/") in ("/v1/sys/mounts", "/v1/sys/internal/ui/mounts"):
        return bool(problems) and all(any(b in p for b in _BUILTIN) for p in problems)
    return False


def _default_policy_text(req, bao, double, problems) -> bool:
    """The default policy's text: upstream's has comments, the double's the same rules without them."""
    return (req.method == "GET" and req.template.rstrip("/") in ("/v1/sys/policies/acl/default", "/v1/sys/policy/default")
            and all(p.startswith(("value differs at $.data.policy", "value differs at $.policy", "value differs at $.rules",
                                  "value differs at $.data.rules")) for p in problems))


def _host_info(req, bao, double, problems) -> bool:
    return req.template.rstrip("/") == "/v1/sys/host-info" and double.status_code == 404


def _batch_revocation(req, bao, double, problems) -> bool:
    """A batch token revoked: upstream refuses, the double (whose batch tokens are service tokens) revokes."""
    return _errors(bao) == ["batch tokens cannot be revoked"] and double.status_code == 204


ENTRIES: list[Allowed] = [
    Allowed("default mounts", _builtin_mounts),
    Allowed("`GET sys/policies/acl/default`", _default_policy_text),
    Allowed("`sys/host-info`", _host_info),
    Allowed("batch tokens in `revoke`/`revoke-orphan`/`revoke-self`", _batch_revocation),
    Allowed("order of other SANs with several OIDs", _other_sans_order),
    Allowed("several fields that fail conversion in one request", _another_invalid_field),
    Allowed("CSR/certificate parse errors",
            _both_error_texts("could not be parsed", "could not be parsed")),
    Allowed("Certificates Go reads and cryptography cannot", _certificate_cryptography_cannot_read),
    Allowed("CSR/certificate parse errors",  # sign-self-issued: Go's texts inside a key or URI
            _both_error_texts("error parsing certificate: x509: malformed",
                              "error parsing certificate: x509: malformed certificate")),
]


def match(req: Req, bao: http.Response, double: http.Response, problems: list[str]) -> str | None:
    """The divergences.md row explaining every problem of this exchange, or ``None``."""
    for entry in ENTRIES:
        if entry.applies(req, bao, double, problems):
            return entry.row
    return None
