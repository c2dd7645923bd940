"""The PKI engine of one mount: its state and its routes.

Routes come from the modules that own them (each exports ``paths(backend) -> list[Path]``); order
matters only where two patterns could match the same path (specific ones first).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.router import Router

from .model import PkiState

if TYPE_CHECKING:  # pragma: no cover
    from pytest_schedpki.secrets.service import Mount, SecretsService

# modules under pytest_schedpki.secrets.engines.pki that contribute paths, in routing order
PATH_MODULES = ("authority.issuers", "authority.keys", "authority.ca_generate", "authority.ca_import", "revocation.crl", "fetch", "issuance.roles", "issuance.issue", "issuance.sign_intermediate", "issuance.sign_self_issued", "issuance.sign_verbatim", "certs", "revocation.revoke", "enterprise.cert_metadata", "enterprise.external_policy", "revocation.tidy", "revocation.issuer_revoke")


class PkiBackend:
    """One mount's PKI engine: ``state`` (:class:`PkiState`) and ``router``.

    ``service`` gives the clock (``service.clock.now()``) and ``mount`` the TTL defaults
    (``mount.effective_default_ttl()``, ``mount.effective_max_ttl()``, seconds).
    """

    def __init__(self, service: SecretsService, mount: Mount):
        self.service = service
        self.mount = mount
        self.state = PkiState()
        paths = []
        for name in PATH_MODULES:
            paths.extend(importlib.import_module(f"{__package__}.{name}").paths(self))
        self.router = Router(paths)

    def now(self):
        """The double's clock (aware UTC datetime)."""
        return self.service.clock.now()

    def snapshot(self) -> Any:
        return self.state.copy()

    def restore(self, snapshot: Any) -> None:
        self.state = snapshot.copy() if snapshot is not None else PkiState()
