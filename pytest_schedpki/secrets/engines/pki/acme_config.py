"""``GET config/acme``: the mount's ACME configuration, which the double reads as OpenBao's defaults
(ACME disabled). The double serves no ACME protocol, so the configuration cannot be written (405);
``bao pki health-check`` reads it to report its two ACME checks as ``not_applicable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.logical import LogicalResponse
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

if TYPE_CHECKING:  # pragma: no cover
    from .backend import PkiBackend

ACME_DEFAULTS = {"allow_role_ext_key_usage": False, "allowed_issuers": ["*"], "allowed_roles": ["*"],
                 "default_directory_policy": "sign-verbatim", "dns_resolver": "", "eab_policy": "not-required",
                 "enabled": False}


def _read(req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data={k: list(v) if isinstance(v, list) else v for k, v in ACME_DEFAULTS.items()})


def paths(backend: PkiBackend) -> list[Path]:
    return [Path("config/acme", {}, {"read": _read})]
