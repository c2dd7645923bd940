"""Routes that exist only while Vault Enterprise emulation is on (``SecretsService.enterprise``).

OpenBao has none of Vault Enterprise's PKI extras, so with the flag off (the default) these routes
must not exist at all: the request then falls through to the OpenBao routes, or to the router's
404 ``unsupported path``, exactly as a real ``bao server`` answers. The flag is read at match
time, so switching it after a mount was created takes effect on the next request.

* :func:`enterprise_only` gates a whole path (``config/external-policy``, ``cert-metadata/...``);
* :func:`enterprise_variant` copies an OpenBao path with extra fields (``cert_metadata`` on
  issue/sign, ``no_store_metadata`` on roles) and gates the copy; list the copy *before* the
  original so it wins while the flag is on, and the original (with OpenBao's ``Endpoint ignored
  these unrecognized parameters`` warning for the Enterprise fields) answers while it is off.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pytest_schedpki.secrets.framework.fields import Field
from pytest_schedpki.secrets.framework.router import Path

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend


def is_enterprise(backend: PkiBackend) -> bool:
    """Whether the service of ``backend`` emulates Vault Enterprise."""
    return bool(backend.service.enterprise)


class _EnterpriseOnly:
    """An anchored pattern whose ``match`` finds nothing while the enterprise flag is off (compiled on
    the first match attempt with the flag on)."""

    def __init__(self, pattern: str, backend: PkiBackend):
        self.pattern = pattern
        self.backend = backend
        self._regex: re.Pattern | None = None

    @property
    def regex(self) -> re.Pattern:
        if self._regex is None:
            self._regex = re.compile(self.pattern)
        return self._regex

    def match(self, text: str) -> re.Match | None:
        return self.regex.match(text) if is_enterprise(self.backend) else None


def enterprise_only(backend: PkiBackend, path: Path) -> Path:
    """Gate ``path`` (in place) on the enterprise flag of ``backend``'s service; returns it."""
    path.regex = _EnterpriseOnly("^" + path.pattern + "$", backend)  # type: ignore[assignment]
    return path


def enterprise_variant(backend: PkiBackend, path: Path, extra_fields: dict[str, Field]) -> Path:
    """A gated copy of ``path`` whose schema also declares ``extra_fields`` (same handlers)."""
    copy = Path(path.pattern, {**path.fields, **extra_fields}, dict(path.operations),
                unauthenticated=path.unauthenticated, sudo=path.sudo,
                takes_arbitrary_input=path.takes_arbitrary_input, existence=path.existence)
    return enterprise_only(backend, copy)


__all__ = ["is_enterprise", "enterprise_only", "enterprise_variant"]
