"""The agent surface a Nomad client or test harness touches first (``command/agent/http.go``).

* ``profile`` - the double's agent identity (one per :class:`~..state.SchedulerState`: node name,
  datacenter, RPC address, telemetry and client-introduction settings) and its signing key
  (``nomad/encrypter.go``: an RSA-2048 root key, RS256, KeyID a UUID), kept across per-test resets;
* ``keys`` - ``/.well-known/jwks.json`` and ``/.well-known/openid-configuration``;
* ``status`` - ``/v1/status/leader`` and ``/v1/status/peers``;
* ``agent_self`` - ``/v1/agent/self``; ``metrics`` - ``/v1/metrics`` (JSON and Prometheus);
* ``intro`` - ``PUT /v1/acl/identity/client-introduction-token``;
* ``routes`` - :func:`~.routes.dispatch`, called once by ``scheduler/http.py`` before the SSO routes.

May import: the scheduler's ``request``, ``model`` and ``state`` (types), ``aclstore.resolve``,
``acl``, and ``golang/``. Nothing else of the scheduler imports this package but ``http``.
"""
