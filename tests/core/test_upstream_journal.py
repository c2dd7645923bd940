"""``schedpki.journal`` in upstream mode: a query of an upstream side skips the test, like the other
double-only knobs (it used to fail with "requests made: none"); a query of the double's side answers."""

from types import SimpleNamespace

import pytest

from pytest_schedpki.journal import Journal
from pytest_schedpki.upstream.handle import UpstreamJournal
from pytest_schedpki.upstream.settings import UpstreamSettings


def journal_of(secrets, scheduler):
    journal = Journal()
    journal.record("scheduler", "GET", "/v1/acl/auth-methods", {}, "management", b"", 200, b"[]")
    session = SimpleNamespace(secrets=object() if secrets else None, scheduler=object() if scheduler else None,
                              settings=UpstreamSettings(secrets="bao" if secrets else None,
                                                        scheduler="http://n:4646" if scheduler else None))
    return UpstreamJournal(session, journal)


@pytest.mark.parametrize("call", [
    lambda j: j.assert_request_made("POST", "/v1/pki/issue/web"),
    lambda j: j.assert_no_request(path="/v1/pki/issue/web"),
    lambda j: j.find(service="secrets"),
    lambda j: j.entries(),
    lambda j: j.find("GET", "^/v1/sys/"),
])
def test_journal_queries_of_the_upstream_secrets_side_skip(call):
    with pytest.raises(pytest.skip.Exception, match=r"^schedpki upstream mode \(secrets: bao\): the journal of secrets "
                                                    r"requests \(journal\.\w+\(\)\) exists only in the double$"):
        call(journal_of(secrets=True, scheduler=False))


def test_journal_queries_of_the_double_side_answer_and_fail_as_usual():
    journal = journal_of(secrets=True, scheduler=False)
    assert len(journal.assert_request_made("GET", "/v1/acl/auth-methods")) == 1
    assert len(journal.find(service="scheduler")) == 1 and len(journal.find(path="^/v1/acl/")) == 1
    with pytest.raises(AssertionError, match="unexpected request"):
        journal.assert_no_request("GET", "/v1/acl/auth-methods")
    with pytest.raises(AssertionError, match="found 0"):
        journal.assert_request_made("PUT", "/v1/acl/auth-method")
    journal.clear()
    assert journal.evicted == 0
    with pytest.raises(pytest.skip.Exception, match=r"\(scheduler: http://n:4646\): the journal of scheduler requests"):
        journal_of(secrets=False, scheduler=True).assert_request_made("GET", "/v1/acl/auth-methods")
