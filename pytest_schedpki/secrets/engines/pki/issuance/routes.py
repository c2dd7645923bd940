"""The path table of roles and everything that signs a certificate (issue, sign, sign-intermediate, sign-self-issued, sign-verbatim); specific paths first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.router import Path

from . import issue, roles, sign_intermediate, sign_self_issued, sign_verbatim

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def paths(backend: PkiBackend) -> list[Path]:
    """The paths of this sub-package, in routing order."""
    return [
        *roles.paths(backend),
        *issue.paths(backend),
        *sign_intermediate.paths(backend),
        *sign_self_issued.paths(backend),
        *sign_verbatim.paths(backend),
    ]
