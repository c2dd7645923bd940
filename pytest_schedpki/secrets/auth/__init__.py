"""Auth methods, one sub-package each: the built-in ``token/`` (routed by ``secrets.http``) and the
methods ``sys/auth/:path`` enables (``approle/``), made mountable by ``registry``.

An enabled method is a mount of the service (``service.auth_mounts``) whose backend exposes a
``router`` plus ``snapshot()``/``restore()``, like an engine; a new method is a sub-package here plus
one entry in ``registry.AUTH_METHODS``.

May import: ``framework/``, ``golang/``. Never imports the service, ``http``, ``sys`` or an engine.
"""
