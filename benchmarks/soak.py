"""Bounded-state soak (run by hand, not collected by pytest): does a long-running ``schedpki serve``
stay flat?

    python benchmarks/soak.py                    # 5 minutes of reads, then 5,000 certificates on each server
    python benchmarks/soak.py --seconds 60 --certs 1000 --skip-real

1. **Read-only phase** (the double): role reads (``GET /v1/pki/roles/example-dot-com``), auth-method
   lists (``GET /v1/acl/auth-methods``) and ``GET /v1/sys/health`` in turn, on keep-alive
   connections, for ``--seconds``. RSS is sampled every ``--sample`` seconds; the growth from the
   start of the phase must stay under ``--max-growth-mib`` (25 MiB, the issue's target), which the
   request journal's bound makes possible (newest 10,000 requests / 16 MiB).
2. **Write phase** (the double, then a real ``bao server -dev`` set up like the default seed):
   ``--certs`` issues on role ``example-dot-com`` (EC P-256, stored); RSS per stored certificate =
   RSS growth / certificates, and the ratio double / bao (below 1 means the double needs less).

Both servers are processes on 127.0.0.1 (free ports; bao with a private HOME); only the PIDs this
script started are signalled. Exit status 1 when the read-only growth exceeds the target.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pki  # noqa: E402
import procs  # noqa: E402

MIB = 1024 * 1024


def log(message: str) -> None:
    print(message, flush=True)


def rss_bytes(pid: int) -> int:
    return procs.rss_kib(pid)["VmRSS"] * 1024


class Client:
    """One keep-alive ``http.client`` connection; ``get``/``post`` return the status (body read)."""

    def __init__(self, port: int, headers: dict[str, str]):
        self.port, self.headers = port, headers
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        payload = None if body is None else json.dumps(body).encode()
        headers = dict(self.headers, **({"Content-Type": "application/json"} if payload else {}))
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=payload, headers=headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def read_only(double: procs.Proc, seconds: float, sample: float) -> dict:
    """The read-only phase; returns the figures (bytes, requests)."""
    secrets = Client(double.port, {"X-Vault-Token": procs.ROOT})
    scheduler = Client(double.scheduler_port, {"X-Nomad-Token": procs.ROOT})
    calls = [(secrets, "/v1/pki/roles/example-dot-com"), (scheduler, "/v1/acl/auth-methods"),
             (secrets, "/v1/sys/health")]
    for client, path in calls:  # the seed is there and every call answers 200
        status, body = client.request("GET", path)
        if status != 200:
            raise SystemExit(f"read-only phase: GET {path} answered {status}: {body[:200]!r}")
    start_rss = peak = rss_bytes(double.pid)
    started = time.monotonic()
    next_sample = started + sample
    requests_done = 0
    log(f"read-only: {seconds:.0f} s of role reads, auth-method lists and health on the double "
        f"(RSS at start {start_rss / MIB:.1f} MiB)")
    while True:
        for client, path in calls:
            status, _ = client.request("GET", path)
            if status != 200:
                raise SystemExit(f"read-only phase: GET {path} answered {status}")
        requests_done += len(calls)
        now = time.monotonic()
        if now >= next_sample:
            rss = rss_bytes(double.pid)
            peak = max(peak, rss)
            log(f"  {now - started:6.0f} s  {requests_done:8d} requests  RSS {rss / MIB:7.1f} MiB  "
                f"(+{(rss - start_rss) / MIB:5.1f})  {requests_done / (now - started):6.0f} req/s")
            next_sample += sample
        if now - started >= seconds:
            break
    end_rss = rss_bytes(double.pid)
    secrets.close()
    scheduler.close()
    return {"start": start_rss, "end": end_rss, "peak": max(peak, end_rss), "requests": requests_done,
            "seconds": time.monotonic() - started}


def issue(proc: procs.Proc, certs: int) -> dict:
    """Issue ``certs`` stored certificates on role ``example-dot-com``; RSS before/after (bytes)."""
    client = Client(proc.port, {"X-Vault-Token": procs.ROOT})
    status, body = client.request("POST", "/v1/pki/issue/example-dot-com", {"common_name": "warm.example.com"})
    if status != 200:
        raise SystemExit(f"{proc.kind}: issue answered {status}: {body[:300]!r}")
    before = rss_bytes(proc.pid)
    started = time.monotonic()
    for n in range(certs):
        status, body = client.request("POST", "/v1/pki/issue/example-dot-com", {"common_name": f"h{n}.example.com"})
        if status != 200:
            raise SystemExit(f"{proc.kind}: issue {n} answered {status}: {body[:300]!r}")
    elapsed = time.monotonic() - started
    time.sleep(1.0)  # let background work (Go's GC, the key pool) settle before the reading
    after = rss_bytes(proc.pid)
    status, body = client.request("LIST", "/v1/pki/certs")
    stored = len(json.loads(body)["data"]["keys"]) if status == 200 else -1
    client.close()
    return {"before": before, "after": after, "certs": certs, "stored": stored, "seconds": elapsed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="read-only phase length (default 300)")
    parser.add_argument("--sample", type=float, default=15.0, help="RSS sampling interval, seconds (default 15)")
    parser.add_argument("--certs", type=int, default=5000, help="certificates issued per server (default 5000; 0 = no write phase)")
    parser.add_argument("--max-growth-mib", type=float, default=25.0, help="allowed read-only RSS growth (default 25)")
    parser.add_argument("--skip-real", action="store_true", help="no bao server (no ratio)")
    parser.add_argument("--double-arg", action="append", default=[], metavar="ARG",
                        help="extra argument for schedpki serve (repeatable), e.g. --double-arg=--journal-max-entries=1000")
    args = parser.parse_args(argv)

    double = procs.start_double(["--rsa-key-pool", "0", *args.double_arg])
    try:
        reads = read_only(double, args.seconds, args.sample)
        written = issue(double, args.certs) if args.certs else None
    finally:
        double.stop()
    real = None
    if args.certs and not args.skip_real:
        bao = procs.start_real()
        try:
            pki.setup_like_default_seed(bao.url, procs.ROOT)
            real = issue(bao, args.certs)
        finally:
            bao.stop()

    growth = reads["end"] - reads["start"]
    log("")
    log(f"read-only: {reads['requests']} requests in {reads['seconds']:.0f} s; RSS {reads['start'] / MIB:.1f} -> "
        f"{reads['end'] / MIB:.1f} MiB (peak {reads['peak'] / MIB:.1f}); growth {growth / MIB:.1f} MiB "
        f"(target < {args.max_growth_mib:g} MiB): {'OK' if growth < args.max_growth_mib * MIB else 'TOO MUCH'}; "
        f"{growth / max(reads['requests'], 1):.1f} B/request")
    for name, figures in (("double", written), ("bao", real)):
        if figures:
            per = (figures["after"] - figures["before"]) / figures["certs"]
            figures["per_cert"] = per
            log(f"write ({name}): {figures['certs']} certificates in {figures['seconds']:.1f} s "
                f"({figures['stored']} listed); RSS {figures['before'] / MIB:.1f} -> {figures['after'] / MIB:.1f} MiB; "
                f"{per / 1024:.2f} KiB per stored certificate")
    if written and real:
        log(f"RSS per stored certificate, double / bao: {written['per_cert'] / real['per_cert']:.2f} "
            f"(below 1: the double needs less)")
    return 0 if growth < args.max_growth_mib * MIB else 1


if __name__ == "__main__":
    sys.exit(main())
