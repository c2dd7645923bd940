"""``schedpki serve`` in a child process, for tests whose failure mode is a dead or stuck server
(a crash must not take pytest with it)."""

from __future__ import annotations

import re
import signal
import socket
import ssl
import subprocess
import sys
import time

_ADDR = re.compile(r"export (NOMAD|VAULT)_ADDR=https?://127\.0\.0\.1:(\d+)")


class ServedProcess:
    """A started ``schedpki serve --no-seed`` on free ports: :attr:`ports` maps ``"scheduler"`` and
    ``"secrets"`` to their port; :meth:`stop` sends SIGTERM and returns the exit status."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--scheduler-port", "0", "--secrets-port", "0",
             "--no-seed", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.ports: dict[str, int] = {}
        self.tls = "--tls" in args
        deadline = time.monotonic() + 30
        while len(self.ports) < 2 and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            match = _ADDR.search(line)
            if match:
                self.ports["scheduler" if match.group(1) == "NOMAD" else "secrets"] = int(match.group(2))
        if len(self.ports) < 2:
            self.proc.kill()
            raise RuntimeError("schedpki serve did not start: " + (self.proc.stdout.read() or ""))

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def exchange(self, service: str, raw: bytes, half_close: bool = True, timeout: float = 10) -> bytes:
        """Send ``raw`` on a new connection, then half-close, and return all bytes answered until the
        server closes (``b""``: closed without an answer). Over TLS (served with ``--tls``) the client
        cannot half-close: it ends the connection after sending and returns ``b""``."""
        sock = socket.create_connection(("127.0.0.1", self.ports[service]), timeout=timeout)
        if self.tls:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            sock = context.wrap_socket(sock)
        with sock:
            sock.sendall(raw)
            if self.tls and half_close:  # TLS has no half-close: end the connection, expect no answer
                return b""
            if half_close:
                sock.shutdown(socket.SHUT_WR)
            data = b""
            try:
                while chunk := sock.recv(65536):
                    data += chunk
            except (ConnectionResetError, ssl.SSLError):
                pass
            return data

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
