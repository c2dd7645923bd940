import hvac


def test_factories(schedpki):
    schedpki.factories.secrets.root_issuer("pki", issuer_name="root")
    schedpki.factories.secrets.role("svc", mount="pki", allowed_domains=["svc.internal"], max_ttl="1h")
    token = schedpki.factories.secrets.token(policies={"svc": 'path "pki/issue/svc" { capabilities = ["update"] }'})
    client = hvac.Client(url=schedpki.secrets.url, token=token["client_token"])
    client.secrets.pki.generate_certificate("svc", "db.svc.internal", extra_params={"ttl": "10m"})
    schedpki.certs.assert_issued(common_name="db.svc.internal", role="svc", issuer="root")
