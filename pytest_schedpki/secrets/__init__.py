"""Vault/OpenBao: the secrets service, its mounts, tokens and ACL policies.

* ``service`` - ``SecretsService``: mounts (each with its engine), tokens, policies, wrapping, snapshots;
* ``http`` - the WSGI skin: request decoding (``jsonbody``, its syntax-error texts in ``json_syntax``), authentication, ACL check, dispatch to
  ``sys/``, ``auth/<method>/`` or a mount's engine, OpenBao's envelope and errors;
* ``system/`` - the ``sys/`` endpoints (health, status, seal, mounts, auth mounts, policies,
  wrapping, leases, capabilities, path help) and the token method's paths (create, renew, revoke,
  roles); ``leases`` - the leases engines hand out; ``acl`` + ``policy_parser`` - ACL
  policies (HCL1 parsed by the ``hcl/`` foundation) and their evaluation; ``seed`` - the ``secrets:`` section
  of a seed file (one walker, in-process or over HTTP); ``kv_inspection`` - what tests read and
  wrote in KV;
* ``framework/`` - what every engine builds on (paths, fields, logical request/response, the
  engine protocols); ``engines/`` - one sub-package per secrets engine; ``auth/`` - one sub-package
  per auth method.

Imports point down: ``http``/``system``/``seed`` -> ``service`` -> ``engines.registry``, ``auth/``,
``acl`` -> ``framework/`` -> ``golang/``, ``hcl/``, ``process/``, ``wire.bytes_response``. Engines and auth methods never
import the service (they see it through ``framework.engine.EngineHost``). Never imports
``scheduler/`` or the double.
"""
