"""The service's own backend: ``sys/`` and the built-in token method's paths (``auth/token/``).

* ``routes``: the ``sys/`` router (health, mounts and tuning, policies, response wrapping's unwrap
  and lookup, ...) and the token router (``create``, ``create-orphan``, lookups) that the other
  modules here contribute to;
* ``status`` (``sys/leader``, ``init``, ``key-status``, ``internal/ui/mounts``), ``seal`` (seal,
  unseal with the dev server's single key), ``wrapping`` (wrap, rewrap), ``capabilities``
  (``capabilities``, ``-self``, ``-accessor``), ``lease_paths`` (``sys/leases/...``), ``mounts/``
  (``sys/auth``: enable, tune, disable, list; ``sys/remount``), ``namespaces`` (``X-Vault-Namespace``),
  ``path_help`` (``?help=1``);
* ``token_paths`` (renew, revoke, lookup-accessor, accessors), ``token_roles`` (``roles/:name``,
  ``create/:role_name``), ``token_ttl`` (TTLs at creation and renewal).

May import: the service (these handlers act on the whole service), ``framework/``, ``auth/``,
``acl``, ``leases``, ``policy_parser``, ``golang/``. Never imports an engine, ``http`` or ``seed``.
"""
