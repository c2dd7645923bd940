import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from pytest_schedpki.acme import AcmeClient, Http01Responder, csr_for


def wait_for(client, url, statuses=("pending", "processing")):
    """Poll an order or a challenge (POST-as-GET) until it leaves ``statuses``."""
    for _ in range(100):
        body = client.post(url).json()
        if body["status"] not in statuses:
            return body
        time.sleep(0.1)
    raise AssertionError(f"still {body['status']}: {url}")


@pytest.mark.schedpki(seed="pki.yaml")
def test_acme_client_gets_and_revokes_a_certificate(schedpki):
    # tune the mount for the ACME headers, set config/cluster, enable config/acme; use the role's directory
    directory = schedpki.enable_acme("pki_int").replace("/acme/", "/roles/web/acme/")
    with Http01Responder() as web:  # answers /.well-known/acme-challenge/<token> on a free local port
        schedpki.acme_knobs(challenge_address=web.address)  # validate there, not on port 80 of the name
        client = AcmeClient(directory)  # an EC P-256 account key by default
        assert client.new_account(contact=["mailto:ops@example.com"]).status == 201

        order = client.new_order(["api.example.com"])
        assert order.status == 201
        authz = client.post(order.json()["authorizations"][0]).json()
        challenge = next(c for c in authz["challenges"] if c["type"] == "http-01")
        web.serve(challenge["token"], client.key_authorization(challenge["token"]))
        assert client.post(challenge["url"], {}).json()["status"] == "processing"  # accepted, as OpenBao
        assert wait_for(client, order.headers["location"])["status"] == "ready"

        key = ec.generate_private_key(ec.SECP256R1())
        final = client.finalize(order.json()["finalize"], csr_for(key, ["api.example.com"]))
        chain = x509.load_pem_x509_certificates(client.post(final.json()["certificate"]).body)

    issued = schedpki.certs.assert_issued(san="api.example.com", mount="pki_int", role="web")
    assert issued.certificate == chain[0]
    order = schedpki.acme.assert_order(identifier="api.example.com", status="valid")  # the double's records
    assert order.serial_number == issued.serial_number
    schedpki.acme.assert_account(contact="mailto:ops@example.com", directory="roles/web/acme/")
    assert client.revoke(chain[0].public_bytes(serialization.Encoding.DER)).status == 200
    schedpki.certs.assert_revoked(san="api.example.com")


@pytest.mark.schedpki(seed="pki.yaml")
def test_client_retries_after_bad_nonce(schedpki):
    client = AcmeClient(schedpki.enable_acme("pki_int"))
    schedpki.acme_knobs(bad_nonce_share=1.0)  # every nonce refused, as a server under load may do
    refused = client.new_account()
    assert refused.status == 400
    assert refused.json()["type"] == "urn:ietf:params:acme:error:badNonce"
    schedpki.acme_knobs(bad_nonce_share=0.0)
    assert client.new_account().status == 201  # a fresh nonce (HEAD new-nonce) and the retry succeeds
