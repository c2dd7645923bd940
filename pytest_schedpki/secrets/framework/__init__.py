"""The engine framework (OpenBao's ``sdk/framework`` and ``sdk/logical``): ``router`` (``Path``,
``Router``, ``LogicalRequest``), ``fields`` (field types, ``FieldData``; the Go-compatible
conversions in ``go_values`` (scalars) and ``field_collections`` (slices, key=value pairs)),
``logical`` (``LogicalResponse``, ``LogicalError`` and the envelope), ``lease_ttl`` (``CalculateTTL``:
the TTL of a lease or token from the request, the backend and the mount), ``engine`` (the
``EngineHost``/``MountInfo``/``Engine`` protocols between the service and its engines).

May import: ``golang/``, ``wire.bytes_response``, each other. Never imports the service, an engine
or an auth method at run time (``router`` names ``SecretsService`` and ``Token`` only under
``TYPE_CHECKING``, for the type of ``LogicalRequest``).
"""
