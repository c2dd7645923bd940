"""The path table of the CA: issuers, keys, root/intermediate generation and import; specific paths first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.router import Path

from . import ca_generate, ca_import, issuers, keys

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def paths(backend: PkiBackend) -> list[Path]:
    """The paths of this sub-package, in routing order."""
    return [
        *issuers.paths(backend),
        *keys.paths(backend),
        *ca_generate.paths(backend),
        *ca_import.paths(backend),
    ]
