"""The double: both backends, their listeners, and the baseline that each test is reset to."""

from __future__ import annotations

import os
import ssl
from typing import Any

from .clock import Clock, SwitchableClock
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
        """Start both listeners (port 0 = any free port). Raises OSError if a port is taken."""
        self.scheduler_server = ServiceServer(
            "scheduler", make_scheduler_app(self.scheduler), scheduler_error_response,
            host, scheduler_port, ssl_context, log_requests,
        ).start()
        try:
            self.secrets_server = ServiceServer(
                "secrets", make_secrets_app(self.secrets), secrets_error_response,
                host, secrets_port, ssl_context, log_requests,
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
        """
        if self._baseline is None:
            self.scheduler.restore(None)
            self.secrets.restore(None)
        else:
            self.scheduler.restore(self._baseline[0])
            self.secrets.restore(self._baseline[1])
