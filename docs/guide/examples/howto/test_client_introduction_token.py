import jwt
import requests


def test_a_client_introduction_token_verifies_with_the_jwks(schedpki):
    url, root = schedpki.scheduler.url, {"X-Nomad-Token": schedpki.scheduler.token}
    answer = requests.put(f"{url}/v1/acl/identity/client-introduction-token", headers=root,
                          json={"TTL": "10m", "NodeName": "n1"})
    assert answer.status_code == 200
    (key,) = requests.get(f"{url}/.well-known/jwks.json").json()["keys"]
    claims = jwt.decode(answer.json()["JWT"], jwt.PyJWK(key).key, algorithms=["RS256"], audience="nomadproject.io")
    assert claims["sub"] == "node-introduction:global:default:n1:default"
