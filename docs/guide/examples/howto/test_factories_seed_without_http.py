import nomadpy
import pytest


def test_factories_seed_without_http(schedpki, nomad):
    schedpki.factories.scheduler.oidc_auth_method("corp-sso", TokenLocality="global")
    client = schedpki.factories.scheduler.token(type="client")
    fetched, _ = nomad.acl_auth_methods.get("corp-sso")
    assert fetched.token_locality == "global"
    as_client = nomadpy.Client(nomadpy.Config(address=schedpki.scheduler.url, secret_id=client.SecretID))
    with pytest.raises(nomadpy.UnexpectedResponseError, match="403"):
        as_client.acl_auth_methods.get("corp-sso")
