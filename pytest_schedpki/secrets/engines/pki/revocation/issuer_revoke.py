"""Revoking an issuer: ``POST issuer/:ref/revoke`` (hvac ``revoke_issuer``), as OpenBao 2.7.2 does it
(``path_manage_issuers.go``), checked against the real server. Other operations answer 405.

* Unknown reference: 500 multierror ``unable to find PKI issuer for reference: <ref>`` (``default``
  without a default issuer: ``no default issuer currently configured``).
* An issuer already revoked: 200 with its ``issuer/:ref`` read data and no warning (the original
  revocation time; nothing is rebuilt).
* Otherwise the issuer is marked ``revoked: true`` with ``revocation_time`` (int unix seconds) and
  ``revocation_time_rfc3339`` (RFC 3339 UTC) from the double's clock, and loses the
  ``issuing-certificates`` usage (``usage`` becomes e.g. ``crl-signing,ocsp-signing,read-only``); from
  then on signing with it (issue, sign, sign-intermediate, sign-verbatim, sign-self-issued, directly
  or as the default) answers 500 ``error fetching CA certificate: error while attempting to use issuer
  <id>: requested usage issuing-certificates for issuer [id:<id> / name:<name>] but only had usage
  crl-signing,ocsp-signing,read-only``, and giving the usage back answers 400 ``This issuer was
  revoked; unable to modify its usage to include certificate signing again. ...``. It still signs CRLs.
* When the mount stored the issuer's certificate (a root it generated, an intermediate it signed),
  that stored certificate gets a revocation entry: listed by ``LIST certs/revoked``, and
  ``cert/:serial`` shows the revocation times without ``issuer_id``. ``revoke`` of its serial still
  answers 400 ``adding issuer (id: <id>) to its own CRL is not allowed``.
* Every CRL is rebuilt (whatever ``auto_rebuild`` says): the revoked issuer's serial is listed, with
  its revocation time, on the CRL of every OTHER issuer of the mount whose key verifies its
  certificate (its parent), never on its own CRL.
* The default issuer stays the default (nothing refuses to revoke it).

Success: 200 with the ``issuer/:ref`` data (PSS warning first when relevant), then
``Warning <n> during CRL rebuild: <w>`` per rebuild warning, then, in this order when they apply:
``This issuer is a self-signed (potentially root) certificate. ...``, ``This issuer lacks another
parent issuer within the mount. ...`` and ``This issuer is currently configured as the default issuer
for this mount; ...`` (texts in the constants below).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization

from pytest_schedpki.secrets.framework.fields import STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalResponse
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..authority.issuers import REF, USAGE_NAMES, _read_response, normalize_ref, resolve_issuer
from ..codecs.x509 import serial_of
from ..model import Issuer, serial_to_hex
from .crl import rebuild_crls, rebuild_warnings
from .revoke_input import check_signature_from

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

SELF_SIGNED = ("This issuer is a self-signed (potentially root) certificate. This means it may not be considered "
               "revoked if there is not an external, cross-signed variant of this certificate. This issuer's serial "
               "number will not appear on its own CRL.")
NO_PARENT = ("This issuer lacks another parent issuer within the mount. This means it will not appear on any other "
             "CRLs and may not be considered revoked by clients. Consider adding this issuer to its issuer's CRL as "
             "well if it is not self-signed.")
IS_DEFAULT = ("This issuer is currently configured as the default issuer for this mount; operations such as "
              "certificate issuance may not work until a new default issuer is selected.")


def _der(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def revoke_issuer(backend: PkiBackend, issuer: Issuer) -> LogicalResponse:
    """Revoke ``issuer`` at ``backend.now()`` (module docstring) and answer as upstream. Usable
    directly by fixtures: ``revoke_issuer(backend, resolve_issuer(backend.state, "root"))``."""
    state = backend.state
    if issuer.revoked:
        return _read_response(state, issuer)
    now = backend.now()
    usage = ",".join(u for u in USAGE_NAMES if u in issuer.usage.split(",") and u != "issuing-certificates")
    revoked = replace(issuer, ca_chain=list(issuer.ca_chain), revoked=True, revocation_time=now, usage=usage)
    state.issuers[issuer.issuer_id] = revoked
    serial = serial_to_hex(serial_of(issuer.certificate))
    record = state.certs.get(serial)
    if record is not None and record.stored and _der(record.certificate) == _der(issuer.certificate):
        # upstream writes a bare revocation entry (no issuer association) for the stored copy
        state.certs[serial] = replace(record, revocation_time=now, issuer_id="")
    warnings = rebuild_crls(backend, force=False)
    response = _read_response(state, revoked)
    response.warnings.extend(rebuild_warnings(warnings))
    self_signed = other_parent = False
    for other_id in sorted(state.issuers):
        if check_signature_from(issuer.certificate, state.issuers[other_id].certificate):
            if other_id == issuer.issuer_id:
                self_signed = True
            else:
                other_parent = True
    if self_signed:
        response.add_warning(SELF_SIGNED)
    if not other_parent:
        response.add_warning(NO_PARENT)
    if state.default_issuer_id == issuer.issuer_id:
        response.add_warning(IS_DEFAULT)
    return response


def _revoke(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``POST issuer/:ref/revoke``: resolve the reference (500 when unknown) and revoke."""
    issuer = resolve_issuer(backend.state, normalize_ref(req.data.get("issuer_ref")))
    return revoke_issuer(backend, issuer)


def paths(backend: PkiBackend) -> list[Path]:
    """``issuer/:ref/revoke`` (update only; needs a token, no sudo)."""
    return [Path(rf"issuer/{REF}/revoke", {"issuer_ref": Field(STRING, "default")},
                 {"update": partial(_revoke, backend)})]
