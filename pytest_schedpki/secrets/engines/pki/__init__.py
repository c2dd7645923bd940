"""The PKI secrets engine (OpenBao 2.7 behaviour; Vault Enterprise extras behind a flag).

Rooms, as Vault's own ``builtin/logical/pki`` tree has them:

* ``backend`` - ``PkiBackend``: one mount's state and router, joined from the path tables of the
  sub-packages; ``model`` - the state records (keys, issuers, certificates, configuration);
  ``certstore`` - the certificates by serial with their storage-order and revoked indexes, the
  undo log of a write and the baseline checkout;
* ``authority/`` - the CA: issuers, keys, root and intermediate generation, import;
* ``issuance/`` - roles and everything that signs: issue, sign, sign-intermediate,
  sign-self-issued, sign-verbatim, the role policy and validity rules;
* ``revocation/`` - revoke, CRLs, issuer revocation, tidy;
* ``acme/`` - the ACME server (RFC 8555 as OpenBao's ``path_acme_*.go``), configured by
  ``acme_config`` (``config/acme``) and ``cluster_config`` (``config/cluster``, the base of its URLs);
* ``enterprise/`` - the Vault Enterprise emulation (cert metadata, external policy / CIEPS);
* ``codecs/`` - X.509, PEM, CSR, CRL and key building blocks on ``cryptography``, the key pool;
* ``fetch`` (unauthenticated CA/chain reads, ``config/urls``) and ``certs`` (stored certificates).

Import direction: ``backend`` -> sub-packages' ``routes`` -> path modules -> ``model`` -> ``certstore``,
``codecs/`` -> ``framework/``, ``golang/``, ``process/``. Sub-packages may import each other's modules (the
module graph stays acyclic) but name ``PkiBackend`` only under ``TYPE_CHECKING``; nothing here
imports the service. Issuers announce changes with ``backend.issuers_changed()`` and the CRL side
reacts; the authority never calls revocation code.
"""
