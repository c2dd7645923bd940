"""The state page's first certificate page with 100,000 stored certificates (run by hand, not collected
by pytest; not a timed test):

    python benchmarks/ui_certs.py              # 100,000 certificates, 20 rounds
    python benchmarks/ui_certs.py --count 10000

A double in this process gets a PKI mount ``pki`` (EC P-256 root, role ``web``), whose store is filled
with ``--count`` distinct certificates signed by that root (built here with ``cryptography``, put in the
store as issuance does: no HTTP, so filling takes seconds). Then, over HTTP to the listener, the page's
first certificate page (``/_schedpki/ui/api/certs?mount=pki``, 50 rows) is asked for: each round with a
cold decode cache (the worst case), newest first and in serial order, then a filtered page (role, revoked
status) and a text search. Prints the median and the worst time of each; the target is the first page in
under 200 ms. Also prints how many certificates each answer decoded (at most a page's worth).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import requests  # noqa: E402

from pytest_schedpki.double import Double  # noqa: E402
from pytest_schedpki.ui import cert_views  # noqa: E402
from tests.ui.certfill import fill  # noqa: E402

ROOT = {"X-Vault-Token": "root"}
TARGET_MS = 200.0


def setup(count: int) -> Double:
    double = Double(rsa_key_pool=0).start()
    s = requests.Session()
    s.headers.update(ROOT)
    base = double.secrets_url
    assert s.post(f"{base}/v1/sys/mounts/pki", json={"type": "pki"}).status_code == 204
    assert s.post(f"{base}/v1/pki/root/generate/internal", json={"common_name": "Bench Root", "key_type": "ec"}).ok
    assert s.post(f"{base}/v1/pki/roles/web", json={"allow_any_name": True, "key_type": "ec"}).ok
    fill(double, count)
    return double


def timed(session: requests.Session, url: str, rounds: int) -> tuple[list[float], int, dict]:
    times, decoded, answer = [], 0, {}
    for _ in range(rounds):
        cert_views._cache.clear()  # cold: every row of the page is decoded anew
        before = cert_views.decodes
        start = time.perf_counter()
        r = session.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert r.status_code == 200, r.text
        answer = r.json()
        decoded = max(decoded, cert_views.decodes - before)
    return times, decoded, answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    double = setup(args.count)
    print(f"filled {args.count} certificates in {time.perf_counter() - start:.1f} s")
    session = requests.Session()
    base = f"{double.secrets_url}/_schedpki/ui/api/certs?mount=pki"
    worst_first = 0.0
    try:
        for label, query in (("first page, newest first", ""), ("first page, serial order", "&sort=serial"),
                             ("role web, revoked", "&role=web&status=revoked"),
                             ("text search 'host99999'", "&q=host99999")):
            times, decoded, answer = timed(session, base + query, args.rounds)
            print(f"{label:28} median {statistics.median(times):7.1f} ms  worst {max(times):7.1f} ms  "
                  f"rows {len(answer['items']):3}  decoded {decoded:5}  total {answer['total']}"
                  + ("  (scan budget spent)" if answer.get("scan_stopped") else ""))
            if label.startswith("first page"):
                worst_first = max(worst_first, statistics.median(times))
    finally:
        double.stop()
    verdict = "OK" if worst_first < TARGET_MS else "OVER"
    print(f"first page median {worst_first:.1f} ms against a target of {TARGET_MS:.0f} ms: {verdict}")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
