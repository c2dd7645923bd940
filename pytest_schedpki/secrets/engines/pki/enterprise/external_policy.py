"""Issuance through an external policy service (Vault Enterprise CIEPS), EMULATED.

OpenBao has no such feature: while ``SecretsService.enterprise`` is off none of these paths exist
(404 ``unsupported path``, as ``bao server`` answers). On, the mount serves (sources:
https://developer.hashicorp.com/vault/api-docs/secret/pki "Generate/Sign/Sign Intermediate with
External Policy" and "Read/Set Certificate Issuance External Policy Service (CIEPS) configuration";
https://developer.hashicorp.com/vault/docs/secrets/pki/cieps for the protocol):

* ``config/external-policy`` read/write: ``enabled``, ``external_service_url``, ``timeout`` (default
  15s, read back in nanoseconds), ``trusted_ca``, ``trusted_leaf_certificate_bundle``,
  ``vault_client_cert_bundle`` (read back as ``vault_client_cert_bundle_no_keys``),
  ``entity_jmespath``, ``group_jmespath``, plus the read-only ``external_service_last_updated``,
  ``external_service_validated``, ``last_successful_request``;
* ``external-policy/{issue,sign,sign-intermediate}(/:policy)`` and the same under
  ``issuer/:issuer_ref/``: the body goes verbatim to the policy service (see
  external_policy_client.py) with a CSR (for issue: an empty-subject CSR of a key the double
  generates per ``key_type``/``key_bits`` and keeps), the service answers a certificate template and
  the issuer to use; the double re-signs the template with that issuer (fresh serial, the issuer's
  AKI and AIA/CRL URLs, the template's signature algorithm when the issuer's key can make it) and
  answers like the non-external counterpart (issue: with ``private_key``).

The policy service is the test's: a Python callable (:func:`set_external_policy`) or the URL of an
HTTP(S) service written to ``config/external-policy``. Texts the public documents do not give are
the double's own (listed in docs/enterprise.md as unverified).
"""

from __future__ import annotations

import contextlib
import secrets
import string
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import ExtensionOID, SignatureAlgorithmOID

from pytest_schedpki.golang.duration import SECOND, format_duration
from pytest_schedpki.secrets.framework.fields import BOOL, DURATION, INT, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..codecs import x509 as pkix
from ..codecs.rfc3339 import format_rfc3339_nano
from ..issuance.issue import signing_issuer
from ..issuance.leaf import FORMAT_ERROR, FORMATS, Leaf, SigningIssuer, response_data
from ..issuance.roles import NAME_RE
from ..issuance.sign_intermediate import intermediate_response_data
from ..model import CertRecord, serial_to_hex
from .external_policy_client import build_request, call_callable, call_url, is_loopback, parse_response
from .gate import enterprise_only

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

CONFIG_KEY = "external_policy_config"
SERVICE_KEY = "external_policy_service"
DEFAULT_TIMEOUT = 15  # seconds
ZERO_TIME = "0001-01-01T00:00:00Z"
DEFAULT_CONFIG: dict[str, Any] = {
    "enabled": False, "external_service_url": "", "timeout": DEFAULT_TIMEOUT, "trusted_ca": "",
    "trusted_leaf_certificate_bundle": "", "vault_client_cert_bundle": "", "entity_jmespath": "",
    "group_jmespath": "", "last_updated": None, "validated": False, "last_success": None,
}
CONFIG_FIELDS: dict[str, Field] = {
    "enabled": Field(BOOL, False), "external_service_url": Field(STRING), "timeout": Field(DURATION),
    "trusted_ca": Field(STRING), "trusted_leaf_certificate_bundle": Field(STRING),
    "vault_client_cert_bundle": Field(STRING), "entity_jmespath": Field(STRING), "group_jmespath": Field(STRING),
}
# the parameters Vault names on each path; anything else is "ignored" by Vault yet passed to the service
_COMMON = {"policy": Field(STRING), "format": Field(STRING, "pem"), "private_key_format": Field(STRING, "der")}
ISSUE_FIELDS = {**_COMMON, "key_type": Field(STRING, "rsa"), "key_bits": Field(INT, 0),
                "remove_roots_from_chain": Field(BOOL, False)}
SIGN_FIELDS = {**_COMMON, "csr": Field(STRING), "remove_roots_from_chain": Field(BOOL, False)}
ICA_FIELDS = {**_COMMON, "csr": Field(STRING), "private_key_format": Field(STRING, "pem")}
MODES = (("issue", "issue", ISSUE_FIELDS), ("sign", "sign", SIGN_FIELDS), ("sign-intermediate", "ica", ICA_FIELDS))

# the double's own texts (unverified: no Vault Enterprise server could be run)
NOT_ENABLED = "the external policy service (CIEPS) is not enabled on this mount; configure it at config/external-policy"
NO_SERVICE = "no external policy service is configured: set external_service_url in config/external-policy"
NO_CERTIFICATE = "the external policy service response contained neither a certificate nor an error"
NO_ISSUER_REF = "the external policy service response did not set issuer_ref"
KEY_MISMATCH = "the certificate template from the external policy service is not for the key of the request's CSR"
_LEASE_ALPHABET = string.ascii_letters + string.digits


# -------------------------------------------------------------------------------------- configuration

def _config(backend: PkiBackend) -> dict[str, Any]:
    return {**DEFAULT_CONFIG, **backend.state.extra.get(CONFIG_KEY, {})}


def _save_config(backend: PkiBackend, config: dict[str, Any]) -> None:
    backend.state.extra[CONFIG_KEY] = dict(config)  # replaced, never mutated: snapshots share extra's values


def _service(backend: PkiBackend) -> Any:
    return getattr(backend, "external_policy", None) or backend.state.extra.get(SERVICE_KEY)


def set_external_policy(backend: PkiBackend, service: Any, *, timeout: int | None = None) -> None:
    """Plug the policy service of a mount (Python API, no HTTP).

    ``service``: a callable ``service(request: dict) -> dict`` (the CIEPS request and response
    documents; see external_policy_client.py), a URL string (``http://127.0.0.1:<port>/...`` or
    https), or ``None`` to unplug and disable. A callable or URL also sets ``enabled``; ``timeout``
    (seconds) replaces the configured one. Kept in the mount state, so it is part of snapshots: plug
    it before ``save_baseline`` for every test, or inside a test for that test only.
    """
    config = _config(backend)
    extra = dict(backend.state.extra)
    extra.pop(SERVICE_KEY, None)
    if service is None:
        config["enabled"] = False
    elif isinstance(service, str):
        config.update(enabled=True, external_service_url=service)
    elif callable(service):
        extra[SERVICE_KEY] = service
        config["enabled"] = True
    else:
        raise TypeError("service must be a callable, a URL string or None")
    if timeout is not None:
        config["timeout"] = timeout
    config.update(last_updated=backend.now(), validated=False, last_success=None)
    backend.state.extra = extra
    _save_config(backend, config)


def config_data(backend: PkiBackend) -> dict[str, Any]:
    """``config/external-policy`` as read: the settable fields plus ``external_service_last_updated``
    (RFC 3339, ``0001-01-01T00:00:00Z`` before any write), ``external_service_validated`` (a call
    succeeded since the last write), ``last_successful_request`` (RFC 3339 or ``""``), ``timeout`` in
    nanoseconds and ``vault_client_cert_bundle_no_keys`` (the client bundle's certificates only)."""
    config = _config(backend)
    bundle = config["vault_client_cert_bundle"]
    certs = "\n".join(pkix.pem_of(c) for c in pkix.parse_pem_certificates(bundle)) if bundle else ""
    return {
        "enabled": config["enabled"], "entity_jmespath": config["entity_jmespath"],
        "external_service_last_updated": format_rfc3339_nano(config["last_updated"]) if config["last_updated"]
        else ZERO_TIME,
        "external_service_url": config["external_service_url"],
        "external_service_validated": config["validated"], "group_jmespath": config["group_jmespath"],
        "last_successful_request": format_rfc3339_nano(config["last_success"]) if config["last_success"] else "",
        "timeout": config["timeout"] * SECOND, "trusted_ca": config["trusted_ca"],
        "trusted_leaf_certificate_bundle": config["trusted_leaf_certificate_bundle"],
        "vault_client_cert_bundle_no_keys": certs,
    }


def _check_pem_certs(name: str, text: str, leaves_only: bool = False) -> None:
    try:
        certs = pkix.parse_pem_certificates(text)
    except ValueError as exc:
        raise user_error(f"failed to parse {name}: {exc}") from None
    if not certs:
        raise user_error(f"failed to parse {name}: no certificates found")
    for cert in certs:
        try:
            is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        except x509.ExtensionNotFound:
            is_ca = False
        if leaves_only and is_ca:
            raise user_error(f"{name} must hold only non-CA leaf certificates")


def _validate_config(config: dict[str, Any]) -> None:
    """400s (unverified wording): URL required when enabled, https only (http allowed for loopback
    hosts: a documented divergence for test services), trust anchors for https, PEM contents."""
    from urllib.parse import urlsplit

    url = config["external_service_url"]
    if config["enabled"] and not url:
        raise user_error("external_service_url is required when enabled is true")
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise user_error(f"invalid external_service_url: {url}")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise user_error(f"external_service_url must use the https:// scheme: {url}")
        if parts.scheme == "https" and not (config["trusted_ca"] or config["trusted_leaf_certificate_bundle"]):
            raise user_error("one of trusted_ca or trusted_leaf_certificate_bundle must be specified")
    if config["trusted_ca"]:
        _check_pem_certs("trusted_ca", config["trusted_ca"])
    if config["trusted_leaf_certificate_bundle"]:
        _check_pem_certs("trusted_leaf_certificate_bundle", config["trusted_leaf_certificate_bundle"], True)
    bundle = config["vault_client_cert_bundle"]
    if bundle:
        _check_pem_certs("vault_client_cert_bundle", bundle)
        keys = [der for kind, der in pkix.pem_blocks(bundle) if kind.endswith("PRIVATE KEY")]
        if not keys:
            raise user_error("failed to parse vault_client_cert_bundle: no private key found")
        try:
            pkix.load_private_key(keys[0])
        except ValueError as exc:
            raise user_error(f"failed to parse vault_client_cert_bundle: {exc}") from None


def _write_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """Merge the sent fields into the stored configuration (unsent fields keep their values), validate,
    and answer with the configuration as read."""
    config = _config(backend)
    for name in CONFIG_FIELDS:
        value, sent = req.data.get_ok(name)
        if sent:
            config[name] = value
    config["timeout"] = config["timeout"] or DEFAULT_TIMEOUT
    _validate_config(config)
    config.update(last_updated=backend.now(), validated=False, last_success=None)
    _save_config(backend, config)
    return LogicalResponse(data=config_data(backend))


# -------------------------------------------------------------------------------------------- signing

_RSA_HASHES = {SignatureAlgorithmOID.RSA_WITH_SHA256: hashes.SHA256, SignatureAlgorithmOID.RSA_WITH_SHA384: hashes.SHA384,
               SignatureAlgorithmOID.RSA_WITH_SHA512: hashes.SHA512}
_ECDSA_HASHES = {SignatureAlgorithmOID.ECDSA_WITH_SHA256: hashes.SHA256,
                 SignatureAlgorithmOID.ECDSA_WITH_SHA384: hashes.SHA384,
                 SignatureAlgorithmOID.ECDSA_WITH_SHA512: hashes.SHA512}
_REPLACED = (ExtensionOID.AUTHORITY_KEY_IDENTIFIER, ExtensionOID.AUTHORITY_INFORMATION_ACCESS,
             ExtensionOID.CRL_DISTRIBUTION_POINTS)


def _signature(template: x509.Certificate, key: Any) -> tuple[Any, Any]:
    """``(hash, rsa_padding)``: the template's algorithm when ``key`` can make it (SHA-2 RSA PKCS#1 or
    PSS, SHA-2 ECDSA, Ed25519), else the issuer's default (:func:`x509.signature_hash`)."""
    oid = template.signature_algorithm_oid
    if isinstance(key, rsa.RSAPrivateKey):
        if oid in _RSA_HASHES:
            return _RSA_HASHES[oid](), None
        if oid == SignatureAlgorithmOID.RSASSA_PSS:
            algorithm = template.signature_hash_algorithm
            if isinstance(algorithm, (hashes.SHA256, hashes.SHA384, hashes.SHA512)):
                return algorithm, padding.PSS(mgf=padding.MGF1(algorithm), salt_length=padding.PSS.DIGEST_LENGTH)
    elif isinstance(key, ec.EllipticCurvePrivateKey) and oid in _ECDSA_HASHES:
        return _ECDSA_HASHES[oid](), None
    elif isinstance(key, ed25519.Ed25519PrivateKey) and oid == SignatureAlgorithmOID.ED25519:
        return None, None
    return pkix.signature_hash(key, 0), None


def sign_template(template: x509.Certificate, issuer: SigningIssuer) -> x509.Certificate:
    """The final certificate: the template's subject, public key, validity and extensions, with a fresh
    serial, the issuer's name, AKI = the issuer's SKI, and the issuer's AIA/CRL URLs replacing the
    template's. Raises 500 ``failed to sign the certificate template: <reason>`` (unverified)."""
    try:
        builder = (x509.CertificateBuilder().subject_name(template.subject).issuer_name(issuer.certificate.subject)
                   .public_key(template.public_key()).serial_number(pkix.new_serial())
                   .not_valid_before(template.not_valid_before_utc).not_valid_after(template.not_valid_after_utc))
        for ext in template.extensions:
            if ext.oid not in _REPLACED:
                builder = builder.add_extension(ext.value, critical=ext.critical)
        try:
            ski = issuer.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
            aki = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski)
        except x509.ExtensionNotFound:
            aki = x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.certificate.public_key())
        builder = builder.add_extension(aki, critical=False)
        for value in (pkix.aia_extension(issuer.aia), pkix.crl_distribution_points(issuer.aia)):
            if value is not None:
                builder = builder.add_extension(value, critical=False)
        algorithm, rsa_padding = _signature(template, issuer.private_key)
        return builder.sign(issuer.private_key, algorithm, rsa_padding=rsa_padding)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise internal_error(f"failed to sign the certificate template: {exc}") from None


# -------------------------------------------------------------------------------------------- issuance

@contextlib.contextmanager
def _released(lock: Any) -> Iterator[None]:
    """Release the service lock (all recursion levels) while the policy service runs, so a slow or
    re-entrant service never blocks the other requests; re-acquired afterwards."""
    depth = 0
    try:
        while True:
            lock.release()
            depth += 1
    except RuntimeError:
        pass
    try:
        yield
    finally:
        for _ in range(depth):
            lock.acquire()


def _request_csr(req: LogicalRequest, mode: str) -> tuple[Any, str, Any]:
    """``(csr, csr_pem, private_key)``: for issue a fresh key (400 key type/bits texts) and its
    empty-subject CSR; otherwise the request's CSR (400 ``"csr" is empty``, ``csr contains no data``...)."""
    if mode == "issue":
        private_key, _, _ = pkix.generate_key(req.data.get("key_type"), req.data.get("key_bits"))
        csr = pkix.build_csr(private_key, x509.Name([]))
        return csr, pkix.csr_pem(csr) + "\n", private_key
    text = req.data.get("csr")
    if text == "":
        raise user_error('"csr" is empty')
    return pkix.parse_csr(text), text, None


def _call_service(backend: PkiBackend, request: dict[str, Any], config: dict[str, Any]) -> Any:
    service = _service(backend)
    with _released(backend.service.lock):
        if service is not None:
            return call_callable(service, request, config["timeout"])
        if not config["external_service_url"]:
            raise internal_error(NO_SERVICE)
        return call_url(config["external_service_url"], request, config["timeout"],
                        trusted_ca=config["trusted_ca"], pinned_leaves=config["trusted_leaf_certificate_bundle"],
                        client_bundle=config["vault_client_cert_bundle"])


def handle_external(backend: PkiBackend, req: LogicalRequest, *, mode: str, from_path: bool) -> LogicalResponse:
    """One ``external-policy`` request; ``mode`` is ``issue``, ``sign`` or ``ica``.

    Order: enabled (400 :data:`NOT_ENABLED`) -> ``format`` (400) -> key generation / CSR (400) ->
    requested issuer (``default`` or the path's; 500 texts of issue/sign) -> policy service (500
    transport/parse texts) -> its ``error`` alone (400, the service's text verbatim) -> certificate and
    ``issuer_ref`` present (500) -> chosen issuer (500) -> template (500) -> signing -> storage.
    """
    config = _config(backend)
    if not (config["enabled"] or getattr(backend, "external_policy", None) is not None):
        raise user_error(NOT_ENABLED)
    fmt = req.data.get("format")
    if fmt not in FORMATS:
        raise user_error(FORMAT_ERROR)
    csr, csr_pem, private_key = _request_csr(req, mode)
    requested = signing_issuer(backend, req.data.get("issuer_ref") if from_path else "default")
    record = backend.state.issuers[requested.issuer_id]
    mount = backend.mount
    request = build_request(
        user_values=req.raw, csr_pem=csr_pem, mode=mode, generated_key=mode == "issue",
        policy=req.data.get("policy"), mount=mount.path, issuer_name=record.issuer_name,
        issuer_id=requested.issuer_id, issuer_pem=pkix.pem_of(requested.certificate), aia=requested.aia,
        leaf_not_after_behavior=requested.leaf_not_after_behavior,
        mount_default_ttl=format_duration(mount.effective_default_ttl() * SECOND),
        mount_max_ttl=format_duration(mount.effective_max_ttl() * SECOND))
    answer = parse_response(_call_service(backend, request, config), request["request_uuid"])
    _save_config(backend, {**_config(backend), "validated": True, "last_success": backend.now()})
    warnings = list(answer.warnings)
    if answer.error and not answer.certificate:
        raise user_error(answer.error)
    if answer.error:
        warnings.append(answer.error)
    if not answer.certificate:
        raise internal_error(NO_CERTIFICATE)
    if not answer.issuer_ref:
        raise internal_error(NO_ISSUER_REF)
    chosen = signing_issuer(backend, answer.issuer_ref)
    try:
        template = pkix.parse_pem_certificate(answer.certificate)
        template_key = template.public_key()
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise internal_error(f"failed to parse the certificate template from the external policy service: {exc}") \
            from None
    if private_key is not None and not pkix.public_keys_equal(template_key, csr.public_key()):
        raise internal_error(KEY_MISMATCH)
    certificate = sign_template(template, chosen)
    now = backend.now()
    leaf = Leaf(certificate=certificate, private_key=private_key, issuer=chosen, warnings=[])
    if mode == "ica":  # the same format as root/sign-intermediate: ca_chain starts with the new certificate
        data = intermediate_response_data(certificate, chosen, fmt)
    else:
        data = response_data(leaf, fmt=fmt, private_key_format=req.data.get("private_key_format"),
                             remove_roots_from_chain=req.data.get("remove_roots_from_chain")
                             if "remove_roots_from_chain" in req.data.schema else False)
    response = LogicalResponse(data=data, warnings=warnings)
    if answer.store_certificate:
        serial = serial_to_hex(pkix.serial_of(certificate))
        backend.state.certs[serial] = CertRecord(
            serial_number=serial, certificate=certificate, pem=pkix.pem_of(certificate), issuer_id=chosen.issuer_id,
            issued_at=now, private_key_pem=pkix.private_key_pem(private_key) if private_key is not None else None)
        if answer.generate_lease:
            suffix = "".join(secrets.choice(_LEASE_ALPHABET) for _ in range(24))
            response.lease_id = f"{mount.path}{req.path}/{suffix}"
            response.lease_duration = max(0, int((certificate.not_valid_after_utc - now).total_seconds()))
    return response


def paths(backend: PkiBackend) -> list[Path]:
    """``config/external-policy`` and the six ``external-policy`` issuance paths (update), all
    Enterprise only (enterprise/gate.py)."""

    def handler(mode: str, from_path: bool):
        return lambda req: handle_external(backend, req, mode=mode, from_path=from_path)

    routes = [Path(r"config/external-policy", dict(CONFIG_FIELDS),
                   {"read": lambda req: LogicalResponse(data=config_data(backend)),
                    "update": lambda req: _write_config(backend, req)})]
    policy = rf"(?:/(?P<policy>{NAME_RE}))?"
    for segment, mode, fields in MODES:
        routes.append(Path(rf"external-policy/{segment}{policy}", dict(fields), {"update": handler(mode, False)}))
        routes.append(Path(rf"issuer/(?P<issuer_ref>{NAME_RE})/external-policy/{segment}{policy}",
                           {**fields, "issuer_ref": Field(STRING, "default")}, {"update": handler(mode, True)}))
    return [enterprise_only(backend, route) for route in routes]


__all__ = ["set_external_policy", "config_data", "sign_template", "handle_external", "paths"]
