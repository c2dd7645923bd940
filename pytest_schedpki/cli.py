"""``schedpki serve``: both services standalone, for clients in any language.

Prints the two addresses and ready-to-paste environment lines, then serves until SIGINT or
SIGTERM (it stops within about 0.1 s). Exit status: 0 after a clean stop, 2 for bad arguments, no
command (the help is printed) or a bad seed file (the message names the file, the entry and the
problem), 1 when a port cannot be bound (the message names the address, the port and the service).
``schedpki --version`` prints the installed version.
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import sys
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import SeedError
from .wire.connections import ListenerLimits

if TYPE_CHECKING:
    from .double import Double

# -- start-up ----------------------------------------------------------------------------------
# A standalone user starts the server, waits for sys/health, then mounts pki, generates an RSA root
# and issues. Two costs would otherwise land on those first requests: importing the PKI engine (its
# modules and cryptography's X.509 layer, tens of milliseconds) and making RSA-2048 keys (tens of
# milliseconds each, up to 100 ms on a busy machine). serve() sets the key pool going first, on idle
# CPU time only (OpenSSL's prime search mostly runs without the GIL, so keys are made on a free core
# while the interpreter imports the double: werkzeug, both services, ~100 ms; on a busy machine a
# key pool at normal priority made those imports up to twice as slow), and once the listeners answer
# it lets the pool run at normal priority and imports the
# PKI engine in a daemon thread while the client reads the health answer and prepares its first
# request (a request needing a module still being imported waits for that import, Python's
# per-module lock; nothing is imported twice). Nothing here changes what any request answers; the
# pytest plugin does not do it (a session that never mounts PKI or draws an RSA key pays for neither).

PRELOADED_ENGINES = ("pki",)


def warm_key_pool(size: int | None = None, seed: str | None = None) -> None:
    """Configure the process's RSA key pool (``size`` keys, deterministic keys from ``seed``; ``None``
    keeps the current setting, see ``keypool.configure``) and start filling it now (see
    ``KeyPool.warm``; no-op for a pool of 0). Raises ValueError for a negative size. Imports only
    ``cryptography``'s key modules (~10 ms), nothing of werkzeug or the services."""
    from .secrets.engines.pki.codecs import keypool

    pool = keypool.configure(size=size, seed=seed) if size is not None or seed is not None else keypool.current()
    pool.warm(idle=True)  # on idle CPU only, until serve() listens (KeyPool.hurry)


def preload_engines(types: Iterable[str] = PRELOADED_ENGINES) -> threading.Thread:
    """In a daemon thread (started, returned): bind cryptography's datetime class
    (:func:`~pytest_schedpki.clock.warm_up_datetime_types`, which ``serve`` asks ``Double`` to skip so
    that the health answer does not wait for the X.509 import), then import the code of the engine
    ``types``."""
    wanted = tuple(types)

    def run() -> None:
        from .clock import warm_up_datetime_types
        from .process import native_work
        from .secrets.engines.registry import load_engine_code

        with native_work.busy():  # a stop during the preload waits for it (see native_work)
            warm_up_datetime_types()  # what Double() does elsewhere (imports cryptography's X.509 layer)
            for type_ in wanted:
                try:
                    load_engine_code(type_)
                except Exception:  # noqa: BLE001 - the first mount imports again and reports the error itself
                    pass

    thread = threading.Thread(target=run, name="schedpki-preload", daemon=True)
    thread.start()
    return thread


def default_seed_path() -> str:
    """Path of the packaged ``default_seed.yaml`` (see :func:`pytest_schedpki.seed.default_seed_path`)."""
    from .seed import default_seed_path as packaged

    return packaged()


def package_version() -> str:
    """The installed version of pytest-schedpki (``"unknown"`` when run from a bare source tree)."""
    from importlib import metadata

    try:
        return metadata.version("pytest-schedpki")
    except metadata.PackageNotFoundError:  # pragma: no cover - not installed
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: prints ``schedpki <version>`` and exits 0, as argparse's ``version`` action; the
    version is looked up only then (``importlib.metadata`` scans the installed distributions, ~2 ms
    that every ``serve`` start would pay)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"{parser.prog} {package_version()}\n", sys.stdout)
        parser.exit()


SCHEDULER_SCOPE = "Nomad API: ACL auth methods, binding rules, policies, roles, tokens, JWT/OIDC login"
SECRETS_SCOPE = "OpenBao/Vault API: PKI, KV v1/v2, AppRole, token store, policies"
DESCRIPTION = ("A test double of two HTTP APIs, for tests in any language:\n"
               f"  scheduler  {SCHEDULER_SCOPE}\n"
               f"             (with a built-in OIDC identity provider at /idp)\n"
               f"  secrets    {SECRETS_SCOPE}\n"
               "Control endpoints under /_schedpki/ (GET /_schedpki/ lists them) reset, seed, move the clock, "
               "inject faults\nand read the request journal.")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedpki", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  schedpki serve              both services on 127.0.0.1:4646 and :8200, seeded with a PKI mount\n"
               "                              (root CA, role example-dot-com), secret/ (KV v2) and an OIDC auth method\n"
               "  schedpki serve --help       every option of serve")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser(
        "serve", help="run both services until interrupted",
        description=DESCRIPTION + "\n\nserve runs both until SIGINT or SIGTERM and prints their addresses and "
                                  "ready-to-paste\nNOMAD_*/VAULT_*/BAO_* environment lines.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    serve.add_argument("--scheduler-port", type=int, default=4646, help="scheduler (Nomad API) port; 0 = any free port (default 4646)")
    serve.add_argument("--secrets-port", type=int, default=8200, help="secrets (OpenBao/Vault API) port; 0 = any free port (default 8200)")
    serve.add_argument("--management-token", default="root", help="the scheduler's bootstrap management token secret (default root)")
    serve.add_argument("--no-bootstrap", action="store_true",
                       help="start the scheduler as a fresh Nomad cluster: no management token until "
                            "PUT /v1/acl/bootstrap (nomad acl bootstrap) creates one")
    serve.add_argument("--root-token", default="root", help="the secrets service's root token (default root)")
    serve.add_argument("--seed", action="append", metavar="FILE.yaml",
                       help="YAML seed file (repeatable); default: the packaged example seed")
    serve.add_argument("--no-seed", action="store_true", help="start empty (no default seed)")
    serve.add_argument("--tls", action="store_true",
                       help="serve HTTPS with the double's own CA (valid 2000-2999); prints VAULT_CACERT etc.")
    serve.add_argument("--enterprise", action="store_true",
                       help="emulate Vault Enterprise PKI features (external-policy paths, cert_metadata); see docs/enterprise.md")
    serve.add_argument("--log-requests", action="store_true",
                       help="print one line per request to stderr: method, path, status, the kind of token "
                            "(root, service, management, client, none...; never the token) and the time taken")
    serve.add_argument("--rsa-key-pool", type=int, metavar="N",
                       help="RSA-2048 keys kept pre-generated in the background (default 4, or $SCHEDPKI_RSA_KEY_POOL; 0 = none)")
    serve.add_argument("--cpu", type=int, metavar="N",
                       help="run the server's threads on CPU N only (Linux): one thread runs Python at a time, and on "
                            "one core they hand over without cross-core wake-ups (faster with concurrent clients)")
    serve.add_argument("--deterministic-keys", metavar="SEED",
                       help="derive every new private key from SEED: reproducible and predictable, for tests only "
                            "(default $SCHEDPKI_DETERMINISTIC_KEYS)")
    serve.add_argument("--journal-max-entries", type=int, metavar="N",
                       help="requests kept in the journal, newest first (default 10000, or $SCHEDPKI_JOURNAL_MAX_ENTRIES)")
    serve.add_argument("--journal-max-bytes", type=int, metavar="BYTES",
                       help="bytes the journal keeps, bodies and metadata (default 16 MiB, or $SCHEDPKI_JOURNAL_MAX_BYTES)")
    serve.add_argument("--control-token", metavar="TOKEN", default=os.environ.get("SCHEDPKI_CONTROL_TOKEN") or None,
                       help="require TOKEN in the X-Schedpki-Control-Token header of every /_schedpki/ request "
                            "(default $SCHEDPKI_CONTROL_TOKEN, else none)")
    defaults = ListenerLimits()
    serve.add_argument("--header-timeout", type=float, default=defaults.header_timeout, metavar="SECONDS",
                       help=f"close a connection whose request line and headers take longer (default {defaults.header_timeout:g}, as OpenBao)")
    serve.add_argument("--idle-timeout", type=float, default=defaults.idle_timeout, metavar="SECONDS",
                       help=f"close a keep-alive connection idle this long (default {defaults.idle_timeout:g}, as OpenBao)")
    serve.add_argument("--read-timeout", type=float, default=defaults.read_timeout, metavar="SECONDS",
                       help=f"fail a request whose body or answer stalls this long (default {defaults.read_timeout:g})")
    serve.add_argument("--max-connections", type=int, default=defaults.max_connections, metavar="N",
                       help=f"connection threads per listener; more wait, idle ones are closed to make room; parked "
                            f"blocking queries do not count (default {defaults.max_connections})")
    serve.add_argument("--max-connections-per-client", type=int, default=defaults.max_connections_per_client,
                       metavar="N", help="connections one client address may hold on the scheduler listener; one more "
                                         "gets Nomad's 429 (Nomad's limits.http_max_conns_per_client; 0: no limit; "
                                         f"default {defaults.max_connections_per_client})")
    return parser


def env_lines(double: Double, ca_path: str | None = None) -> list[str]:
    """The ``export`` lines for NOMAD_*, VAULT_* and BAO_* pointing at ``double`` (plus the
    ``*_CACERT`` lines when the listeners use TLS with the CA at ``ca_path``)."""
    lines = [
        f"export NOMAD_ADDR={double.scheduler_url}",
        *([f"export NOMAD_TOKEN={double.management_token}"] if double.scheduler.get_token(double.management_token)
          else []),
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
    try:
        limits = ListenerLimits(args.header_timeout, args.idle_timeout, args.read_timeout, args.max_connections,
                                args.max_connections_per_client)
        # the pool first: its keys are made on another core while the interpreter imports the double
        warm_key_pool(args.rsa_key_pool, args.deterministic_keys)
        from .double import Double

        double = Double(management_token=args.management_token, root_token=args.root_token,
                        journal_max_entries=args.journal_max_entries, journal_max_bytes=args.journal_max_bytes,
                        control_token=args.control_token, warm_up=False,  # done by preload_engines
                        bootstrap=not args.no_bootstrap)
    except ValueError as exc:
        print(f"schedpki: {exc}", file=sys.stderr)
        return 2
    double.secrets.enterprise = args.enterprise
    seeds = [] if args.no_seed else (args.seed or [default_seed_path()])
    try:
        for seed in seeds:
            double.seed(seed)
    except SeedError as exc:
        print(f"schedpki: bad seed: {exc}", file=sys.stderr)
        return 2
    double.save_baseline()  # POST /_schedpki/reset returns here: the state after start and seeding
    material = None
    if args.tls:
        from .wire.tls import create_tls_material  # lazy for start-up time: loads cryptography

        material = create_tls_material(args.host)
    try:
        double.start(args.host, args.scheduler_port, args.secrets_port, log_requests=args.log_requests, limits=limits,
                     ssl_context=material.server_context() if material else None)
    except OSError as exc:
        # Double.start binds the scheduler first: no scheduler listener means that one failed
        service, port, flag = (("scheduler (Nomad API)", args.scheduler_port, "--scheduler-port")
                               if double.scheduler_server is None else
                               ("secrets service (OpenBao/Vault API)", args.secrets_port, "--secrets-port"))
        print(f"schedpki: cannot listen on {args.host}:{port} for the {service}: {exc.strerror or exc} "
              f"(choose another port with {flag} PORT; 0 = any free port)", file=sys.stderr)
        if material:
            material.cleanup()
        return 1
    preload_engines()  # the PKI engine's code, before the first mount asks for it
    from .process.collector import settle_server_heap

    settle_server_heap()  # the start-up heap frozen: collections walk only what requests make
    from .secrets.engines.pki.codecs import keypool

    keypool.current().hurry()  # started: the key pool may now compete for CPU
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"schedpki: scheduler ({SCHEDULER_SCOPE}) on {double.scheduler_url}")
    print(f"schedpki: secrets ({SECRETS_SCOPE}) on {double.secrets_url}")
    from .ui import page_url  # not ui.app: its views load cryptography's X.509 layer (the page loads them)

    print(f"schedpki: state page on {page_url(double.secrets_url, double.control_token)} (also on the scheduler's port)")
    if seeds:
        print("schedpki: seeded from " + ", ".join(os.fspath(s) for s in seeds))
    print("\n".join(env_lines(double, material.ca_path if material else None)))
    print("schedpki: unseal key (sys/unseal, `bao operator unseal`): "
          + base64.b64encode(double.secrets.unseal_key).decode(), flush=True)
    while not stop.wait(0.05):
        pass
    double.stop()
    if material:
        material.cleanup()  # the CA and certificate files printed above
    print("schedpki: stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``schedpki`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args)
    parser.print_help()  # no command: say what there is to run
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
