"""Helpers of the ACME parity tests: one :class:`AcmeSides` per test drives an ACME client on each side
(bao and the double) with the SAME account key, and :meth:`AcmeSides.both` compares the two answers
after replacing each side's URL by ``URL`` and UUIDs, nonces and tokens by placeholders."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import parity_harness as h
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.acme import ACME_RESPONSE_HEADERS, AcmeAnswer, AcmeClient

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def normalise(value: Any, url: str) -> Any:
    """``value`` with ``url`` -> ``URL``, UUIDs -> ``<uuid>``, RFC 3339 times -> ``<time>``."""
    if isinstance(value, dict):
        return {k: ("<token>" if k == "token" else normalise(v, url)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, url) for v in value]
    if isinstance(value, str):
        return TIME.sub("<time>", UUID.sub("<uuid>", value.replace(url, "URL")))
    return value


def enable(pair: h.Pair, tune: bool = True, **config: Any) -> None:
    """Tune the mount for the ACME headers, set config/cluster and enable config/acme on both sides."""
    if tune:
        pair.send("POST", "/v1/sys/mounts/{mount}/tune", json={"allowed_response_headers": ACME_RESPONSE_HEADERS}
                  ).same().expect(204)
    pair.send("POST", "/v1/{mount}/config/cluster", json=lambda s: {
        "path": f"{s.url}/v1/{pair.mount}", "aia_path": f"{s.url}/v1/{pair.mount}"}).expect(200)
    pair.send("POST", "/v1/{mount}/config/acme", json={"enabled": True, **config}).same().expect(200)


class AcmeSides:
    """A client per side (``real``, ``double``) for ``<mount>/<prefix>directory`` sharing one key."""

    def __init__(self, pair: h.Pair, prefix: str = "acme/", key: Any = None):
        self.pair = pair
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.clients = {side.name: AcmeClient(f"{side.url}/v1/{pair.mount}/{prefix}directory", key=self.key)
                        for side in pair.sides}

    def client(self, side: h.Side) -> AcmeClient:
        return self.clients[side.name]

    def both(self, fn: Callable[[AcmeClient, h.Side], AcmeAnswer], status: int | None = None,
             problem: tuple[str, str] | None = None, label: str = "",
             volatile: tuple[str, ...] = (), compare_body: bool = True) -> dict[str, AcmeAnswer]:
        """Run ``fn(client, side)`` on both sides; the statuses, Content-Types and normalised JSON bodies
        (or raw bodies) must be equal - top-level ``volatile`` keys only present on both -, and equal
        ``status``/``problem`` (type suffix, detail with ``URL``/``<uuid>`` placeholders) when given.
        ``compare_body=False``: a raw body (a certificate chain) differs by nature. Returns the answers
        by side name."""
        answers = {side.name: fn(self.client(side), side) for side in self.pair.sides}
        shown = []
        for side in self.pair.sides:
            a = answers[side.name]
            shown.append(f"{side.name}: {a.status} {a.headers.get('content-type')} {a.body[:600]!r}")
        where = f"{label}\n" + "\n".join(shown)
        real, double = answers["bao"], answers["double"]
        assert (real.status, real.headers.get("content-type")) == (double.status, double.headers.get("content-type")), where
        if status is not None:
            assert real.status == status, where
        bodies = {}
        for side in self.pair.sides:
            a = answers[side.name]
            try:
                body = normalise(a.json(), side.url) if a.body else None
                if isinstance(body, dict):
                    body = {k: ("<volatile>" if k in volatile else v) for k, v in body.items()}
                bodies[side.name] = body
            except ValueError:
                bodies[side.name] = a.body
        if compare_body:
            assert bodies["bao"] == bodies["double"], where
        if problem is not None:
            assert real.headers.get("content-type") == "application/problem+json", where
            assert bodies["bao"] == {"type": "urn:ietf:params:acme:error:" + problem[0], "detail": problem[1]}, where
        return answers

    def account(self) -> None:
        """A new account on both sides (201)."""
        self.both(lambda c, s: c.new_account(contact=["mailto:ops@example.com"]), 201)
