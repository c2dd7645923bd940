"""Helpers for the SSO tests: keys, JWT methods, JWT minting and a tiny JWKS/discovery server."""

from __future__ import annotations

import datetime
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def ec_key():
    return ec.generate_private_key(ec.SECP256R1())


def public_pem(key) -> str:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def mint(key, claims: dict, alg: str = "RS256", headers: dict | None = None) -> str:
    """A compact JWS over ``claims`` as given (any claim types, unlike ``jwt.encode``)."""
    return jwt.PyJWS().encode(json.dumps(claims).encode(), key, algorithm=alg, headers=headers)


def jwt_method(name: str = "ci", config: dict | None = None, **overrides) -> dict:
    body = {"Name": name, "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
            "Config": {"BoundAudiences": ["nomad"], "ClaimMappings": {"team": "team", "user": "user"},
                       "ListClaimMappings": {"groups": "groups"}, **(config or {})}}
    body.update(overrides)
    return body


def now_claims(**extra) -> dict:
    t = int(time.time())
    return {"aud": "nomad", "iat": t, "nbf": t, "exp": t + 300, "sub": "alice", **extra}


class KeyServer:
    """Serves ``/jwks`` and ``/.well-known/openid-configuration`` (issuer = its own URL) on 127.0.0.1."""

    def __init__(self, jwks: dict, issuer: str | None = None, tls=None):
        self.jwks = jwks
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                if self.path == "/jwks":
                    body = json.dumps(outer.jwks).encode()
                elif self.path == "/.well-known/openid-configuration":
                    body = json.dumps({"issuer": outer.issuer or outer.url, "jwks_uri": outer.url + "/jwks"}).encode()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:  # a TLSMaterial: serve HTTPS with its server certificate
            self.httpd.socket = tls.server_context().wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self.issuer = issuer
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def jwk_of(key, kid: str) -> dict:
    data = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {**data, "kid": kid, "alg": "RS256", "use": "sig"}


def go_time(text: str) -> datetime.datetime:
    """An RFC 3339 UTC time as Nomad writes it (0-9 fraction digits, ``Z``), to microseconds."""
    main, _, frac = text.removesuffix("Z").partition(".")
    return datetime.datetime.fromisoformat(main).replace(
        microsecond=int((frac + "000000")[:6]), tzinfo=datetime.timezone.utc)
