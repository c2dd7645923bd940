"""The double as a standalone user meets it, side by side with OpenBao (run by hand, not collected by pytest).

    python benchmarks/standalone.py            # 7 fresh starts per server, 5 throughput rounds
    python benchmarks/standalone.py --quick    # 3 starts, 2 rounds, a quarter of the requests
    python benchmarks/standalone.py --quick --ops ocsp,acme   # only these request rows, no set-up rows

Set-up rows: fresh processes, interleaved (the order alternates): ``schedpki serve --no-seed`` (its
default key pool) vs ``bao server -dev``, each timed from ``Popen`` to the first healthy answer, then
over HTTP (one ``requests`` keep-alive session, sent as soon as the previous answer arrives): mount
``pki``, tune it (``max_lease_ttl``), an internal RSA-2048 root, the roles ``ec`` and ``rsa``, then
the first issuance of each role. Throughput rows: the rows of ``benchmarks/run.py`` (issue EC/RSA,
sign, read role, LIST certs, revoke, CRL, OCSP, ACME; 1 and 4 client threads) with the double not pinned to a CPU,
as ``schedpki serve`` runs by default. Ratios are "double over real, higher is better" (times divide
real by double); the target of every row is 1.2x.

:func:`rows` returns the rows (``report.Row``) for ``benchmarks/run.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import pki  # noqa: E402
import procs  # noqa: E402
import requests  # noqa: E402
import run  # noqa: E402
from report import Row, measured  # noqa: E402

TARGET = 1.2
RSA_KEY_POOL = 256  # as benchmarks/run.py: no key generation inside a timed throughput round

SETUP_STEPS = [
    ("sys/mounts/pki", {"type": "pki"}),
    ("sys/mounts/pki/tune", {"max_lease_ttl": "87600h"}),
    ("pki/root/generate/internal", {"common_name": "bench root", "key_type": "rsa", "key_bits": 2048,
                                    "ttl": "87600h", "issuer_name": "root"}),
    ("pki/roles/ec", {**pki.ROLE, "key_type": "ec", "key_bits": 256}),
    ("pki/roles/rsa", {**pki.ROLE, "key_type": "rsa", "key_bits": 2048}),
]
FIRST_ISSUES = [
    ("pki/issue/ec", {"common_name": "first-ec.example.com"}),
    ("pki/issue/rsa", {"common_name": "first-rsa.example.com"}),
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _post_all(session: requests.Session, base: str, steps: list[tuple[str, dict]]) -> float:
    """Send ``steps`` in order; returns the seconds they took. Raises RuntimeError on a failure."""
    started = time.perf_counter()
    for path, body in steps:
        response = session.post(f"{base}/v1/{path}", json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
    return time.perf_counter() - started


def fresh_setup(kind: str) -> dict[str, float]:
    """Start one fresh server of ``kind`` (``real``/``double``), set it up and issue the first two
    certificates; returns milliseconds: ``startup``, ``setup`` (over HTTP), ``first`` (the two
    issues) and ``total`` (Popen to the second certificate)."""
    began = time.perf_counter()
    proc = procs.start_real() if kind == "real" else procs.start_double(["--no-seed"])
    try:
        session = requests.Session()
        session.headers["X-Vault-Token"] = procs.ROOT
        setup = _post_all(session, proc.url, SETUP_STEPS)
        first = _post_all(session, proc.url, FIRST_ISSUES)
        total = time.perf_counter() - began
    finally:
        proc.stop()
    return {"startup": proc.startup * 1000, "setup": setup * 1000, "first": first * 1000, "total": total * 1000}


def setup_rows(trials: int) -> list[Row]:
    """Fresh starts of both servers, interleaved (after one untimed warm-up start each)."""
    for kind in ("real", "double"):
        fresh_setup(kind)  # page cache, byte-code cache
    samples: dict[str, dict[str, list[float]]] = {k: {"startup": [], "setup": [], "first": [], "total": []}
                                                  for k in ("real", "double")}
    for trial in range(trials):
        for kind in (("real", "double") if trial % 2 == 0 else ("double", "real")):
            for key, value in fresh_setup(kind).items():
                samples[kind][key].append(value)
    for kind, values in samples.items():
        log(f"set-up ms {kind}: " + "; ".join(f"{k} {[round(x, 1) for x in v]}" for k, v in values.items()))
    d, r = samples["double"], samples["real"]
    return [
        Row("start-up + set-up + first issuance", "Popen to the 2nd certificate (mount, tune, RSA root, 2 roles, "
            "issue EC + RSA)", "ms", d["total"], r["total"], higher_is_better=False, target=TARGET),
        Row("set-up over HTTP", "mount, tune, RSA-2048 root, 2 roles", "ms", d["setup"], r["setup"],
            higher_is_better=False, target=TARGET),
        Row("first issuance after set-up", "issue EC + issue RSA", "ms", d["first"], r["first"],
            higher_is_better=False, target=TARGET),
        Row("start-up to first healthy answer", "standalone, --no-seed", "ms", d["startup"], r["startup"],
            higher_is_better=False, target=TARGET),
    ]


def throughput(rounds: int, scale: float, only: list[str] | None = None) -> list[Row]:
    """``benchmarks/run.py``'s request rows with the double not pinned (``--rsa-key-pool 256``);
    ``only``: the operation keys or prefixes to run (``run.operations``), default all."""
    started: list[procs.Proc] = []
    try:
        real = procs.start_real()
        started.append(real)
        double = procs.start_double(["--no-seed", "--rsa-key-pool", str(RSA_KEY_POOL)])
        started.append(double)
        for proc in (real, double):
            pki.setup(proc.url, procs.ROOT)
        out = run.throughput_rows(real, double, rounds, scale, only)
    finally:
        for proc in started:
            proc.stop()
    for row in out:  # the rate rows keep the target run.rate_target gave them (what bounds each)
        row.mode = f"{row.mode}, unpinned"
    return out


def rows(rounds: int = 5, startups: int = 7, scale: float = 1.0, throughput_rows: bool = True,
         only: list[str] | None = None) -> list[Row]:
    """The set-up rows (not with ``only``), then (unless ``throughput_rows`` is false) the unpinned
    throughput rows (``only``: those operations)."""
    out = [] if only else setup_rows(startups)
    if throughput_rows:
        out += throughput(rounds, scale, only)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed throughput rounds per operation (default 5)")
    parser.add_argument("--startups", type=int, default=7, help="fresh starts per server (default 7)")
    parser.add_argument("--quick", action="store_true", help="3 starts, 2 rounds, a quarter of the requests")
    parser.add_argument("--setup-only", action="store_true", help="only the set-up rows")
    parser.add_argument("--ops", default="",
                        help="comma-separated request rows to run, by key or prefix (e.g. ocsp,acme or "
                             "issue_ec,crl); skips the set-up rows")
    args = parser.parse_args(argv)
    only = [key.strip() for key in args.ops.split(",") if key.strip()] or None
    if only and args.setup_only:
        parser.error("--ops and --setup-only exclude each other")
    known = [op.key for op in run.operations(pki.Serials())]
    unknown = [k for k in only or [] if not any(key == k or key.startswith(f"{k}_") for key in known)]
    if unknown:
        parser.error(f"unknown --ops {unknown}; known: {', '.join(known)}")
    rounds, startups, scale = args.rounds, args.startups, 1.0
    if args.quick:
        rounds, startups, scale = 2, 3, 0.25
    measured(lambda: rows(rounds, startups, scale, throughput_rows=not args.setup_only, only=only), "the double unpinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
