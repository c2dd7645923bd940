"""CA generation paths: ``root/generate/:type`` (+ ``issuers/generate/root/:type``, ``root/rotate/:type``),
``intermediate/generate/:type`` (+ ``issuers/generate/intermediate/:type``, ``intermediate/cross-sign``) and
``DELETE root``.

A generated root is stored as issuer + key and, like upstream, also in the certificate store (so
``LIST certs`` shows it); CRLs are rebuilt afterwards.
"""

from __future__ import annotations

import base64
from functools import partial
from typing import TYPE_CHECKING, Any

from cryptography import x509 as cx509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding

from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..codecs.x509 import (
    build_csr,
    csr_pem,
    der_b64,
    generate_key,
    new_serial,
    pem_of,
    private_key_der_b64,
    private_key_pem,
    private_key_type,
    serial_of,
    sign_certificate,
)
from ..model import CertRecord, serial_to_hex
from .ca_import import AIA_WARNING, ImportRefused, add_issuer, aia_configured
from .ca_params import (
    INTERMEDIATE_FIELDS,
    ROOT_FIELDS,
    TYPE_RE,
    GenerationParams,
    ca_subject_and_sans,
    ca_validity,
    generation_params,
)
from .issuers import check_issuer_name, find_issuer
from .keys import check_key_name, import_key

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

NO_SUBJECT_WARNING = ("This issuer certificate was generated without a Subject; this makes it likely that issuing leaf "
                      "certs with this certificate will cause TLS validation libraries to reject this certificate.")
INTERMEDIATE_AIA_WARNING = (AIA_WARNING + " Since this certificate is an intermediate, it might be useful to regenerate "
                            "this certificate after fixing this problem for the root mount.")
PATH_ZERO_WARNING = ("Max path length of the generated certificate is zero. This certificate cannot be used to issue "
                     "intermediate CA certificates.")
DELETE_ROOT_WARNING = ("DELETE /root deletes all keys and issuers; prefer the new DELETE /key/:key_ref and DELETE "
                       "/issuer/:issuer_ref for finer granularity, unless removal of all keys and issuers is desired.")

#: a CA the double cannot hold: cryptography refuses to read a dNSName constraint with '*' (upstream
#: signs and keeps it); docs/divergences.md
WILDCARD_CONSTRAINT_ERROR = ("the double cannot keep a CA whose permitted_dns_domains contain '*': cryptography "
                             "refuses to read such name constraints (see docs/divergences.md)")


def signature_algorithm_name(cert: cx509.Certificate) -> str:
    """OpenBao's name of a certificate's signature algorithm (``SHA256WithRSA``, ``ECDSAWithSHA384``,
    ``SHA256WithRSAPSS``, ``Ed25519``), as roots record it in ``revocation_signature_algorithm``."""
    if isinstance(cert.public_key(), ed25519.Ed25519PublicKey):
        return "Ed25519"
    digest = cert.signature_hash_algorithm.name.upper().replace("-", "") if cert.signature_hash_algorithm else ""
    if isinstance(cert.public_key(), ec.EllipticCurvePublicKey):
        return f"ECDSAWith{digest}"
    if isinstance(cert.signature_algorithm_parameters, padding.PSS):
        return f"{digest}WithRSAPSS"
    return f"{digest}WithRSA"


def _new_key(params: GenerationParams) -> Any:
    if params.existing_key is not None:
        return params.existing_key.private_key
    return generate_key(params.key_type, params.key_bits)[0]


def _key_output(private_key: Any, fmt: str, pkcs8: bool) -> str:
    if fmt == "der":
        return private_key_der_b64(private_key, pkcs8)
    return private_key_pem(private_key, pkcs8)


def _generate_root(backend: PkiBackend, req: LogicalRequest, rotate: bool = False) -> LogicalResponse:
    """``pathCAGenerateRoot``: data ``certificate``, ``issuing_ca``, ``expiration`` (unix s),
    ``serial_number``, ``issuer_id``, ``issuer_name``, ``key_id``, ``key_name`` (+ ``private_key``,
    ``private_key_type`` for ``exported``). Warnings: TTL clamp, no subject, no AIA, path length zero."""
    state, data = backend.state, req.data
    params = generation_params(backend, data)
    issuer_name = check_issuer_name(state, data.get("issuer_name"), data.sent("issuer_name"))
    if rotate and not issuer_name and find_issuer(state, "next") is None:
        issuer_name = "next"
    key_name = check_key_name(state, data)
    subject, sans = ca_subject_and_sans(data)
    now = backend.now()
    not_before, not_after, warnings = ca_validity(backend, data, now)
    private_key = _new_key(params)
    ext_key_usage = data.get("ext_key_usage") if data.sent("ext_key_usage") else []
    if data.sent("ext_key_usage_oids"):  # upstream parses the OIDs as EKU names (so they never match)
        ext_key_usage = data.get("ext_key_usage_oids")
    aia = {k: list(state.config_urls.get(k) or []) for k in ("issuing_certificates", "crl_distribution_points",
                                                             "delta_crl_distribution_points", "ocsp_servers")}
    cert = sign_certificate(
        issuer_cert=None, issuer_key=private_key, public_key=private_key.public_key(), subject=subject,
        serial=new_serial(), not_before=not_before, not_after=not_after, sans=sans, is_ca=True,
        max_path_length=data.get("max_path_length"),
        key_usage=data.get("key_usage") if data.sent("key_usage") else [], ext_key_usage=ext_key_usage,
        permitted_dns_domains=data.get("permitted_dns_domains"), aia=aia,
        signature_bits=params.signature_bits if params.key_type == "rsa" else 0, use_pss=params.use_pss)

    if any("*" in d for d in data.get("permitted_dns_domains")):  # docs/divergences.md
        raise internal_error(WILDCARD_CONSTRAINT_ERROR)
    response = LogicalResponse(data={"expiration": int(cert.not_valid_after_utc.timestamp()),
                                     "serial_number": serial_to_hex(serial_of(cert))})
    for warning in warnings:
        response.add_warning(warning)
    if len(subject) == 0:
        response.add_warning(NO_SUBJECT_WARNING)
    if not (aia["issuing_certificates"] or aia["crl_distribution_points"] or aia["ocsp_servers"]):
        response.add_warning(AIA_WARNING)
    out = response.data
    pkcs8 = data.get("private_key_format") == "pkcs8"
    if params.fmt == "der":
        out["certificate"] = out["issuing_ca"] = der_b64(cert)
    else:
        out["certificate"] = out["issuing_ca"] = pem_of(cert)
        if params.fmt == "pem_bundle" and params.exported:
            out["certificate"] = private_key_pem(private_key) + "\n" + pem_of(cert)
    if params.exported:
        out["private_key"] = _key_output(private_key, params.fmt, pkcs8)
        out["private_key_type"] = private_key_type(private_key)

    key, _ = import_key(state, private_key, key_name)
    try:
        issuer, _ = add_issuer(state, cert, issuer_name, revocation_signature_algorithm=signature_algorithm_name(cert))
    except ImportRefused as exc:  # pragma: no cover - a fresh CA certificate is always importable
        raise user_error(str(exc)) from None
    if state.default_follows_latest_issuer:
        state.default_issuer_id = issuer.issuer_id
    out.update(issuer_id=issuer.issuer_id, issuer_name=issuer.issuer_name, key_id=key.key_id, key_name=key.key_name)
    serial = serial_to_hex(serial_of(cert))
    state.certs[serial] = CertRecord(serial_number=serial, certificate=cert, pem=pem_of(cert),
                                     issuer_id=issuer.issuer_id, issued_at=now)
    backend.issuers_changed()
    constraints = cert.extensions.get_extension_for_class(cx509.BasicConstraints).value
    if constraints.path_length == 0:
        response.add_warning(PATH_ZERO_WARNING)
    return response


def _generate_intermediate(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``pathGenerateIntermediate``: data ``csr`` and ``key_id`` (+ ``private_key``/``private_key_type``
    for ``exported``; ``pem_bundle`` puts the key before the CSR). The key is stored; no issuer yet."""
    state, data = backend.state, req.data
    params = generation_params(backend, data)
    key_name = check_key_name(state, data)
    subject, sans = ca_subject_and_sans(data)
    _, _, warnings = ca_validity(backend, data, backend.now(), ordered=False)
    private_key = _new_key(params)
    csr = build_csr(private_key, subject, sans, add_basic_constraints=data.get("add_basic_constraints"),
                    signature_bits=params.signature_bits, use_pss=params.use_pss)
    response = LogicalResponse(data={})
    if not aia_configured(state):
        response.add_warning(INTERMEDIATE_AIA_WARNING)
    out = response.data
    pkcs8 = data.get("private_key_format") == "pkcs8"
    if params.fmt == "der":
        out["csr"] = base64.b64encode(csr.public_bytes(serialization.Encoding.DER)).decode()
    else:
        out["csr"] = csr_pem(csr)
        if params.fmt == "pem_bundle" and params.exported:
            out["csr"] = private_key_pem(private_key) + "\n" + csr_pem(csr)
    if params.exported:
        out["private_key"] = _key_output(private_key, params.fmt, pkcs8)
        out["private_key_type"] = private_key_type(private_key)
    key, _ = import_key(state, private_key, key_name)
    out["key_id"] = key.key_id
    for warning in warnings:
        response.add_warning(warning)
    return response


def _cross_sign(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``intermediate/cross-sign``: ``intermediate/generate/existing`` whatever ``exported`` says (upstream
    sets it in the request's data before ``pathGenerateIntermediate``): a CSR for the existing key
    named by ``key_ref``, to be signed by another CA."""
    req.data.raw["exported"] = "existing"
    req.data.validate()
    return _generate_intermediate(backend, req)


def _delete_root(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``DELETE root``: every issuer and key goes (certificates stay); 200 ``data: null`` + warning."""
    state = backend.state
    state.issuers.clear()
    state.keys.clear()
    state.crls.clear()
    state.default_issuer_id = ""
    state.default_key_id = ""
    response = LogicalResponse(data=None)
    response.add_warning(DELETE_ROOT_WARNING)
    return response


def paths(backend: PkiBackend) -> list[Path]:
    """The generation paths and ``root`` (DELETE, sudo as upstream's ``Root`` paths)."""
    root = partial(_generate_root, backend)
    intermediate = partial(_generate_intermediate, backend)
    return [
        Path(rf"root/generate/{TYPE_RE}", ROOT_FIELDS, {"update": root}),
        Path(rf"issuers/generate/root/{TYPE_RE}", ROOT_FIELDS, {"update": root}),
        Path(rf"root/rotate/{TYPE_RE}", ROOT_FIELDS, {"update": partial(_generate_root, backend, rotate=True)}),
        Path(rf"intermediate/generate/{TYPE_RE}", INTERMEDIATE_FIELDS, {"update": intermediate}),
        Path(rf"issuers/generate/intermediate/{TYPE_RE}", INTERMEDIATE_FIELDS, {"update": intermediate}),
        Path(r"intermediate/cross-sign", INTERMEDIATE_FIELDS, {"update": partial(_cross_sign, backend)}),
        Path(r"root", {}, {"delete": partial(_delete_root, backend)}, sudo=True),
    ]
