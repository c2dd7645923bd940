"""Nomad: the ACL auth methods API (``/v1/acl/auth-method(s)``) of the scheduler service.

State lives in plain objects (``state``: ``SchedulerState``; ``model``: ``AuthMethod`` and its
config; ``tokens``, ``replication``, ``blocking``, ``views``); ``decode``/``encode``/``assertion``
turn Nomad's JSON into records and back with Go's rules; ``http`` is the thin WSGI skin; ``seed``
applies the ``scheduler:`` section of a seed file.

May import: ``golang/``, the core's ``clock`` and ``errors``. Never imports ``secrets/``, ``wire/``
or the double (the double wraps ``http.make_app`` in the middleware).
"""
