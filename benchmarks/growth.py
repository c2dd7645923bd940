"""How the PKI store behaves as it grows (run by hand, not collected by pytest).

    python benchmarks/growth.py            # 100,000 stored certificates, 5 rounds (about 8 minutes on 2 cores)
    python benchmarks/growth.py --quick    # 10,000 stored certificates, 3 rounds

Both servers run unpinned as processes on 127.0.0.1: ``bao server -dev`` and ``schedpki serve
--no-seed``, each with two PKI mounts, ``pki0`` and ``pki``, each with an EC P-256 root and a role
``ec`` (EC P-256 leaves, stored). ``pki`` is first filled to the size (over HTTP, 8 threads signing one
EC CSR); ``pki0`` starts empty. Issue, revoke and a paged ``LIST certs`` (``limit=100``) are then timed on
both mounts, each alone (1 client thread) and beside a load of 4 threads issuing into the same mount;
rounds interleave the servers and the mounts (the order alternates), and both mounts get the same
requests, so what grows besides the store (the revoked certificates every CRL rebuild signs) grows
alike. Then a full ``LIST certs`` of ``pki``. Last, in this process, ``Double.reset()`` with 10,000
certificates in the baseline and 3 writes since the previous reset.

Rows: the double's rate at the size over its rate at 0 (target 1/1.2, "within 1.2x"), the same for bao
(information), each ratio the median of the rounds' own ratios (the two mounts of one round have
revoked the same number of certificates, so their CRLs are the same size; the rates of later rounds
are lower for both, as every revocation re-signs a longer CRL, and a ratio of medians mixed rounds), the double against bao at the size, the full LIST against bao (target 1.0), and the reset
(limit 1 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import procs  # noqa: E402
import requests  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402
from report import Row, measured  # noqa: E402
from timing import sessions, timed_round  # noqa: E402

ROLE = {"allow_any_name": True, "enforce_hostnames": False, "ttl": "1h", "max_ttl": "24h", "no_store": False,
        "key_type": "ec", "key_bits": 256}
EMPTY, FULL = "pki0", "pki"  # the mount measured from 0 stored certificates, and the one filled first
FLAT = 1 / 1.2  # "within 1.2x of the rate at 0"
PAIRED = "; ratio: median of the rounds' ratios"  # at the size over at 0, the same round (the same CRL size)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def setup(base: str, mount: str) -> None:
    """Mount ``mount`` (PKI) with an EC root and role ``ec``. Raises RuntimeError on a failed step."""
    session = sessions(1, procs.ROOT)[0]
    for path, body in ((f"sys/mounts/{mount}", {"type": "pki", "config": {"max_lease_ttl": "87600h"}}),
                       (f"{mount}/root/generate/internal", {"common_name": "growth root", "key_type": "ec",
                                                           "key_bits": 256, "ttl": "87600h"}),
                       (f"{mount}/roles/ec", ROLE)):
        response = session.post(f"{base}/v1/{path}", json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"setup {path}: {response.status_code} {response.text[:300]}")


def make_ec_csr() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder()
           .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fill.example.com")]))
           .sign(key, hashes.SHA256()))
    return csr.public_bytes(serialization.Encoding.PEM).decode()


def fill(base: str, mount: str, count: int, csr: str, threads: int = 8) -> float:
    """Store ``count`` more certificates in ``mount`` (sign one EC CSR); returns the seconds taken."""
    def op(session: requests.Session, url: str, n: int) -> requests.Response:
        return session.post(f"{url}/v1/{mount}/sign/ec", json={"csr": csr, "common_name": f"f{n}.example.com"})
    started = time.perf_counter()
    timed_round(sessions(threads, procs.ROOT), base, op, count, threads)
    return time.perf_counter() - started


class Load:
    """``threads`` client threads issuing EC certificates in ``base``'s ``mount`` until :meth:`stop`."""

    def __init__(self, base: str, threads: int = 4):
        self.stopping = threading.Event()
        self.errors: list[str] = []
        self.workers = [threading.Thread(target=self._run, args=(base, s), daemon=True)
                        for s in sessions(threads, procs.ROOT)]
        for worker in self.workers:
            worker.start()

    def _run(self, base: str, session: requests.Session) -> None:
        n = 0
        while not self.stopping.is_set():
            response = session.post(f"{base}/issue/ec", json={"common_name": f"load{n}.example.com"})
            n += 1
            if response.status_code >= 300:
                self.errors.append(response.text[:300])
                return

    def stop(self) -> None:
        self.stopping.set()
        for worker in self.workers:
            worker.join(timeout=60)
        if self.errors:
            raise RuntimeError(self.errors[0])


def issue_op(session: requests.Session, base: str, n: int) -> requests.Response:
    return session.post(f"{base}/issue/ec", json={"common_name": f"g{n}.example.com"})


def page_op(session: requests.Session, base: str, n: int) -> requests.Response:
    return session.request("LIST", f"{base}/certs", params={"limit": "100"})


def full_list_op(session: requests.Session, base: str, n: int) -> requests.Response:
    return session.request("LIST", f"{base}/certs")


def stock(base: str, count: int) -> list[str]:
    """Issue ``count`` certificates untimed at ``base`` (a mount's URL); their serials, for a revoke round."""
    session = sessions(1, procs.ROOT)[0]
    out = []
    for i in range(count):
        response = session.post(f"{base}/issue/ec", json={"common_name": f"r{i}.example.com"})
        response.raise_for_status()
        out.append(response.json()["data"]["serial_number"])
    return out


def measure(servers: list[procs.Proc], mounts: tuple[str, ...], rounds: int, n: int
            ) -> dict[tuple[str, str, str, str], list[float]]:
    """Rates (req/s) by (server kind, mount, operation, "alone"/"loaded"); rounds interleave the
    servers and the mounts (the order alternates). Each mount sees the same sequence of requests, so
    the revoked certificates (which every CRL rebuild signs) grow alike in all of them."""
    out: dict[tuple[str, str, str, str], list[float]] = {}
    pool = {proc.kind: sessions(1, procs.ROOT) for proc in servers}
    for r in range(rounds):
        for proc in (servers if r % 2 == 0 else servers[::-1]):
            for mount in (mounts if r % 2 == 0 else mounts[::-1]):
                base = f"{proc.url}/v1/{mount}"
                for mode in ("alone", "loaded"):
                    serials = stock(base, n)

                    def revoke(session: requests.Session, url: str, i: int, serials: list[str] = serials):
                        return session.post(f"{url}/revoke", json={"serial_number": serials[i]})

                    load = Load(base) if mode == "loaded" else None
                    try:
                        for key, op in (("issue", issue_op), ("revoke", revoke), ("page", page_op)):
                            rate, _ = timed_round(pool[proc.kind], base, op, n, 1)
                            out.setdefault((proc.kind, mount, key, mode), []).append(rate)
                    finally:
                        if load is not None:
                            load.stop()
    return out


def stored(base: str, mount: str) -> int:
    response = sessions(1, procs.ROOT)[0].request("LIST", f"{base}/v1/{mount}/certs")
    return len(response.json()["data"]["keys"]) if response.status_code == 200 else 0


def reset_samples(size: int, count: int) -> list[float]:
    """Milliseconds of ``Double.reset()`` with ``size`` certificates in the baseline, each after 3
    writes (2 issues and a revoke) made since the previous reset (in-process, no HTTP)."""
    from pytest_schedpki import Double
    from pytest_schedpki.secrets.http import dispatch

    double = Double()
    secrets = double.secrets
    secrets.enable_mount("pki", max_lease_ttl=87600 * 3600)
    dispatch(secrets, "update", "pki/root/generate/internal", {"common_name": "r", "key_type": "ec"}, "root")
    dispatch(secrets, "update", "pki/roles/ec", dict(ROLE), "root")
    csr = make_ec_csr()
    for i in range(size):
        dispatch(secrets, "update", "pki/sign/ec", {"csr": csr, "common_name": f"b{i}.example.com"}, "root")
    double.save_baseline()
    samples = []
    for i in range(count):
        dispatch(secrets, "update", "pki/issue/ec", {"common_name": f"x{i}.example.com"}, "root")
        serial = dispatch(secrets, "update", "pki/issue/ec", {"common_name": f"y{i}.example.com"},
                          "root").data["serial_number"]
        dispatch(secrets, "update", "pki/revoke", {"serial_number": serial}, "root")
        started = time.perf_counter()
        double.reset()
        samples.append((time.perf_counter() - started) * 1000)
    if len(secrets.mount("pki").backend.state.certs) != size + 1:  # the baseline's leaves and the root
        raise RuntimeError("reset did not return to the baseline")
    return samples


def rows(size: int = 100_000, rounds: int = 5, n: int = 100, reset_size: int = 10_000,
         resets: int = 200) -> list[Row]:
    """The growth rows (see the module docstring). ``size``: stored certificates; ``n``: requests per
    timed round."""
    started: list[procs.Proc] = []
    result: list[Row] = []
    try:
        real = procs.start_real()
        started.append(real)
        double = procs.start_double(["--no-seed"])
        started.append(double)
        servers = [real, double]
        for proc in servers:
            for mount in (EMPTY, FULL):
                setup(proc.url, mount)
        csr = make_ec_csr()
        for proc in servers:
            need = size - stored(proc.url, FULL)
            log(f"{proc.kind}: filled {need} certificates in {fill(proc.url, FULL, need, csr):.1f} s")
        rates = measure(servers, (EMPTY, FULL), rounds, n)
        before = {(kind, key, mode): v for (kind, mount, key, mode), v in rates.items() if mount == EMPTY}
        after = {(kind, key, mode): v for (kind, mount, key, mode), v in rates.items() if mount == FULL}
        full: dict[str, list[float]] = {}
        for r in range(rounds):
            for proc in (servers if r % 2 == 0 else servers[::-1]):
                rate, _ = timed_round(sessions(1, procs.ROOT), f"{proc.url}/v1/{FULL}", full_list_op, 3, 1)
                full.setdefault(proc.kind, []).append(rate)
        at = f"{size // 1000}k"
        labels = {"issue": "issue EC", "revoke": "revoke", "page": "LIST certs limit=100"}
        for key, label in labels.items():
            for mode in ("alone", "loaded"):
                how = "1 thread" if mode == "alone" else "1 thread beside 4 issuing"
                log(f"{label} {how}: double 0 {_fmt(before['double', key, mode])} {at} "
                    f"{_fmt(after['double', key, mode])}; bao 0 {_fmt(before['real', key, mode])} {at} "
                    f"{_fmt(after['real', key, mode])}")
                result.append(Row(f"{label}: double at {at} (real column: double at 0)", how + PAIRED, "req/s",
                                  after["double", key, mode], before["double", key, mode], target=FLAT,
                                  paired=True))
                result.append(Row(f"{label}: bao at {at} (real column: bao at 0)", how + PAIRED, "req/s",
                                  after["real", key, mode], before["real", key, mode], target=None, paired=True))
                result.append(Row(f"{label} at {at}", how, "req/s", after["double", key, mode],
                                  after["real", key, mode], target=None))
        result.append(Row(f"full LIST certs at {at}", "1 thread", "req/s", full["double"], full["real"]))
        log(f"full LIST at {at}: double {_fmt(full['double'])} bao {_fmt(full['real'])}")
    finally:
        for proc in started:
            proc.stop()
    resets_ms = reset_samples(reset_size, resets)
    log(f"reset with {reset_size} baseline certificates: median {statistics.median(resets_ms):.3f} ms "
        f"({min(resets_ms):.3f}..{max(resets_ms):.3f})")
    result.append(Row(f"reset, {reset_size // 1000}k certificates in the baseline", "in-process Double.reset()",
                      "ms", resets_ms, target=None, limit=1.0))
    return result


def _fmt(samples: list[float]) -> str:
    return f"{statistics.median(samples):.0f} ({min(samples):.0f}..{max(samples):.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="stored certificates (default 100000)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="10,000 certificates, 3 rounds")
    parser.add_argument("--reset-only", action="store_true", help="only the in-process reset row")
    args = parser.parse_args(argv)
    size, rounds = (10_000, 3) if args.quick else (args.size, args.rounds)
    if args.reset_only:
        measured(lambda: [Row("reset, 10k certificates in the baseline", "in-process Double.reset()", "ms",
                              reset_samples(10_000, 200), target=None, limit=1.0)])
    else:
        measured(lambda: rows(size=size, rounds=rounds), "both servers unpinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
