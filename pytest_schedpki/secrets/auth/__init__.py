"""Auth methods, one sub-package each, mounted under ``auth/<name>/`` (``token/`` today; AppRole next).

The HTTP layer finds a method's router in ``secrets.http.AUTH_METHODS``; a new method is a
sub-package here plus one entry there.

May import: ``framework/``, ``golang/``. Never imports the service, ``http``, ``sys`` or an engine.
"""
