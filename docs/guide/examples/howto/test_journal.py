import requests


def test_journal(schedpki):
    requests.put(f"{schedpki.scheduler.url}/v1/acl/auth-method", headers=schedpki.scheduler.headers(),
                 json={"Name": "bad_name", "Type": "OIDC"})
    entry = schedpki.journal.assert_request_made("PUT", "/v1/acl/auth-method", status=400, token_kind="management")[0]
    assert entry.response.startswith("auth method 0 invalid:")
