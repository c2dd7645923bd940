import nomadpy
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def test_ci_jobs_get_the_deploy_policy(schedpki, nomad):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # the CI system's signing key
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    nomad.acl_policies.upsert(nomadpy.ACLPolicy(name="deploy", rules='namespace "web" { policy = "write" }'))
    nomad.acl_auth_methods.create(nomadpy.ACLAuthMethod(
        name="ci", type="JWT", token_locality="global", max_token_ttl=3600 * 10**9,
        config=nomadpy.ACLAuthMethodConfig(jwt_validation_pub_keys=[pem], bound_audiences=["nomad"],
                                           claim_mappings={"project_path": "project"})))
    nomad.acl_binding_rules.create(nomadpy.ACLBindingRule(
        auth_method="ci", selector='value.project == "acme/web"', bind_type="policy", bind_name="deploy"))

    job_jwt = schedpki.scheduler.jwt("ci", {"project_path": "acme/web"}, key=key)
    token, _ = nomad.acl_auth.login("ci", job_jwt)
    assert (token.type, token.policies) == ("client", ["deploy"])
    schedpki.scheduler.assert_token(token.secret_id, policies=["deploy"], global_=True)

    other = schedpki.scheduler.jwt("ci", {"project_path": "acme/docs"}, key=key)
    with pytest.raises(nomadpy.UnexpectedResponseError, match="no role or policy bindings matched"):
        nomad.acl_auth.login("ci", other)
