"""ACME helpers for tests against the double's PKI engine (the server side lives in
``secrets/engines/pki/acme/``).

* ``client`` - :class:`AcmeClient`, a small RFC 8555 client (flattened JWS signed with PyJWT) that
  exposes every step, also the wrong ones (reused nonce, wrong ``url``, bad signature);
* ``testing`` - setting a mount up for ACME and answering http-01 challenges from a local server;
* ``inspect`` - :class:`AcmeInspector` (``schedpki.acme``): accounts and orders as records, assertions.

Import rules: modules here import the standard library, ``cryptography``, PyJWT and each other; they
never import the service or the engine (``inspect`` reads the records through the service object it
is handed, duck-typed; the others talk HTTP).
"""

from .client import AcmeAnswer, AcmeClient, b64url, csr_for, jwk_of, thumbprint_of
from .inspect import AcmeAccount, AcmeInspector, AcmeOrder
from .testing import ACME_RESPONSE_HEADERS, Http01Responder, enable_acme

__all__ = ["ACME_RESPONSE_HEADERS", "AcmeAccount", "AcmeAnswer", "AcmeInspector", "AcmeOrder", "AcmeClient", "Http01Responder", "b64url", "csr_for",
           "enable_acme", "jwk_of", "thumbprint_of"]
