"""The AppRole auth method (``sys/auth`` type ``approle``), as OpenBao 2.7 serves it.

* ``model.py`` - roles and secret IDs, and how the method reads its parameters (CIDRs, metadata);
* ``roles.py`` - ``role/:name`` (every field), ``role/:name/role-id``, ``LIST role``;
* ``role_fields.py`` - the per-field paths ``role/:name/policies``, ``.../token-ttl``, ...;
* ``secret_ids.py`` - ``secret-id`` (generate, LIST accessors), ``custom-secret-id``,
  ``secret-id/lookup|destroy``, ``secret-id-accessor/lookup|destroy``, ``tidy/secret-id``;
* ``login.py`` - ``login``: the role ID, secret ID, number-of-uses and CIDR rules (on the request's
  remote address), and the token it creates through the token store;
* ``backend.py`` - one mount's method: its state, routes and snapshots.

Like an engine, the method sees the service only through what a request carries (the token store,
the clock, the mount's TTLs).

May import: ``framework/``, ``golang/``. Never imports the service, ``http``, ``sys``, an engine or
another auth method.
"""
