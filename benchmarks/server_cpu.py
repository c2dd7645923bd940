"""Server CPU per request of the cheap standalone rows, precisely (run by hand, not collected by pytest).

    python benchmarks/server_cpu.py                                  # double (this checkout) vs bao
    python benchmarks/server_cpu.py --double old=/work/main --double new=.   # two doubles vs bao

Starts ``bao server -dev`` and one ``schedpki serve --no-seed`` per ``--double NAME=PATH`` (that
checkout first on ``PYTHONPATH``), sets up the PKI workload of ``benchmarks/pki.py`` on each, then
for each operation (read a role, fetch the CRL in DER) and client thread count (1, 4) runs
``--rounds`` rounds; a round sends ``--requests`` requests to every server in turn (the order rotates
from round to round), each thread with its own keep-alive ``requests`` session (warmed up first), and
reads the server process's user + system CPU (all threads) from /proc before and after. Prints the
microseconds of server CPU per request of each round, their minimum and median, and each server's
median against bao's (bao / server: higher is better; the target of issue 27 is 1.2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pki  # noqa: E402
import procs  # noqa: E402
import requests  # noqa: E402

OPS = {
    "read_role": lambda session, base: session.get(f"{base}/v1/pki/roles/ec"),
    "crl": lambda session, base: session.get(f"{base}/v1/pki/crl"),
}
WARM_UP = 20  # untimed requests per session before a round


def start_double(path: str) -> procs.Proc:
    """``python -m pytest_schedpki.cli serve --no-seed`` with ``path`` first on ``PYTHONPATH``."""
    port, scheduler_port = procs.free_port(), procs.free_port()
    env = dict(os.environ, PYTHONPYCACHEPREFIX=procs.PYCACHE, PYTHONPATH=os.path.abspath(path))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-m", "pytest_schedpki.cli", "serve", "--secrets-port", str(port),
            "--scheduler-port", str(scheduler_port), "--no-seed"]
    return procs.Proc("double", argv, port, env, os.path.abspath(path), scheduler_port=scheduler_port)


def one_round(proc: procs.Proc, op, threads: int, count: int) -> float:
    """Server CPU microseconds per request over ``count`` requests spread over ``threads`` threads."""
    pool = []
    for _ in range(threads):
        session = requests.Session()
        session.headers["X-Vault-Token"] = procs.ROOT
        for _ in range(WARM_UP):
            op(session, proc.url).raise_for_status()
        pool.append(session)
    barrier = threading.Barrier(threads + 1)
    errors: list[str] = []

    def work(session: requests.Session, n: int) -> None:
        barrier.wait()
        for _ in range(n):
            response = op(session, proc.url)
            if response.status_code != 200:
                errors.append(f"{response.status_code} {response.text[:200]}")
                return

    share = count // threads
    workers = [threading.Thread(target=work, args=(s, share)) for s in pool]
    for worker in workers:
        worker.start()
    before = procs.cpu_seconds(proc.pid)
    barrier.wait()
    for worker in workers:
        worker.join()
    after = procs.cpu_seconds(proc.pid)
    for session in pool:
        session.close()
    if errors:
        raise RuntimeError(errors[0])
    return (after - before) / (share * threads) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--double", action="append", default=[], metavar="NAME=PATH",
                        help="a checkout of the double to run (default: this one, as 'double')")
    parser.add_argument("--requests", type=int, default=3000, help="requests per round (default 3000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per row (default 3)")
    parser.add_argument("--ops", default="read_role,crl", help="comma-separated: read_role, crl")
    parser.add_argument("--threads", default="1,4", help="comma-separated client thread counts")
    args = parser.parse_args(argv)
    doubles = [spec.split("=", 1) for spec in args.double] or [["double", os.path.dirname(HERE)]]
    started: dict[str, procs.Proc] = {}
    try:
        started["bao"] = procs.start_real()
        for name, path in doubles:
            started[name] = start_double(path)
        for proc in started.values():
            pki.setup(proc.url, procs.ROOT)
        names = list(started)
        for op_name in args.ops.split(","):
            for threads in (int(t) for t in args.threads.split(",")):
                samples: dict[str, list[float]] = {name: [] for name in names}
                for r in range(args.rounds):
                    order = names[r % len(names):] + names[:r % len(names)]
                    for name in order:
                        samples[name].append(one_round(started[name], OPS[op_name], threads, args.requests))
                bao = statistics.median(samples["bao"])
                for name in names:
                    values = samples[name]
                    med = statistics.median(values)
                    print(f"{op_name:9} threads={threads} {name:8} us/req min {min(values):7.1f} median {med:7.1f} "
                          f"ratio bao/{name} {bao / med:5.2f}  rounds {[round(v, 1) for v in values]}", flush=True)
    finally:
        for proc in started.values():
            proc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
