# conftest.py
import hvac
import nomadpy
import pytest


@pytest.fixture
def vault(schedpki):
    """An hvac client of the double's secrets service (OpenBao/Vault API), with the root token."""
    return hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)


@pytest.fixture
def nomad(schedpki):
    """A nomadpy client of the double's scheduler (Nomad API), with the management token."""
    return nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=schedpki.scheduler.token))
