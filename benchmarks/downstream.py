"""The number a user feels: the wall time of a whole downstream suite, the plugin's double against
``--schedpki-upstream=bao`` (run by hand, not collected by pytest).

    python benchmarks/downstream.py            # 3 runs per side, interleaved
    python benchmarks/downstream.py --quick    # 2 runs per side
    python benchmarks/downstream.py --split    # where each run's CPU time goes (downstream_probe.py)

A generated project (a seed with a PKI mount, an EC root and a ``web`` role, and a KV version 2 mount)
holds 50 tests a user would write: hvac issues (10), signs a CSR (8), revokes (8), reads the role
(8), writes and reads KV (8), and python-nomad creates, reads, lists, updates and deletes ACL auth
methods through its generic requester (8). Each run is a fresh ``python -m pytest`` process, timed from
``Popen`` to exit, of the interpreter a user's project has: by default a virtual environment of its own
(:func:`user_python`: this checkout, hvac and python-nomad installed with pip, so pytest and every other
dependency at the newest version the registry has, and no plugin but what they bring; ``--python
current`` runs this interpreter instead, with whatever this machine has installed): with the plugin against the double (its default in-process transport), and with
``--schedpki-upstream=bao`` (the secrets tests against a ``bao server -dev`` the plugin starts and
resets before each test; the scheduler tests stay on the double, as there is no Nomad here). Both
runs must pass all 50 tests. :func:`rows` is what ``benchmarks/run.py`` calls.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from report import Row, measured  # noqa: E402

SEED = """\
secrets:
  mounts:
    - path: pki
      config: {max_lease_ttl: 87600h}
      issuers:
        - {common_name: App Root CA, issuer_name: root, ttl: 87600h, key_type: ec}
      roles:
        - {name: web, allowed_domains: [example.com], allow_subdomains: true, key_type: ec, ttl: 1h, max_ttl: 24h}
    - path: kv
      type: kv
      options: {version: 2}
      secrets:
        app/config: {hostname: api.example.com, db_host: db.example.com}
"""

CONFTEST = '''\
import hvac
import nomad
import pytest


@pytest.fixture
def vault(schedpki):
    return hvac.Client(url=schedpki.secrets.url, token=schedpki.secrets.token)


@pytest.fixture
def n(schedpki):
    return nomad.Nomad(address=schedpki.scheduler.url, token=schedpki.scheduler.token, namespace="default",
                       region="global")
'''

TESTS_PKI = '''\
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@pytest.mark.parametrize("name", [f"host{i}.example.com" for i in range(10)])
def test_issue(vault, name):
    data = vault.secrets.pki.generate_certificate("web", name, mount_point="pki")["data"]
    cert = x509.load_pem_x509_certificate(data["certificate"].encode())
    assert cert.subject.rfc4514_string() == f"CN={name}"


@pytest.mark.parametrize("i", range(8))
def test_sign(vault, i):
    key = ec.generate_private_key(ec.SECP256R1())
    name = f"worker{i}.example.com"
    csr = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])).sign(key, hashes.SHA256())
    data = vault.secrets.pki.sign_certificate("web", csr.public_bytes(serialization.Encoding.PEM).decode(), name,
                                              mount_point="pki")["data"]
    cert = x509.load_pem_x509_certificate(data["certificate"].encode())
    assert cert.public_key().public_numbers() == key.public_key().public_numbers()


@pytest.mark.parametrize("i", range(8))
def test_revoke(vault, i):
    serial = vault.secrets.pki.generate_certificate("web", f"old{i}.example.com", mount_point="pki")["data"]["serial_number"]
    vault.secrets.pki.revoke_certificate(serial, mount_point="pki")
    assert vault.secrets.pki.read_certificate(serial, mount_point="pki")["data"]["revocation_time"] > 0


@pytest.mark.parametrize("i", range(8))
def test_read_role(vault, i):
    role = vault.secrets.pki.read_role("web", mount_point="pki")["data"]
    assert role["allowed_domains"] == ["example.com"] and role["key_type"] == "ec"
'''

TESTS_KV = '''\
import pytest


@pytest.mark.parametrize("i", range(8))
def test_config_written_and_read_back(vault, i):
    assert vault.secrets.kv.v2.read_secret_version("app/config", mount_point="kv",
                                                   raise_on_deleted_version=True)["data"]["data"]["hostname"] == "api.example.com"
    vault.secrets.kv.v2.create_or_update_secret(f"app/feature{i}", {"enabled": "yes"}, mount_point="kv")
    got = vault.secrets.kv.v2.read_secret_version(f"app/feature{i}", mount_point="kv", raise_on_deleted_version=True)
    assert got["data"]["data"] == {"enabled": "yes"}
'''

TESTS_NOMAD = '''\
import nomad.api.exceptions as nomad_exc
import pytest

METHOD = {"Name": "okta", "Type": "OIDC", "TokenLocality": "global", "MaxTokenTTL": "1h", "Default": False,
          "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "client",
                     "OIDCClientSecret": "s3cret", "BoundAudiences": ["nomad"],
                     "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"]}}


@pytest.mark.parametrize("i", range(8))
def test_auth_method_life(n, i):
    name = f"okta{i}"
    n.acl.request("auth-method", method="post", json={**METHOD, "Name": name})
    assert n.acl.request("auth-method", name, method="get").json()["Type"] == "OIDC"
    n.acl.request("auth-method", name, method="put", json={**METHOD, "Name": name, "MaxTokenTTL": "30m"})
    assert [m["Name"] for m in n.acl.request("auth-methods", method="get").json()] == [name]
    n.acl.request("auth-method", name, method="delete")
    with pytest.raises(nomad_exc.BaseNomadException):
        n.acl.request("auth-method", name, method="get")
'''

TESTS = 50

# the floor: the same process (interpreter, pytest and its plugins, the plugin, the conftest's and the
# tests' imports, collection of 50 tests, exit) with tests that use neither the double nor bao
TESTS_FLOOR = '''\
import pytest
from cryptography import x509  # noqa: F401
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: F401


@pytest.mark.parametrize("i", range(50))
def test_nothing(i):
    assert i >= 0
'''


#: where :func:`user_python` keeps its environment between runs (``$SCHEDPKI_BENCH_VENV`` overrides)
VENV = os.environ.get("SCHEDPKI_BENCH_VENV") or os.path.join(os.path.expanduser("~"), ".cache", "pytest-schedpki-bench",
                                                              "downstream-venv")
CHECKOUT = os.path.dirname(HERE)


def user_python(refresh: bool = False) -> str:
    """The interpreter of a user's project: a virtual environment at :data:`VENV` holding this checkout
    (editable, so the code measured is this tree's), hvac and python-nomad, as ``pip install`` resolves
    them today (pytest included: CI's fresh environment gets the same versions). Made on the first call,
    reused after; ``refresh`` makes it again (newer releases). Returns the path of its ``python``;
    raises ``subprocess.CalledProcessError`` when pip fails (no registry)."""
    python = os.path.join(VENV, "bin", "python")
    marker = os.path.join(VENV, "schedpki-checkout")
    fresh = refresh or not os.path.exists(python) or not os.path.exists(marker)
    if not fresh:
        with open(marker, encoding="utf-8") as fh:
            fresh = fh.read() != CHECKOUT
    if fresh:
        shutil.rmtree(VENV, ignore_errors=True)
        venv.create(VENV, with_pip=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", CHECKOUT,
                        "hvac", "python-nomad"], check=True, stdout=subprocess.DEVNULL)
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write(CHECKOUT)
    return python


def versions(python: str) -> str:
    """``python X.Y.Z, pytest X.Y.Z, hvac X.Y.Z, python-nomad X.Y.Z`` of ``python``'s environment."""
    code = ("import sys, importlib.metadata as m; print(f'python {sys.version.split()[0]}, ' + ', '.join("
            "f'{d} {m.version(d)}' for d in ('pytest', 'hvac', 'python-nomad')))")
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def make_project(floor: bool = False) -> str:
    """A fresh project directory holding the seed, pytest.ini, conftest and the 50 tests (``floor``:
    the same, with 50 tests that use no server)."""
    root = tempfile.mkdtemp(prefix="schedpki-bench-downstream-")
    tests = {"test_floor.py": TESTS_FLOOR} if floor else {"test_pki.py": TESTS_PKI, "test_kv.py": TESTS_KV,
                                                           "test_nomad.py": TESTS_NOMAD}
    files = {"seed.yaml": SEED, "pytest.ini": "[pytest]\nschedpki_seed = seed.yaml\n", "conftest.py": CONFTEST,
             **tests}
    for name, text in files.items():
        with open(os.path.join(root, name), "w") as fh:
            fh.write(text)
    return root


def run_suite(project: str, upstream: bool, probe: str | None = None, python: str = sys.executable
              ) -> tuple[float, float]:
    """Seconds from ``Popen`` to exit of one ``python -m pytest`` run of the project (with the
    interpreter ``python``), and the CPU seconds (user + system) of that process and of what it started
    and waited for (bao's server in upstream mode), from ``getrusage(RUSAGE_CHILDREN)`` around the run;
    raises when the run does not pass all 50 tests. ``probe``: a file for :mod:`downstream_probe`'s
    phases (the plugin is loaded then)."""
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist",
            "-p", "no:benchmark"]
    if upstream:
        argv.append("--schedpki-upstream=bao")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    env.pop("PYTHONDONTWRITEBYTECODE")
    if probe:
        argv += ["-p", "downstream_probe"]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [HERE, env.get("PYTHONPATH")]))
        env["SCHEDPKI_DOWNSTREAM_PROBE"] = probe
    home = tempfile.mkdtemp(prefix="schedpki-bench-downstream-home-")
    env["HOME"] = home  # bao -dev writes its token helper file there
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0 or f"{TESTS} passed" not in proc.stdout:
        raise RuntimeError(f"downstream suite failed (upstream={upstream}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    return elapsed, cpu


def rows(runs: int = 3, python: str = sys.executable) -> list[Row]:
    """The downstream-suite rows: ``runs`` whole runs per side with the interpreter ``python``,
    interleaved, after one warm-up run each (page and byte-code caches); wall time (the target) and, for
    information, CPU time."""
    project, floor_project = make_project(), make_project(floor=True)
    samples: dict[str, list[tuple[float, float]]] = {"double": [], "bao": [], "floor": []}
    try:
        run_suite(project, False, python=python)
        run_suite(project, True, python=python)
        run_suite(floor_project, False, python=python)
        for trial in range(runs):
            for upstream in ((False, True) if trial % 2 == 0 else (True, False)):
                seconds, cpu = run_suite(project, upstream, python=python)
                samples["bao" if upstream else "double"].append((seconds * 1000, cpu * 1000))
            seconds, cpu = run_suite(floor_project, False, python=python)
            samples["floor"].append((seconds * 1000, cpu * 1000))
    finally:
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(floor_project, ignore_errors=True)
    wall = {side: [w for w, _ in values] for side, values in samples.items()}
    cpu = {side: [c for _, c in values] for side, values in samples.items()}
    double, real, floor = wall["double"], wall["bao"], wall["floor"]
    print(f"downstream suite ms: double {[round(x) for x in double]} bao {[round(x) for x in real]} "
          f"floor {[round(x) for x in floor]}; CPU ms: double {[round(x) for x in cpu['double']]} "
          f"bao {[round(x) for x in cpu['bao']]} floor {[round(x) for x in cpu['floor']]}", file=sys.stderr, flush=True)
    label = f"downstream suite: {TESTS} tests (hvac issue/sign/revoke/read role/KV, python-nomad auth methods)"
    return [Row(label, "whole pytest process, plugin vs --schedpki-upstream=bao", "ms", double, real,
                higher_is_better=False, target=3.0),
            Row(label, "the same minus the floor (each side's run less the floor's median; information)", "ms",
                [d - statistics.median(floor) for d in double], [r - statistics.median(floor) for r in real],
                higher_is_better=False, target=None),
            Row(label, "CPU time of the pytest process and what it started (bao's server included; "
                "getrusage of the children; information)", "ms", cpu["double"], cpu["bao"],
                higher_is_better=False, target=None),
            Row("downstream floor: the same process, 50 tests using no server", "interpreter, pytest, plugins, "
                "imports, collection, exit", "ms", floor, target=None),
            Row("downstream floor: the same process, 50 tests using no server", "CPU time (information)", "ms",
                cpu["floor"], target=None)]


SPLIT_PHASES = (
    ("start-up to the first test (interpreter, imports, collection)", lambda p: p["before_loop"]),
    ("fixture schedpki_settings", lambda p: p["fixtures"].get("schedpki_settings", 0)),
    ("fixture schedpki_double (imports the double, builds, seeds, starts it)",
     lambda p: p["fixtures"].get("schedpki_double", 0)),
    ("fixture schedpki_upstream (bao started, seeded)", lambda p: p["fixtures"].get("schedpki_upstream", 0)),
    ("fixture schedpki, first set-up (imports the handle)", lambda p: p["fixtures"].get("schedpki (first)", 0)),
    ("fixture schedpki, the other set-ups (reset, handle)", lambda p: p["fixtures"].get("schedpki", 0)),
    ("the project's fixtures (hvac.Client, nomad.Nomad)",
     lambda p: p["fixtures"].get("vault", 0) + p["fixtures"].get("n", 0)),
    ("the rest of the set-ups (pytest's own)", lambda p: p["setup"] - sum(p["fixtures"].values())),
    ("the tests' calls (client libraries, the requests, the tests' own work)", lambda p: p["call"]),
    ("teardowns but the last", lambda p: p["teardown"]),
    ("the last teardown (session fixtures: double or bao stopped)", lambda p: p.get("last_teardown", 0)),
    ("the rest of the test loop (reports, hooks)", lambda p: p["loop_end"] - p["before_loop"] - p["setup"] - p["call"]
     - p["teardown"] - p.get("last_teardown", 0)),
    ("after the loop to exit (summary, pytest's exit collections)", lambda p: p["total"] - p["loop_end"]),
    ("  of which: full garbage collections before / in / after the loop", None),
    ("  of which: young garbage collections (whole run)", lambda p: p["gc_young"]),
    ("process CPU at exit (time.process_time)", lambda p: p["total"]),
    ("wall time of the last teardown", lambda p: p.get("last_teardown_wall", 0)),
)


def split(runs: int = 3, python: str = sys.executable) -> str:
    """A Markdown table: the median CPU milliseconds (``time.process_time`` of the pytest process; bao's
    own CPU is not in it) of each phase of ``runs`` interleaved runs of the double, bao and the floor
    with the interpreter ``python``, measured by :mod:`downstream_probe`."""
    project, floor_project = make_project(), make_project(floor=True)
    probes: dict[str, list[dict]] = {"double": [], "bao": [], "floor": []}
    path = os.path.join(tempfile.mkdtemp(prefix="schedpki-bench-downstream-probe-"), "probe.json")
    try:
        for side in ("double", "bao", "floor"):  # warm-up
            run_suite(floor_project if side == "floor" else project, side == "bao", python=python)
        for trial in range(runs):
            for side in (("double", "bao", "floor") if trial % 2 == 0 else ("floor", "bao", "double")):
                run_suite(floor_project if side == "floor" else project, side == "bao", probe=path, python=python)
                with open(path, encoding="utf-8") as fh:
                    probes[side].append(json.load(fh))
    finally:
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(floor_project, ignore_errors=True)
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    lines = ["| phase (CPU ms, median) | double | bao | floor |", "|---|---|---|---|"]
    for name, get in SPLIT_PHASES:
        if get is None:
            cells = [" / ".join(f"{statistics.median(p['gc_full'][i] for p in probes[side]) * 1000:.0f}"
                                for i in range(3)) for side in probes]
        else:
            cells = [f"{statistics.median(get(p) for p in probes[side]) * 1000:.0f}" for side in probes]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per side (default 3)")
    parser.add_argument("--quick", action="store_true", help="2 runs per side")
    parser.add_argument("--split", action="store_true", help="instead: the CPU time of each phase of the runs "
                        "(downstream_probe.py)")
    add_python_options(parser)
    args = parser.parse_args(argv)
    python = chosen_python(args)
    if args.split:
        print(split(2 if args.quick else args.runs, python))
        return 0
    measured(lambda: rows(2 if args.quick else args.runs, python))  # prints the table
    return 0


def add_python_options(parser: argparse.ArgumentParser) -> None:
    """``--python user|current`` and ``--refresh-venv`` (also offered by ``benchmarks/run.py``)."""
    parser.add_argument("--python", choices=("user", "current"), default="user",
                        help="the downstream suite's interpreter: 'user' (default), a virtual environment of "
                             "this checkout, hvac and python-nomad as pip installs them today; 'current', this "
                             "interpreter and what this machine has installed")
    parser.add_argument("--refresh-venv", action="store_true", help="make the 'user' environment again")


def chosen_python(args: argparse.Namespace) -> str:
    """The interpreter ``args`` choose (making the user environment when it is missing), announced on
    stderr with its versions."""
    python = sys.executable if args.python == "current" else user_python(refresh=args.refresh_venv)
    print(f"downstream suite: {args.python} interpreter {python} ({versions(python)})", file=sys.stderr, flush=True)
    return python


if __name__ == "__main__":
    raise SystemExit(main())
