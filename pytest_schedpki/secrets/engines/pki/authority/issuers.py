"""Issuers of a PKI mount: how references resolve, their chains and AIA URLs, and the paths
``LIST issuers``, ``issuer/:ref`` (GET, POST full replace, PATCH merge, DELETE) and ``config/issuers``.

Other modules (issue/sign, CRL, fetch) use :func:`resolve_issuer`, :func:`chain_for`,
:func:`aia_for` and :func:`issuer_key`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cryptography import x509 as cx509

from pytest_schedpki.secrets.framework.fields import BOOL, COMMA_STRING_SLICE, STRING, Field
from pytest_schedpki.secrets.framework.logical import (
    LogicalError,
    LogicalResponse,
    internal_error,
    not_found,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..codecs.rfc3339 import format_rfc3339_nano
from ..codecs.x509 import key_type_of, pem_of
from ..model import Issuer, Key, PkiState, serial_to_hex
from .issuer_references import deletion_warnings, dereference_warnings

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

NAME_RE = re.compile(r"^[0-9A-Za-z_](([0-9A-Za-z_.-]+)?[0-9A-Za-z_])?$")  # framework.GenericNameRegex
REF = r"(?P<issuer_ref>[0-9A-Za-z_](([0-9A-Za-z_.-]+)?[0-9A-Za-z_])?)"
USAGE_NAMES = ("crl-signing", "issuing-certificates", "ocsp-signing", "read-only")
ALL_USAGES = ",".join(USAGE_NAMES)
LEAF_BEHAVIOURS = ("err", "truncate", "permit")
REVOCATION_ALGORITHMS = {
    "sha256withrsa": "SHA256WithRSA", "sha384withrsa": "SHA384WithRSA", "sha512withrsa": "SHA512WithRSA",
    "ecdsawithsha256": "ECDSAWithSHA256", "ecdsawithsha384": "ECDSAWithSHA384", "ecdsawithsha512": "ECDSAWithSHA512",
    "sha256withrsapss": "SHA256WithRSAPSS", "sha384withrsapss": "SHA384WithRSAPSS",
    "sha512withrsapss": "SHA512WithRSAPSS", "pureed25519": "Ed25519", "ed25519": "Ed25519",
}
# Go crypto/x509 String() names, for CanMaybeSignWithAlgo's error text
_GO_ALGO = {"SHA256WithRSA": "SHA256-RSA", "SHA384WithRSA": "SHA384-RSA", "SHA512WithRSA": "SHA512-RSA",
            "ECDSAWithSHA256": "ECDSA-SHA256", "ECDSAWithSHA384": "ECDSA-SHA384", "ECDSAWithSHA512": "ECDSA-SHA512",
            "SHA256WithRSAPSS": "SHA256-RSAPSS", "SHA384WithRSAPSS": "SHA384-RSAPSS",
            "SHA512WithRSAPSS": "SHA512-RSAPSS", "Ed25519": "Ed25519"}
_GO_KEY_ALGO = {"rsa": "RSA", "ec": "ECDSA", "ed25519": "Ed25519"}
AIA_FIELDS = ("issuing_certificates", "crl_distribution_points", "delta_crl_distribution_points", "ocsp_servers")


class IssuerNotFound(LogicalError):
    """An issuer reference that does not resolve: 500 multierror ``<message>`` (what ``GET issuer/:ref``
    answers). ``message`` is ``unable to find PKI issuer for reference: <ref>`` or ``no default issuer
    currently configured``; callers rewrap it in their own texts, e.g. issue paths answer 500
    ``could not fetch the CA certificate (was one set?): <message>`` and the raw/CRL paths a plain 500."""

    def __init__(self, message: str):
        super().__init__(500, internal_error(message).errors)
        self.message = message


def normalize_ref(ref: str) -> str:
    """``extractRef``: trimmed, and any casing of ``default`` becomes ``default``."""
    ref = ref.strip()
    return "default" if ref.lower() == "default" else ref


def resolve_issuer(state: PkiState, ref: str) -> Issuer:
    """Resolve ``ref`` as OpenBao's ``resolveIssuerReference``: ``default`` -> the configured default,
    else an issuer id, else an issuer name. Raises :class:`IssuerNotFound` (500)."""
    ref = normalize_ref(ref)
    if ref == "default":
        issuer = state.issuers.get(state.default_issuer_id)
        if issuer is None:
            raise IssuerNotFound("no default issuer currently configured")
        return issuer
    if ref in state.issuers:
        return state.issuers[ref]
    for issuer_id in sorted(state.issuers):
        if ref and state.issuers[issuer_id].issuer_name == ref:
            return state.issuers[issuer_id]
    raise IssuerNotFound(f"unable to find PKI issuer for reference: {ref}")


def find_issuer(state: PkiState, ref: str) -> Issuer | None:
    """The issuer for ``ref`` (``default``, an issuer id, or an issuer name), or ``None``."""
    try:
        return resolve_issuer(state, ref)
    except IssuerNotFound:
        return None


def issuer_key(state: PkiState, issuer: Issuer) -> Key | None:
    """The issuer's private key record, or ``None`` for an issuer imported without its key."""
    return state.keys.get(issuer.key_id or "")


def _signed_by(child: cx509.Certificate, parent: cx509.Certificate) -> bool:
    if child.issuer != parent.subject:
        return False
    try:
        child.verify_directly_issued_by(parent)
        return True
    except Exception:  # signature, algorithm or name mismatch: not this parent
        return False


def compute_chain(state: PkiState, issuer: Issuer) -> list[str]:
    """The chain of ``issuer`` up to a self-signed root, using only issuers of this mount (itself
    first, PEMs without a trailing newline); a ``manual_chain`` is used as given."""
    if issuer.manual_chain:
        return [pem_of(state.issuers[i].certificate) for i in issuer.manual_chain if i in state.issuers]
    chain: list[str] = []
    seen: set[str] = set()
    current: Issuer | None = issuer
    while current is not None and current.issuer_id not in seen:
        seen.add(current.issuer_id)
        chain.append(pem_of(current.certificate))
        if _signed_by(current.certificate, current.certificate):
            break
        parents = [state.issuers[k] for k in sorted(state.issuers)
                   if k not in seen and _signed_by(current.certificate, state.issuers[k].certificate)]
        current = parents[0] if parents else None
    return chain


def rebuild_chains(state: PkiState) -> None:
    """Recompute ``ca_chain`` of every issuer (after an issuer is added, removed or re-chained)."""
    for issuer in state.issuers.values():
        issuer.ca_chain = compute_chain(state, issuer)


def chain_for(state: PkiState, issuer: Issuer) -> list[str]:
    """``ca_chain`` as issue/sign return it: PEMs (no trailing newline) from the issuer to its root."""
    return list(issuer.ca_chain) or compute_chain(state, issuer)


def has_own_aia(issuer: Issuer) -> bool:
    """Whether the issuer carries its own AIA URLs (OpenBao's non-nil ``AIAURIs``)."""
    return bool(issuer.issuing_certificates or issuer.crl_distribution_points or issuer.ocsp_servers)


def aia_for(state: PkiState, issuer: Issuer | None) -> dict[str, list[str]]:
    """The AIA URLs for certificates signed by ``issuer`` (``GetAIAURLs``): the issuer's own when any
    is set, else the mount's ``config/urls``. Keys: ``issuing_certificates``,
    ``crl_distribution_points``, ``delta_crl_distribution_points``, ``ocsp_servers``."""
    if issuer is not None and has_own_aia(issuer):
        return {k: list(getattr(issuer, k)) for k in AIA_FIELDS}
    return {k: list(state.config_urls.get(k) or []) for k in AIA_FIELDS}


def bad_url(urls: list[str]) -> str:
    """``validateURLs``: the first URL without scheme or host (or with a template), else ``""``."""
    for url in urls:
        try:
            parts = urlsplit(url)
        except ValueError:
            return url
        if not parts.scheme or not parts.netloc or "{{" in url:
            return url
    return ""


def check_issuer_name(state: PkiState, raw: Any, sent: bool, *, allow_empty: bool = False,
                      own_id: str = "") -> str:
    """``getIssuerName``: ``""`` when not sent; 400 ``expected non-empty issuer name`` (unless
    ``allow_empty``), ``reserved keyword 'default' can not be used as issuer name``, ``issuer name
    contained invalid characters``, ``issuer name already in use`` (not for ``own_id``'s own name)."""
    if not sent:
        return ""
    name = str(raw).strip()
    if not name:
        if allow_empty:
            return ""
        raise user_error("expected non-empty issuer name")
    if name.lower() == "default":
        raise user_error("reserved keyword 'default' can not be used as issuer name")
    if not NAME_RE.match(name):
        raise user_error("issuer name contained invalid characters")
    holder = find_issuer(state, name)
    if holder is not None and holder.issuer_id != own_id:
        raise user_error("issuer name already in use")
    return name


def parse_usage(names: list[str]) -> str:
    """``NewIssuerUsageFromNames`` (each name toggles its bit; read-only is always present) as the
    sorted comma list ``Names()`` prints. 400 ``Unable to parse specified usages: [..] - valid values
    are crl-signing,issuing-certificates,ocsp-signing,read-only``."""
    bits: set[str] = set()
    for name in names:
        if name not in USAGE_NAMES:
            raise user_error(f"Unable to parse specified usages: [{' '.join(names)}] - valid values are {ALL_USAGES}")
        bits ^= {name}
    bits.add("read-only")
    return ",".join(n for n in USAGE_NAMES if n in bits)


def issuer_read_data(state: PkiState, issuer: Issuer) -> dict[str, Any]:
    """``data`` of ``GET issuer/:ref`` (PEMs end with ``\\n`` here, as OpenBao stores them)."""
    data: dict[str, Any] = {
        "ca_chain": [p + "\n" for p in chain_for(state, issuer)],
        "certificate": pem_of(issuer.certificate) + "\n",
        "issuer_id": issuer.issuer_id, "issuer_name": issuer.issuer_name, "key_id": issuer.key_id or "",
        "leaf_not_after_behavior": issuer.leaf_not_after_behavior,
        "manual_chain": list(issuer.manual_chain) if issuer.manual_chain else None,
        "revocation_signature_algorithm": issuer.revocation_signature_algorithm,
        "revoked": issuer.revoked, "usage": issuer.usage,
    }
    data.update({k: list(getattr(issuer, k)) for k in AIA_FIELDS})
    if has_own_aia(issuer):  # upstream's AIA entry: lists never filled read as null
        data.update({k: (list(getattr(issuer, k)) or None) for k in AIA_FIELDS})
        data["enable_aia_url_templating"] = issuer.enable_aia_url_templating
    if issuer.revoked and issuer.revocation_time is not None:
        data["revocation_time"] = int(issuer.revocation_time.timestamp())
        data["revocation_time_rfc3339"] = format_rfc3339_nano(issuer.revocation_time)
    return data


def _read_response(state: PkiState, issuer: Issuer) -> LogicalResponse:
    response = LogicalResponse(data=issuer_read_data(state, issuer))
    if issuer.revocation_signature_algorithm.endswith("PSS"):
        response.add_warning("Issuer uses a PSS Revocation Signature Algorithm. This algorithm will be downgraded "
                             "to PKCS#1v1.5 signature scheme on OCSP responses, due to limitations in the OCSP library.")
    return response


# ------------------------------------------------------------------------------------------- paths

ISSUER_FIELDS = {
    "issuer_ref": Field(STRING, "default"), "issuer_name": Field(STRING),
    "leaf_not_after_behavior": Field(STRING, "err"), "manual_chain": Field(COMMA_STRING_SLICE),
    "usage": Field(COMMA_STRING_SLICE, ["read-only", "issuing-certificates", "crl-signing", "ocsp-signing"]),
    "revocation_signature_algorithm": Field(STRING, ""), "issuing_certificates": Field(COMMA_STRING_SLICE),
    "crl_distribution_points": Field(COMMA_STRING_SLICE), "delta_crl_distribution_points": Field(COMMA_STRING_SLICE),
    "ocsp_servers": Field(COMMA_STRING_SLICE), "enable_aia_url_templating": Field(BOOL, False),
}


def _list_issuers(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    state = backend.state
    if not state.issuers:
        raise not_found()
    keys = sorted(state.issuers)
    info = {i: {"is_default": i == state.default_issuer_id, "issuer_name": state.issuers[i].issuer_name,
                "key_id": state.issuers[i].key_id or "",
                "serial_number": serial_to_hex(state.issuers[i].certificate.serial_number)} for i in keys}
    return LogicalResponse(data={"keys": keys, "key_info": info})


def _read_issuer(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return _read_response(backend.state, resolve_issuer(backend.state, req.data.get("issuer_ref")))


def check_revocation_algorithm(issuer: Issuer, value: str) -> str:
    """The canonical name for a ``revocation_signature_algorithm`` value (``""`` = automatic).
    400 ``Unknown signature algorithm value: 0 - valid values are ...``; 500 ``unable to use issuer of
    type ECDSA to sign with SHA256-RSA key type`` when the issuer key cannot make that signature."""
    if value == "":
        return ""
    name = REVOCATION_ALGORITHMS.get(value.lower())
    if name is None:
        known = ", ".join([*REVOCATION_ALGORITHMS, "mldsa44", "mldsa65", "mldsa87"])
        raise user_error(f"Unknown signature algorithm value: 0 - valid values are {known}")
    kind = key_type_of(issuer.certificate.public_key())[0]
    allowed = {"rsa": name.startswith("SHA"), "ec": name.startswith("ECDSA"), "ed25519": name == "Ed25519"}
    if not allowed.get(kind, False):
        raise internal_error(f"unable to use issuer of type {_GO_KEY_ALGO.get(kind, 'unknown')} to sign with "
                             f"{_GO_ALGO[name]} key type")
    return name


def _key_usage(cert: cx509.Certificate) -> cx509.KeyUsage | None:
    try:
        return cert.extensions.get_extension_for_class(cx509.KeyUsage).value
    except cx509.ExtensionNotFound:
        return None


def _update_issuer(backend: PkiBackend, req: LogicalRequest, merge: bool) -> LogicalResponse:
    """POST replaces every field (omitted ones get their defaults); PATCH changes only sent ones.
    Nothing is stored unless every field validates."""
    state, data = backend.state, req.data
    current = resolve_issuer(state, data.get("issuer_ref"))
    new = replace(current, ca_chain=list(current.ca_chain))

    def wanted(name: str) -> bool:
        return data.sent(name) or not merge

    if wanted("issuer_name"):
        new.issuer_name = check_issuer_name(state, data.get("issuer_name"), data.sent("issuer_name"),
                                            allow_empty=merge, own_id=current.issuer_id)
    if wanted("leaf_not_after_behavior"):
        behaviour = data.get("leaf_not_after_behavior")
        if behaviour not in LEAF_BEHAVIOURS:
            raise user_error("Unknown value for field `leaf_not_after_behavior`. Possible values are `err`, "
                             "`truncate`, and `permit`.")
        new.leaf_not_after_behavior = behaviour
    if wanted("usage"):
        usage = parse_usage(data.get("usage"))
        if usage != current.usage:
            if current.revoked and "issuing-certificates" in usage:
                raise user_error("This issuer was revoked; unable to modify its usage to include certificate signing "
                                 "again. Reissue this certificate (preferably with a new key) and modify that entry instead.")
            ku = _key_usage(current.certificate)
            if "crl-signing" in usage and not (ku and ku.crl_sign):
                raise user_error("This issuer's underlying certificate lacks the CRLSign KeyUsage value; unable to set "
                                 "CRLSigningUsage on this issuer as a result.")
        new.usage = usage
    if wanted("revocation_signature_algorithm"):
        new.revocation_signature_algorithm = check_revocation_algorithm(
            current, data.get("revocation_signature_algorithm"))
    if wanted("enable_aia_url_templating"):
        new.enable_aia_url_templating = data.get("enable_aia_url_templating")
    for name in AIA_FIELDS:
        if wanted(name):
            urls = data.get(name)
            bad = bad_url(urls)
            if bad and not new.enable_aia_url_templating:
                raise user_error(f"invalid URL found in Authority Information Access (AIA) parameter {name}: {bad}")
            setattr(new, name, list(urls))
    if not has_own_aia(new):  # an AIA entry without issuing/CRL/OCSP URLs is dropped, delta URLs with it
        new.delta_crl_distribution_points = []
    if wanted("manual_chain"):
        chain = []
        for index, ref in enumerate(data.get("manual_chain")):
            target = current if index == 0 and ref == "self" else resolve_issuer(state, ref)
            if index == 0 and target.issuer_id != current.issuer_id:
                raise user_error(f"expected first cert in chain to be a self-reference, but was: {ref}/{target.issuer_id}")
            chain.append(target.issuer_id)
        new.manual_chain = chain or None
    state.issuers[current.issuer_id] = new
    rebuild_chains(state)
    response = _read_response(state, new)
    if current.issuer_name and new.issuer_name != current.issuer_name:  # roles still name the old one
        response.warnings.extend(dereference_warnings(state, [current.issuer_name]))
    return response


def delete_issuer(backend: PkiBackend, issuer_id: str) -> bool:
    """Remove one issuer (its key stays); returns whether it was the default. Chains follow."""
    state = backend.state
    was_default = state.default_issuer_id == issuer_id
    state.issuers.pop(issuer_id, None)
    state.crls.pop(issuer_id, None)
    if was_default:
        state.default_issuer_id = ""
    rebuild_chains(state)
    return was_default


def _delete_issuer(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    ref = normalize_ref(req.data.get("issuer_ref"))
    issuer = find_issuer(backend.state, ref)
    response = LogicalResponse(data=None)
    if issuer is None:
        return response
    was_default = delete_issuer(backend, issuer.issuer_id)
    response.warnings.extend(deletion_warnings(backend.state, issuer, ref, was_default))
    backend.issuers_changed()
    return response


CONFIG_FIELDS = {"default": Field(STRING), "default_follows_latest_issuer": Field(BOOL, False)}


def _config_data(state: PkiState) -> dict[str, Any]:
    return {"default": state.default_issuer_id, "default_follows_latest_issuer": state.default_follows_latest_issuer}


def _read_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=_config_data(backend.state))


NO_KEY_DEFAULT = ("This selected default issuer has no key associated with it. Some operations like issuing "
                  "certificates and signing CRLs will be unavailable with the requested default issuer until a key "
                  "is imported or the default issuer is changed.")


def _write_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``config/issuers`` and ``root/replace`` (``pathCAIssuersWrite``; root/replace has only ``default``,
    default ``next``): 400 ``Invalid issuer specification; must be non-empty and can't be 'default'.`` or
    ``Error resolving issuer reference: <why>``; 200 with the new configuration (+ a warning when the
    new default has no key)."""
    state, data = backend.state, req.data
    ref = normalize_ref(data.get("default"))
    if not ref or ref == "default":
        raise user_error("Invalid issuer specification; must be non-empty and can't be 'default'.")
    try:
        issuer = resolve_issuer(state, ref)
    except IssuerNotFound as exc:
        raise user_error(f"Error resolving issuer reference: {exc.message}") from None
    state.default_issuer_id = issuer.issuer_id
    if data.sent("default_follows_latest_issuer"):  # never on root/replace: not in its schema
        state.default_follows_latest_issuer = data.get("default_follows_latest_issuer")
    response = LogicalResponse(data=_config_data(state))
    if issuer_key(state, issuer) is None:
        response.add_warning(NO_KEY_DEFAULT)
    return response


def paths(backend: PkiBackend) -> list[Path]:
    """``issuers/`` (LIST, unauthenticated as upstream), ``issuer/:ref``, ``config/issuers``, ``root/replace``."""
    return [
        Path(r"issuers/?", {}, {"list": partial(_list_issuers, backend)}, unauthenticated=True),
        Path(rf"issuer/{REF}", ISSUER_FIELDS, {
            "read": partial(_read_issuer, backend),
            "update": partial(_update_issuer, backend, merge=False),
            "patch": partial(_update_issuer, backend, merge=True),
            "delete": partial(_delete_issuer, backend),
        }),
        Path(r"config/issuers", CONFIG_FIELDS, {"read": partial(_read_config, backend),
                                               "update": partial(_write_config, backend)}),
        Path(r"root/replace", {"default": Field(STRING, "next")}, {"update": partial(_write_config, backend)}),
    ]
