import requests


def test_https(schedpki):
    assert schedpki.secrets.url.startswith("https://127.0.0.1:")
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/health", verify=schedpki.ca_path)
    assert r.status_code == 200
