"""A small RFC 8555 client for tests: signs flattened-JSON JWS requests (PyJWT) against an ACME
directory of the double (or of a real OpenBao), keeps the nonce and the account URL, and exposes every
step so a test can also send what a client should not (a reused nonce, a wrong ``url``, a bad
signature).

    client = AcmeClient(double.secrets_url + "/v1/pki/acme/directory")
    client.new_account(contact=["mailto:ops@example.com"], terms_agreed=True)
    order = client.new_order(["www.example.com"])
    ...

Answers are :class:`AcmeAnswer` (``status``, ``headers``, ``body`` bytes, ``json()``); nothing raises
on an HTTP error status. Only the standard library, ``cryptography`` and PyJWT are used.
"""

from __future__ import annotations

import base64
import hashlib
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import get_default_algorithms

__all__ = ["AcmeAnswer", "AcmeClient", "b64url", "csr_for", "jwk_of", "thumbprint_of"]


def b64url(data: bytes | str) -> str:
    """Unpadded base64url (JOSE's encoding)."""
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _int(value: int, size: int | None = None) -> str:
    length = size or max(1, (value.bit_length() + 7) // 8)
    return b64url(value.to_bytes(length, "big"))


def jwk_of(key: Any) -> dict[str, str]:
    """The public JWK of a cryptography private (or public) key: EC P-256/384/521, RSA, Ed25519."""
    public = key.public_key() if hasattr(key, "public_key") else key
    if isinstance(public, ec.EllipticCurvePublicKey):
        numbers = public.public_numbers()
        crv = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}[public.curve.name]
        size = (public.curve.key_size + 7) // 8
        return {"crv": crv, "kty": "EC", "x": _int(numbers.x, size), "y": _int(numbers.y, size)}
    if isinstance(public, rsa.RSAPublicKey):
        numbers = public.public_numbers()
        return {"e": _int(numbers.e), "kty": "RSA", "n": _int(numbers.n)}
    if isinstance(public, ed25519.Ed25519PublicKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(raw)}
    raise TypeError(f"unsupported key {type(public).__name__}")


def thumbprint_of(key: Any) -> str:
    """The RFC 7638 SHA-256 thumbprint of ``key``'s JWK, base64url."""
    text = json.dumps(jwk_of(key), separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(text.encode()).digest())


def _alg_of(key: Any) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {256: "ES256", 384: "ES384", 521: "ES512"}[key.curve.key_size]
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    return "EdDSA"


@dataclass
class AcmeAnswer:
    """One HTTP answer: ``status`` (int), ``headers`` (lower-cased names), ``body`` (bytes)."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON (a resource, or an RFC 7807 problem document on a refusal);
        ``json.JSONDecodeError`` for a body that is not JSON (a certificate chain, a HEAD answer)."""
        return json.loads(self.body)


class AcmeClient:
    """A client of the ACME directory at ``directory_url``; ``key`` is the account key (a fresh EC
    P-256 key by default), ``alg`` its JWS algorithm (derived from the key by default)."""

    def __init__(self, directory_url: str, key: Any = None, alg: str | None = None, timeout: float = 30.0):
        self.directory_url = directory_url
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.alg = alg or _alg_of(self.key)
        self.timeout = timeout
        self.kid: str | None = None
        self.nonce: str | None = None
        self._directory: dict[str, Any] | None = None

    # -- transport ---------------------------------------------------------------------------------
    def request(self, method: str, url: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> AcmeAnswer:
        """One HTTP request; a ``Replay-Nonce`` answered is kept for the next signed request."""
        req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer = AcmeAnswer(resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read())
        except urllib.error.HTTPError as exc:
            answer = AcmeAnswer(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())
        if "replay-nonce" in answer.headers:
            self.nonce = answer.headers["replay-nonce"]
        return answer

    def directory(self) -> dict[str, Any]:
        """The directory object (fetched once)."""
        if self._directory is None:
            self._directory = self.request("GET", self.directory_url).json()
        return self._directory

    def new_nonce(self) -> str:
        """A fresh nonce from ``newNonce`` (HEAD)."""
        answer = self.request("HEAD", self.directory()["newNonce"])
        nonce = answer.headers.get("replay-nonce")
        if not nonce:
            raise RuntimeError("no Replay-Nonce header: tune the mount's allowed_response_headers")
        return nonce

    # -- signing -----------------------------------------------------------------------------------
    def jws(self, url: str, payload: Any, *, use_jwk: bool | None = None, nonce: str | None = None,
            key: Any = None, extra_header: dict[str, Any] | None = None) -> dict[str, str]:
        """The flattened JWS of ``payload`` (``None``: POST-as-GET's empty payload; bytes/str sent as
        is) for ``url``: ``jwk`` when there is no account yet (or ``use_jwk``), else ``kid``."""
        key = key or self.key
        header: dict[str, Any] = {"alg": self.alg if key is self.key else _alg_of(key), "url": url,
                                  "nonce": nonce if nonce is not None else (self.nonce or self.new_nonce())}
        if use_jwk or (use_jwk is None and self.kid is None):
            header["jwk"] = jwk_of(key)
        else:
            header["kid"] = self.kid
        sign_alg = header["alg"]  # an extra_header "alg" is only claimed, the key still signs with its own
        header.update(extra_header or {})
        if payload is None:
            body = b""
        elif isinstance(payload, (bytes, str)):
            body = payload.encode() if isinstance(payload, str) else payload
        else:
            body = json.dumps(payload).encode()
        protected, encoded = b64url(json.dumps(header)), b64url(body)
        signing_input = f"{protected}.{encoded}".encode()
        compact = get_default_algorithms()[sign_alg].sign(signing_input, key)
        self.nonce = None
        return {"protected": protected, "payload": encoded, "signature": b64url(compact)}

    def post(self, url: str, payload: Any = None, **jws_options: Any) -> AcmeAnswer:
        """A signed POST (``application/jose+json``)."""
        body = json.dumps(self.jws(url, payload, **jws_options)).encode()
        return self.request("POST", url, body, {"Content-Type": "application/jose+json"})

    # -- protocol steps ----------------------------------------------------------------------------
    def new_account(self, contact: list[str] | None = None, terms_agreed: bool = True, only_existing: bool = False,
                    eab: tuple[str, str] | None = None) -> AcmeAnswer:
        """``newAccount``; ``eab`` is ``(key id, base64url HMAC key)`` of ``new-eab``. Keeps the account URL."""
        url = self.directory()["newAccount"]
        payload: dict[str, Any] = {"termsOfServiceAgreed": terms_agreed}
        if contact is not None:
            payload["contact"] = contact
        if only_existing:
            payload["onlyReturnExisting"] = True
        if eab is not None:
            payload["externalAccountBinding"] = self.eab_binding(url, *eab)
        answer = self.post(url, payload, use_jwk=True)
        if answer.status in (200, 201) and "location" in answer.headers:
            self.kid = answer.headers["location"]
        return answer

    def eab_binding(self, url: str, key_id: str, hmac_key: str) -> dict[str, str]:
        """The ``externalAccountBinding`` JWS (HS256 over the account's JWK)."""
        protected = b64url(json.dumps({"alg": "HS256", "kid": key_id, "url": url}))
        payload = b64url(json.dumps(jwk_of(self.key)))
        secret = base64.urlsafe_b64decode(hmac_key + "=" * (-len(hmac_key) % 4))
        import hmac as _hmac
        signature = _hmac.new(secret, f"{protected}.{payload}".encode(), hashlib.sha256).digest()
        return {"protected": protected, "payload": payload, "signature": b64url(signature)}

    def new_order(self, names: list[str], ips: list[str] = ()) -> AcmeAnswer:
        """``newOrder`` for DNS ``names`` and ``ips`` (signed with the account's ``kid``): 201 with the
        order and its ``Location``, or the server's problem (e.g. 400 ``rejectedIdentifier``)."""
        identifiers = [{"type": "dns", "value": n} for n in names] + [{"type": "ip", "value": i} for i in ips]
        return self.post(self.directory()["newOrder"], {"identifiers": identifiers})

    def key_authorization(self, token: str) -> str:
        """``<token>.<thumbprint>``: what http-01 serves."""
        return f"{token}.{thumbprint_of(self.key)}"

    def dns_txt(self, token: str) -> str:
        """The dns-01 TXT value for ``token``."""
        return b64url(hashlib.sha256(self.key_authorization(token).encode()).digest())

    def finalize(self, url: str, csr_der: bytes) -> AcmeAnswer:
        """POST the DER ``csr_der`` to an order's ``finalize`` ``url``: 200 with the order (``processing``
        or ``valid``), or the problem (``orderNotReady`` before the authorizations are valid, ``badCSR``)."""
        return self.post(url, {"csr": b64url(csr_der)})

    def revoke(self, cert_der: bytes, reason: int | None = None, key: Any = None) -> AcmeAnswer:
        """``revokeCert`` by the account (default) or by the certificate's ``key`` (a ``jwk`` request)."""
        payload: dict[str, Any] = {"certificate": b64url(cert_der)}
        if reason is not None:
            payload["reason"] = reason
        url = self.directory()["revokeCert"]
        if key is not None:
            return self.post(url, payload, use_jwk=True, key=key)
        return self.post(url, payload)


def csr_for(key: Any, names: list[str], common_name: str | None = None) -> bytes:
    """A DER CSR for ``names`` (DNS SANs) signed by ``key``."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else [])
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return builder.sign(key, algorithm).public_bytes(serialization.Encoding.DER)
