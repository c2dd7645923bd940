"""``revoke-cert`` (``path_acme_revoke.go``): revocation by the account that ordered the certificate
(``kid``) or by the certificate's own key (``jwk``).

Checks in order (malformed unless said): ``certificate`` present, a string, unpadded base64url, DER;
``reason`` a number and 0 (badRevocationReason ``OpenBao does not support revocation reasons (got <n>;
expected omitted or 0/unspecified): ...``); not expired (``refusing to revoke expired certificate``);
stored (serverInternal ``unable to revoke certificate: no global cert entry found``) with the same
bytes; not yet revoked (alreadyRevoked). By key: the JWS key is the certificate's (``unable to revoke
certificate: unable to verify proof of possession of private key provided by proxy: ...``); by account:
a valid account that ordered it. The answer is the revocation (``revocation_time``,
``revocation_time_rfc3339``, ``state``), the CRLs are rebuilt and OCSP says revoked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from pytest_schedpki.secrets.framework.logical import LogicalError
from pytest_schedpki.secrets.framework.router import LogicalRequest

from ..codecs.pem import go_name_problem
from ..model import serial_to_hex
from ..revocation.revoke import revoke_certificate
from ..revocation.revoke_input import go_certificate_error
from .accounts import go_type
from .context import AcmeContext
from .jws import JwsContext, raw_url_decode
from .pipeline import Answer, require_account
from .problems import AcmeProblem
from .state import store

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

_SPKI = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _certificate(data: dict[str, Any]) -> x509.Certificate:
    if "certificate" not in data:
        raise AcmeProblem.wrap("malformed", "bad request was lacking required field 'certificate'")
    text = data["certificate"]
    if not isinstance(text, str):
        raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(text)}; expected string) for field 'certificate'")
    try:
        der = raw_url_decode(text)
    except ValueError as exc:
        raise AcmeProblem.wrap("malformed", f"failed to base64 decode certificate: {exc}") from None
    try:
        return x509.load_der_x509_certificate(der)
    except ValueError:  # Go's x509.ParseCertificate text, as the PKI revoke path gives it
        reason = go_certificate_error(der)
        if reason == "x509: malformed certificate":
            reason = go_name_problem(der, certificate=True) or reason
        raise AcmeProblem.wrap("malformed", f"failed to parse certificate: {reason}") from None


def revoke_cert(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any) -> Answer:
    """``acmeRevocationHandler``."""
    data = data or {}
    cert = _certificate(data)
    if "reason" in data:
        reason = data["reason"]
        if isinstance(reason, bool) or not isinstance(reason, (int, float)):
            raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(reason)}; expected float64) for field "
                                                "'reason'")
        if int(reason) != 0:
            raise AcmeProblem.wrap("badRevocationReason", f"OpenBao does not support revocation reasons (got "
                                                          f"{int(reason)}; expected omitted or 0/unspecified)")
    if cert.not_valid_after_utc < backend.now():
        raise AcmeProblem.wrap("malformed", "refusing to revoke expired certificate")
    serial = serial_to_hex(cert.serial_number)
    record = backend.state.certs.get(serial)
    if record is None or not record.stored:
        raise AcmeProblem.wrap("serverInternal", "unable to revoke certificate: no global cert entry found")
    der = serialization.Encoding.DER
    if record.certificate.public_bytes(der) != cert.public_bytes(der):
        raise AcmeProblem.wrap("malformed", "unable to revoke certificate: supplied certificate does not match CA's "
                                            "stored value")
    if record.revocation_time is not None:
        raise AcmeProblem.wrap("alreadyRevoked", "unable to revoke certificate")
    if not user.existing:
        if user.public_key().public_bytes(*_SPKI) != cert.public_key().public_bytes(*_SPKI):
            raise AcmeProblem.wrap("malformed", "unable to revoke certificate: unable to verify proof of possession of "
                                                "private key provided by proxy: provided private key does not match "
                                                "certificate's public key")
    else:
        try:
            require_account(backend, ctx, user)
        except AcmeProblem as exc:
            raise AcmeProblem(exc.name, f"failed to lookup account: {exc.detail}") from None
        if f"{user.kid}/{serial}" not in store(backend).certs:
            raise AcmeProblem.wrap("malformed", "unable to revoke certificate: no certificate with this serial was "
                                                "issued for this account")
    try:
        response = revoke_certificate(backend, cert)
    except LogicalError as exc:
        raise AcmeProblem("serverInternal", exc.errors[0] if exc.errors else str(exc)) from None
    return Answer(data=response.data or {})
