"""Adding issuers to a mount and importing PEM bundles: ``intermediate/set-signed``, ``config/ca``,
``issuers/import/cert`` and ``issuers/import/bundle`` (OpenBao's ``pathImportIssuers``).

:func:`add_issuer` is also what root generation uses to store its new issuer.
"""

from __future__ import annotations

import base64
import uuid
from functools import partial
from typing import TYPE_CHECKING

from cryptography import x509 as cx509

from pytest_schedpki.secrets.framework.fields import STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..codecs.gokey import public_key_or_none
from ..codecs.goparse import certificate_error
from ..codecs.pem import load_der_certificate, name_error, serial_error
from ..codecs.x509 import (
    go_name_problem,
    invalid_public_key,
    key_type_of,
    load_private_key,
    pem_sequence,
    public_keys_equal,
)
from ..model import Issuer, PkiState
from .issuers import ALL_USAGES, rebuild_chains
from .keys import import_key

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

AIA_WARNING = ("This mount hasn't configured any authority information access (AIA) fields; this may make it harder "
               "for systems to find missing certificates in the chain or to validate revocation status of "
               "certificates. Consider updating /config/urls or the newly generated issuer with this information.")


class ImportRefused(ValueError):
    """A certificate ``importIssuer`` refuses; ``str()`` is OpenBao's text."""


def aia_configured(state: PkiState) -> bool:
    """Whether ``config/urls`` has any issuing certificate, CRL distribution point or OCSP URL."""
    urls = state.config_urls
    return bool(urls.get("issuing_certificates") or urls.get("crl_distribution_points") or urls.get("ocsp_servers"))


def add_issuer(state: PkiState, cert: cx509.Certificate, issuer_name: str = "",
               revocation_signature_algorithm: str = "") -> tuple[Issuer, bool]:
    """``importIssuer``: ``(issuer, existed)``. The same certificate (same DER) returns the existing
    issuer. A new issuer is linked to the stored key with its public key, gets every usage (minus
    ``crl-signing`` when its KeyUsage lacks CRLSign) and becomes the default when the mount has none
    and it has a key. Raises :class:`ImportRefused` ``Refusing to import non-CA certificate`` or
    ``another issuer is using the requested name: <name>``."""
    for issuer in state.issuers.values():
        if issuer.certificate == cert:
            return issuer, True
    try:
        constraints = cert.extensions.get_extension_for_class(cx509.BasicConstraints).value
    except cx509.ExtensionNotFound:
        constraints = None
    if constraints is None or not constraints.ca:
        raise ImportRefused("Refusing to import non-CA certificate")
    if key_type_of(public_key_or_none(cert))[0] == "":
        raise ImportRefused("Refusing to import CA certificate with empty PublicKey. This usually means the "
                            "SubjectPublicKeyInfo field has an OID not recognized by Go, such as "
                            "1.2.840.113549.1.1.10 for rsaPSS.")
    if issuer_name and any(i.issuer_name == issuer_name for i in state.issuers.values()):
        raise ImportRefused(f"another issuer is using the requested name: {issuer_name}")
    usage = ALL_USAGES
    try:
        if not cert.extensions.get_extension_for_class(cx509.KeyUsage).value.crl_sign:
            usage = usage.replace("crl-signing,", "")
    except cx509.ExtensionNotFound:
        usage = usage.replace("crl-signing,", "")
    key_id = next((k.key_id for k in sorted(state.keys.values(), key=lambda k: k.key_id)
                   if public_keys_equal(k.private_key.public_key(), cert.public_key())), None)
    had_issuers = bool(state.issuers)
    issuer = Issuer(issuer_id=str(uuid.uuid4()), issuer_name=issuer_name, certificate=cert, key_id=key_id,
                    usage=usage, revocation_signature_algorithm=revocation_signature_algorithm)
    state.issuers[issuer.issuer_id] = issuer
    rebuild_chains(state)
    if key_id and (not had_issuers or state.default_issuer_id not in state.issuers):
        state.default_issuer_id = issuer.issuer_id
    return issuer, False


def _block_pem(kind: str, der: bytes) -> str:
    body = base64.b64encode(der).decode()
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----\n"


def import_bundle(backend: PkiBackend, bundle: str, keys_allowed: bool) -> LogicalResponse:
    """Import the keys and CA certificates of a PEM bundle; the response lists what was created and
    what existed. 400 errors: ``provided data for import was too short; perhaps a path was passed to
    the API rather than the contents of a PEM file`` (< 75 chars), ``error when parsing block <n>:
    invalid PEM data``, ``private keys found in the PEM bundle but not allowed by the path; use
    /issuers/import/bundle``, ``Error parsing key <i>: <why>``, ``Error parsing issuer <i>: <why>\\n<pem>``."""
    state = backend.state
    if len(bundle) < 75:
        raise user_error("provided data for import was too short; perhaps a path was passed to the API rather than "
                         "the contents of a PEM file")
    try:
        blocks = pem_sequence(bundle)
    except ValueError as exc:
        raise user_error(str(exc)) from None
    certs = [(k, d) for k, d in blocks if k in ("CERTIFICATE", "X509 CERTIFICATE")]
    keys = [(k, d) for k, d in blocks if k not in ("CERTIFICATE", "X509 CERTIFICATE", "CRL", "X509 CRL",
                                                   "EC PARAMS", "EC PARAMETERS")]
    if keys and not keys_allowed:
        raise user_error("private keys found in the PEM bundle but not allowed by the path; use /issuers/import/bundle")
    created_keys: list[str] = []
    existing_keys: list[str] = []
    for index, (_, der) in enumerate(keys):
        try:
            private_key = load_private_key(der)
        except Exception as exc:  # cryptography raises ValueError, TypeError or UnsupportedAlgorithm
            raise user_error(f"Error parsing key {index}: failed to parse PEM block: {exc}") from None
        key, existed = import_key(state, private_key)
        (existing_keys if existed else created_keys).append(key.key_id)
    created: list[str] = []
    existing: list[str] = []
    mapping: dict[str, str] = {}
    for index, (kind, der) in enumerate(certs):
        try:
            cert = load_der_certificate(der)
            # Go's parser checks these at once, the serial first
            problem = (serial_error(cert) or name_error(cert, der) or invalid_public_key(cert, "")
                       or certificate_error(der))
            if problem:
                raise ImportRefused(problem)
            issuer, existed = add_issuer(state, cert)
        except ImportRefused as exc:
            raise user_error(f"Error parsing issuer {index}: {exc}\n{_block_pem(kind, der)}") from None
        except cx509.InvalidVersion:  # Go: a version field above v3
            raise user_error(f"Error parsing issuer {index}: x509: invalid version\n{_block_pem(kind, der)}") from None
        except ValueError:
            why = certificate_error(der) or go_name_problem(der, certificate=True) or "x509: malformed certificate"
            try:  # a key Go's parser refuses (cryptography only fails at public_key())
                why = invalid_public_key(load_der_certificate(der), why) or why
            except ValueError:
                pass
            raise user_error(f"Error parsing issuer {index}: {why}\n{_block_pem(kind, der)}") from None
        mapping[issuer.issuer_id] = issuer.key_id or ""
        (existing if existed else created).append(issuer.issuer_id)
    response = LogicalResponse(data={"mapping": mapping, "imported_keys": created_keys or None,
                                     "imported_issuers": created or None, "existing_keys": existing_keys or None,
                                     "existing_issuers": existing or None})
    with_keys = [i for i in created if mapping[i]]
    if created and state.default_follows_latest_issuer:
        if len(with_keys) == 1:
            state.default_issuer_id = with_keys[0]
        elif len(with_keys) > 1:
            response.add_warning("Default issuer left unchanged: could not select new issuer automatically as multiple "
                                 "imported issuers had key material in Vault.")
    default = state.default_issuer_id
    if default and default in mapping and not mapping[default]:
        response.add_warning("The default issuer has no key associated with it. Some operations like issuing "
                             "certificates and signing CRLs will be unavailable with the requested default issuer "
                             "until a key is imported or the default issuer is changed.")
    if default and len(created) > 1 and len(with_keys) > 1 and default in created:
        response.add_warning("The imported bundle contained multiple certs matching keys, the default issuer that was "
                             "selected should be verified and manually changed if incorrect.")
    if not aia_configured(state):
        response.add_warning(AIA_WARNING)
    if created:
        backend.issuers_changed()
    return response


def _import(backend: PkiBackend, req: LogicalRequest, field: str, keys_allowed: bool) -> LogicalResponse:
    value = req.data.get(field)
    if not value:
        raise user_error("'pem_bundle' and 'certificate' parameters were empty")
    return import_bundle(backend, value, keys_allowed and field == "pem_bundle")


def _import_typed(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return _import(backend, req, "pem_bundle", req.data.get("type") == "bundle")


def paths(backend: PkiBackend) -> list[Path]:
    """``intermediate/set-signed`` (``certificate``), ``config/ca`` (``pem_bundle``, keys allowed),
    ``issuers/import/cert`` and ``issuers/import/bundle`` (``pem_bundle``)."""
    return [
        Path(r"intermediate/set-signed", {"certificate": Field(STRING)},
             {"update": partial(_import, backend, field="certificate", keys_allowed=False)}),
        Path(r"config/ca", {"pem_bundle": Field(STRING)},
             {"update": partial(_import, backend, field="pem_bundle", keys_allowed=True)}),
        Path(r"issuers/import/(?P<type>cert|bundle)", {"type": Field(STRING), "pem_bundle": Field(STRING)},
             {"update": partial(_import_typed, backend)}),
    ]

