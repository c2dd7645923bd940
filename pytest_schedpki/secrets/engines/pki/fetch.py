"""Fetching CA certificates and the mount's AIA configuration: ``ca``, ``ca/pem``, ``ca_chain``,
``cert/ca``, ``cert/ca_chain``, ``cert/ca/raw[/pem]``, ``issuer/:ref/json|pem|der`` and ``config/urls``.

Bodies follow OpenBao byte for byte: raw PEMs of the mount-level paths have no trailing newline,
the ``issuer/:ref/...`` ones end with ``\\n`` (the issuer's stored form); with no default issuer the
raw paths answer 204 with their content type and an empty body.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization

from pytest_schedpki.secrets.framework.fields import BOOL, COMMA_STRING_SLICE, STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalError, LogicalResponse, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .authority.issuers import REF, IssuerNotFound, bad_url, chain_for, resolve_issuer
from .codecs.x509 import pem_of

if TYPE_CHECKING:  # pragma: no cover
    from .backend import PkiBackend

PKIX_CERT = "application/pkix-cert"
PEM_CHAIN = "application/pem-certificate-chain"


def _raw(body: bytes, content_type: str) -> LogicalResponse:
    return LogicalResponse(raw=(body, content_type), status=200 if body else 204)


def _mount_ca(backend: PkiBackend, req: LogicalRequest, form: str) -> LogicalResponse:
    """``ca`` (DER), ``ca/pem`` and ``cert/ca/raw/pem`` (PEM), ``cert/ca/raw`` (DER), ``ca_chain``
    (PEM chain joined by ``\\n``, served as ``application/pkix-cert`` like upstream), and the JSON
    ``cert/ca`` / ``cert/ca_chain`` (400 ``no default issuer currently configured`` without one)."""
    try:
        issuer = resolve_issuer(backend.state, "default")
    except IssuerNotFound as exc:
        if form in ("json", "json_chain"):
            raise user_error(exc.message) from None
        return _raw(b"", PEM_CHAIN if form == "pem" else PKIX_CERT)
    chain = "\n".join(chain_for(backend.state, issuer))
    if form == "der":
        return _raw(issuer.certificate.public_bytes(serialization.Encoding.DER), PKIX_CERT)
    if form == "pem":
        return _raw(pem_of(issuer.certificate).encode(), PEM_CHAIN)
    if form == "chain":
        return _raw(chain.encode(), PKIX_CERT)
    data: dict[str, Any] = {"certificate": pem_of(issuer.certificate), "revocation_time": 0,
                            "revocation_time_rfc3339": ""}
    if form == "json_chain":
        data.update(certificate=chain, ca_chain=chain)
    return LogicalResponse(data=data)


def _issuer_raw(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``issuer/:ref/json`` (``certificate``, ``ca_chain``, ``issuer_id``, ``issuer_name``),
    ``/pem`` and ``/der``. Unknown issuer: 500 plain ``unable to find PKI issuer for reference: <ref>``."""
    try:
        issuer = resolve_issuer(backend.state, req.data.get("issuer_ref"))
    except IssuerNotFound as exc:
        raise LogicalError(500, [exc.message]) from None
    form = req.data.get("form")
    if form == "der":
        return _raw(issuer.certificate.public_bytes(serialization.Encoding.DER), PKIX_CERT)
    if form == "pem":
        return _raw((pem_of(issuer.certificate) + "\n").encode(), PEM_CHAIN)
    return LogicalResponse(data={"certificate": pem_of(issuer.certificate) + "\n",
                                 "ca_chain": [p + "\n" for p in chain_for(backend.state, issuer)],
                                 "issuer_id": issuer.issuer_id, "issuer_name": issuer.issuer_name})


URL_FIELDS = {
    "issuing_certificates": Field(COMMA_STRING_SLICE), "crl_distribution_points": Field(COMMA_STRING_SLICE),
    "delta_crl_distribution_points": Field(COMMA_STRING_SLICE), "ocsp_servers": Field(COMMA_STRING_SLICE),
    "enable_templating": Field(BOOL, False),
}


def _urls_data(config: dict[str, Any]) -> dict[str, Any]:
    return {k: (list(config.get(k) or []) if k != "enable_templating" else bool(config.get(k))) for k in URL_FIELDS}


def _read_urls(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data=_urls_data(backend.state.config_urls))


def _write_urls(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``config/urls`` POST: sent fields replace stored ones (others stay), answered 200 with the
    whole record. 400 ``invalid URL found in Authority Information Access (AIA) parameter <field>:
    <url>`` unless ``enable_templating``."""
    data = req.data
    config = dict(backend.state.config_urls)
    for name in URL_FIELDS:
        if data.sent(name):
            config[name] = data.get(name)
    if not config.get("enable_templating"):
        for name in ("issuing_certificates", "crl_distribution_points", "delta_crl_distribution_points",
                     "ocsp_servers"):
            bad = bad_url(list(config.get(name) or []))
            if bad:
                raise user_error(f"invalid URL found in Authority Information Access (AIA) parameter {name}: {bad}")
    backend.state.config_urls = config
    return LogicalResponse(data=_urls_data(config))


def paths(backend: PkiBackend) -> list[Path]:
    """The CA fetch paths (unauthenticated, as upstream's ``cert/*``, ``ca``, ``ca/pem``, ``ca_chain``,
    ``issuer/+/pem|der|json``) and ``config/urls``."""
    def ca(form: str) -> dict[str, Any]:
        return {"read": partial(_mount_ca, backend, form=form)}

    return [
        Path(r"ca", {}, ca("der"), unauthenticated=True),
        Path(r"ca/pem", {}, ca("pem"), unauthenticated=True),
        Path(r"ca_chain", {}, ca("chain"), unauthenticated=True),
        Path(r"cert/ca", {}, ca("json"), unauthenticated=True),
        Path(r"cert/ca_chain", {}, ca("json_chain"), unauthenticated=True),
        Path(r"cert/ca/raw", {}, ca("der"), unauthenticated=True),
        Path(r"cert/ca/raw/pem", {}, ca("pem"), unauthenticated=True),
        Path(rf"issuer/{REF}/(?P<form>json|pem|der)", {"issuer_ref": Field(STRING), "form": Field(STRING)},
             {"read": partial(_issuer_raw, backend)}, unauthenticated=True),
        Path(r"config/urls", URL_FIELDS, {"read": partial(_read_urls, backend),
                                          "update": partial(_write_urls, backend)}),
    ]
