import pytest


@pytest.mark.schedpki(lag_reads=2)
def test_visible_after_n_reads(schedpki, nomad):
    schedpki.factories.scheduler.jwt_auth_method("ci")
    assert nomad.acl_auth_methods.list()[0] == []
    assert nomad.acl_auth_methods.list()[0] == []
    assert [s.name for s in nomad.acl_auth_methods.list()[0]] == ["ci"]
