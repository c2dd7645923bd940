"""Secrets engines, one sub-package each (``pki/`` today; KV next), made mountable by ``registry``.

Each engine receives an ``EngineHost`` and a ``MountInfo`` (``framework.engine``) and exposes a
``router`` plus ``snapshot()``/``restore()``. Adding an engine touches its own sub-package and one
line of ``registry.ENGINES``; nothing in another engine.

May import: ``framework/``, ``golang/``. Never imports the service, ``http``, ``sys``, ``auth/``,
another engine, ``scheduler/`` or the double (``tests/core/test_architecture.py`` checks it).
"""
