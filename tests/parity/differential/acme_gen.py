"""The ``acme`` family of the differential fuzzer: random RFC 8555 requests, validly and invalidly
signed, against the PKI mount's ACME server (OpenBao ``path_acme_*.go``).

A sequence is a list of :class:`AcmeStep`. Each side builds the HTTP request of a step from its own
state (:mod:`.acme_runner`): its nonces, its account URLs (``kid``), its orders, authorizations,
challenges, certificates and EAB keys, so a step names them by index (``order=1``: the second order
that side created). Account keys are shared: ``key=k`` is the same private key on both sides
(:data:`KEYS`: EC P-256, EC P-384, RSA 2048, Ed25519).

Steps: directory (under the four prefixes and unknown ones), new-nonce (HEAD/GET), new-account (contact,
terms, ``onlyReturnExisting``, with a valid, unknown or wrongly keyed EAB), account update and
deactivation, key-change, new-eab, ``config/acme`` writes (``eab_policy``, ``enabled``), new-order
with random identifiers, order/authorization/challenge fetches, challenge responses, a bounded wait
for validation, finalize with random CSRs, certificate download and revoke-cert (by the account or
by the certificate's key, with reasons). Every signed step has a JWS variant (:data:`JWS_VARIANTS`):
valid, or a replayed/unknown/missing nonce, a wrong ``url``, ``alg`` ``none``/``HS256``/mismatched,
a damaged signature, an unknown ``kid``, both ``jwk`` and ``kid``, a JSON Content-Type, a body that
is not JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

PREFIXES = ["acme/", "acme/", "acme/", "roles/web/acme/", "issuer/default/acme/", "issuer/default/roles/web/acme/",
            "roles/nope/acme/", "issuer/nope/acme/"]
JWS_VARIANTS = ["ok"] * 10 + ["replayed_nonce", "bogus_nonce", "no_nonce", "wrong_url", "alg_none", "alg_hs256",
                              "alg_mismatch", "bad_signature", "unknown_kid", "jwk_and_kid", "json_content_type",
                              "not_json", "empty_body", "use_jwk"]
IDENTIFIERS = [("dns", "localhost")] * 4 + [
    ("dns", "www.example.com"), ("dns", "*.example.com"), ("dns", "Example.COM"), ("dns", "a..b"),
    ("dns", ""), ("dns", "-bad-.example.com"), ("dns", "x" * 64 + ".example.com"), ("dns", "localhost."),
    ("ip", "127.0.0.1"), ("ip", "::1"), ("ip", "not-an-ip"), ("email", "a@example.com"), ("dns", "*.localhost")]
CONTACTS = [None, ["mailto:ops@example.com"], ["mailto:a@example.com", "mailto:b@example.com"], ["tel:+123"],
            "mailto:x@example.com", [], ["mailto:"]]
CSR_KINDS = ["match", "match", "match", "extra_name", "cn_only", "no_names", "garbage", "missing", "empty_string",
             "other_key_type", "account_key"]
REASONS = [None, None, 0, 1, 4, 11, -1, "x"]
EAB_KINDS = ["none", "none", "valid", "valid", "unknown_kid", "bad_mac", "other_key", "reused"]
EAB_POLICIES = ["not-required", "new-account-required", "always-required", "bogus"]
#: the number of account keys (:data:`.acme_runner.KEYS`)
N_KEYS = 4


@dataclass(frozen=True)
class AcmeStep:
    """One request of the ``acme`` family: ``kind`` (see the module docstring), ``key`` (account key
    index), ``index`` (which order/authorization/challenge/certificate/EAB of the side), ``jws`` (a
    :data:`JWS_VARIANTS` member), and the kind's parameters in ``params`` (a tuple of pairs)."""

    kind: str
    key: int = 0
    index: int = 0
    jws: str = "ok"
    params: tuple = field(default=())

    @property
    def method(self) -> str:
        return {"directory": "GET", "nonce": dict(self.params).get("method", "HEAD")}.get(self.kind, "POST")

    @property
    def template(self) -> str:
        return f"acme:{self.kind}" + ("" if self.jws == "ok" else f"[{self.jws}]")

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    def __repr__(self) -> str:
        extra = " ".join(f"{k}={v!r}" for k, v in self.params)
        return f"<{self.kind} key={self.key} index={self.index} jws={self.jws} {extra}>"


def _signed(draw, kind: str, **params: Any) -> AcmeStep:
    return AcmeStep(kind, key=draw(st.sampled_from([0, 0, 0, 1, 2, 3])), index=draw(st.integers(0, 3)),
                    jws=draw(st.sampled_from(JWS_VARIANTS)), params=tuple(sorted(params.items())))


@st.composite
def steps(draw) -> AcmeStep:
    kind = draw(st.sampled_from(
        ["directory", "nonce", "new_account", "new_account", "new_account", "new_order", "new_order", "new_order",
         "get_order", "get_authz", "challenge", "challenge", "await", "finalize", "finalize", "get_cert", "revoke",
         "revoke", "account_update", "key_change", "new_eab", "config_acme"]))
    if kind == "directory":
        return AcmeStep("directory", params=(("prefix", draw(st.sampled_from(PREFIXES))),))
    if kind == "nonce":
        return AcmeStep("nonce", params=(("method", draw(st.sampled_from(["HEAD", "HEAD", "GET", "POST"]))),))
    if kind == "new_eab":
        return AcmeStep("new_eab", params=(("role", draw(st.sampled_from([None, None, "web", "nope"]))),))
    if kind == "config_acme":
        return AcmeStep("config_acme", params=(("eab_policy", draw(st.sampled_from(EAB_POLICIES))),
                                               ("enabled", draw(st.sampled_from([True, True, True, False])))))
    if kind == "new_account":
        return _signed(draw, kind, contact=draw(st.sampled_from(CONTACTS)),
                       tos=draw(st.sampled_from([True, True, False, None])),
                       only_existing=draw(st.sampled_from([False, False, False, True])),
                       eab=draw(st.sampled_from(EAB_KINDS)), prefix=draw(st.sampled_from(PREFIXES[:6])))
    if kind == "new_order":
        idents = tuple(draw(st.lists(st.sampled_from(IDENTIFIERS), min_size=0, max_size=3)))
        return _signed(draw, kind, identifiers=idents if draw(st.integers(0, 9)) else None,
                       not_after=draw(st.sampled_from([None, None, None, "2030-01-01T00:00:00Z", "yesterday"])),
                       prefix=draw(st.sampled_from(PREFIXES[:6])))
    if kind == "finalize":
        return _signed(draw, kind, csr=draw(st.sampled_from(CSR_KINDS)))
    if kind == "revoke":
        return _signed(draw, kind, reason=draw(st.sampled_from(REASONS)),
                       by=draw(st.sampled_from(["account", "account", "cert_key", "other_account", "garbage"])))
    if kind == "account_update":
        return _signed(draw, kind, change=draw(st.sampled_from(
            ["contact", "deactivate", "empty", "bogus_status", "post_as_get", "contact_bad"])))
    if kind == "key_change":
        return _signed(draw, kind, new_key=draw(st.integers(0, N_KEYS - 1)),
                       inner=draw(st.sampled_from(["ok", "ok", "wrong_account", "wrong_old_key", "nonce_inside"])))
    if kind == "await":
        return AcmeStep("await", key=draw(st.integers(0, N_KEYS - 1)), index=draw(st.integers(0, 3)))
    return _signed(draw, kind)  # get_order, get_authz, challenge, get_cert


def sequences(min_size: int = 1, max_size: int = 12) -> st.SearchStrategy:
    """Lists of :func:`steps` (one sequence runs on a fresh ACME-enabled mount per side). Most sequences
    start by creating an account and an order, so later steps have something to act on."""
    opening = st.sampled_from([
        [], [AcmeStep("new_account")], [AcmeStep("new_account"), AcmeStep("new_order")],
        [AcmeStep("new_account"), AcmeStep("new_order"), AcmeStep("challenge"), AcmeStep("await")],
        [AcmeStep("new_account"), AcmeStep("new_order"), AcmeStep("challenge"), AcmeStep("await"),
         AcmeStep("finalize", params=(("csr", "match"),))]])
    return st.builds(lambda head, tail: head + tail, opening, st.lists(steps(), min_size=min_size, max_size=max_size))
