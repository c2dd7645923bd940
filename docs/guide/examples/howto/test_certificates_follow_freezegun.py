import datetime

import pytest
import requests
from freezegun import freeze_time


@pytest.mark.schedpki(seed="pki.yaml")
def test_certificates_follow_freezegun(schedpki):
    with freeze_time("2031-05-01T12:00:00Z"):
        requests.post(f"{schedpki.secrets.url}/v1/pki_int/issue/short-lived", headers={"X-Vault-Token": "root"},
                      json={"common_name": "job.example.com"}).raise_for_status()
    record = schedpki.certs.assert_issued(common_name="job.example.com")
    assert record.certificate.not_valid_after_utc == datetime.datetime(2031, 5, 1, 12, 5, tzinfo=datetime.timezone.utc)
    schedpki.certs.verify_chain(record, at=datetime.datetime(2031, 5, 1, 12, 1, tzinfo=datetime.timezone.utc))
    with pytest.raises(AssertionError, match="is not valid at"):
        schedpki.certs.verify_chain(record, at=datetime.datetime(2031, 5, 1, 12, 6, tzinfo=datetime.timezone.utc))
