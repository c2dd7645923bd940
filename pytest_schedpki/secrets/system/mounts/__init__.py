"""Moving and enabling mounts beside ``sys/mounts``: ``auth`` (``sys/auth``: enable, read, tune,
disable, list) and ``remount`` (``sys/remount`` and its status, for secrets engines and auth methods).

May import: the service, ``framework/``. Never imports an engine, ``http`` or ``seed``.
"""
