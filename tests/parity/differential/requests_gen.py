"""Request sequences for the differential fuzzer (Hypothesis strategies).

A :class:`Req` is one HTTP request written once and sent to both servers: its path and body may
hold :class:`Ref` values that each side resolves from its own state (the serial of the k-th
certificate that side issued, its root's PEM, ...), and :class:`RawNumber` / :class:`Raw` let a
body carry what ``json.dumps`` cannot write (``1e999``, a BOM, broken UTF-8).

:func:`sequences` draws lists of requests over every PKI path of the API document
(``docs/api/secrets-pki.md``): role reads/lists/writes, issue and sign (plain and per issuer),
sign-intermediate, sign-self-issued, sign-verbatim (with and without role, per issuer), revoke by
serial or certificate, revoke-with-key, the Enterprise external-policy paths (absent on OpenBao)
and the certificate/CRL reads that show the effects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from . import material

ROOT = "root"


@dataclass(frozen=True)
class Ref:
    """A value each side fills in from its own state (see ``runner.resolve``).

    ``kind``: ``serial``/``cert``/``key`` of the ``index``-th certificate issued in this sequence
    (modulo the count; a fixed fallback when none was issued), ``root_id``, ``root_pem``,
    ``root_serial``, ``other_root_pem``, ``other_root_id``."""

    kind: str
    index: int = 0

    def __repr__(self) -> str:
        return f"<{self.kind}{'' if self.kind.startswith(('root', 'other')) else f'#{self.index}'}>"


@dataclass(frozen=True)
class RawNumber:
    """A JSON number token written as is (``1e999``, ``-0``, ``1E400``)."""

    text: str


@dataclass(frozen=True)
class Raw:
    """A whole body given as text: ``prefix`` + JSON of ``value`` (``None``: just ``text``)."""

    text: str = ""
    value: Any = None
    prefix: str = ""


@dataclass
class Req:
    """One request: ``method``, ``path`` (list of str/Ref parts, joined after resolving), ``body``
    (JSON value, :class:`Raw`, or ``None`` for no body), ``token`` (``None``: no token header),
    ``pause``: real seconds the runner waits before sending it (so short TTLs expire on both sides),
    ``namespace``: an ``X-Vault-Namespace`` header to send (``None``: none)."""

    method: str
    path: list = field(default_factory=list)
    body: Any = None
    token: str | None = ROOT
    pause: float = 0.0
    namespace: str | None = None

    @property
    def template(self) -> str:
        """The path with references shown as ``{kind}`` (for grouping causes)."""
        return "".join(p if isinstance(p, str) else "{" + getattr(p, "kind", type(p).__name__) + "}" for p in self.path)

    def show(self) -> str:
        body = "" if self.body is None else " " + dump_body(self.body)[:1500]
        token = "" if self.token == ROOT else f" [token={self.token!r}]"
        if self.namespace is not None:
            token += f" [namespace={self.namespace!r}]"
        pause = f"(after {self.pause:g}s) " if self.pause else ""
        return f"{pause}{self.method} {''.join(map(str, self.path))}{token}{body}"


def dump_json(value: Any) -> str:
    """JSON text of ``value`` with :class:`RawNumber` tokens written verbatim and :class:`Ref`
    shown as ``"<kind#i>"`` (only for display; the runner resolves refs first)."""
    if isinstance(value, RawNumber):
        return value.text
    if isinstance(value, Ref):
        return json.dumps(repr(value))
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump_json(v) for v in value) + "]"
    return json.dumps(value)


def dump_body(body: Any) -> str:
    if isinstance(body, Raw):
        return body.prefix + (body.text if body.value is None else dump_json(body.value))
    return dump_json(body)


# ---------------------------------------------------------------------------------------- values

DURATIONS = ["1h", "30m", "90s", "1d", "2d", "1.5h", "bad", "xd", "d", "1h30m", "-1h", "0", "0s", "", "87600h",
             "1000000h", "3600", "+1h", ".5h", "1e3", "1h ", " 1h", "1us", "1\u00b5s", "1ns", "2562047h",
             "99999999999999999999s", "1.5d", "1dd", "1m1d",
             # at the edge of time.Duration: ParseDurationSecond's overflow check
             "9223372036", "9223372037", "-9223372037", "106751d", "106752d", "-1"]
NAMES = ["a.example.com", "example.com", "*.example.com", "x.example.com,y.example.com", "localhost", "evil.org",
         "foo@example.com", "bücher.example.com", "xn--bcher-kva.example.com", "a..b.example.com", "-a.example.com",
         "A.Example.COM", "", " ", "*", "127.0.0.1", "\u200bzw.example.com", "\uff41.example.com", "a_b.example.com",
         "a" * 64 + ".example.com", "x.example.com.", "\U0001f600.example.com"]
IPS = ["10.0.0.1", "::ffff:10.0.0.1", "fe80::1%eth0", "::1", "1.2.3", "01.2.3.4", "[::1]", "10.0.0.1/32",
       "2001:db8::1", "0.0.0.0", "255.255.255.255", "10.0.0.1,::1", "", "::ffff:1.2.3.4%2", "abc"]
URIS = ["spiffe://example.com/x", "HTTPS://Example.COM/Path", "not a uri", "://missing-scheme", "urn:uuid:1234",
        "mailto:a@example.com", "http://[::1]:80/p", "http://\u4f8b\u3048.jp/", "http://a b", "%zz", "x:",
        "http://example.com/%41%2f", "http://example.com/a?b=c#d", "HTTP://EXAMPLE.com", "", "a,b"]
OTHER_SANS = ["1.2.3.4;UTF8:x", ";UTF8:x", "1.2.3.4;UTF-8:x", "1.2.3.4;UTF8:", "bad", "1.2.3.4;utf8:x",
              "1.2.3.4;UTF8:a,1.2.3.5;UTF8:b", "1.3.6.1.4.1.311.20.2.3;UTF8:dev@example.com", "1.2.3.4;INT:1",
              "1.2.x;UTF8:x", "1.2.3.4:UTF8:x"]
TIMES = ["2030-01-01T00:00:00Z", "tomorrow", "", "9999-12-31T23:59:59Z", "2000-01-01T00:00:00Z",
         "2030-02-30T00:00:00Z", "2030-01-01T00:00:00+01:00", "2030-01-01T00:00:00.123456789Z",
         "2030-01-01 00:00:00", "2030-01-01T00:00:00"]
KEY_USAGES = ["DigitalSignature", "KeyAgreement", "KeyEncipherment", "DataEncipherment", "CertSign", "CRLSign",
              "ContentCommitment", "EncipherOnly", "DecipherOnly", "digitalsignature", "bogus", ""]
EXT_KEY_USAGES = ["ServerAuth", "ClientAuth", "CodeSigning", "EmailProtection", "TimeStamping", "OCSPSigning",
                  "Any", "serverauth", "bogus"]
OIDS = ["1.2.3.4", "0", "1.2.3.abc", "1.3.6.1.5.5.7.3.1", "", "2.999.1", "1", "1.2.840.113549.1.1.1.99999999999"]
DNS_CONSTRAINTS = ["example.com", "*.x.test", "bad domain", ".example.com", "", "x.test,y.test", "EXAMPLE.com"]
ROLE_NAMES = ["strict", "any", "lease", "r1", "nope"]
ODD = [None, True, 0, -1, 1.5, 2 ** 70, [], {}, "", "\ufeff", "\ud800", RawNumber("1e999"), RawNumber("-0"),
       RawNumber("1E400"), [None], {"a": 1}]

odd_values = st.sampled_from(ODD)
durations = st.sampled_from(DURATIONS) | st.sampled_from([3600, 0, -5, 1.5, 2 ** 64, RawNumber("1e999")])


def _comma_or_list(pool: list[str]) -> st.SearchStrategy:
    items = st.lists(st.sampled_from(pool), min_size=1, max_size=3)
    return st.sampled_from(pool) | items | items.map(",".join)


def _csr(draw) -> str:
    kind = draw(st.sampled_from(material.KEY_KINDS[:-1] + ("ec-p256", "ec-p256", "ed448")))
    cn = draw(st.sampled_from(["a.example.com", "evil.org", None, "Parity Int", "x.example.com"]))
    dns = tuple(draw(st.lists(st.sampled_from(["b.example.com", "evil.org", "*.example.com"]), max_size=2)))
    ips = tuple(draw(st.lists(st.sampled_from(["10.0.0.2", "::1"]), max_size=1)))
    uris = tuple(draw(st.lists(st.sampled_from(["spiffe://example.com/w", "urn:x"]), max_size=1)))
    ca = draw(st.sampled_from([None, None, True, False]))
    ku = tuple(draw(st.lists(st.sampled_from(["digital_signature", "key_agreement", "decipher_only",
                                              "key_cert_sign", "encipher_only"]), max_size=3, unique=True)))
    return material.csr_pem(kind, cn, dns, ips, uris, ca, ku)


@st.composite
def csr_values(draw) -> Any:
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.sampled_from(["not a csr", "", material.foreign_cert("ec-p256", "Foreign", False, False),
                                     "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"]))
    if choice == 1:
        return draw(odd_values)
    return _csr(draw)


@st.composite
def cert_values(draw) -> Any:
    """A certificate for revoke / sign-self-issued: issued here, an issuer, foreign, garbage, or a
    foreign CA with one DER byte changed."""
    if draw(st.integers(0, 5)) == 0:
        return material.damaged_cert(draw(st.integers(0, 400)), draw(st.integers(0, 255)))
    return draw(st.sampled_from([Ref("cert", draw(st.integers(0, 3))), Ref("cert", 0), Ref("root_pem"),
                                 Ref("other_root_pem"), material.foreign_cert("ec-p256", "Foreign", False, False),
                                 material.foreign_cert("ec-p256", "Foreign CA", False, True),
                                 material.foreign_cert("ec-p256", "Expired", True, False), "not a cert", "",
                                 None, 5]))


def serial_values() -> st.SearchStrategy:
    return st.builds(Ref, st.just("serial"), st.integers(0, 3)) | st.sampled_from(
        [Ref("root_serial"), "00:11:22", "zz", "", "0", "00-11-22", None, 12])


FIELDS: dict[str, st.SearchStrategy] = {
    "common_name": st.sampled_from(NAMES),
    "alt_names": _comma_or_list(NAMES),
    "ip_sans": _comma_or_list(IPS),
    "uri_sans": _comma_or_list(URIS),
    "other_sans": _comma_or_list(OTHER_SANS),
    "ttl": durations,
    "not_before_duration": durations,
    "not_after": st.sampled_from(TIMES),
    "format": st.sampled_from(["pem", "der", "pem_bundle", "bogus", ""]),
    "private_key_format": st.sampled_from(["", "der", "pem", "pkcs8", "bogus"]),
    "exclude_cn_from_sans": st.sampled_from([True, False, "true", "x"]),
    "key_type": st.sampled_from(["rsa", "ec", "ed25519", "any", "bogus", ""]),
    "key_bits": st.sampled_from([0, 224, 256, 384, 521, 2048, 1024, -1, "256"]),
    "signature_bits": st.sampled_from([0, 256, 384, 512, 1, "x"]),
    "use_pss": st.sampled_from([True, False]),
    "serial_number": st.sampled_from(["123", "", "A-1"]),
    "user_ids": st.sampled_from(["u1", "u1,u2", ""]),
    "remove_roots_from_chain": st.booleans(),
    "key_usage": _comma_or_list(KEY_USAGES),
    "ext_key_usage": _comma_or_list(EXT_KEY_USAGES),
    "ext_key_usage_oids": _comma_or_list(OIDS),
    "permitted_dns_domains": _comma_or_list(DNS_CONSTRAINTS),
    "excluded_dns_domains": _comma_or_list(DNS_CONSTRAINTS),
    "max_path_length": st.sampled_from([-1, 0, 1, 5, "x"]),
    "use_csr_values": st.booleans(),
    "issuer_ref": st.sampled_from(["default", "nope", Ref("root_id"), ""]),
    "csr": csr_values(),
    "certificate": cert_values(),
    "serial_number_revoke": serial_values(),
    "private_key": st.sampled_from([Ref("key", 0), Ref("key", 1), material.key_pem("ec-p256"), "garbage", ""]),
    # role fields
    "allowed_domains": _comma_or_list(["example.com", "x.test", "*.example.com", ""]),
    "allow_subdomains": st.booleans(),
    "allow_any_name": st.booleans(),
    "allow_bare_domains": st.booleans(),
    "allow_glob_domains": st.booleans(),
    "allow_ip_sans": st.booleans(),
    "enforce_hostnames": st.booleans(),
    "allowed_uri_sans": _comma_or_list(["*", "spiffe://*", "https://example.com/*"]),
    "allowed_other_sans": _comma_or_list(["*", "1.2.3.4;UTF8:*", "1.2.3.4;utf8:x"]),
    "max_ttl": durations,
    "generate_lease": st.booleans(),
    "no_store": st.booleans(),
    "require_cn": st.booleans(),
    "basic_constraints_valid_for_non_ca": st.booleans(),
    "policy_identifiers": _comma_or_list(["1.2.3.4", "bad", '[{"oid":"1.2.3"}]', "1.2.-5", "-1.2", "+1.02",
                                          '{"OID":"1.2.3","cps":"http://x"}', '{"oid":5}', "null",
                                          "2.9223372036854775807"]),
    "use_csr_common_name": st.booleans(),
    "require_matching_certificate_algorithms": st.booleans(),
}
LEAF = ["common_name", "alt_names", "ip_sans", "uri_sans", "other_sans", "ttl", "not_after", "format",
        "exclude_cn_from_sans", "not_before_duration", "serial_number", "user_ids", "remove_roots_from_chain"]
CA_SIGN = ["common_name", "alt_names", "ip_sans", "uri_sans", "other_sans", "ttl", "not_after", "format",
           "max_path_length", "use_csr_values", "permitted_dns_domains", "excluded_dns_domains", "serial_number",
           "signature_bits", "use_pss", "not_before_duration", "key_usage", "ext_key_usage_oids"]
VERBATIM = ["ttl", "not_after", "format", "key_usage", "ext_key_usage", "ext_key_usage_oids", "signature_bits",
            "use_pss", "not_before_duration", "remove_roots_from_chain"]
ROLE = ["allowed_domains", "allow_subdomains", "allow_any_name", "allow_bare_domains", "allow_glob_domains",
        "allow_ip_sans", "enforce_hostnames", "allowed_uri_sans", "allowed_other_sans", "ttl", "max_ttl",
        "key_type", "key_bits", "key_usage", "ext_key_usage", "ext_key_usage_oids", "generate_lease", "no_store",
        "require_cn", "basic_constraints_valid_for_non_ca", "policy_identifiers", "not_before_duration",
        "signature_bits", "use_pss", "issuer_ref", "use_csr_common_name"]


def _has_ref(value: Any) -> bool:
    """Whether ``value`` holds a :class:`Ref` (resolved per side, so its text differs between them)."""
    if isinstance(value, Ref):
        return True
    if isinstance(value, dict):
        return any(_has_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_ref(v) for v in value)
    return False


@st.composite
def bodies(draw, names: list[str], required: tuple[str, ...] = ()) -> Any:
    """A body with the ``required`` fields (usually) and a few of ``names``; values plausible,
    boundary or hostile; sometimes written as raw text (BOM, ``1e999``, trailing garbage) or with one
    syntax slip (a character dropped, added or replaced) in its JSON text."""
    body = drawn_fields(draw, FIELDS, names, required, ["bogus_field", "Common_Name", ""],
                        {"serial_number_revoke": "serial_number"})
    return shaped(draw, body, RAW_TEXTS)


def drawn_fields(draw, fields: dict[str, st.SearchStrategy], names: list[str], required: tuple[str, ...],
                 unknown: list[str], renamed: dict[str, str]) -> dict[str, Any]:
    """The fields of one body: each of ``required`` (nine times in ten), up to four of ``names`` (one in
    eight an odd value instead of the field's own), now and then one of ``unknown``; then the table
    names in ``renamed`` replaced by the names sent."""
    body: dict[str, Any] = {}
    for name in required:
        if draw(st.integers(0, 9)):
            body[name] = draw(fields[name])
    for name in draw(st.lists(st.sampled_from(names), max_size=4, unique=True)) if names else ():
        body[name] = draw(odd_values) if draw(st.integers(0, 7)) == 0 else draw(fields[name])
    if draw(st.integers(0, 11)) == 0:
        body[draw(st.sampled_from(unknown))] = "x"
    return {renamed.get(k, k): v for k, v in body.items()}


RAW_TEXTS = ["", "null", "[]", '"x"', "{", '{"a":1}x', "{\"common_name\":1e999}", '{"ttl":"1h","ttl":"2h"}', "\xff\xfe{}"]


def shaped(draw, body: dict[str, Any], raw_texts: list[str]) -> Any:
    """``body`` as sent: mostly as it is; sometimes behind a BOM, with one syntax slip in its JSON
    text (a character dropped, added or replaced; the same text on both sides, so never with a
    :class:`Ref`), or replaced by one of ``raw_texts``."""
    shape = draw(st.integers(0, 19))
    if shape == 0:
        return Raw(value=body, prefix="\ufeff")
    if shape == 2 and not _has_ref(body):
        text = dump_json(body)
        at = draw(st.integers(0, len(text)))
        slip = draw(st.sampled_from(["", ",", "]", "}", "[", "{", ":", " ", '"', "1", "tru", "\\"]))
        drop = draw(st.integers(0, 1)) if at < len(text) else 0
        return Raw(text=text[:at] + slip + text[at + drop:])
    if shape == 1:
        return Raw(text=draw(st.sampled_from(raw_texts)))
    return body


def _p(*parts) -> list:
    return list(parts)


@st.composite
def requests(draw) -> Req:
    """One request over the PKI paths of the API document (and reads that show their effects)."""
    role = draw(st.sampled_from(ROLE_NAMES))
    ref = draw(st.sampled_from(["default", Ref("root_id"), "nope"]))
    kind = draw(st.sampled_from(
        ["issue", "issue", "issue", "issue_ref", "sign", "sign", "sign_ref", "sign_int", "sign_int_ref",
         "self_issued", "self_issued_ref", "verbatim", "verbatim", "verbatim_role", "verbatim_ref", "revoke",
         "revoke", "revoke_other", "revoke_key", "role_write", "role_read", "roles_list", "ext_policy", "read",
         "raw_path"]))
    csr = ("csr",)
    if kind == "issue":
        req = Req("POST", _p("/v1/", "{mount}", "/issue/", role), draw(bodies(LEAF + ["key_type", "key_bits",
                                                                                     "private_key_format"],
                                                                       ("common_name",))))
    elif kind == "issue_ref":
        req = Req("POST", _p("/v1/", "{mount}", "/issuer/", ref, "/issue/", role), draw(bodies(LEAF, ("common_name",))))
    elif kind == "sign":
        req = Req("POST", _p("/v1/", "{mount}", "/sign/", role), draw(bodies(LEAF, csr)))
    elif kind == "sign_ref":
        req = Req("POST", _p("/v1/", "{mount}", "/issuer/", ref, "/sign/", role), draw(bodies(LEAF, csr)))
    elif kind == "sign_int":
        req = Req("POST", _p("/v1/", "{mount}", "/root/sign-intermediate"), draw(bodies(CA_SIGN, csr)))
    elif kind == "sign_int_ref":
        req = Req("POST", _p("/v1/", "{mount}", "/issuer/", ref, "/sign-intermediate"), draw(bodies(CA_SIGN, csr)))
    elif kind in ("self_issued", "self_issued_ref"):
        middle = ("/root/",) if kind == "self_issued" else ("/issuer/", ref, "/")
        req = Req("POST", _p("/v1/", "{mount}", *middle, "sign-self-issued"),
                  draw(bodies(["require_matching_certificate_algorithms"], ("certificate",))))
    elif kind == "verbatim":
        req = Req("POST", _p("/v1/", "{mount}", "/sign-verbatim"), draw(bodies(VERBATIM, csr)))
    elif kind == "verbatim_role":
        req = Req("POST", _p("/v1/", "{mount}", "/sign-verbatim/", role), draw(bodies(VERBATIM, csr)))
    elif kind == "verbatim_ref":
        tail = draw(st.sampled_from([("/sign-verbatim",), ("/sign-verbatim/", role)]))
        req = Req("POST", _p("/v1/", "{mount}", "/issuer/", ref, *tail), draw(bodies(VERBATIM, csr)))
    elif kind in ("revoke", "revoke_other"):
        mount = "{mount}" if kind == "revoke" else "{other}"
        req = Req("POST", _p("/v1/", mount, "/revoke"),
                  draw(bodies([], (draw(st.sampled_from(["serial_number_revoke", "certificate"])),))))
    elif kind == "revoke_key":
        req = Req("POST", _p("/v1/", "{mount}", "/revoke-with-key"),
                  draw(bodies(["certificate"], ("serial_number_revoke", "private_key"))))
    elif kind == "role_write":
        req = Req("POST", _p("/v1/", "{mount}", "/roles/", draw(st.sampled_from(["r1", "r1", "any", "nope"]))),
                  draw(bodies(ROLE)))
    elif kind == "role_read":
        req = Req(draw(st.sampled_from(["GET", "GET", "DELETE"])), _p("/v1/", "{mount}", "/roles/", role))
    elif kind == "roles_list":
        req = Req("LIST", _p("/v1/", "{mount}", "/roles"))
    elif kind == "ext_policy":  # Vault Enterprise paths: OpenBao answers 404
        tail = draw(st.sampled_from(["issue", "sign", "sign-intermediate", "issue/p1", "sign/p1",
                                     "sign-intermediate/p1"]))
        prefix = draw(st.sampled_from([("/",), ("/issuer/", ref, "/")]))
        req = Req("POST", _p("/v1/", "{mount}", *prefix, "external-policy/", tail), draw(bodies(LEAF, csr)))
    elif kind == "read":
        tail = draw(st.sampled_from([_p("/cert/", Ref("serial", draw(st.integers(0, 3)))),
                                     _p("/cert/", Ref("serial", 0), "/raw"), _p("/cert/", Ref("root_serial")),
                                     _p("/crl/pem"), _p("/ca/pem"), _p("/issuer/", ref), _p("/cert/ca"),
                                     _p("/cert/crl")]))
        req = Req("GET", _p("/v1/", "{mount}", *tail))
        if draw(st.integers(0, 2)) == 0:
            req.method = "LIST"
            req.path = _p("/v1/", "{mount}", draw(st.sampled_from(["/certs", "/certs/revoked", "/issuers"])))
    else:  # raw_path: odd methods and paths on the unauthenticated raw endpoints
        req = Req(draw(st.sampled_from(["GET", "DELETE", "POST", "PUT"])),
                  _p("/v1/", "{mount}", draw(st.sampled_from(["/crl/pem", "/cert/zz/raw", "/cert/zz", "/ca",
                                                              "/cert/ca/raw", "/crl", "/cert/zz/raw/pem"]))))
    if draw(st.integers(0, 14)) == 0:
        req.token = draw(st.sampled_from([None, "bogus"]))
    if req.method in ("GET", "LIST", "DELETE") and req.body not in (None, {}):
        req.body = None
    return req


def sequences(min_size: int = 1, max_size: int = 8) -> st.SearchStrategy:
    """Lists of :func:`requests` (one sequence runs on freshly set-up mounts)."""
    return st.lists(requests(), min_size=min_size, max_size=max_size)
