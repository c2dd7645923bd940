"""Validity of issued leaves: TTL resolution and clamping, not_after/not_before, bounds, issuer NotAfter."""

import datetime

from pki_leaf_helpers import T0, cert_of, issuer_cert

UTC = datetime.timezone.utc
MERGE = {"Content-Type": "application/merge-patch+json"}
DATA_KEYS = {"ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "private_key", "private_key_type",
             "serial_number"}

def test_ttl_clamping_and_request_ttl_forms(bao):
    r = bao.post("pki/issue/web", {"common_name": "a.example.com", "ttl": "100h"}).json()
    assert r["warnings"] == ['TTL "100h0m0s" is longer than permitted maxTTL "72h0m0s", so maxTTL is being used']
    assert cert_of(r["data"]["certificate"]).not_valid_after_utc == T0 + datetime.timedelta(hours=72)
    for ttl in (3600, "3600", "1h", "3600s"):
        cert = cert_of(bao.post("pki/issue/web", {"common_name": "a.example.com", "ttl": ttl}).json()["data"]["certificate"])
        assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(seconds=3630)
    # a role with max_ttl but no ttl warns on every issue without ttl (mount default 768h)
    r = bao.post("pki/issue/ec", {"common_name": "a.example.com"}).json()
    assert r["warnings"] == ['TTL "768h0m0s" is longer than permitted maxTTL "720h0m0s", so maxTTL is being used']
    assert cert_of(r["data"]["certificate"]).not_valid_after_utc == T0 + datetime.timedelta(hours=720)
    # no role ttl/max: the mount default (768h)
    cert = cert_of(bao.post("pki/issue/othersans", {"common_name": "a.example.com"}).json()["data"]["certificate"])
    assert cert.not_valid_after_utc == T0 + datetime.timedelta(hours=768)


def test_not_after_and_not_before(bao):
    r = bao.post("pki/issue/web", {"common_name": "a.example.com", "not_after": "2030-07-01T00:00:00Z"}).json()
    assert r["warnings"] is None  # not limited by the role's 72h max_ttl
    assert cert_of(r["data"]["certificate"]).not_valid_after_utc == datetime.datetime(2030, 7, 1, tzinfo=UTC)
    cert = cert_of(bao.post("pki/issue/web", {"common_name": "a.example.com", "not_before": "2030-05-30T12:00:00Z"})
                   .json()["data"]["certificate"])
    assert cert.not_valid_before_utc == datetime.datetime(2030, 5, 30, 12, tzinfo=UTC)
    r = bao.post("pki/issue/web", {"common_name": "a.example.com", "not_before": "2030-06-03T00:00:00Z", "ttl": "1h"})
    assert r.json() == {"errors": ["The certificate's Not Before (2030-06-03T00:00:00Z) is later than the certificate's "
                                   "Not After (2030-06-01T13:00:00Z)"]}
    r = bao.post("pki/issue/web", {"common_name": "a.example.com", "not_after": "2020-01-01T00:00:00Z"})
    assert r.json() == {"errors": ["The certificate's Not Before (2030-06-01T11:59:30Z) is later than the certificate's "
                                   "Not After (2020-01-01T00:00:00Z)"]}


def test_role_not_before_duration(bao):
    bao.post("pki/roles/nbd", {"allow_any_name": True, "key_type": "ec", "not_before_duration": "5m", "ttl": "1h"})
    cert = cert_of(bao.post("pki/issue/nbd", {"common_name": "x.com"}).json()["data"]["certificate"])
    assert cert.not_valid_before_utc == T0 - datetime.timedelta(minutes=5)


def test_leaf_beyond_the_issuer(bao):
    bao.advance(0.377434)  # the error quotes the computed notAfter with its fraction
    r = bao.post("pki/issuer/root-b/issue/userids", {"common_name": "a.example.com", "ttl": "87000h"})
    root_b_end = issuer_cert(bao, "root-b").not_valid_after_utc
    assert root_b_end == T0 + datetime.timedelta(hours=43800)
    assert (r.status_code, r.json()) == (400, {"errors": [
        "cannot satisfy request, as TTL would result in notAfter of 2040-05-04T12:00:00.377434Z that is beyond the "
        "expiration of the CA certificate at 2035-05-31T12:00:00Z"]})
    r = bao.post("pki/issuer/root-b/issue/userids", {"common_name": "a.example.com", "not_after": "2036-01-01T00:00:00Z"})
    assert r.json() == {"errors": ["cannot satisfy request, as TTL would result in notAfter of 2036-01-01T00:00:00Z that "
                                   "is beyond the expiration of the CA certificate at 2035-05-31T12:00:00Z"]}
    state = bao.state()
    root_b = next(i for i in state.issuers.values() if i.issuer_name == "root-b")
    root_b.leaf_not_after_behavior = "truncate"
    r = bao.post("pki/issuer/root-b/issue/userids", {"common_name": "a.example.com", "ttl": "87000h"})
    assert r.status_code == 200 and r.json()["warnings"] is None
    assert cert_of(r.json()["data"]["certificate"]).not_valid_after_utc == root_b_end
    root_b.leaf_not_after_behavior = "permit"
    cert = cert_of(bao.post("pki/issuer/root-b/issue/userids", {"common_name": "a.example.com", "ttl": "87000h"})
                   .json()["data"]["certificate"])
    assert cert.not_valid_after_utc == datetime.datetime(2040, 5, 4, 12, 0, 0, tzinfo=UTC)


def test_role_not_after_and_bounds(bao):
    role = {"allow_any_name": True, "key_type": "ec"}
    bao.post("pki/roles/b1", {**role, "max_ttl": "1h", "not_after_bound": "ttl-limited"})
    r = bao.post("pki/issue/b1", {"common_name": "x.com", "not_after": "2031-01-01T00:00:00Z"})
    assert r.json() == {"errors": ["not_after_bound is set to ttl-limited. Cannot satisfy request as that would result "
                                   "in notAfter of 2031-01-01T00:00:00Z that is beyond the TTL of 1h0m0s"]}
    bao.post("pki/roles/b2", {**role, "ttl": "1h", "not_after_bound": "2030-07-01T00:00:00Z"})
    r = bao.post("pki/issue/b2", {"common_name": "x.com", "ttl": "2000h"})
    assert r.json() == {"errors": ["not_after_bound is set to 2030-07-01T00:00:00Z. Cannot statisfy request as that would "
                                   "result in notAfter of 2030-08-23T20:00:00Z that is beyond the maximum timestamp of "
                                   "2030-07-01T00:00:00Z"]}
    bao.post("pki/roles/b3", {**role, "not_after": "2031-01-01T00:00:00Z"})
    r = bao.post("pki/issue/b3", {"common_name": "x.com", "ttl": "1h"})
    assert r.json() == {"errors": ["Either ttl or not_after should be provided. Both should not be provided in the same "
                                   "request."]}
    cert = cert_of(bao.post("pki/issue/b3", {"common_name": "x.com"}).json()["data"]["certificate"])
    assert cert.not_valid_after_utc == datetime.datetime(2031, 1, 1, tzinfo=UTC)
    bao.post("pki/roles/b4", {**role, "ttl": "1h", "not_before_bound": "duration"})
    r = bao.post("pki/issue/b4", {"common_name": "x.com", "not_before": "2030-01-01T00:00:00Z"})
    assert r.json() == {"errors": ["not_before_bound is set to duration. Cannot satisfy request as it would result in "
                                   "notBefore of 2030-01-01T00:00:00Z that is older than the allowed "
                                   "not_before_duration of 30s"]}
    cert = cert_of(bao.post("pki/issue/b4", {"common_name": "x.com", "not_before": "2030-06-01T11:59:45Z"})
                   .json()["data"]["certificate"])
    assert cert.not_valid_before_utc == datetime.datetime(2030, 6, 1, 11, 59, 45, tzinfo=UTC)
    bao.post("pki/roles/b5", {**role, "ttl": "1h", "not_before_bound": "forbid", "not_after_bound": "forbid"})
    r = bao.post("pki/issue/b5", {"common_name": "x.com", "not_before": "2030-06-01T11:59:45Z"})
    assert r.json() == {"errors": ["not_before_bound is set to forbid. not_before cannot be provided."]}
    r = bao.post("pki/issue/b5", {"common_name": "x.com", "not_after": "2030-06-01T13:00:00Z"})
    assert r.json() == {"errors": ["not_after_bound is set to forbid. not_after cannot be provided."]}
