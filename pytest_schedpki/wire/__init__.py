"""HTTP plumbing shared by both listeners: the threaded server with HTTP/1.1 keep-alive
(``server``, ``keepalive``), the fast request-head parser (``fastparse``), the middleware that
journals requests, injects faults and records handler errors (``middleware``), and the small WSGI
response used on the hot path (``bytes_response``), Go's request framing and reading of chunked
bodies (``framing``, ``chunked``), the connection bounds and timeouts (``connections``), and the cross-site and Host checks in front
of the control endpoints (``control_guard``), and the listeners' own CA and certificate (``tls``); the
in-process transport (``inprocess``) and the hooks routing Python clients of this process to it (``clients``).

May import: the standard library, werkzeug, cryptography (``tls``, lazily), urllib3 and httpx (``clients``,
lazily, when a listener is routed in-process), the core's leaf modules ``journal`` and ``faults``, and
``process/`` (requests are native work the process exit waits for).
Never imports ``scheduler/``, ``secrets/`` or the double: a service is handed in as a WSGI app.
"""
