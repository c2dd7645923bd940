import nomadpy
import pytest

from pytest_schedpki import Fault


def test_injected_fault(schedpki, nomad):
    schedpki.faults.add(Fault(service="scheduler", path="/v1/acl/auth-methods", status=503, body="overloaded", times=1))
    with pytest.raises(nomadpy.UnexpectedResponseError, match="503"):
        nomad.acl_auth_methods.list()
    assert nomad.acl_auth_methods.list()[0] == []                   # the fault fired once
