"""Server CPU per request of the cheap standalone rows, precisely (run by hand, not collected by pytest).

    python benchmarks/server_cpu.py                                  # double (this checkout) vs bao
    python benchmarks/server_cpu.py --double old=/work/main --double new=.   # two doubles vs bao

Starts ``bao server -dev`` and one ``schedpki serve --no-seed`` per ``--double NAME=PATH`` (that
checkout first on ``PYTHONPATH``), sets up the PKI workload of ``benchmarks/pki.py`` on each, then
for each operation (read a role, fetch the CRL in DER, and the three ACME rows of
``benchmarks/protocols.py``: ``HEAD new-nonce``, ``new-account`` with a fresh ES256 key, ``new-order``
for one name, made by its request makers and ``prepare`` steps) and client thread count (1, 4) runs
``--rounds`` rounds; a round sends ``--requests`` requests (``--acme-requests`` for the ACME rows: each
of their writes stores an account or an order, and the standalone rows measure a store of hundreds,
not tens of thousands) to every server in turn (the order rotates from round to round), each thread
with its own keep-alive ``requests`` session (warmed up first), and reads the server process's user +
system CPU (all threads) from /proc before and after. An ACME JWS is signed by this process inside
the round: that is client CPU, not in the figure. Prints the
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
import protocols  # noqa: E402
import requests  # noqa: E402

OPS: dict[str, pki.Operation] = {
    "read_role": pki.Operation("read_role", "read role", lambda session, base, n: session.get(f"{base}/v1/pki/roles/ec")),
    "crl": pki.Operation("crl", "CRL (DER)", lambda session, base, n: session.get(f"{base}/v1/pki/crl")),
    **{op.key: op for op in protocols.operations(procs.ROOT) if op.key.startswith("acme_")},
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


def one_round(proc: procs.Proc, operation: pki.Operation, threads: int, count: int) -> float:
    """Server CPU microseconds per request over ``count`` requests spread over ``threads`` threads;
    ``operation.prepare`` (untimed) first, then :data:`WARM_UP` untimed requests per session. The
    request number ``n`` handed to ``operation.op`` is unique in the round (new-account's key index)."""
    op, share = operation.op, count // threads
    pool = []
    for _ in range(threads):
        session = requests.Session()
        session.headers["X-Vault-Token"] = procs.ROOT
        pool.append(session)
    first = operation.prepare(proc.url, threads * (WARM_UP + share), pool) if operation.prepare else 0
    for t, session in enumerate(pool):
        for n in range(WARM_UP):
            response = op(session, proc.url, first + t * (WARM_UP + share) + n)
            if response.status_code >= 300:
                raise RuntimeError(f"warm-up: {response.status_code} {response.text[:200]}")
    barrier = threading.Barrier(threads + 1)
    errors: list[str] = []

    def work(session: requests.Session, start: int) -> None:
        barrier.wait()
        for n in range(start, start + share):
            response = op(session, proc.url, n)
            if response.status_code >= 300:
                errors.append(f"{response.status_code} {response.text[:200]}")
                return

    workers = [threading.Thread(target=work, args=(s, first + t * (WARM_UP + share) + WARM_UP))
               for t, s in enumerate(pool)]
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
    parser.add_argument("--acme-requests", type=int, default=600,
                        help="requests per round of the ACME rows (default 600)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per row (default 3)")
    parser.add_argument("--ops", default="read_role,crl",
                        help=f"comma-separated, of: {', '.join(OPS)} (acme: the three ACME rows)")
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
        ops = [name for key in args.ops.split(",") for name in OPS if name == key or name.startswith(f"{key}_")]
        for op_name in ops:
            count = args.acme_requests if op_name.startswith("acme_") else args.requests
            for threads in (int(t) for t in args.threads.split(",")):
                samples: dict[str, list[float]] = {name: [] for name in names}
                for r in range(args.rounds):
                    order = names[r % len(names):] + names[:r % len(names)]
                    for name in order:
                        samples[name].append(one_round(started[name], OPS[op_name], threads, count))
                bao = statistics.median(samples["bao"])
                for name in names:
                    values = samples[name]
                    med = statistics.median(values)
                    print(f"{op_name:12} threads={threads} {name:8} us/req min {min(values):7.1f} median {med:7.1f} "
                          f"ratio bao/{name} {bao / med:5.2f}  rounds {[round(v, 1) for v in values]}", flush=True)
    finally:
        for proc in started.values():
            proc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
