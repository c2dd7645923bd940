"""``schedpki serve``: both services standalone, for clients in any language.

Prints the two addresses and ready-to-paste environment lines, then serves until SIGINT or
SIGTERM (it stops within about 0.1 s). Exit status: 0 after a clean stop, 2 for bad arguments or
a bad seed file (the message names the file, the entry and the problem), 1 when a port cannot be
bound.
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import sys
import threading

from .double import Double
from .errors import SeedError


def default_seed_path() -> str:
    """Path of the seed loaded when ``--seed`` is not given (packaged ``default_seed.yaml``)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "default_seed.yaml")
    if os.path.exists(path):
        return path
    from importlib import resources  # a zipped install: slower, so only when needed

    return str(resources.files("pytest_schedpki").joinpath("default_seed.yaml"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="schedpki", description="Test double of Nomad ACL auth methods and the OpenBao/Vault PKI engine")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run both services until interrupted")
    serve.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    serve.add_argument("--scheduler-port", type=int, default=4646, help="scheduler (Nomad API) port; 0 = any free port (default 4646)")
    serve.add_argument("--secrets-port", type=int, default=8200, help="secrets (OpenBao/Vault API) port; 0 = any free port (default 8200)")
    serve.add_argument("--management-token", default="root", help="the scheduler's bootstrap management token secret (default root)")
    serve.add_argument("--root-token", default="root", help="the secrets service's root token (default root)")
    serve.add_argument("--seed", action="append", metavar="FILE.yaml",
                       help="YAML seed file (repeatable); default: the packaged example seed")
    serve.add_argument("--no-seed", action="store_true", help="start empty (no default seed)")
    serve.add_argument("--tls", action="store_true",
                       help="serve HTTPS with the double's own CA (valid 2000-2999); prints VAULT_CACERT etc.")
    serve.add_argument("--enterprise", action="store_true",
                       help="emulate Vault Enterprise PKI features (external-policy paths, cert_metadata); see docs/enterprise.md")
    serve.add_argument("--log-requests", action="store_true", help="print one line per request to stderr")
    serve.add_argument("--rsa-key-pool", type=int, metavar="N",
                       help="RSA-2048 keys kept pre-generated in the background (default 4, or $SCHEDPKI_RSA_KEY_POOL; 0 = none)")
    serve.add_argument("--cpu", type=int, metavar="N",
                       help="run the server's threads on CPU N only (Linux): one thread runs Python at a time, and on "
                            "one core they hand over without cross-core wake-ups (faster with concurrent clients)")
    serve.add_argument("--deterministic-keys", metavar="SEED",
                       help="derive every new private key from SEED: reproducible and predictable, for tests only "
                            "(default $SCHEDPKI_DETERMINISTIC_KEYS)")
    return parser


def env_lines(double: Double, ca_path: str | None = None) -> list[str]:
    """The ``export`` lines for NOMAD_*, VAULT_* and BAO_* pointing at ``double`` (plus the
    ``*_CACERT`` lines when the listeners use TLS with the CA at ``ca_path``)."""
    lines = [
        f"export NOMAD_ADDR={double.scheduler_url}",
        f"export NOMAD_TOKEN={double.management_token}",
        f"export VAULT_ADDR={double.secrets_url}",
        f"export VAULT_TOKEN={double.root_token}",
        f"export BAO_ADDR={double.secrets_url}",
        f"export BAO_TOKEN={double.root_token}",
    ]
    if ca_path:
        lines += [f"export NOMAD_CACERT={ca_path}", f"export VAULT_CACERT={ca_path}", f"export BAO_CACERT={ca_path}"]
    return lines


def serve(args: argparse.Namespace) -> int:
    if args.rsa_key_pool is not None and args.rsa_key_pool < 0:
        print("schedpki: --rsa-key-pool must not be negative", file=sys.stderr)
        return 2
    if args.cpu is not None:
        try:  # threads started from now on (listeners, requests, key pool) inherit the affinity
            os.sched_setaffinity(0, {args.cpu})
        except (AttributeError, OSError, ValueError) as exc:
            print(f"schedpki: cannot run on CPU {args.cpu}: {exc}", file=sys.stderr)
            return 2
    double = Double(management_token=args.management_token, root_token=args.root_token,
                    rsa_key_pool=args.rsa_key_pool, deterministic_keys=args.deterministic_keys)
    double.secrets.enterprise = args.enterprise
    seeds = [] if args.no_seed else (args.seed or [default_seed_path()])
    try:
        for seed in seeds:
            double.seed(seed)
    except SeedError as exc:
        print(f"schedpki: bad seed: {exc}", file=sys.stderr)
        return 2
    material = None
    if args.tls:
        from .tls import create_tls_material

        material = create_tls_material(args.host)
    try:
        double.start(args.host, args.scheduler_port, args.secrets_port, log_requests=args.log_requests,
                     ssl_context=material.server_context() if material else None)
    except OSError as exc:
        print(f"schedpki: cannot listen on {args.host}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"schedpki: scheduler (Nomad ACL auth methods API) on {double.scheduler_url}")
    print(f"schedpki: secrets (OpenBao/Vault PKI API) on {double.secrets_url}")
    if seeds:
        print("schedpki: seeded from " + ", ".join(os.fspath(s) for s in seeds))
    print("\n".join(env_lines(double, material.ca_path if material else None)))
    print("schedpki: unseal key (sys/unseal, `bao operator unseal`): "
          + base64.b64encode(double.secrets.unseal_key).decode(), flush=True)
    while not stop.wait(0.05):
        pass
    double.faults.clear()  # release hanging requests before shutdown
    double.stop()
    print("schedpki: stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``schedpki`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return 2  # pragma: no cover - argparse requires a command


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
