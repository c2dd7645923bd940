"""The ``ocsp`` family of the differential fuzzer: OCSP queries among the writes that change their answers.

A sequence (on the PKI runner's fresh mounts, :class:`~.runner.Runner`) mixes

* issue (role ``any``) and revoke by serial, so that queries meet good and revoked certificates;
* ``config/crl`` writes of ``ocsp_disable`` and ``ocsp_expiry`` and ``issuer/default`` usage writes
  (with and without ``ocsp-signing``);
* OCSP queries (:class:`OcspQuery`): ``GET <mount>/ocsp/<percent-encoded base64>`` or ``POST``/``PUT
  <mount>/ocsp`` with several Content-Types, about an issued serial, the root's own serial or a
  random one, under the mount's root, the other mount's root, a foreign CA or made-up hashes, with
  SHA-1/224/256/384/512, with or without a nonce, and damaged requests (a byte changed, cut short,
  trailing bytes, random bytes, empty, not base64).

Each side builds the request bytes from its own certificates (:meth:`OcspQuery.resolve_for`); the
responses are compared by :func:`parity_harness.ocsp_facts` (status, certificate status, CertID hash,
responder, signature algorithm, counts, the nextUpdate span).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import parity_harness as h
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp
from hypothesis import strategies as st

from . import material
from .requests_gen import Ref, Req

HASHES = {"sha1": hashes.SHA1, "sha224": hashes.SHA224, "sha256": hashes.SHA256, "sha384": hashes.SHA384,
          "sha512": hashes.SHA512}
CONTENT_TYPES = ["application/ocsp-request", "application/ocsp-request", "Application/OCSP-Request; q=1",
                 "application/json", None, "application/ocsp-request;"]
EXPIRIES = ["0", "90s", "12h", "1d", "", "-1s", "bad"]
USAGES = ["read-only,issuing-certificates,crl-signing,ocsp-signing", "read-only,issuing-certificates,crl-signing",
          "ocsp-signing", "read-only"]


@dataclass(frozen=True)
class OcspQuery:
    """One OCSP request, built by each side from its own state: ``subject`` (``issued``: the serial of
    the ``index``-th issued certificate; ``root``: the root's serial; ``random``: ``serial``), ``issuer``
    (``root``, ``other_root``, ``foreign``, ``made_up``), ``hash_name``, ``nonce``; ``damage`` (``none``,
    ``flip``, ``cut``, ``trailing``, ``random``, ``empty``) at ``position`` with ``value``; ``form``
    (``get``, ``get_raw``: not percent-encoded, ``post``: the DER, ``base64``: the base64 text)."""

    subject: str = "issued"
    index: int = 0
    serial: int = 1
    issuer: str = "root"
    hash_name: str = "sha1"
    nonce: bool = False
    damage: str = "none"
    position: int = 0
    value: int = 0
    form: str = "get"

    def __repr__(self) -> str:
        return (f"<ocsp {self.subject}#{self.index if self.subject == 'issued' else self.serial} under {self.issuer} "
                f"{self.hash_name}{' nonce' if self.nonce else ''} {self.damage}@{self.position}={self.value} "
                f"{self.form}>")

    def der(self, side: h.Side) -> bytes:
        """The (possibly damaged) DER request of ``side``."""
        algorithm = HASHES[self.hash_name]()
        if self.subject == "issued" and side.vars.get("issued"):
            serial = int(side.vars["issued"][self.index % len(side.vars["issued"])][0].replace(":", ""), 16)
        elif self.subject == "root":
            serial = int(side.vars["root_serial"].replace(":", ""), 16)
        else:
            serial = self.serial
        if self.issuer == "made_up":
            names = (b"\x01" * algorithm.digest_size, b"\x02" * algorithm.digest_size)
        else:
            pem = material.foreign_cert("ec-p256", "Foreign CA", False, True) if self.issuer == "foreign" \
                else side.vars[f"{self.issuer}_pem"]
            names = h.ocsp_issuer_hashes(h.load_certificate(pem), algorithm)
        builder = ocsp.OCSPRequestBuilder().add_certificate_by_hash(*names, serial, algorithm)
        if self.nonce:
            builder = builder.add_extension(x509.OCSPNonce(b"nonce-%d" % self.value), critical=False)
        der = bytearray(builder.build().public_bytes(serialization.Encoding.DER))
        if self.damage == "flip":  # always a change: a byte that already held the value would make the
            at = self.position % len(der)  # damage a no-op on one side only (keys differ: 1 in 256)
            der[at] = self.value if der[at] != self.value else (self.value + 1) % 256
        elif self.damage == "cut":
            der = der[:self.position % len(der)]
        elif self.damage == "trailing":
            der += bytes([self.value]) * (1 + self.position % 3)
        elif self.damage == "random":
            der = bytearray(bytes([(self.value * 31 + i * self.position) % 256 for i in range(self.position % 90)]))
        elif self.damage == "empty":
            der = bytearray()
        return bytes(der)

    def resolve_for(self, side: h.Side) -> Any:
        """What goes in the request for ``side``: the path tail (GET) or the body bytes (POST)."""
        der = self.der(side)
        text = base64.b64encode(der).decode()
        if self.form == "get":
            return quote(text, safe="")
        if self.form == "get_raw":
            return text.replace("//", "/%2F")  # a literal // is redirected by Go's mux (docs/divergences.md)
        if self.form == "base64":
            return text.encode()
        return der


@dataclass(frozen=True)
class OcspBody:
    """A raw request body with its Content-Type (``None``: no header), resolved per side."""

    query: OcspQuery
    content_type: str | None

    def __repr__(self) -> str:
        return f"{self.query!r} as {self.content_type}"


@st.composite
def queries(draw) -> OcspQuery:
    damage = draw(st.sampled_from(["none"] * 6 + ["flip", "flip", "cut", "trailing", "random", "empty"]))
    return OcspQuery(
        subject=draw(st.sampled_from(["issued", "issued", "issued", "root", "random"])),
        index=draw(st.integers(0, 3)), serial=draw(st.sampled_from([0, 1, 12345, 2 ** 159, 2 ** 200, 255])),
        issuer=draw(st.sampled_from(["root", "root", "root", "other_root", "foreign", "made_up"])),
        hash_name=draw(st.sampled_from(["sha1", "sha1", "sha256", "sha384", "sha512", "sha224"])),
        nonce=draw(st.booleans()), damage=damage, position=draw(st.integers(0, 300)), value=draw(st.integers(0, 255)),
        form=draw(st.sampled_from(["get", "get", "get_raw", "post", "post", "base64"])))


@st.composite
def requests(draw) -> Req:
    kind = draw(st.sampled_from(["query"] * 6 + ["issue", "issue", "revoke", "revoke", "config", "usage"]))
    if kind == "issue":
        return Req("POST", ["/v1/", "{mount}", "/issue/any"], {"common_name": "ocsp.example.com", "key_type": "ec"})
    if kind == "revoke":
        return Req("POST", ["/v1/", "{mount}", "/revoke"], {"serial_number": Ref("serial", draw(st.integers(0, 3)))})
    if kind == "config":
        body = {}
        if draw(st.booleans()):
            body["ocsp_disable"] = draw(st.sampled_from([True, False, False]))
        if draw(st.booleans()):
            body["ocsp_expiry"] = draw(st.sampled_from(EXPIRIES))
        return Req("POST", ["/v1/", "{mount}", "/config/crl"], body)
    if kind == "usage":
        return Req("PATCH", ["/v1/", "{mount}", "/issuer/default"], {"usage": draw(st.sampled_from(USAGES))})
    query = draw(queries())
    token = draw(st.sampled_from([None, None, "root", "bogus"]))
    if query.form in ("get", "get_raw"):
        return Req("GET", ["/v1/", "{mount}", "/ocsp/", query], None, token)
    method = draw(st.sampled_from(["POST", "POST", "PUT"]))
    return Req(method, ["/v1/", "{mount}", "/ocsp"], OcspBody(query, draw(st.sampled_from(CONTENT_TYPES))), token)


def sequences(min_size: int = 1, max_size: int = 8) -> st.SearchStrategy:
    """Lists of :func:`requests` (one sequence runs on freshly set-up mounts)."""
    return st.lists(requests(), min_size=min_size, max_size=max_size)
