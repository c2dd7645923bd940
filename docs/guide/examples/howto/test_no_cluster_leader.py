import nomadpy
import pytest


def test_no_cluster_leader(schedpki, nomad):
    schedpki.set_leader(False)
    with pytest.raises(nomadpy.UnexpectedResponseError) as exc:
        nomad.acl_auth_methods.list()
    assert str(exc.value) == "Unexpected response code: 500 (No cluster leader)"
