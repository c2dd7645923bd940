"""Who may call the control endpoints (``/_schedpki/...``): no web page, and with a control token
only who knows it.

The control endpoints reset, seed (a seed can mint a root token) and fault the double, and it
listens on localhost, where any web page the tester opens can send requests. :func:`refusal`
refuses, with ``403 {"error": ...}``:

* **a request from another site.** Browsers mark every request they send on behalf of a page:
  ``Sec-Fetch-Site`` (not ``same-origin`` or ``none``) or, from older browsers, an ``Origin``
  that is not this listener's own. A request with either mark that changes anything (any method
  but GET, HEAD, OPTIONS) is refused - the rule of Go's ``net/http.CrossOriginProtection``.
  Clients that are not browsers (curl, requests, Go, the CLI tools) send neither header and pass,
  whatever the content type.
* **a foreign ``Host``** (DNS rebinding: a page's own host name made to resolve to 127.0.0.1). The
  host must be an IP address, the listen address, a name without a dot (``localhost``, a container
  or compose service name) or one under the reserved ``.localhost`` and ``.internal`` domains
  (``host.docker.internal``) - names nobody can register in public DNS; with the right control
  token any host name passes.
* **a missing or wrong control token**, when one is configured (``schedpki serve
  --control-token``, ini ``schedpki_control_token``, ``Double(control_token=...)``): every control
  request, reads included, must then send it in the :data:`TOKEN_HEADER` header.
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import urlsplit

TOKEN_HEADER = "X-Schedpki-Control-Token"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def _hostname(host: str) -> str:
    """The name or address of a ``Host`` value, without port or IPv6 brackets, lowercase."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _local_name(name: str, listen_host: str) -> bool:
    if name == _hostname(listen_host) or "." not in name or name.endswith((".localhost", ".internal")):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def refusal(environ: dict, listen_host: str, token: str | None) -> str | None:
    """Why this control request is refused (the ``error`` text), or ``None`` to serve it."""
    if token:
        sent = environ.get("HTTP_X_SCHEDPKI_CONTROL_TOKEN", "")
        if not hmac.compare_digest(sent.encode(), token.encode()):
            return f"missing or wrong control token (send it in the {TOKEN_HEADER} header)"
    host = environ.get("HTTP_HOST", "")
    if not token and not _local_name(_hostname(host), listen_host):
        return (f"host {host!r} may be a public name (DNS rebinding): control requests must name an IP address, the "
                f"listen address, a name without a dot, *.localhost or *.internal (or send the control token)")
    if environ.get("REQUEST_METHOD", "GET").upper() in _SAFE_METHODS:
        return None
    fetch_site = environ.get("HTTP_SEC_FETCH_SITE", "").lower()
    if fetch_site:
        if fetch_site in ("same-origin", "none"):
            return None
        return f"cross-site request refused (Sec-Fetch-Site: {fetch_site})"
    origin = environ.get("HTTP_ORIGIN", "")
    if origin:
        parts = urlsplit(origin)
        if parts.netloc.lower() != host.strip().lower():
            return f"cross-site request refused (Origin: {origin})"
    return None
