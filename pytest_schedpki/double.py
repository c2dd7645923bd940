"""The double: both backends, their listeners, and the baseline that each test is reset to."""

from __future__ import annotations

import os
import ssl
from typing import Any

from .clock import Clock, SwitchableClock
from .control import make_control_app
from .faults import FaultSet
from .journal import Journal
from .middleware import Instrumented
from .scheduler.http import error_response as scheduler_error_response
from .scheduler.http import make_app as make_scheduler_app
from .scheduler.state import SchedulerState
from .secrets.http import error_response as secrets_error_response
from .secrets.http import make_app as make_secrets_app
from .secrets.service import SecretsService
from .seed import seed_from
from .server import HandlerError, ServiceServer


class Double:
    """Both services' state plus, once started, one HTTP listener each.

    ``management_token`` is the scheduler's bootstrap management token secret; ``root_token`` is
    the secrets service's root token. Both default to ``"root"``. ``clock`` is the initial time
    source (default: follow freezegun).

    Backends are reachable directly for seeding and inspection: :attr:`scheduler`
    (:class:`~pytest_schedpki.scheduler.state.SchedulerState`) and :attr:`secrets`
    (:class:`~pytest_schedpki.secrets.service.SecretsService`).
    """

    def __init__(self, management_token: str = "root", root_token: str = "root", clock: Clock | None = None):
        self.clock = SwitchableClock(clock)
        self.management_token = management_token
        self.root_token = root_token
        self.scheduler = SchedulerState(self.clock, management_token=management_token)
        self.secrets = SecretsService(self.clock, root_token=root_token)
        self.tls = None  # TLSMaterial when the listeners serve HTTPS
        self.journal = Journal()
        self.faults = FaultSet()
        self.scheduler_server: ServiceServer | None = None
        self.secrets_server: ServiceServer | None = None
        self._baseline: tuple[Any, Any] | None = None

    # -- listeners -----------------------------------------------------------------------------
    def start(
        self,
        host: str = "127.0.0.1",
        scheduler_port: int = 0,
        secrets_port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        log_requests: bool = False,
    ) -> Double:
        """Start both listeners (port 0 = any free port). Raises OSError if a port is taken.

        Each listener also serves the control endpoints under ``/_schedpki/`` and records every
        request in :attr:`journal`; :attr:`faults` applies to both.
        """
        control = make_control_app(self)
        scheduler_app = Instrumented("scheduler", make_scheduler_app(self.scheduler), self.journal, self.faults,
                                     self._scheduler_token_kind, control)
        secrets_app = Instrumented("secrets", make_secrets_app(self.secrets), self.journal, self.faults,
                                   self._secrets_token_kind, control)
        self.scheduler_server = ServiceServer(
            "scheduler", scheduler_app, scheduler_error_response, host, scheduler_port, ssl_context, log_requests,
        ).start()
        try:
            self.secrets_server = ServiceServer(
                "secrets", secrets_app, secrets_error_response, host, secrets_port, ssl_context, log_requests,
            ).start()
        except BaseException:
            self.scheduler_server.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop both listeners (idempotent)."""
        for server in (self.scheduler_server, self.secrets_server):
            if server is not None:
                server.stop()

    @property
    def scheduler_url(self) -> str:
        """Base URL of the scheduler listener, e.g. ``http://127.0.0.1:4646``."""
        assert self.scheduler_server is not None, "double not started"
        return self.scheduler_server.url

    @property
    def secrets_url(self) -> str:
        """Base URL of the secrets listener, e.g. ``http://127.0.0.1:8200``."""
        assert self.secrets_server is not None, "double not started"
        return self.secrets_server.url

    def pop_handler_errors(self) -> list[HandlerError]:
        """Exceptions that escaped a request handler since the last call (both services)."""
        errors: list[HandlerError] = []
        for server in (self.scheduler_server, self.secrets_server):
            if server is not None:
                errors.extend(server.pop_handler_errors())
        return errors

    def _secrets_token_kind(self, headers: dict[str, str]) -> str:
        token_id = headers.get("X-Vault-Token") or headers.get("X-Secrets-Token")
        if not token_id and headers.get("Authorization", "").startswith("Bearer "):
            token_id = headers["Authorization"][7:].strip()
        if not token_id:
            return "none"
        token = self.secrets.tokens.lookup(token_id, self.clock.now())
        if token is None:
            return "invalid"
        return "root" if token.is_root else "token"

    def _scheduler_token_kind(self, headers: dict[str, str]) -> str:
        secret = (headers.get("X-Nomad-Token") or headers.get("X-Scheduler-Token") or "").strip()
        if not secret and headers.get("Authorization", "").lower().startswith("bearer "):
            secret = headers["Authorization"].split(" ", 1)[1].strip().split(" ")[0]
        if not secret:
            return "anonymous"
        kind = getattr(self.scheduler, "token_kind", None)
        return kind(secret) if kind else "unknown"

    # -- state -----------------------------------------------------------------------------------
    def seed(self, seed: str | os.PathLike | dict[str, Any]) -> None:
        """Apply a YAML seed file (path) or a parsed seed mapping. Raises SeedError."""
        seed_from(self, seed)

    def save_baseline(self) -> None:
        """Remember the current state of both backends as what :meth:`reset` returns to."""
        self._baseline = (self.scheduler.snapshot(), self.secrets.snapshot())

    def reset(self) -> None:
        """Return both backends to the saved baseline (or to empty if none was saved).

        CA keys are not regenerated: snapshots share the immutable key and certificate objects.
        Also clears faults (releasing hanging requests) and the journal, and unseals.
        """
        self.faults.clear()
        self.journal.clear()
        if self._baseline is None:
            self.scheduler.restore(None)
            self.secrets.restore(None)
        else:
            self.scheduler.restore(self._baseline[0])
            self.secrets.restore(self._baseline[1])
