"""The path table of CRLs, revocation and tidy; specific paths first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.router import Path

from . import crl_paths, crl_sign, issuer_revoke, ocsp, revoke, tidy_paths

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def paths(backend: PkiBackend) -> list[Path]:
    """The paths of this sub-package, in routing order."""
    return [
        *crl_paths.paths(backend),
        *crl_sign.paths(backend),
        *revoke.paths(backend),
        *tidy_paths.paths(backend),
        *issuer_revoke.paths(backend),
        *ocsp.paths(backend),
    ]
