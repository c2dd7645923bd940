"""The policy service as the test's own HTTP(S) service, configured through ``config/external-policy``."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from ent_helpers import cert_of, cn_of, make_csr, simple_policy
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from pytest_schedpki.wire.tls import create_tls_material


def _configure(ent, url, **extra):
    r = ent.post("pki/config/external-policy", {"enabled": True, "external_service_url": url, **extra})
    assert r.status_code == 200, r.text
    return r


def test_http_service_round_trip(ent, policy_http):
    policy_http.behaviour = lambda request: (200, simple_policy(warnings=["via http"])(request))
    _configure(ent, policy_http.url)
    r = ent.post("pki/external-policy/issue/web", {"common_name": "http.example.com", "key_type": "ec"})
    assert r.status_code == 200, r.text
    assert r.json()["warnings"] == ["via http", "Endpoint ignored these unrecognized parameters: [common_name]"]
    assert cn_of(cert_of(r.json()["data"]["certificate"])) == "http.example.com"
    assert len(policy_http.received) == 1
    assert policy_http.headers[0]["Content-Type"] == "application/json"
    assert policy_http.received[0]["vault_request_values"]["policy_name"] == "web"
    assert ent.get("pki/config/external-policy").json()["data"]["external_service_validated"] is True


def test_non_200_body_is_not_shown(ent, policy_http):
    policy_http.behaviour = lambda request: (503, {"error": "secret internal detail"})
    _configure(ent, policy_http.url)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert (r.status_code, r.json()) == (500, {"errors": [
        "1 error occurred:\n\t* external policy service returned HTTP status 503\n\n"]})
    assert ent.get("pki/config/external-policy").json()["data"]["external_service_validated"] is False


def test_invalid_json_answer(ent, policy_http):
    policy_http.behaviour = lambda request: (200, b"[1, 2]")
    _configure(ent, policy_http.url)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert r.status_code == 500
    assert r.json() == {"errors": ["1 error occurred:\n\t* failed to parse the external policy service response: "
                                   "json: cannot unmarshal array into Go value of type certutil.CIEPSResponse\n\n"]}


def test_connection_refused(ent):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/evaluate"
    _configure(ent, url)
    r = ent.post("pki/external-policy/sign", {"csr": make_csr()[0]})
    assert (r.status_code, r.json()) == (500, {"errors": [
        f'1 error occurred:\n\t* failed to call the external policy service: Post "{url}": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused\n\n"]})


def test_timeout_is_honoured(ent, policy_http):
    def slow(request):
        time.sleep(2)
        return 200, simple_policy()(request)

    policy_http.behaviour = slow
    _configure(ent, policy_http.url, timeout="1s")
    started = time.monotonic()
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert 0.9 < time.monotonic() - started < 1.9
    assert (r.status_code, r.json()) == (500, {"errors": [
        f'1 error occurred:\n\t* failed to call the external policy service: Post "{policy_http.url}": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)\n\n"]})


def test_redirects_are_not_followed(ent, policy_http):
    policy_http.behaviour = lambda request: (307, b"")
    _configure(ent, policy_http.url)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert r.json() == {"errors": ["1 error occurred:\n\t* external policy service returned HTTP status 307\n\n"]}
    assert len(policy_http.received) == 1


@pytest.fixture
def https_policy():
    """An HTTPS policy service on 127.0.0.1 with the double's TLS material (CA + server cert)."""
    material = create_tls_material("127.0.0.1")
    received = []

    def app(environ, start_response):
        request = json.loads(Request(environ).get_data())
        received.append(request)
        body = json.dumps(simple_policy()(request)).encode()
        return Response(body, mimetype="application/json")(environ, start_response)

    server = make_server("127.0.0.1", 0, app, threaded=True, ssl_context=material.server_context())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_port}/evaluate", material, received
    server.shutdown()


def test_https_service_with_trusted_ca(ent, https_policy):
    url, material, received = https_policy
    with open(material.ca_path) as fh:
        ca_pem = fh.read()
    _configure(ent, url, trusted_ca=ca_pem)
    r = ent.post("pki/external-policy/issue", {"common_name": "tls.example.com", "key_type": "ec"})
    assert r.status_code == 200, r.text
    assert len(received) == 1


def test_https_service_with_untrusted_certificate(ent, https_policy):
    url, _, received = https_policy
    other = create_tls_material("127.0.0.1")
    with open(other.ca_path) as fh:
        _configure(ent, url, trusted_ca=fh.read())
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert r.status_code == 500
    assert r.json()["errors"][0].startswith(f'1 error occurred:\n\t* failed to call the external policy service: '
                                            f'Post "{url}": tls: ')
    assert received == []


def test_https_service_with_pinned_leaf(ent, https_policy):
    url, material, received = https_policy
    with open(material.cert_path) as fh:
        leaf_pem = fh.read().split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n"
    _configure(ent, url, trusted_leaf_certificate_bundle=leaf_pem)
    assert ent.post("pki/external-policy/issue", {"key_type": "ec"}).status_code == 200
    other = create_tls_material("127.0.0.1")
    with open(other.cert_path) as fh:
        wrong_leaf = fh.read().split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n"
    _configure(ent, url, trusted_leaf_certificate_bundle=wrong_leaf)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert (r.status_code, r.json()) == (500, {"errors": [
        f'1 error occurred:\n\t* failed to call the external policy service: Post "{url}": '
        "tls: server certificate is not in trusted_leaf_certificate_bundle\n\n"]})
    assert len(received) == 1
