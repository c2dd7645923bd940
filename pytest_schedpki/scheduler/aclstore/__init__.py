"""Nomad's ACL objects as the state store keeps them: policies, roles, tokens, one-time tokens,
bootstrap, and the resolution of a request's token to its ACL (``nomad/acl_endpoint.go``,
``nomad/state/state_store_acl*.go``, ``nomad/auth/auth.go``).

* ``resolve`` - a token to the :class:`~..acl.evaluate.ACL` that decides what it may do.

May import: ``scheduler.acl`` (the policy language), the scheduler's ``model``/``tokens``/``views``,
``golang/``; never HTTP code, ``secrets/`` or the double.
"""
