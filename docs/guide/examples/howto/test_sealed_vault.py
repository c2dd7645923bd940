import hvac
import pytest


def test_sealed_vault(schedpki):
    schedpki.seal()
    client = hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)
    assert client.sys.read_health_status(method="GET").status_code == 503
    with pytest.raises(hvac.exceptions.VaultDown):
        client.secrets.pki.list_roles()
