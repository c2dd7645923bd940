"""The CIEPS wire protocol (Vault Enterprise's Certificate Issuance External Policy Service, version 1),
EMULATED: the request the double sends, the two transports, and the response it accepts.

Sources: https://developer.hashicorp.com/vault/docs/secrets/pki/cieps (webhook format) and the Go
structs of the Vault SDK, ``sdk/helper/certutil/cieps.go`` (``CIEPSRequest``/``CIEPSResponse``, whose
JSON names win where the prose differs: the namespace key is ``ns``).

Request (``application/json`` POST body, or the dict given to a Python callable)::

    {"request_version": 1, "request_uuid": "<uuid4>", "synchronous": true,
     "user_request_key_values": {<the request body verbatim>, "csr": "<PEM>"},
     "vault_request_values": {"policy_name": "<policy>" (omitted when empty), "mount": "pki/",
        "ns": "", "vault_is_performance_standby": false, "vault_is_performance_secondary": false,
        "issuance_mode": "issue"|"sign"|"ica", "vault_generated_private_key": <bool>,
        "requested_issuer_name": "...", "requested_issuer_id": "...", "requested_issuer_cert": "<PEM>",
        "requested_issuance_config": {"aia_values": {"issuing_certificates": [...],
            "crl_distribution_points": [...], "ocsp_servers": [...]}, "leaf_not_after_behavior": "err",
            "mount_default_ttl": "768h0m0s", "mount_max_ttl": "768h0m0s"}}}

``identity_request_key_values`` is omitted: the double's tokens come from the token store and have no
identity entity, the case in which the CIEPS document says Vault omits it.

Response (HTTP 200, JSON; unknown keys are refused as Vault's decoder does)::

    {"request_uuid": "<same uuid>", "error": "", "warnings": [], "certificate": "<PEM template>",
     "issuer_ref": "<issuer id or name>", "store_certificate": false, "generate_lease": false}

Failures raise :class:`~..wire.LogicalError` (texts are the double's own, unverified against a Vault
Enterprise server): 500 ``failed to call the external policy service: <Go-like transport error>``,
500 ``external policy service returned HTTP status <n>`` (its body is never shown, as documented),
500 ``failed to parse the external policy service response: <reason>``.
"""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import os
import ssl
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.secrets.framework.fields import JsonNumber
from pytest_schedpki.secrets.framework.logical import internal_error

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
RESPONSE_FIELDS = {"request_uuid": str, "error": str, "warnings": list, "certificate": str, "issuer_ref": str,
                   "store_certificate": bool, "generate_lease": bool}
_GO_TYPES = {str: "string", list: "[]string", bool: "bool"}
PolicyService = Callable[[dict[str, Any]], Any]


@dataclass
class CiepsResponse:
    """A parsed, type-checked CIEPS response (see the module docstring for the wire names)."""

    request_uuid: str = ""
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    certificate: str = ""
    issuer_ref: str = ""
    store_certificate: bool = False
    generate_lease: bool = False


def _plain(value: Any) -> Any:
    """Request values as JSON would carry them again (numbers kept as text become numbers)."""
    if isinstance(value, JsonNumber):
        return json.loads(str(value))
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def build_request(*, user_values: dict[str, Any], csr_pem: str, mode: str, generated_key: bool, policy: str,
                  mount: str, issuer_name: str, issuer_id: str, issuer_pem: str, aia: dict[str, list[str]],
                  leaf_not_after_behavior: str, mount_default_ttl: str, mount_max_ttl: str) -> dict[str, Any]:
    """The CIEPS request document (version 1) for one external-policy call; ``mode`` is ``issue``,
    ``sign`` or ``ica``; ``user_values`` the raw request body (``csr`` is set to ``csr_pem``)."""
    vault_values: dict[str, Any] = {}
    if policy:
        vault_values["policy_name"] = policy
    vault_values.update({
        "mount": mount, "ns": "", "vault_is_performance_standby": False, "vault_is_performance_secondary": False,
        "issuance_mode": mode, "vault_generated_private_key": generated_key,
        "requested_issuer_name": issuer_name, "requested_issuer_id": issuer_id, "requested_issuer_cert": issuer_pem,
        "requested_issuance_config": {
            "aia_values": {k: list(aia.get(k) or []) for k in (
                "issuing_certificates", "crl_distribution_points", "ocsp_servers")},
            "leaf_not_after_behavior": leaf_not_after_behavior,
            "mount_default_ttl": mount_default_ttl, "mount_max_ttl": mount_max_ttl},
    })
    return {"request_version": 1, "request_uuid": str(uuid.uuid4()), "synchronous": True,
            "user_request_key_values": {**_plain(user_values), "csr": csr_pem},
            "vault_request_values": vault_values}


# ------------------------------------------------------------------------------------------- transport

def _call_failed(reason: str) -> Exception:
    return internal_error(f"failed to call the external policy service: {reason}")


def call_callable(service: PolicyService, request: dict[str, Any], timeout: float) -> Any:
    """Run a Python policy service on a copy of ``request`` in a worker thread, waiting at most
    ``timeout`` seconds. Returns what it returned (a dict, or JSON text/bytes). An exception or a
    timeout becomes the 500 transport failure."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = service(json.loads(json.dumps(request)))
        except BaseException as exc:  # the test's service failed: report it like an unreachable service
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="schedpki-cieps-callable", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise _call_failed("context deadline exceeded (the policy callable did not return in time)")
    if "error" in outcome:
        exc = outcome["error"]
        raise _call_failed(f"policy callable raised {type(exc).__name__}: {exc}")
    return outcome.get("value")


def _ssl_context(trusted_ca: str, pinned_leaves: str, client_bundle: str) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=trusted_ca) if trusted_ca else ssl.create_default_context()
    if pinned_leaves and not trusted_ca:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # pinning is checked on the peer certificate itself
    if client_bundle:
        handle, name = tempfile.mkstemp(suffix=".pem")
        try:
            with os.fdopen(handle, "w") as out:
                out.write(client_bundle)
            context.load_cert_chain(name)
        finally:
            os.unlink(name)
    return context


def _pinned_der(pinned_leaves: str) -> set[bytes]:
    certs = x509.load_pem_x509_certificates(pinned_leaves.encode())
    return {c.public_bytes(serialization.Encoding.DER) for c in certs}


def call_url(url: str, request: dict[str, Any], timeout: float, *, trusted_ca: str = "", pinned_leaves: str = "",
             client_bundle: str = "") -> bytes:
    """POST ``request`` as JSON to ``url`` (http or https); returns the 200 body. Redirects are not
    followed and environment proxies are not used (the service must be reached directly)."""
    parts = urllib.parse.urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    host, port = parts.hostname or "", parts.port
    body = json.dumps(request, separators=(",", ":")).encode()
    quoted = f'Post "{url}"'
    try:
        if parts.scheme == "https":
            context = _ssl_context(trusted_ca, pinned_leaves, client_bundle)
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
        try:
            conn.connect()
            if parts.scheme == "https" and pinned_leaves:
                peer = conn.sock.getpeercert(binary_form=True) if conn.sock is not None else None
                if peer not in _pinned_der(pinned_leaves):
                    raise _call_failed(f"{quoted}: tls: server certificate is not in trusted_leaf_certificate_bundle")
            conn.request("POST", target, body=body, headers={"Content-Type": "application/json",
                                                             "Accept": "application/json"})
            response = conn.getresponse()
            payload = response.read(MAX_RESPONSE_BYTES + 1)
        finally:
            conn.close()
    except (TimeoutError, ssl.SSLError, ConnectionError, OSError, http.client.HTTPException, ValueError) as exc:
        raise _call_failed(f"{quoted}: {_go_like(exc, host, port)}") from None
    if response.status != 200:
        raise internal_error(f"external policy service returned HTTP status {response.status}")
    if len(payload) > MAX_RESPONSE_BYTES:
        raise internal_error("failed to parse the external policy service response: response too large")
    return payload


def _go_like(exc: BaseException, host: str, port: int | None) -> str:
    if isinstance(exc, TimeoutError):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    if isinstance(exc, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    if isinstance(exc, ssl.SSLError):
        return f"tls: {exc.reason or exc}"
    return str(exc) or type(exc).__name__


# ------------------------------------------------------------------------------------------- response

def _parse_failed(reason: str) -> Exception:
    return internal_error(f"failed to parse the external policy service response: {reason}")


def parse_response(payload: Any, request_uuid: str) -> CiepsResponse:
    """Decode and type-check a CIEPS response (``payload``: JSON bytes/text or an already decoded
    dict). Raises the 500 parse failure for bad JSON, unknown keys (``json: unknown field "<k>"``),
    wrong types and a ``request_uuid`` other than the request's."""
    if isinstance(payload, (bytes, bytearray, str)):
        try:
            payload = json.loads(payload)
        except ValueError as exc:
            raise _parse_failed(f"invalid JSON: {exc}") from None
    if not isinstance(payload, dict):
        kind = "array" if isinstance(payload, list) else "null" if payload is None else type(payload).__name__
        raise _parse_failed(f"json: cannot unmarshal {kind} into Go value of type certutil.CIEPSResponse")
    parsed = CiepsResponse()
    for key, value in payload.items():
        expected = RESPONSE_FIELDS.get(key)
        if expected is None:
            raise _parse_failed(f'json: unknown field "{key}"')
        if value is None:
            continue
        ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
        if expected is list:
            ok = ok and all(isinstance(v, str) for v in value)
        if not ok:
            raise _parse_failed(f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
                                f"CIEPSResponse.{key} of type {_GO_TYPES[expected]}")
        setattr(parsed, key, list(value) if expected is list else value)
    if parsed.request_uuid != request_uuid:
        raise _parse_failed(f'request_uuid "{parsed.request_uuid}" does not match the request\'s "{request_uuid}"')
    return parsed


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# ------------------------------------------------------------------------------- for policy services

def csr_of(request: dict[str, Any]) -> x509.CertificateSigningRequest:
    """The CSR of a CIEPS request (``user_request_key_values.csr``), parsed."""
    return x509.load_pem_x509_csr(request["user_request_key_values"]["csr"].encode())


def certificate_template(request: dict[str, Any], *, subject: x509.Name | None = None,
                         sans: list[x509.GeneralName] | None = None, ttl: int = 3600,
                         not_before: datetime.datetime | None = None, not_after: datetime.datetime | None = None,
                         extensions: list[x509.Extension] | None = None) -> str:
    """A PEM certificate template for a CIEPS response, as a policy service would build it: the
    CSR's public key, ``subject`` (default: the CSR's), ``sans`` (a SubjectAlternativeName),
    validity ``not_before`` (default now - 30 s) to ``not_after`` (default ``not_before`` + 30 s +
    ``ttl`` seconds) and any ``extensions``. Signed by a throwaway key: the double (like Vault)
    discards that signature and signs with the chosen issuer."""
    csr = csr_of(request)
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    start = not_before or now - datetime.timedelta(seconds=30)
    end = not_after or start + datetime.timedelta(seconds=30 + ttl)
    name = csr.subject if subject is None else subject
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(x509.Name([]))
               .public_key(csr.public_key()).serial_number(2).not_valid_before(start).not_valid_after(end))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=len(name) == 0)
    for ext in extensions or []:
        builder = builder.add_extension(ext.value, critical=ext.critical)
    throwaway = ec.generate_private_key(ec.SECP256R1())
    return builder.sign(throwaway, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


__all__ = ["CiepsResponse", "build_request", "call_callable", "call_url", "parse_response", "csr_of",
           "certificate_template", "is_loopback", "PolicyService"]
