"""Runs request sequences against a real ``bao server -dev`` and the double, identically set up.

Per sequence both servers get the same fresh state: two new PKI mounts (``d<n>`` and
``d<n>_other``, tuned to ``max_lease_ttl=87600h``), an EC P-256 root on each, and three roles on
the first (``strict``: subdomains of example.com; ``any``: any name, any key type, every SAN kind;
``lease``: any name with ``generate_lease``). The double is reset first; the real server's mounts
are removed afterwards. Set-up answers are compared like any other request.

Each request's answers are compared by :func:`compare.compare`; a difference that the allow-list
(:mod:`.allowlist`) names is counted as agreeing and tagged with its divergences.md row.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import parity_harness as h
import requests as http

from . import allowlist, compare, material
from .requests_gen import Raw, Ref, Req, dump_body, dump_json

ROLES = {
    "strict": {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "key_bits": 256,
               "ttl": "24h", "max_ttl": "72h"},
    "any": {"allow_any_name": True, "enforce_hostnames": False, "key_type": "any", "allow_ip_sans": True,
            "allowed_uri_sans": ["*"], "allowed_other_sans": ["*"], "ttl": "1h"},
    "lease": {"allow_any_name": True, "generate_lease": True, "key_type": "ec", "ttl": "1h"},
}
ROOT_BODY = {"common_name": "Diff Root", "ttl": "87600h", "key_type": "ec", "key_bits": 256}
FALLBACK_SERIAL = "11:22:33:44:55:66:77:88"
FALLBACK_TOKEN, FALLBACK_ACCESSOR = "s.NoTokenWasCreatedHere00", "NoAccessorWasCreatedHere"
_COUNTER = itertools.count(1)


@dataclass
class Outcome:
    """One request's two answers and the verdict."""

    req: Req
    sent: str
    bao: http.Response
    double: http.Response
    problems: list[str]
    allowed: str | None = None
    handler_errors: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.handler_errors and (not self.problems or self.allowed is not None)

    @property
    def double_5xx_only(self) -> bool:
        return self.double.status_code >= 500 and self.bao.status_code < 500

    def cause(self) -> str:
        """A grouping key: method, path template and the first difference with values blurred."""
        first = (self.handler_errors or self.problems or ["?"])[0].splitlines()[0]
        first = re.sub(r"\d+", "N", first)[:220]
        return f"{self.req.method} {self.req.template} :: {first}"

    def report(self) -> str:
        lines = [f"  request: {self.sent}",
                 f"    bao:    {compare.summary(self.bao)}",
                 f"    double: {compare.summary(self.double)}"]
        lines += [f"    - {p}" for p in self.problems]
        lines += [f"    ! double handler error: {e}" for e in self.handler_errors]
        if self.allowed:
            lines.append(f"    (allowed: {self.allowed})")
        return "\n".join(lines)


def resolve(value: Any, side: h.Side) -> Any:
    """``value`` with every :class:`Ref` replaced by ``side``'s own value."""
    if hasattr(value, "resolve_for"):  # built by each side from its own state (ocsp_gen.OcspQuery)
        return value.resolve_for(side)
    if isinstance(value, Ref):
        issued = side.vars.get("issued", [])
        if value.kind in ("serial", "cert", "key"):
            if not issued:
                return {"serial": FALLBACK_SERIAL, "cert": material.foreign_cert("ec-p256", "Foreign", False, False),
                        "key": material.key_pem("ec-p256")}[value.kind]
            serial, cert, key = issued[value.index % len(issued)]
            return {"serial": serial, "cert": cert, "key": key or material.key_pem("ec-p256")}[value.kind]
        if value.kind in ("token", "accessor"):
            tokens = side.vars.get("tokens", [])
            if not tokens:
                return {"token": FALLBACK_TOKEN, "accessor": FALLBACK_ACCESSOR}[value.kind]
            return tokens[value.index % len(tokens)][0 if value.kind == "token" else 1]
        return side.vars.get(value.kind, "")
    if isinstance(value, Raw):
        return Raw(value.text, resolve(value.value, side), value.prefix)
    if isinstance(value, dict):
        return {k: resolve(v, side) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, side) for v in value]
    return value


def _path(req: Req, side: h.Side) -> str:
    out = []
    for part in req.path:
        if isinstance(part, Ref) or hasattr(part, "resolve_for"):
            out.append(str(resolve(part, side)))
        else:
            out.append(part.replace("{mount}", side.vars["mount"]).replace("{other}", side.vars["other"]))
    return "".join(out)


def send(side: h.Side, req: Req) -> http.Response:
    """Send ``req`` to one side (references resolved there)."""
    if hasattr(req.body, "content_type"):  # a raw body (ocsp_gen.OcspBody): bytes and their Content-Type
        headers = {"Content-Type": req.body.content_type} if req.body.content_type else {}
        return side.request(req.method, _path(req, side), data=resolve(req.body.query, side), headers=headers,
                            token=resolve(req.token, side))
    body = resolve(req.body, side)
    data = None
    headers = {} if req.namespace is None else {"X-Vault-Namespace": req.namespace}
    if body is not None:
        data = (dump_body(body) if isinstance(body, Raw) else dump_json(body)).encode("utf-8", "surrogatepass")
        headers["Content-Type"] = "application/json"
    return side.request(req.method, _path(req, side), data=data, headers=headers, token=resolve(req.token, side))


def _shown(body: Any) -> str:
    if body is None:
        return ""
    return repr(body) if hasattr(body, "content_type") else dump_body(body)[:1500]


class Runner:
    """Both servers: ``bao_url`` and a started :class:`pytest_schedpki.Double` (or, in self-check
    mode, ``double_url`` of a second real server and ``double=None``)."""

    def __init__(self, bao_url: str, double: Any = None, double_url: str | None = None):
        self.bao_url = bao_url
        self.double = double
        self.double_url = double_url or double.secrets_url

    def _pair(self) -> h.Pair:
        mount = f"d{next(_COUNTER)}"
        pair = h.Pair(h.Side("bao", self.bao_url), h.Side("double", self.double_url), mount, self.double)
        pair.new_mount("other")
        return pair

    def setup(self) -> h.Pair:
        """Fresh identical state on both sides (see the module docstring)."""
        if self.double is not None:
            self.double.reset()
            self.double.pop_handler_errors()
        pair = self._pair()
        for mount, prefix in ((pair.mount, "root"), (pair.mounts[1], "other_root")):
            pair.enable_pki(mount)
            ex = pair.generate_root(dict(ROOT_BODY), mount=mount, prefix=prefix)
            ex.capture(f"{prefix}_key_id", lambda j: j["data"]["key_id"])
        for name, body in ROLES.items():
            pair.create_role(name, body)
        for side in pair.sides:
            side.vars["issued"] = []
        return pair

    def run(self, reqs: list[Req], stop_at_first: bool = False) -> list[Outcome]:
        """Set up, send each request to both sides, compare; tear the real mounts down."""
        pair = self.setup()
        outcomes: list[Outcome] = []
        try:
            for req in reqs:
                outcome = self.exchange(pair, req)
                outcomes.append(outcome)
                if stop_at_first and not outcome.agree:
                    break
        finally:
            self.teardown(pair)
            for side in pair.sides:
                side.session.close()
        return outcomes

    def teardown(self, pair: h.Pair) -> None:
        """Remove this sequence's mounts from the real server (and the second one in self-check mode)."""
        pair.cleanup_real()
        if self.double is None:
            pair.cleanup_real(pair.double)

    def exchange(self, pair: h.Pair, req: Req) -> Outcome:
        if req.pause:
            time.sleep(req.pause)
        started = time.monotonic()
        real = send(pair.real, req)
        double = send(pair.double, req)
        tolerance = math.ceil(time.monotonic() - started) + 2
        mapping = compare.id_mapping(pair.real.vars, pair.double.vars)
        problems = compare.compare(real, double, mapping, tolerance)
        errors = [str(e) for e in self.double.pop_handler_errors()] if self.double is not None else []
        token = "" if req.token == h.ROOT_TOKEN else f"[token={req.token!r}] "
        pause = f"(after {req.pause:g}s) " if req.pause else ""
        outcome = Outcome(req, f"{pause}{req.method} {_path(req, pair.real)} {token}"
                               f"{_shown(req.body)}",
                          real, double, problems, handler_errors=errors)
        if problems and not errors:
            outcome.allowed = allowlist.match(req, real, double, problems)
        self._remember(pair, real, double)
        return outcome

    @staticmethod
    def _remember(pair: h.Pair, real: http.Response, double: http.Response) -> None:
        """Record an issued certificate, or a created token (id, accessor), on both sides (only when
        both sides issued or created one)."""
        if real.status_code != 200 or double.status_code != 200:
            return
        rd, dd = (h.body_json(r) or {} for r in (real, double))
        ra, da = (j.get("auth") if isinstance(j, dict) else None for j in (rd, dd))
        if isinstance(ra, dict) and isinstance(da, dict) and isinstance(ra.get("client_token"), str) \
                and isinstance(da.get("client_token"), str) and "/create" in real.request.path_url:
            for side, auth in ((pair.real, ra), (pair.double, da)):
                side.vars.setdefault("tokens", []).append((auth["client_token"], auth.get("accessor") or ""))
            return
        rd, dd = rd.get("data") if isinstance(rd, dict) else None, dd.get("data") if isinstance(dd, dict) else None
        if not (isinstance(rd, dict) and isinstance(dd, dict)):
            return
        if isinstance(rd.get("serial_number"), str) and isinstance(dd.get("serial_number"), str) \
                and isinstance(rd.get("certificate"), str) and isinstance(dd.get("certificate"), str):
            for side, data in ((pair.real, rd), (pair.double, dd)):
                side.vars.setdefault("issued", []).append((data["serial_number"], data["certificate"], data.get("private_key")))


def reproduction(outcomes: list[Outcome]) -> str:
    """The whole sequence, every request with both answers; the failing one is last."""
    lines = ["DIFFERENTIAL: the double and bao disagree. Sequence (on fresh mounts {mount} + {other}, "
             "root 'Diff Root' on each, roles strict/any/lease):"]
    for i, o in enumerate(outcomes, 1):
        lines.append(f"#{i} {'AGREE' if o.agree else 'DIFFER'}")
        lines.append(o.report())
    return "\n".join(lines)
