"""Vault/OpenBao: the secrets service, its mounts, tokens and ACL policies.

* ``service`` - ``SecretsService``: mounts (each with its engine), tokens, policies, wrapping, snapshots;
* ``http`` - the WSGI skin: request decoding (``jsonbody``), authentication, ACL check, dispatch to
  ``sys/``, ``auth/<method>/`` or a mount's engine, OpenBao's envelope and errors;
* ``sys`` - the ``sys/`` endpoints (health, mounts, policies, wrapping) and, for now, the token
  method's paths; ``acl`` + ``policy_parser`` - ACL policies and their evaluation; ``seed`` - the
  ``secrets:`` section of a seed file;
* ``framework/`` - what every engine builds on (paths, fields, logical request/response, the
  engine protocols); ``engines/`` - one sub-package per secrets engine; ``auth/`` - one sub-package
  per auth method.

Imports point down: ``http``/``sys``/``seed`` -> ``service`` -> ``engines.registry``, ``auth/``,
``acl`` -> ``framework/`` -> ``golang/``, ``wire.bytes_response``. Engines and auth methods never
import the service (they see it through ``framework.engine.EngineHost``). Never imports
``scheduler/`` or the double.
"""
