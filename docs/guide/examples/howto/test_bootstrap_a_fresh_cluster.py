import nomadpy
import pytest


@pytest.mark.schedpki(bootstrap=False)  # a fresh cluster: no management token yet
def test_bootstrap_then_write_a_policy_and_a_token(schedpki):
    url = schedpki.scheduler.url
    anonymous = nomadpy.Client(nomadpy.Config(address=url))
    root, _ = anonymous.acl_tokens.bootstrap()
    assert (root.type, root.name) == ("management", "Bootstrap Token")
    with pytest.raises(nomadpy.UnexpectedResponseError, match=r"ACL bootstrap already done \(reset index: \d+\)"):
        anonymous.acl_tokens.bootstrap()

    admin = nomadpy.Client(nomadpy.Config(address=url, secret_id=root.secret_id))
    admin.acl_policies.upsert(nomadpy.ACLPolicy(
        name="web-deployer", rules='namespace "web" { policy = "write" }\nnode { policy = "read" }'))
    token, _ = admin.acl_tokens.create(nomadpy.ACLToken(
        name="ci", type="client", policies=["web-deployer"], expiration_ttl=3600 * 10**9))

    schedpki.scheduler.assert_allowed(token.secret_id, "namespace:web:submit-job", "node:read")
    schedpki.scheduler.assert_denied(token.secret_id, "namespace:default:submit-job", "node:write", "management")
    as_ci = nomadpy.Client(nomadpy.Config(address=url, secret_id=token.secret_id))
    with pytest.raises(nomadpy.UnexpectedResponseError, match="Permission denied"):
        as_ci.acl_tokens.list()  # management only
