import datetime

import pytest
from freezegun import freeze_time


@pytest.mark.schedpki(lag=30)
def test_lag_on_the_frozen_clock(schedpki, nomad):
    with freeze_time("2030-01-01T00:00:00Z") as frozen:
        schedpki.factories.scheduler.jwt_auth_method("ci")
        assert nomad.acl_auth_methods.list()[0] == []
        frozen.tick(datetime.timedelta(seconds=30))
        assert [s.name for s in nomad.acl_auth_methods.list()[0]] == ["ci"]
