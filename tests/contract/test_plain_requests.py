"""Contract: plain ``requests`` for the paths no client library wraps.

Secrets half (against the double and, marked ``parity``, a real ``bao server -dev``):
``revoke-with-key``, and the ``issuer/:issuer_ref/...`` variants - ``issue/:role``, ``sign/:role``,
``sign-intermediate``, ``sign-self-issued``, ``sign-verbatim(/:role)`` - plus the per-issuer fetch
paths (``issuer/:ref``, ``/pem``, ``/der``, ``/json``, ``/crl/pem``). References are tried as the
issuer id, the issuer name and ``default``.

Scheduler half (against the double only; there is no real Nomad here): blocking queries. A blocked
GET returns after a write made by another thread, every wait is bounded.
"""

from __future__ import annotations

import datetime
import threading
import time

import pytest
import requests
from contract_helpers import h, unique_mount
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

MULTI = "1 error occurred:\n\t* {}\n\n"
TIMEOUT = 30


class Api:
    """``requests`` against one secrets server with the root token (``X-Vault-Token``)."""

    def __init__(self, url: str, mount: str):
        self.url = url
        self.mount = mount
        self.session = requests.Session()
        self.session.headers["X-Vault-Token"] = "root"

    def call(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, f"{self.url}/v1/{path.format(m=self.mount)}", timeout=TIMEOUT, **kwargs)

    def ok(self, method: str, path: str, **kwargs) -> dict:
        r = self.call(method, path, **kwargs)
        assert r.status_code == 200, f"{method} {path} -> {r.status_code} {r.text}"
        return r.json()


@pytest.fixture
def api(request, target):
    """A mount with two EC roots (``root``, the default, and ``other``) and the role ``web``."""
    name = unique_mount("req_", request)
    a = Api(target[1], name)
    assert a.call("POST", f"sys/mounts/{name}", json={"type": "pki"}).status_code == 204
    assert a.call("POST", f"sys/mounts/{name}/tune", json={"max_lease_ttl": "87600h"}).status_code == 204
    a.root = a.ok("POST", "{m}/root/generate/internal", json={
        "common_name": "Req Root", "ttl": "87600h", "key_type": "ec", "issuer_name": "root"})["data"]
    a.other = a.ok("POST", "{m}/issuers/generate/root/internal", json={
        "common_name": "Other Root", "ttl": "87600h", "key_type": "ec", "issuer_name": "other"})["data"]
    a.ok("POST", "{m}/roles/web", json={"allowed_domains": ["example.com"], "allow_subdomains": True,
                                        "key_type": "ec", "ttl": "1h", "max_ttl": "2h"})
    yield a
    a.call("DELETE", f"sys/mounts/{name}")
    a.session.close()


def _issuer_subject(pem: str) -> list[str]:
    return h.cert_facts(pem)["subject"]


def _self_signed_ca(cn: str) -> str:
    key = h.ec_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = h.utcnow()
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode())


# ------------------------------------------------------------------------------------- revoke-with-key


def test_revoke_with_key(api):
    first = api.ok("POST", "{m}/issue/web", json={"common_name": "a.example.com"})["data"]
    second = api.ok("POST", "{m}/issue/web", json={"common_name": "b.example.com"})["data"]

    by_serial = api.ok("POST", "{m}/revoke-with-key", json={"serial_number": first["serial_number"],
                                                           "private_key": first["private_key"]})
    assert sorted(by_serial["data"]) == ["revocation_time", "revocation_time_rfc3339", "state"]
    assert by_serial["data"]["state"] == "revoked" and by_serial["warnings"] is None
    by_cert = api.ok("POST", "{m}/revoke-with-key", json={"certificate": second["certificate"],
                                                         "private_key": second["private_key"]})
    assert by_cert["data"]["state"] == "revoked"
    listed = api.call("LIST", "{m}/certs/revoked").json()["data"]["keys"]
    assert listed == sorted([first["serial_number"], second["serial_number"]])
    # repeating is harmless and answers the original revocation time
    again = api.ok("PUT", "{m}/revoke-with-key", json={"serial_number": first["serial_number"].replace(":", "-"),
                                                      "private_key": first["private_key"]})
    assert again["data"] == by_serial["data"]


def test_revoke_with_key_refusals(api):
    leaf = api.ok("POST", "{m}/issue/web", json={"common_name": "a.example.com"})["data"]
    other = api.ok("POST", "{m}/issue/web", json={"common_name": "b.example.com"})["data"]
    cases = [
        ({"serial_number": leaf["serial_number"], "private_key": other["private_key"]}, 500,
         MULTI.format("provided private key does not match certificate's public key")),
        ({"serial_number": leaf["serial_number"]}, 400, "Must have private key to revoke via the /revoke-with-key path."),
        ({"serial_number": leaf["serial_number"], "certificate": leaf["certificate"], "private_key": leaf["private_key"]},
         400, "Must provide either the certificate or the serial to revoke; not both."),
        ({"private_key": leaf["private_key"]}, 400, "The serial number or certificate to revoke must be provided."),
        ({"serial_number": "01:02:03", "private_key": leaf["private_key"]}, 400, "certificate with serial 01:02:03 not found."),
    ]
    for body, status, text in cases:
        r = api.call("POST", "{m}/revoke-with-key", json=body)
        assert (r.status_code, r.headers["Content-Type"], r.json()) == (status, "application/json", {"errors": [text]}), body
    assert api.call("LIST", "{m}/certs/revoked").status_code == 404


# ------------------------------------------------------------------------------------- issuer/:ref/...


@pytest.mark.parametrize("ref", ["id", "name", "default"])
def test_issuer_ref_issue_and_sign(api, ref):
    value = {"id": api.root["issuer_id"], "name": "root", "default": "default"}[ref]
    issued = api.ok("POST", f"{{m}}/issuer/{value}/issue/web", json={"common_name": "a.example.com"})["data"]
    assert issued["issuing_ca"] == api.root["certificate"] and issued["ca_chain"] == [api.root["certificate"]]
    assert h.cert_facts(issued["certificate"], issued["issuing_ca"])["verifies_with_issuer"]
    key = h.ec_key()
    signed = api.ok("POST", f"{{m}}/issuer/{value}/sign/web", json={"csr": h.make_csr(key, "s.example.com")})["data"]
    assert h.load_certificate(signed["certificate"]).public_key() == key.public_key()
    assert signed["issuing_ca"] == api.root["certificate"]


def test_issuer_ref_picks_a_non_default_issuer(api):
    issued = api.ok("POST", "{m}/issuer/other/issue/web", json={"common_name": "a.example.com", "ttl": "10m"})["data"]
    assert issued["issuing_ca"] == api.other["certificate"]
    facts = h.cert_facts(issued["certificate"], api.other["certificate"])
    assert facts["issuer"] == ["commonName=Other Root"] and facts["verifies_with_issuer"]
    assert facts["validity_seconds"] in (630, 629)
    stored = api.ok("GET", f"{{m}}/cert/{issued['serial_number']}")["data"]
    assert stored["certificate"] == issued["certificate"]
    r = api.call("POST", "{m}/issuer/nope/issue/web", json={"common_name": "a.example.com"})
    assert r.status_code == 500 and r.json() == {"errors": [MULTI.format(
        "could not fetch the CA certificate (was one set?): unable to find PKI issuer for reference: nope")]}
    r = api.call("POST", "{m}/issuer/other/issue/missing", json={"common_name": "a.example.com"})
    assert r.status_code == 400 and r.json() == {"errors": ["unknown role: missing"]}


def test_issuer_ref_sign_intermediate(api):
    key = h.ec_key()
    signed = api.ok("POST", "{m}/issuer/other/sign-intermediate", json={
        "csr": h.make_csr(key, "Other Int"), "common_name": "Other Int", "ttl": "8760h"})
    data = signed["data"]
    assert data["issuing_ca"] == api.other["certificate"] and data["ca_chain"] == [data["certificate"], api.other["certificate"]]
    facts = h.cert_facts(data["certificate"], api.other["certificate"])
    assert facts["issuer"] == ["commonName=Other Root"] and facts["basic_constraints"] == {"ca": True, "path_length": None}
    assert facts["verifies_with_issuer"] and facts["validity_seconds"] in (31536030, 31536029)


def test_issuer_ref_sign_self_issued_needs_no_sudo(api):
    policy = f'path "{api.mount}/*" {{ capabilities = ["create", "update", "read"] }}'
    assert api.call("POST", "sys/policies/acl/signer", json={"policy": policy}).status_code == 204
    token = api.ok("POST", "auth/token/create", json={"policies": ["signer"]})["auth"]["client_token"]
    submitted = _self_signed_ca("Rolled Root")
    headers = {"X-Vault-Token": token}
    done = api.call("POST", "{m}/issuer/other/sign-self-issued", json={"certificate": submitted}, headers=headers)
    assert done.status_code == 200 and sorted(done.json()["data"]) == ["certificate", "issuing_ca"]
    facts = h.cert_facts(done.json()["data"]["certificate"], api.other["certificate"])
    assert facts["subject"] == ["commonName=Rolled Root"] and facts["issuer"] == ["commonName=Other Root"]
    assert facts["verifies_with_issuer"]
    # the same without the issuer in the path is a root-protected path: sudo is needed
    denied = api.call("POST", "{m}/root/sign-self-issued", json={"certificate": submitted}, headers=headers)
    assert denied.status_code == 403 and denied.json() == {"errors": [MULTI.format("permission denied")]}


def test_issuer_ref_sign_verbatim(api):
    key = h.ec_key()
    csr = h.make_csr(key, "anything.invalid", dns=["x.invalid"])
    plain = api.ok("POST", "{m}/issuer/other/sign-verbatim", json={"csr": csr, "ttl": "3h"})
    assert plain["warnings"] is None and plain["data"]["issuing_ca"] == api.other["certificate"]
    facts = h.cert_facts(plain["data"]["certificate"], api.other["certificate"])
    assert facts["subject"] == ["commonName=anything.invalid"] and facts["verifies_with_issuer"]
    assert facts["validity_seconds"] in (10830, 10829)
    # with a role: the role's max_ttl (2h) caps the request
    with_role = api.ok("POST", "{m}/issuer/root/sign-verbatim/web", json={"csr": csr, "ttl": "3h"})
    assert with_role["data"]["issuing_ca"] == api.root["certificate"]
    assert h.cert_facts(with_role["data"]["certificate"])["validity_seconds"] in (7230, 7229)
    assert with_role["warnings"] == ['TTL "3h0m0s" is longer than permitted maxTTL "2h0m0s", so maxTTL is being used']
    r = api.call("POST", "{m}/issuer/root/sign-verbatim/missing", json={"csr": csr})
    assert r.status_code == 400 and r.json() == {"errors": ["unknown role: missing"]}


def test_issuer_ref_fetch_paths(api):
    anonymous = requests.Session()
    base = f"{api.url}/v1/{api.mount}/issuer"
    pem = anonymous.get(f"{base}/other/pem", timeout=TIMEOUT)
    assert (pem.status_code, pem.headers["Content-Type"]) == (200, "application/pem-certificate-chain")
    assert pem.text == api.other["certificate"] + "\n"
    der = anonymous.get(f"{base}/{api.other['issuer_id']}/der", timeout=TIMEOUT)
    assert der.headers["Content-Type"] == "application/pkix-cert"
    assert x509.load_der_x509_certificate(der.content) == h.load_certificate(api.other["certificate"])
    as_json = anonymous.get(f"{base}/default/json", timeout=TIMEOUT).json()["data"]
    assert sorted(as_json) == ["ca_chain", "certificate", "issuer_id", "issuer_name"]
    assert (as_json["issuer_id"], as_json["issuer_name"]) == (api.root["issuer_id"], "root")
    crl = anonymous.get(f"{base}/other/crl/pem", timeout=TIMEOUT)
    assert crl.status_code == 200
    parsed = x509.load_pem_x509_crl(crl.content)
    assert parsed.issuer == h.load_certificate(api.other["certificate"]).subject and len(parsed) == 0
    full = api.ok("GET", "{m}/issuer/other")["data"]
    assert full["issuer_name"] == "other" and full["key_id"] == api.other["key_id"]
    assert anonymous.get(f"{base}/other", timeout=TIMEOUT).status_code == 403  # the full record needs a token
    anonymous.close()


# ------------------------------------------------------------------------------------- scheduler: blocking

METHOD = {"Name": "okta", "Type": "OIDC", "TokenLocality": "global", "MaxTokenTTL": "1h",
          "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "client"}}


def _later(delay: float, fn) -> threading.Thread:
    def run():
        time.sleep(delay)
        fn()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_blocking_list_returns_after_a_write(schedpki):
    url, headers = schedpki.scheduler.url, schedpki.scheduler.headers()
    first = requests.get(f"{url}/v1/acl/auth-methods", timeout=TIMEOUT)
    index = int(first.headers["X-Nomad-Index"])
    thread = _later(0.3, lambda: requests.put(f"{url}/v1/acl/auth-method", json=METHOD, headers=headers, timeout=TIMEOUT))
    start = time.monotonic()
    blocked = requests.get(f"{url}/v1/acl/auth-methods", params={"index": index, "wait": "10s"}, timeout=TIMEOUT)
    elapsed = time.monotonic() - start
    thread.join(10)
    assert 0.25 <= elapsed < 5
    assert blocked.status_code == 200 and [m["Name"] for m in blocked.json()] == ["okta"]
    assert int(blocked.headers["X-Nomad-Index"]) > index and blocked.headers["X-Nomad-KnownLeader"] == "true"


def test_blocking_read_returns_on_delete_with_404(schedpki):
    url, headers = schedpki.scheduler.url, schedpki.scheduler.headers()
    created = requests.put(f"{url}/v1/acl/auth-method", json=METHOD, headers=headers, timeout=TIMEOUT)
    index = int(created.headers["X-Nomad-Index"])
    deleted: dict = {}

    def delete():
        deleted["r"] = requests.delete(f"{url}/v1/acl/auth-method/okta", headers=headers, timeout=TIMEOUT)

    thread = _later(0.3, delete)
    blocked = requests.get(f"{url}/v1/acl/auth-method/okta", params={"index": index, "wait": "10s"}, headers=headers,
                           timeout=TIMEOUT)
    thread.join(10)
    assert (blocked.status_code, blocked.text) == (404, "ACL auth-method not found")
    assert blocked.headers["X-Nomad-Index"] == deleted["r"].headers["X-Nomad-Index"]


def test_blocking_read_ignores_unrelated_writes_and_times_out(schedpki):
    url, headers = schedpki.scheduler.url, schedpki.scheduler.headers()
    created = requests.put(f"{url}/v1/acl/auth-method", json=METHOD, headers=headers, timeout=TIMEOUT)
    index = int(created.headers["X-Nomad-Index"])
    other = {**METHOD, "Name": "other"}
    thread = _later(0.1, lambda: requests.put(f"{url}/v1/acl/auth-method", json=other, headers=headers, timeout=TIMEOUT))
    start = time.monotonic()
    blocked = requests.get(f"{url}/v1/acl/auth-method/okta", params={"index": index, "wait": "600ms"}, headers=headers,
                           timeout=TIMEOUT)
    elapsed = time.monotonic() - start
    thread.join(10)
    assert 0.59 <= elapsed < 3  # the wait (plus at most 1/16 jitter), not the unrelated write
    assert blocked.status_code == 200 and blocked.headers["X-Nomad-Index"] == str(index)
    bad = requests.get(f"{url}/v1/acl/auth-methods", params={"index": "-1"}, timeout=TIMEOUT)
    assert (bad.status_code, bad.text) == (400, "Invalid index")
