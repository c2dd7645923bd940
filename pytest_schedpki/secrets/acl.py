"""Which token may do what (OpenBao's ACL, reduced until path policies land).

The root token may do everything. Other tokens carry the built-in ``default`` policy, which grants
their own token endpoints (``auth/token/lookup-self``, ``renew-self``, ``revoke-self``) and nothing
in the engines; every other request is denied with the multierror 403.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .service import SecretsService
    from .tokens import Token

DEFAULT_POLICY_PATHS = ("auth/token/lookup-self", "auth/token/renew-self", "auth/token/revoke-self")


def check_capability(service: SecretsService, token: Token, path: str, operation: str, sudo: bool) -> bool:
    """Whether ``token`` may run ``operation`` (read, list, update, delete, patch) on ``path``
    (relative to ``/v1/``); ``sudo`` says the path also needs the ``sudo`` capability."""
    if token.is_root:
        return True
    return path.rstrip("/") in DEFAULT_POLICY_PATHS
