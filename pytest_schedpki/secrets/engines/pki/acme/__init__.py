"""ACME (RFC 8555) as OpenBao 2.7 serves it under a PKI mount (``path_acme_*.go``, ``acme_*.go``).

Rooms, one job each:

* ``problems`` - the ``urn:ietf:params:acme:error:*`` problem documents and their statuses;
* ``state`` - the mount's ACME records (accounts, orders, authorizations, EAB keys) kept copy-on-write
  in ``PkiState.extra``, and the in-memory nonce service and knobs of a running engine;
* ``context`` - ``acmeWrapper``: the configuration gate, the directory's base URL, role and issuer of a
  directory prefix; ``jws`` - the flattened JWS of a request verified with PyJWT;
* ``pipeline`` - the three wrappers (plain, JWS-parsed, account required) and the answer they write;
* ``accounts``, ``eab``, ``orders`` (new-order, order, orders, finalize, certificate download),
  ``authorizations`` (authorizations and challenges), ``validation`` (http-01, dns-01, tls-alpn-01
  checks and their background worker), ``revoke``, ``tidy`` (``tidy_acme``, called by ``revocation/tidy``);
* ``routes`` - directory, new-nonce and the path table under the four prefixes (``acme/``,
  ``roles/:role/acme/``, ``issuer/:ref/acme/``, ``issuer/:ref/roles/:role/acme/``); it imports the
  path modules (and so the pipeline and PyJWT) on a mount's first ACME request, not with the engine.

The import direction: ``routes`` -> path modules -> ``pipeline`` -> ``context``/``jws`` ->
``state``/``problems``; path modules may import ``issuance/`` (finalize signs through it),
``revocation/`` (revoke-cert) and ``acme_config``; nothing here imports ``backend`` at run time.
"""
