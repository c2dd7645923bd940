"""The key/value secrets engine (``type: kv``, version 1 or 2; ``kv-v2``), as OpenBao 2.7 serves it.

* ``backend.py`` - one mount's engine: picks the version-1 or version-2 path table from the mount's
  ``options.version`` and upgrades 1 -> 2 in place (``sys/mounts/:path/tune``);
* ``model.py`` - the state: version-2 keys with their versions, metadata and config; version-1 values;
* ``v1.py`` - the unversioned paths (read, write, delete, LIST);
* ``v2_data.py`` - ``data/:path`` (read, write with ``options.cas``, merge-patch), ``subkeys/:path``;
* ``v2_metadata.py`` - ``config``, ``metadata/:path`` and the version verbs (``delete``,
  ``undelete``, ``destroy``);
* ``inputs.py`` - how the engine reads its parameters (the plugin's own conversion texts).

The engine sees its host only as an :class:`~pytest_schedpki.secrets.framework.engine.EngineHost`
(clock, lock) and its mount as a ``MountInfo``.

May import: ``framework/``, ``golang/``. Never imports the service, ``http``, ``sys``, ``auth/`` or
another engine.
"""
