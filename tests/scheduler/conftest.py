"""Fixtures for the scheduler's black-box tests.

* ``sched``: a session-wide scheduler listener (follow clock, so freezegun moves it) reset to an
  empty state before each test; requests go over real sockets. Exceptions escaping the app fail
  the test that caused them.
* ``make_sched(**state_kwargs)``: a private listener with its own :class:`SchedulerState` (for a
  ManualClock, other regions or TTL bounds); stopped at teardown.

Each handle has ``url``, ``token`` (the management token ``root``), ``state`` and thin request
helpers (``get``/``put``/``post``/``delete``) that default to the management token.
"""

from __future__ import annotations

import pytest
from sched_helpers import MANAGEMENT, Sched

from pytest_schedpki.clock import SwitchableClock
from pytest_schedpki.scheduler.http import error_response, make_app
from pytest_schedpki.scheduler.state import SchedulerState
from pytest_schedpki.wire.server import ServiceServer


def _start(state: SchedulerState) -> tuple[ServiceServer, SchedulerState]:
    return ServiceServer("scheduler", make_app(state), error_response).start(), state


def _check_handler_errors(server: ServiceServer) -> None:
    errors = server.pop_handler_errors()
    assert not errors, "exceptions escaped the scheduler app:\n" + "\n".join(map(str, errors))


@pytest.fixture(scope="session")
def _shared_scheduler():
    server, state = _start(SchedulerState(SwitchableClock(), management_token=MANAGEMENT))
    yield server, state
    server.stop()


@pytest.fixture
def sched(_shared_scheduler):
    server, state = _shared_scheduler
    state.restore(None)
    server.pop_handler_errors()
    yield Sched(server, state)
    _check_handler_errors(server)


@pytest.fixture
def make_sched():
    started: list[ServiceServer] = []

    def factory(clock=None, **kwargs) -> Sched:
        server, state = _start(SchedulerState(clock or SwitchableClock(), management_token=MANAGEMENT, **kwargs))
        started.append(server)
        return Sched(server, state)

    yield factory
    for server in started:
        try:
            _check_handler_errors(server)
        finally:
            server.stop()
