"""The OCSP responder and the ACME server of the ``pki`` mount (set up by :func:`pki.setup`), timed
identically on both servers; each server gets its own inputs (keyed by its base URL), made untimed.

* OCSP: a DER request (``OCSPRequestBuilder``, SHA-1 CertID as ``openssl ocsp`` sends it) for an EC
  certificate issued on that server, ``POST <mount>/ocsp`` (``application/ocsp-request``) and
  ``GET <mount>/ocsp/<percent-encoded base64>``; and the POST for a revoked certificate. Each answer is
  checked once, untimed: 200, ``application/ocsp-response``, a successful response with the expected
  certificate status.
* ACME (``pki/acme/``, enabled as an operator does on OpenBao: :func:`pytest_schedpki.acme.enable_acme`):
  ``HEAD new-nonce``; ``new-account`` with a fresh ES256 account key per request (keys made untimed
  before each round); ``new-order`` for one ``dns`` name under example.com by one existing account (the
  default directory policy, ``sign-verbatim``, takes any name). Every JWS carries the ``Replay-Nonce`` of
  the previous answer on that client thread (the first of a round is fetched untimed), so only the
  timed requests run. The JWS is signed by the client (this process) inside the timed loop: that cost
  (:func:`jws_cost`) bounds the rate of both servers alike and is not in the server CPU figure.

OCSP and ACME clients send no Vault token: these requests drop the session's ``X-Vault-Token``.
"""

from __future__ import annotations

import base64
import json
import sys
import time
from collections.abc import Callable
from urllib.parse import quote

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509 import ocsp
from pki import Operation

from pytest_schedpki.acme import AcmeClient, enable_acme

NO_TOKEN = {"X-Vault-Token": None}  # requests drops a header merged as None
OCSP_POST = {**NO_TOKEN, "Content-Type": "application/ocsp-request"}
JOSE = {**NO_TOKEN, "Content-Type": "application/jose+json"}


def _session(token: str) -> requests.Session:
    session = requests.Session()
    session.headers["X-Vault-Token"] = token
    return session


class OcspInputs:
    """Per base URL: the DER OCSP requests ``good`` and ``revoked`` (made once, checked once)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.by_base: dict[str, dict[str, bytes]] = {}

    def get_path(self, base: str) -> str:
        return f"{base}/v1/pki/ocsp/" + quote(base64.b64encode(self.by_base[base]["good"]).decode(), safe="")

    def prepare(self, base: str, count: int, pool: list[requests.Session]) -> int:
        """Issue (and revoke) the certificates on ``base`` once; check each form answers as expected.
        Raises RuntimeError on an unexpected answer."""
        if base in self.by_base:
            return 0
        session = _session(self.token)
        requests_der = {}
        for kind in ("good", "revoked"):
            response = session.post(f"{base}/v1/pki/issue/ec", json={"common_name": f"ocsp-{kind}.example.com"})
            response.raise_for_status()
            data = response.json()["data"]
            cert = x509.load_pem_x509_certificate(data["certificate"].encode())
            issuer = x509.load_pem_x509_certificate(data["issuing_ca"].encode())
            if kind == "revoked":
                session.post(f"{base}/v1/pki/revoke", json={"serial_number": data["serial_number"]}).raise_for_status()
            requests_der[kind] = (ocsp.OCSPRequestBuilder().add_certificate(cert, issuer, hashes.SHA1()).build()
                                  .public_bytes(serialization.Encoding.DER))
        self.by_base[base] = requests_der
        checks = [("POST good", session.post(f"{base}/v1/pki/ocsp", data=requests_der["good"], headers=OCSP_POST),
                   ocsp.OCSPCertStatus.GOOD),
                  ("GET good", session.get(self.get_path(base), headers=NO_TOKEN), ocsp.OCSPCertStatus.GOOD),
                  ("POST revoked", session.post(f"{base}/v1/pki/ocsp", data=requests_der["revoked"], headers=OCSP_POST),
                   ocsp.OCSPCertStatus.REVOKED)]
        for label, response, status in checks:
            answer = (ocsp.load_der_ocsp_response(response.content)
                      if response.headers.get("Content-Type") == "application/ocsp-response" else None)
            if (response.status_code != 200 or answer is None
                    or answer.response_status != ocsp.OCSPResponseStatus.SUCCESSFUL or answer.certificate_status != status):
                raise RuntimeError(f"OCSP {label} on {base}: {response.status_code} {response.headers} {response.content[:80]!r}")
        return 0


class AcmeInputs:
    """Per base URL: ACME enabled on ``pki``, a signer (:class:`AcmeClient`, also the account of the
    ``new-order`` rows), account keys for ``new-account`` rounds and each client thread's next nonce."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.clients: dict[str, AcmeClient] = {}
        self.keys: dict[str, list[ec.EllipticCurvePrivateKey]] = {}
        self.nonces: dict[int, str] = {}  # id(session) -> the nonce its next JWS carries

    def url(self, base: str, name: str) -> str:
        return f"{base}/v1/pki/acme/{name}"

    def client(self, base: str) -> AcmeClient:
        """Enable ACME on ``base`` (once) and create the account the ``new-order`` rows use."""
        if base not in self.clients:
            directory = enable_acme(base, "pki", self.token)
            client = AcmeClient(directory)
            answer = client.new_account(contact=["mailto:bench@example.com"])
            if answer.status != 201 or not client.kid:
                raise RuntimeError(f"ACME new-account on {base}: {answer.status} {answer.body[:300]!r}")
            self.clients[base] = client
            self.keys[base] = []
            if len(self.clients) == 1:
                print(f"ACME: the client signs a JWS in {jws_cost():.0f} us of its CPU", file=sys.stderr, flush=True)
        return self.clients[base]

    def prepare_nonces(self, base: str, count: int, pool: list[requests.Session]) -> int:
        """Untimed: one fresh nonce per client thread of the coming round."""
        self.client(base)
        for session in pool:
            response = session.head(self.url(base, "new-nonce"), headers=NO_TOKEN)
            if response.status_code != 200 or "Replay-Nonce" not in response.headers:
                raise RuntimeError(f"ACME new-nonce on {base}: {response.status_code} {response.headers}")
            self.nonces[id(session)] = response.headers["Replay-Nonce"]
        return 0

    def prepare_accounts(self, base: str, count: int, pool: list[requests.Session]) -> int:
        """Untimed: ``count`` fresh P-256 account keys, and the nonces; returns the first key's index."""
        self.prepare_nonces(base, count, pool)
        keys = self.keys[base]
        first = len(keys)
        keys.extend(ec.generate_private_key(ec.SECP256R1()) for _ in range(count))
        return first

    def post(self, session: requests.Session, base: str, name: str, payload: dict, key=None) -> requests.Response:
        """Sign ``payload`` for ``acme/<name>`` with the thread's nonce (``jwk`` of ``key`` when given,
        else the account's ``kid``), POST it, keep the answer's ``Replay-Nonce`` for the next one."""
        url = self.url(base, name)
        client = self.clients[base]
        jws = (client.jws(url, payload, use_jwk=True, key=key, nonce=self.nonces.pop(id(session)))
               if key is not None else client.jws(url, payload, nonce=self.nonces.pop(id(session))))
        response = session.post(url, data=json.dumps(jws), headers=JOSE)
        nonce = response.headers.get("Replay-Nonce")
        if nonce:
            self.nonces[id(session)] = nonce
        return response


def jws_cost(samples: int = 200) -> float:
    """Client CPU microseconds to sign one ``new-order`` JWS (ES256, as the timed rows do)."""
    client = AcmeClient("http://127.0.0.1:1/v1/pki/acme/directory")
    client.kid = "http://127.0.0.1:1/v1/pki/acme/account/x"
    started = time.process_time()
    for n in range(samples):
        json.dumps(client.jws("http://127.0.0.1:1/v1/pki/acme/new-order",
                              {"identifiers": [{"type": "dns", "value": f"o{n}.example.com"}]}, nonce="n"))
    return (time.process_time() - started) / samples * 1e6


def operations(token: str) -> list[Operation]:
    """The OCSP and ACME operations, in run order."""
    ocsp_in, acme_in = OcspInputs(token), AcmeInputs(token)

    def ocsp_post(kind: str) -> Callable[[requests.Session, str, int], requests.Response]:
        def op(session: requests.Session, base: str, n: int) -> requests.Response:
            return session.post(f"{base}/v1/pki/ocsp", data=ocsp_in.by_base[base][kind], headers=OCSP_POST)
        return op

    def ocsp_get(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.get(ocsp_in.get_path(base), headers=NO_TOKEN)

    def new_nonce(session: requests.Session, base: str, n: int) -> requests.Response:
        return session.head(acme_in.url(base, "new-nonce"), headers=NO_TOKEN)

    def new_account(session: requests.Session, base: str, n: int) -> requests.Response:
        return acme_in.post(session, base, "new-account", {"termsOfServiceAgreed": True}, key=acme_in.keys[base][n])

    def new_order(session: requests.Session, base: str, n: int) -> requests.Response:
        return acme_in.post(session, base, "new-order", {"identifiers": [{"type": "dns", "value": f"o{n}.example.com"}]})

    return [
        Operation("ocsp_post", "OCSP POST (DER request), good certificate", ocsp_post("good"), prepare=ocsp_in.prepare),
        Operation("ocsp_get", "OCSP GET (base64 request in the path), good certificate", ocsp_get,
                  prepare=ocsp_in.prepare),
        Operation("ocsp_revoked", "OCSP POST, revoked certificate", ocsp_post("revoked"), prepare=ocsp_in.prepare),
        Operation("acme_nonce", "ACME HEAD new-nonce", new_nonce, prepare=acme_in.prepare_nonces),
        Operation("acme_account", "ACME new-account (fresh ES256 key, JWS signed by the client)", new_account,
                  prepare=acme_in.prepare_accounts),
        Operation("acme_order", "ACME new-order, 1 dns name (JWS signed by the client)", new_order,
                  prepare=acme_in.prepare_nonces),
    ]
