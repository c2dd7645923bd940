"""The scheduler half: Nomad's ACL API as far as SSO needs it.

* auth methods (``/v1/acl/auth-method(s)``): ``model``, ``decode``, ``encode``, ``assertion``;
* state, regions and replication: ``state`` (auth methods, tokens, the raft index), ``replication``
  (replicas and the lag knobs), ``blocking``, ``views``, ``tokens``;
* HTTP: ``request`` (query/body/token parsing shared by every route), ``http`` (auth-method routes,
  then :mod:`.sso`); ``seed`` (the ``scheduler:`` seed section);
* ``sso/``: binding rules, policies, roles, login tokens, JWT and OIDC login, the built-in IdP.

Imports point one way: ``http`` -> ``state`` -> ``sso`` stores -> ``model``/``replication``/``views``/
``tokens`` -> ``golang``; nothing here imports the double, the plugin or the secrets half.
"""
