import pytest


@pytest.mark.schedpki(seed="scheduler.yaml")                      # relative to the test file
def test_seeded_auth_methods(nomad):
    stubs, _ = nomad.acl_auth_methods.list()
    assert [(s.name, s.type, s.default) for s in stubs] == [("ci-jwt", "JWT", False), ("okta", "OIDC", True)]
