"""Nomad's ACL objects as the state store keeps them: policies, roles, tokens, one-time tokens,
bootstrap, and the resolution of a request's token to its ACL (``nomad/acl_endpoint.go``,
``nomad/state/state_store_acl*.go``, ``nomad/auth/auth.go``).

* ``objects`` - policy, role and token records, validation, hashes, JSON;
* ``store`` - policies and roles (``UpsertPolicies``, ``UpsertRoles``...) and the tables' indexes;
* ``tokens`` - token writes and reads (``UpsertTokens``, ``DeleteTokens``, ``GetToken``, ``WhoAmI``),
  ``token_list`` - ``ListTokens`` with prefix, filter and pages;
* ``bootstrap`` - ``ACL.Bootstrap`` and the reset index; ``one_time`` - one-time tokens;
* ``admin`` - the state's token methods for Python callers (seeding, bootstrap, unbootstrap);
* ``resolve`` - a token to the :class:`~..acl.evaluate.ACL` that decides what it may do.

May import: ``scheduler.acl`` (the policy language), the scheduler's ``model``/``tokens``/``views``,
``golang/``, ``sso.bexpr`` (filters); never HTTP code, ``secrets/`` or the double.
"""
