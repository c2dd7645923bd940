"""Moving and enabling mounts beside ``sys/mounts``: ``auth`` (``sys/auth``: enable, read, tune,
disable, list), ``remount`` (``sys/remount`` and its status, for secrets engines and auth methods) and
``ttl_config`` (a mount's lease TTLs as enabling and tuning read them, for both).

May import: the service, ``framework/``. Never imports an engine, ``http`` or ``seed``.
"""
