"""ACME helpers for tests against the double's PKI engine (the server side lives in
``secrets/engines/pki/acme/``).

* ``client`` - :class:`AcmeClient`, a small RFC 8555 client (flattened JWS signed with PyJWT) that
  exposes every step, also the wrong ones (reused nonce, wrong ``url``, bad signature);
* ``testing`` - setting a mount up for ACME and answering http-01 challenges from a local server.

Import rules: modules here import the standard library, ``cryptography``, PyJWT and each other; they
talk to the double over HTTP only and never import the service or the engine.
"""

from .client import AcmeAnswer, AcmeClient, b64url, csr_for, jwk_of, thumbprint_of
from .testing import ACME_RESPONSE_HEADERS, Http01Responder, enable_acme

__all__ = ["ACME_RESPONSE_HEADERS", "AcmeAnswer", "AcmeClient", "Http01Responder", "b64url", "csr_for",
           "enable_acme", "jwk_of", "thumbprint_of"]
