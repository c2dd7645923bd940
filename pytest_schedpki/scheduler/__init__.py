"""Nomad: the scheduler half, its whole ACL API.

* auth methods (``/v1/acl/auth-method(s)``): ``model``, ``decode``, ``encode``, ``assertion``;
* state, regions and replication: ``state`` (auth methods, tokens, the raft index), ``replication``
  (replicas and the lag knobs), ``blocking``, ``views``, ``tokens``;
* HTTP: ``request`` (query/body/token parsing shared by every route), ``http`` (auth-method routes,
  then :mod:`.aclhttp`, then :mod:`.sso`); ``seed`` (the ``scheduler:`` seed section);
* ``acl/``: the policy language (parse, validate, decide); ``aclstore/``: policies, roles, tokens,
  bootstrap, one-time tokens and a token's ACL; ``aclhttp/``: their routes;
* ``sso/``: binding rules, JWT and OIDC login, the built-in IdP;
* ``agent/``: what a client or harness touches first (JWKS and the signing key, status, agent
  self, metrics, client-introduction tokens), routed by ``http`` before :mod:`.aclhttp`.

May import: ``golang/``, ``process/``, the core's ``clock`` and ``errors``, and ``wire.bytes_response`` (a
finished answer as a small WSGI application, shared with the secrets side). Never imports ``secrets/``, the
rest of ``wire/`` or the double (the double wraps ``http.make_app`` in the middleware). Inside, imports point one
way: ``http`` -> ``aclhttp`` -> ``state`` -> ``aclstore``/``sso`` stores -> ``model``/``replication``/``views``/``tokens``.
"""
