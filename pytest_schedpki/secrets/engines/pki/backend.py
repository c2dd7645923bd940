"""The PKI engine of one mount: its state and its routes.

Each sub-package owns the path table of its rooms (``authority/routes.py``, ``issuance/routes.py``,
``revocation/routes.py``, ``enterprise/routes.py``); this module joins them with the two tables of
the engine's top level (``fetch``, ``certs``). Patterns of different tables never match the same
path, so the order of the tables does not change routing; inside a table, specific paths come first.

The engine reaches its host only through :class:`~pytest_schedpki.secrets.framework.engine.EngineHost`
(clock, lock, enterprise flag) and :class:`~pytest_schedpki.secrets.framework.engine.MountInfo` (TTL
defaults); it never imports the service.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from pytest_schedpki.secrets.framework.engine import EngineHost, MountInfo
from pytest_schedpki.secrets.framework.router import Path, Router

from . import acme_config, certs, cluster_config, fetch
from .acme import routes as acme_routes
from .authority import routes as authority_routes
from .certstore import CertStore
from .enterprise import routes as enterprise_routes
from .issuance import routes as issuance_routes
from .model import PkiState
from .revocation import routes as revocation_routes
from .revocation.crl import rebuild_crls
from .revocation.revoke import revoke_certificate

# the path tables of the engine, in routing order
PATH_TABLES: tuple[Callable[[PkiBackend], list[Path]], ...] = (
    authority_routes.paths, issuance_routes.paths, revocation_routes.paths, enterprise_routes.paths, fetch.paths,
    certs.paths, acme_config.paths, cluster_config.paths, acme_routes.paths)


#: OpenBao's ``PathsSpecial.Unauthenticated`` of the PKI engine (builtin/logical/pki/backend.go):
#: no token needed, and errors answered unwrapped (the router treats them as login paths)
UNAUTHENTICATED = (
    "cert/*", "ca/pem", "ca_chain", "ca", "crl/delta", "crl/delta/pem", "crl/pem", "crl", "issuer/+/crl/der",
    "issuer/+/crl/pem", "issuer/+/crl", "issuer/+/crl/delta/der", "issuer/+/crl/delta/pem", "issuer/+/crl/delta",
    "issuer/+/pem", "issuer/+/der", "issuer/+/json", "issuers/", "ocsp", "ocsp/*",
    *acme_routes.unauthenticated_patterns(),
)


def _attributes_of(attributes: dict[str, Any]) -> dict[str, Any]:
    """A copy of an engine's attributes but its state, with its lists copied (listeners may be
    appended to)."""
    return {k: list(v) if isinstance(v, list) else v for k, v in attributes.items() if k not in ("_built", "state")}


def _attributes(engine: PkiBackend) -> dict[str, Any]:
    return _attributes_of(vars(engine))


class PkiBackend:
    """One mount's PKI engine: ``state`` (:class:`PkiState`) and ``router``.

    ``service`` (an :class:`EngineHost`) gives the clock (``service.clock.now()``), the lock and the
    enterprise flag; ``mount`` (a :class:`MountInfo`) the TTL defaults
    (``mount.effective_default_ttl()``, ``mount.effective_max_ttl()``, seconds).
    """

    def __init__(self, service: EngineHost, mount: MountInfo):
        self.service = service
        self.mount = mount
        self.state = PkiState()
        # what reacts when the set of issuers changes (generate, import, delete): the CRLs
        self.issuer_listeners: list[Callable[[PkiBackend], Any]] = [rebuild_crls]
        paths: list[Path] = []
        for table in PATH_TABLES:
            paths.extend(table(self))
        self.router = Router(paths, UNAUTHENTICATED)
        self._built = _attributes(self)

    def renew(self) -> None:
        """Be the engine as it was built again (state aside, which :meth:`restore` sets): attributes a
        test set on it since (e.g. an ``external_policy`` callable) are dropped, the listener list is
        the built one. A reset reuses the engine of an unchanged mount this way instead of building it
        and its routes again."""
        built, state = self._built, self.state
        vars(self).clear()
        vars(self).update(_attributes_of(built))
        self._built, self.state = built, state

    def now(self) -> datetime.datetime:
        """The double's clock (aware UTC datetime)."""
        return self.service.clock.now()

    def issuers_changed(self) -> None:
        """Announce that issuers were created, imported or deleted; each listener (the CRL side:
        ``rebuild_crls``, which signs a fresh CRL per issuer) reacts."""
        for listener in self.issuer_listeners:
            listener(self)

    def revoke_secret(self, serial: str, at: datetime.datetime | None = None) -> None:
        """Revoke what a lease of this mount handed out (Vault's ``Secret.Revoke`` of the PKI
        ``certs`` secret): certificate ``serial``, when it is still stored, revoked at ``at`` (the
        instant its lease or token expired; default now). Called by ``sys/leases/revoke*``, token
        revocation and expiry, under the service lock."""
        record = self.state.certs.get(serial)
        if record is not None:
            revoke_certificate(self, record.certificate, at=at)

    def snapshot(self) -> Any:
        """An independent copy of the state (O(stored certificates)), for a baseline."""
        return _detach_extra(self.state.copy())

    def restore(self, snapshot: Any) -> None:
        """Return to ``snapshot`` (``None``: a fresh mount). The snapshot stays unchanged; its
        certificate store is checked out (:meth:`CertStore.checkout`), O(changes since the last
        restore of the same snapshot)."""
        if snapshot is None:
            self.state = PkiState()
            return
        certs = snapshot.certs if isinstance(snapshot.certs, CertStore) else CertStore(snapshot.certs)
        self.state = _detach_extra(snapshot.copy(certs=certs.checkout()))

    def begin_write(self) -> Any:
        """Open a write (OpenBao's storage transaction around a request): returns the savepoint for
        :meth:`end_write`. The certificate store logs its changes instead of being copied, the small
        records (issuers, roles, configuration) are copied as before."""
        state = self.state
        if not isinstance(state.certs, CertStore):
            state.certs = CertStore(state.certs)
        logged = [(value, value.begin()) for value in state.extra.values() if _logs_writes(value)]
        return state.copy(certs=state.certs), state.certs.begin(), logged

    def end_write(self, savepoint: Any, rollback: bool) -> None:
        """Close the write of ``savepoint``; ``rollback``: leave no trace of it (O(its changes))."""
        saved, mark, logged = savepoint
        saved.certs.end(mark, rollback)
        for value, value_mark in logged:
            value.end(value_mark, rollback)
        if rollback:
            self.state = saved


def _logs_writes(value: Any) -> bool:
    """Whether a ``PkiState.extra`` value keeps its own undo log and baseline copies (the ACME store:
    ``begin()``, ``end(mark, rollback)``, ``detached()``), duck-typed: the ACME code loads late."""
    return hasattr(value, "detached") and hasattr(value, "begin")


def _detach_extra(state: PkiState) -> PkiState:
    """``state`` with each ``extra`` value that changes in place (:func:`_logs_writes`) replaced by a
    copy of its own, so that a baseline and the live state never share one."""
    for key, value in list(state.extra.items()):
        if _logs_writes(value):
            state.extra[key] = value.detached()
    return state
