"""PLACEHOLDER plugin (being built)."""
import pytest

from .double import Double


class _Svc:
    def __init__(self, url, token, state):
        self.url, self.token, self.state = url, token, state


class _Handle:
    def __init__(self, double):
        self.double = double
        self.scheduler = _Svc(double.scheduler_url, double.management_token, double.scheduler)
        self.secrets = _Svc(double.secrets_url, double.root_token, double.secrets)


@pytest.fixture(scope="session")
def schedpki_double():
    d = Double().start()
    d.save_baseline()
    yield d
    d.stop()


@pytest.fixture
def schedpki(schedpki_double):
    schedpki_double.reset()
    yield _Handle(schedpki_double)
