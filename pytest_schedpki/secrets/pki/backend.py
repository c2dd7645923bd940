"""The PKI engine of one mount: its state and its routes.

Routes come from the modules that own them (each exports ``paths(backend) -> list[Path]``); order
matters only where two patterns could match the same path (specific ones first).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..router import Router
from .model import PkiState

if TYPE_CHECKING:  # pragma: no cover
    from ..service import Mount, SecretsService

# modules under pytest_schedpki.secrets.pki that contribute paths, in routing order
PATH_MODULES = ("issuers", "keys", "ca_generate", "ca_import", "crl", "fetch", "roles", "issue", "sign_intermediate", "sign_self_issued", "sign_verbatim", "certs", "revoke", "cert_metadata", "external_policy", "tidy", "issuer_revoke", "acme_config", "cluster_config")


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
