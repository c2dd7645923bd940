import nomadpy


def test_create_with_nomadpy(nomad):
    method = nomadpy.ACLAuthMethod(
        name="okta", type="OIDC", token_locality="global", max_token_ttl=3600 * 10**9,
        config=nomadpy.ACLAuthMethodConfig(oidc_discovery_url="https://okta.example.com/",
                                           oidc_client_id="nomad", oidc_client_secret="s3cr3t"),
    )
    created, _ = nomad.acl_auth_methods.create(method)
    assert created.name == "okta"
    assert created.config.oidc_client_secret == "redacted"
    stubs, meta = nomad.acl_auth_methods.list()
    assert [s.name for s in stubs] == ["okta"] and meta.last_index > 0
