"""The path table of the Vault Enterprise extras (cert metadata, external policy); specific paths first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.router import Path

from . import cert_metadata, external_policy

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def paths(backend: PkiBackend) -> list[Path]:
    """The paths of this sub-package, in routing order."""
    return [
        *cert_metadata.paths(backend),
        *external_policy.paths(backend),
    ]
