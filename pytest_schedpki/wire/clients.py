"""Python HTTP clients routed to the in-process transport (:mod:`.inprocess`), as moto's mock does.

While at least one listener is routed (:func:`route`), these hooks are installed process-wide;
each hands a request to :func:`.inprocess.exchange` only when its scheme, host and port are those of
a routed listener, and leaves every other request (a real server in upstream or shadow mode, any
other service) to the client's own code, untouched:

* **urllib3** (so ``requests`` sessions, hvac, python-nomad): ``HTTPConnectionPool._make_request``,
  the step that writes one request on a connection and reads the answer. Everything above it runs as
  over TCP: the adapter's retries (``Retry``, ``status_forcelist``), redirects, the pool, the
  timeouts' bookkeeping. The request carries the headers urllib3 and ``http.client`` would add
  (``Host``, ``Accept-Encoding: identity``, ``User-Agent``, ``Content-Length`` or
  ``Transfer-Encoding: chunked``). A dropped connection raises ``ProtocolError('Connection
  aborted.', RemoteDisconnected(...))`` and a read timeout ``ReadTimeoutError``, as over TCP
  (``requests`` turns them into ``ConnectionError`` and ``ReadTimeout``).
* **requests**, a fast path: ``HTTPAdapter.send`` answers a routed URL itself when urllib3 would add
  nothing (the adapter's default ``Retry(0, read=False)``, no proxy, no client certificate, a plain
  timeout): the same request headers, the same ``urllib3.HTTPResponse`` and the same exceptions as
  the urllib3 hook, without the pool (measured: hvac's call against a canned answer 368 -> 308 us).
  Any other send takes the urllib3 hook. ``Session.merge_environment_settings`` skips its scan of the
  proxy variables (``HTTP_PROXY``, ``NO_PROXY``, ...) for routed plain-http URLs: no network hop, so no
  proxy can take part (measured: hvac against a canned answer 310 -> 210 us); ``REQUESTS_CA_BUNDLE``, HTTPS and
  unrouted URLs as requests has them.
* **urllib.request** (nomadpy): ``HTTPHandler.http_open``. The answer is parsed by
  ``http.client.HTTPResponse`` itself from the bytes the listener would send, so urllib sees the very
  same response object (and raises ``HTTPError`` for an error status, as over TCP). A drop raises
  ``http.client.RemoteDisconnected``, a read timeout ``TimeoutError``.
* **httpx**, when installed: ``HTTPTransport.handle_request`` (drop:
  ``httpx.RemoteProtocolError``; read timeout: ``httpx.ReadTimeout``).

HTTPS listeners: a request is routed in-process only when the client would accept the listener's
certificate: urllib3 with verification off (``verify=False``) or a CA file holding the listener's CA;
anything else (verification against the system store, a client ``SSLContext``, urllib or httpx over
HTTPS) goes over TCP, where the real handshake gives the client's own verdict.
"""

from __future__ import annotations

import http.client
import io
import threading
from typing import TYPE_CHECKING

from ..process.on_import import when_imported
from .inprocess import ROUTES, Answer, exchange

if TYPE_CHECKING:
    from .server import ServiceServer

_lock = threading.Lock()
_saved: dict[str, tuple[object, str, object]] = {}  # hook name -> (owner, attribute, original)
_CA: dict[int, bytes] = {}  # id(server) -> PEM of the CA that signed its certificate (HTTPS listeners)
_CA_FILES: dict[str, bytes] = {}  # CA file path -> contents (read once)
_unwatch_httpx = None  # cancel() of the watch for httpx's import, while routed (process/on_import.py)


def route(server: ServiceServer, ca_pem: bytes | None = None) -> None:
    """Serve ``server``'s URL in-process for Python clients of this process (installs the hooks).
    ``ca_pem``: the CA certificate of an HTTPS listener (clients trusting it are routed)."""
    if ca_pem is not None:
        _CA[id(server)] = ca_pem
    ROUTES.add(server)
    _install()


def unroute(server: ServiceServer) -> None:
    """Send ``server``'s URL over TCP again; the hooks go when no listener is routed."""
    ROUTES.remove(server)
    _CA.pop(id(server), None)
    if not ROUTES:
        _uninstall()


def _patch(name: str, owner: object, attribute: str, replacement: object) -> None:
    if name not in _saved:
        _saved[name] = (owner, attribute, owner.__dict__[attribute])
        setattr(owner, attribute, replacement)


def _install() -> None:
    with _lock:
        import urllib.request

        _patch("urllib", urllib.request.HTTPHandler, "http_open", _urllib_http_open)
        try:
            from urllib3.connectionpool import HTTPConnectionPool
        except ImportError:
            pass
        else:
            _patch("urllib3", HTTPConnectionPool, "_make_request", _urllib3_make_request)
            try:
                from requests.adapters import HTTPAdapter
            except ImportError:
                pass
            else:
                _patch("requests", HTTPAdapter, "send", _requests_send)
                from requests.sessions import Session

                _patch("requests-env", Session, "merge_environment_settings", _requests_environment)
        global _unwatch_httpx  # httpx: patched now, or when it is first imported (process/on_import.py)
        if _unwatch_httpx is None:
            _unwatch_httpx = when_imported("httpx", lambda httpx: _patch(
                "httpx", httpx.HTTPTransport, "handle_request", _httpx_handle_request))


def _uninstall() -> None:
    global _unwatch_httpx
    with _lock:
        if _unwatch_httpx is not None:
            _unwatch_httpx()
            _unwatch_httpx = None
        for owner, attribute, original in _saved.values():
            setattr(owner, attribute, original)
        _saved.clear()


def _original(name: str):
    return _saved[name][2]


def _trusted(server: ServiceServer, ca_file: str | None) -> bool:
    """Whether a client verifying against ``ca_file`` would accept ``server``'s certificate."""
    pem = _CA.get(id(server))
    if pem is None or not ca_file:
        return False
    if ca_file not in _CA_FILES:
        try:
            with open(ca_file, "rb") as fh:
                _CA_FILES[ca_file] = fh.read()
        except OSError:
            return False
    return pem.strip() in _CA_FILES[ca_file]


def _host_header(host: str, port: int, default_port: int) -> str:
    """``Host`` as ``http.client.putrequest`` writes it."""
    if ":" in host:
        host = f"[{host}]"
    return host if port == default_port else f"{host}:{port}"


# ---------------------------------------------------------------------------------------- urllib3
def _urllib3_server(pool) -> ServiceServer | None:
    if not ROUTES or getattr(pool, "proxy", None) is not None:
        return None
    server = ROUTES.get(pool.scheme, pool.host, pool.port)
    if server is None or pool.scheme != "https":
        return server
    if pool.cert_reqs in ("CERT_NONE", "NONE", 0) or _trusted(server, pool.ca_certs):
        return server
    return None


_UNSET = object()


def _urllib3_make_request(self, conn, method, url, body=None, headers=None, retries=None, timeout=_UNSET,
                          chunked=False, response_conn=None, preload_content=True, decode_content=True,
                          enforce_content_length=True, **kwargs):
    if timeout is _UNSET:
        from urllib3.connectionpool import _DEFAULT_TIMEOUT

        timeout = _DEFAULT_TIMEOUT
    server = _urllib3_server(self)
    if server is None:
        return _original("urllib3")(self, conn, method, url, body=body, headers=headers, retries=retries,
                                    timeout=timeout, chunked=chunked, response_conn=response_conn,
                                    preload_content=preload_content, decode_content=decode_content,
                                    enforce_content_length=enforce_content_length, **kwargs)
    from urllib3.exceptions import ProtocolError, ReadTimeoutError

    self.num_requests += 1
    read_timeout = self._get_timeout(timeout).read_timeout
    lines, data, chunked = _wire_request(self.host, self.port, conn.default_port, method, body, headers, chunked)
    if read_timeout == 0:
        raise ReadTimeoutError(self, url, f"Read timed out. (read timeout={read_timeout})")
    answer = exchange(server, method, url, lines, data, chunked, read_timeout)
    if answer.timed_out:
        raise ReadTimeoutError(self, url, f"Read timed out. (read timeout={read_timeout})")
    if answer.dropped:
        raise ProtocolError("Connection aborted.", _remote_disconnected())
    response = _urllib3_response(answer, method, url, preload_content, decode_content, enforce_content_length)
    response.retries = retries
    response._connection = response_conn
    response._pool = self
    return response


def _remote_disconnected() -> http.client.RemoteDisconnected:
    return http.client.RemoteDisconnected("Remote end closed connection without response")


def _on_the_wire(items) -> list[tuple[str, str]]:
    """Header lines as the listener reads them: ``http.client.putheader`` sends bytes as they are and
    str values as latin-1 (raising ``UnicodeEncodeError`` for others, as it does)."""
    out = []
    for name, value in items:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        else:
            value = str(value)
            if not value.isascii():
                value.encode("latin-1")
        out.append((name, value))
    return out


def _wire_request(host: str, port: int, default_port: int, method: str, body, headers, chunked: bool
                  ) -> tuple[list[tuple[str, str]], bytes, bool]:
    """The header lines, body bytes and framing urllib3's ``HTTPConnection.request`` (with
    ``http.client.putrequest``) would send for this request."""
    from urllib3.connection import _get_default_user_agent
    from urllib3.util.request import body_to_chunks

    headers = headers if headers is not None else {}
    keys = {k.lower() for k in headers}
    lines = []
    if "host" not in keys:
        lines.append(("Host", _host_header(host, port, default_port)))
    if "accept-encoding" not in keys:
        lines.append(("Accept-Encoding", "identity"))
    sent = body_to_chunks(body, method=method, blocksize=16384)
    if chunked:
        if "transfer-encoding" not in keys:
            lines.append(("Transfer-Encoding", "chunked"))
    elif "content-length" in keys:
        chunked = False
    elif "transfer-encoding" in keys:
        chunked = True
    elif sent.content_length is None:
        if sent.chunks is not None:
            chunked = True
            lines.append(("Transfer-Encoding", "chunked"))
    else:
        lines.append(("Content-Length", str(sent.content_length)))
    if "user-agent" not in keys:
        lines.append(("User-Agent", _get_default_user_agent()))
    lines.extend(_on_the_wire(headers.items()))
    data = b"" if sent.chunks is None else b"".join(c.encode() if isinstance(c, str) else c for c in sent.chunks)
    return lines, data, chunked


def _urllib3_response(answer: Answer, method: str, url: str, preload_content: bool, decode_content: bool,
                      enforce_content_length: bool):
    """The ``urllib3.HTTPResponse`` a connection would return for ``answer``."""
    from urllib3._collections import HTTPHeaderDict
    from urllib3.response import HTTPResponse

    return HTTPResponse(
        body=io.BytesIO(answer.body), headers=HTTPHeaderDict(answer.headers), status=answer.status, version=11,
        version_string="HTTP/1.1", reason=answer.reason, preload_content=preload_content,
        decode_content=decode_content, original_response=None, enforce_content_length=enforce_content_length,
        request_method=method, request_url=url,
    )


# --------------------------------------------------------------------------------------- requests
def _plain_timeout(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0)


_SKIPPED_STEPS = ("add_headers", "request_url", "get_connection_with_tls_context", "cert_verify", "proxy_headers")
_PLAIN: dict[type, bool] = {}


def _plain_adapter(cls: type) -> bool:
    """Whether an adapter class leaves every step the fast path skips as ``HTTPAdapter`` has it (a
    subclass that adds headers or picks its own pool takes the urllib3 hook instead)."""
    plain = _PLAIN.get(cls)
    if plain is None:
        from requests.adapters import HTTPAdapter

        plain = _PLAIN[cls] = all(getattr(cls, step) is getattr(HTTPAdapter, step) for step in _SKIPPED_STEPS)
    return plain


def _requests_target(adapter, request, timeout, verify, cert, proxies):
    """``(listener, URL parts)`` for a ``requests`` send the fast path may answer: a routed URL, no
    retries to apply (the adapter's default ``Retry(0, read=False)``), no proxy, no client
    certificate, a plain timeout (seconds or a ``(connect, read)`` pair), an HTTPS listener the client
    trusts, an adapter that does not change the skipped steps; else ``None`` (the adapter runs as usual
    and the urllib3 hook answers in-process)."""
    from urllib.parse import urlsplit

    if not _plain_adapter(type(adapter)):
        return None
    retries = adapter.max_retries
    if retries.total != 0 or retries.status_forcelist or retries.read is not False or cert:
        return None
    if not (_plain_timeout(timeout) or (isinstance(timeout, tuple) and len(timeout) == 2
                                        and all(_plain_timeout(t) for t in timeout))):
        return None
    parts = urlsplit(request.url)
    server = ROUTES.get(parts.scheme, parts.hostname, parts.port)
    if server is None:
        return None
    if proxies:
        from requests.utils import select_proxy

        if select_proxy(request.url, proxies):
            return None
    if parts.scheme == "https" and not (verify is False or (isinstance(verify, str) and _trusted(server, verify))):
        return None
    return server, parts


def _requests_send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
    """``HTTPAdapter.send`` for routed URLs without retries or proxy: what the adapter, urllib3's pool
    and a connection would do, without them (see the module doc)."""
    target = _requests_target(self, request, timeout, verify, cert, proxies) if ROUTES else None
    if target is None:
        return _original("requests")(self, request, stream=stream, timeout=timeout, verify=verify, cert=cert,
                                     proxies=proxies)
    from requests.exceptions import ConnectionError, ReadTimeout
    from urllib3 import HTTPConnectionPool
    from urllib3.exceptions import ProtocolError, ReadTimeoutError

    server, parts = target
    read_timeout = timeout[1] if isinstance(timeout, tuple) else timeout
    url = request.path_url
    chunked = not (request.body is None or "Content-Length" in request.headers)
    lines, data, chunked = _wire_request(parts.hostname, server.port, 443 if parts.scheme == "https" else 80,
                                         request.method, request.body, request.headers, chunked)
    answer = Answer(timed_out=True) if read_timeout == 0 else exchange(server, request.method, url, lines, data,
                                                                        chunked, read_timeout)
    if answer.dropped:
        raise ConnectionError(ProtocolError("Connection aborted.", _remote_disconnected()), request=request)
    if answer.timed_out:
        pool = HTTPConnectionPool(parts.hostname, server.port)  # named in the message, as over TCP
        raise ReadTimeout(ReadTimeoutError(pool, url, f"Read timed out. (read timeout={read_timeout})"),
                          request=request)
    response = _urllib3_response(answer, request.method, url, False, False, True)
    response.retries = self.max_retries
    return self.build_response(request, response)


def _requests_environment(self, url, proxies, stream, verify, cert):
    """``Session.merge_environment_settings`` without the scan of the proxy variables for a routed
    ``http://`` URL (the settings a session passes on to ``send``); any other URL as requests does."""
    if ROUTES and self.trust_env and url[:7].lower() == "http://":
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
            routed = ROUTES.get("http", parts.hostname, parts.port) is not None
        except ValueError:
            routed = False
        if routed:
            import os

            from requests.sessions import merge_setting

            if verify is True or verify is None:
                verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or verify
            return {"proxies": merge_setting(proxies, self.proxies), "stream": merge_setting(stream, self.stream),
                    "verify": merge_setting(verify, self.verify), "cert": merge_setting(cert, self.cert)}
    return _original("requests-env")(self, url, proxies, stream, verify, cert)


# ----------------------------------------------------------------------------------- urllib.request
class _Wire:
    """What ``http.client.HTTPResponse`` reads the listener's answer from."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str):
        return io.BytesIO(self._data)


def _serialize(answer: Answer) -> bytes:
    head = [f"HTTP/1.1 {answer.status} {answer.reason}\r\n"]
    chunked = False
    for key, value in answer.headers:
        head.append(f"{key}: {value}\r\n")
        chunked = chunked or (key.lower() == "transfer-encoding" and value == "chunked")
    body = answer.body
    if chunked:
        body = (b"%x\r\n%s\r\n" % (len(body), body) if body else b"") + b"0\r\n\r\n"
    return "".join(head).encode("latin-1") + b"\r\n" + body


def _urllib_http_open(self, req):
    from urllib.parse import urlsplit

    parts = urlsplit(req.full_url)
    server = ROUTES.get("http", parts.hostname, parts.port) if ROUTES and not req.has_proxy() else None
    if server is None:
        return _original("urllib")(self, req)
    # what AbstractHTTPHandler.do_open sends: the request's headers, then Connection: close
    headers = dict(req.unredirected_hdrs)
    headers.update({k: v for k, v in req.headers.items() if k not in headers})
    headers["Connection"] = "close"
    headers = {name.title(): value for name, value in headers.items()}
    lines = [] if "Host" in headers else [("Host", _host_header(parts.hostname, parts.port or 80, 80))]
    if "Accept-Encoding" not in headers:
        lines.append(("Accept-Encoding", "identity"))
    data = req.data
    chunked = False
    if data is not None and not isinstance(data, bytes):
        data = b"".join(data if not hasattr(data, "read") else [data.read()])
        chunked = "Content-Length" not in headers
        if chunked:
            headers["Transfer-Encoding"] = "chunked"
    elif data is None and req.get_method() in ("POST", "PUT", "PATCH") and "Content-Length" not in headers:
        headers["Content-Length"] = "0"
    lines.extend(_on_the_wire(headers.items()))
    timeout = req.timeout if isinstance(req.timeout, (int, float)) else None  # else socket's default: none
    answer = exchange(server, req.get_method(), req.selector, lines, data or b"", chunked, timeout)
    if answer.timed_out:
        raise TimeoutError("timed out")
    if answer.dropped:
        raise http.client.RemoteDisconnected("Remote end closed connection without response")
    response = http.client.HTTPResponse(_Wire(_serialize(answer)), method=req.get_method(), url=req.full_url)
    response.begin()
    response.msg = response.reason  # as do_open leaves it
    return response


# -------------------------------------------------------------------------------------------- httpx
def _httpx_handle_request(self, request):
    import httpx

    url = request.url
    server = ROUTES.get(url.scheme, url.host, url.port) if ROUTES and url.scheme == "http" else None
    if server is None:
        return _original("httpx")(self, request)
    body = request.read()
    lines = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
    chunked = any(k.lower() == "transfer-encoding" for k, _ in lines)
    read_timeout = request.extensions.get("timeout", {}).get("read")
    answer = exchange(server, request.method, url.raw_path.decode("ascii"), lines, body, chunked, read_timeout)
    if answer.timed_out:
        raise httpx.ReadTimeout("timed out", request=request)
    if answer.dropped:
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
    return httpx.Response(answer.status, headers=answer.headers, content=answer.body, request=request,
                          extensions={"http_version": b"HTTP/1.1", "reason_phrase": answer.reason.encode()})
