"""The listener's server object (``wire.server._BoundedServer``) is werkzeug's threaded server built
without werkzeug's constructor (which opens a throw-away socket and imports ``importlib.metadata`` to
look up its own version: start-up time, issue 27). What the constructor leaves behind must be what
werkzeug's own constructor leaves for a socket handed over by descriptor: same attributes, same values
(ports aside), same ``SERVER_SOFTWARE`` text, IPv4 and IPv6."""

import importlib.metadata
import socket

import pytest
from werkzeug.serving import ThreadedWSGIServer

from pytest_schedpki.wire import server as wire_server
from pytest_schedpki.wire.connections import ConnectionRegistry

OURS_ONLY = {"connections", "_accepted", "_next_expiry"}


def _app(environ, start_response):  # pragma: no cover - never called
    return []


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("host", ["127.0.0.1", pytest.param("::1", marks=pytest.mark.skipif(
    not _ipv6_loopback(), reason="no IPv6 loopback"))])
def test_the_listener_server_has_what_werkzeugs_constructor_gives(host):
    theirs_sock, ours_sock = wire_server._listen(host, 0), wire_server._listen(host, 0)
    theirs = ours = None
    try:
        theirs = ThreadedWSGIServer(host, 0, _app, wire_server._QuietHandler, False, None, fd=theirs_sock.fileno())
        ours = wire_server._BoundedServer(host, _app, wire_server._QuietHandler, ours_sock,
                                          connections=ConnectionRegistry())
        assert set(vars(ours)) - OURS_ONLY == set(vars(theirs))
        for name, value in vars(theirs).items():
            mine = getattr(ours, name)
            if name == "socket":
                assert (mine.family, mine.type, mine.getsockname()) == \
                    (value.family, value.type, ours_sock.getsockname())
                assert mine.fileno() != ours_sock.fileno()  # its own duplicate, as werkzeug's
            elif name == "server_address":
                assert mine == ours_sock.getsockname() and len(mine) == len(value)
            elif name == "port":
                assert mine == ours_sock.getsockname()[1]
            elif name.startswith("_BaseServer__"):
                assert type(mine) is type(value)
            else:
                assert mine == value, name
        assert wire_server._QuietHandler.protocol_version == "HTTP/1.1"
    finally:
        for server in (theirs, ours):
            if server is not None:
                server.server_close()
        theirs_sock.close()
        ours_sock.close()


def test_server_software_is_werkzeugs_installed_version():
    assert wire_server.werkzeug_software() == f"Werkzeug/{importlib.metadata.version('werkzeug')}"


def test_a_started_listener_answers_with_werkzeugs_server_software():
    captured = {}

    def app(environ, start_response):
        captured.update(environ)
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    def error_response(exc):  # pragma: no cover - app does not fail
        raise AssertionError(exc)

    listener = wire_server.ServiceServer("secrets", app, error_response).start()
    try:
        with socket.create_connection(("127.0.0.1", listener.port), timeout=10) as conn:
            conn.sendall(b"GET /v1/sys/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert captured["SERVER_SOFTWARE"] == f"Werkzeug/{importlib.metadata.version('werkzeug')}"
        assert captured["SERVER_SOFTWARE"] == listener.server_software
        assert captured["SERVER_PORT"] == str(listener.port)
    finally:
        listener.stop()
